-- Running balances (issue 61): each transaction carries its account's balance right after it
-- (`balance_after`, kobo), so that the balance of an account at the end of any instant is one
-- row read by `transactions_account_keyset` (its last transaction at or before the instant),
-- whatever the account's history: a statement's opening and closing balances and each line's
-- running balance. A writer sets it from the account's balance as the movement left it
-- (`batch.sql`); it is never chained from the row before, so one wrong row cannot spread.
--
-- The running balance is the sum of an account's transactions in order only if every change
-- of its balance has its transaction. One had none: a held transfer released (rejected,
-- cancelled, expired) gave its reserve back with a journal entry alone. A release now writes
-- its `REV-` credit, as a NIP reversal does; each release made before this migration gets
-- the same credit here, at its entry's time, so that the rows before and after reconcile.
--
-- Not a rolling upgrade: a process of the release before writes no `balance_after` (refused
-- once the column is NOT NULL) and releases holds without their credit. Stop every process,
-- back up, `kobo migrate`, start (docs/operating.md, "Upgrades"). Every row of `transactions`
-- is rewritten once.
ALTER TABLE transactions ADD COLUMN balance_after bigint;

-- Each release's credit. Its place in its business's ledger (`sequence`) is the one its head
-- gave it, which no row kept: a business's places are numbered in time order (each place is a
-- microsecond after the one before, `money::ledger`), so it is counted on from the last
-- transaction before it, over the places that have a transaction or only a journal entry (a
-- release, a NIP settlement, an approval's). Its transfer is the one the release ended: same
-- business and source account, ended at the release's time.
WITH released AS (
    SELECT e.id AS entry_id, e.business_id, e.created_at, p.account_id,
        sum(p.amount)::bigint AS amount, (array_agg(p.id ORDER BY p.id))[1] AS id
    FROM ledger_entries e
    JOIN ledger_postings p ON p.entry_id = e.id
    JOIN accounts a ON a.id = p.account_id
    WHERE e.kind = 'transfer_release'
    GROUP BY e.id, e.business_id, e.created_at, p.account_id
),
places AS (
    SELECT business_id, created_at, sequence FROM transactions
    UNION
    SELECT e.business_id, e.created_at, NULL FROM ledger_entries e
    WHERE NOT EXISTS (SELECT 1 FROM transactions t
        WHERE t.business_id = e.business_id AND t.created_at = e.created_at)
),
counted AS (
    SELECT business_id, created_at, sequence,
        count(sequence) OVER (PARTITION BY business_id ORDER BY created_at) AS since
    FROM places
),
numbered AS (
    SELECT business_id, created_at,
        COALESCE(max(sequence) OVER (PARTITION BY business_id, since), 0)
            + dense_rank() OVER (PARTITION BY business_id, since ORDER BY created_at)
            - CASE WHEN since > 0 THEN 1 ELSE 0 END AS sequence
    FROM counted
)
INSERT INTO transactions (id, business_id, account_id, entry_id, sequence, reference_number,
    transaction_type, category, status, channel, amount, narration, narration_key,
    created_at)
SELECT r.id, r.business_id, r.account_id, r.entry_id, n.sequence, x.reference, 'credit',
    'reversal', 'success', 'internal', r.amount, x.narration,
    lower(x.narration || ' ' || x.reference), r.created_at
FROM released r
JOIN numbered n ON n.business_id = r.business_id AND n.created_at = r.created_at
CROSS JOIN LATERAL (
    SELECT COALESCE('REV-' || substr(t.reference_number, 5), 'REV-' || r.entry_id::text)
            AS reference,
        COALESCE('Release of ' || t.reference_number || ': ' || t.failure_reason,
            'Release of a held transfer') AS narration
    FROM (SELECT NULL) one
    LEFT JOIN transfers t ON t.business_id = r.business_id
        AND t.source_account_id = r.account_id AND t.updated_at = r.created_at
        AND t.transfer_status IN ('rejected', 'cancelled', 'expired')
) x
WHERE r.amount > 0;

-- The transfers those credits returned name them, as a reversed transfer names its reversal.
UPDATE transfers t SET reversal_reference_number = 'REV-' || substr(t.reference_number, 5)
WHERE t.transfer_status IN ('rejected', 'cancelled', 'expired')
    AND t.reversal_reference_number IS NULL
    AND EXISTS (SELECT 1 FROM transactions c
        WHERE c.reference_number = 'REV-' || substr(t.reference_number, 5));

-- Every transaction's running balance, in its account's order.
UPDATE transactions t SET balance_after = r.running
FROM (SELECT id, sum(CASE transaction_type WHEN 'credit' THEN amount ELSE -amount END)
        OVER (PARTITION BY account_id ORDER BY created_at, id
              ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)::bigint AS running
      FROM transactions) r
WHERE r.id = t.id;

-- An account's last running balance must be its balance, or the upgrade stops with nothing
-- done: a balance moved without its transaction would otherwise make every statement of the
-- account wrong.
DO $$
DECLARE
    astray text;
BEGIN
    SELECT string_agg(a.account_number, ', ') INTO astray
    FROM accounts a
    LEFT JOIN LATERAL (SELECT t.balance_after FROM transactions t WHERE t.account_id = a.id
        ORDER BY t.created_at DESC, t.id DESC LIMIT 1) l ON true
    WHERE COALESCE(l.balance_after, 0) <> a.balance;
    IF astray IS NOT NULL THEN
        RAISE EXCEPTION 'migration 0028: the transactions of accounts % do not sum to their balance', astray;
    END IF;
END
$$;

ALTER TABLE transactions ALTER COLUMN balance_after SET NOT NULL;
