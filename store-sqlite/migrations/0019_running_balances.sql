-- Running balances (issue 61): each transaction carries its account's balance right after it
-- (`balance_after`, kobo), so that the balance of an account at the end of any instant is one
-- row read by `transactions_account_keyset`. PostgreSQL's migration 0028 says why and how;
-- this is the same for SQLite, which cannot add a NOT NULL column without a default:
-- `balance_after` stays nullable here, every writer sets it, and `kobo ledger verify` reports
-- a row without it.
--
-- Not a rolling upgrade (a process of the release before writes no `balance_after`): stop the
-- server, back up, `kobo migrate`, start.
ALTER TABLE transactions ADD COLUMN balance_after BIGINT;

-- Each release of a held transfer made before this migration gets the `REV-` credit a release
-- now writes, at its entry's time and at the place its head gave it (migration 0028).
WITH released AS (
    SELECT e.id AS entry_id, e.business_id, e.created_at, p.account_id,
        sum(p.amount) AS amount, min(p.id) AS id
    FROM journal_entries e
    JOIN postings p ON p.entry_id = e.id
    JOIN accounts a ON a.id = p.account_id
    WHERE e.kind = 'transfer_release'
    GROUP BY e.id, e.business_id, e.created_at, p.account_id
),
places AS (
    SELECT business_id, created_at, sequence FROM transactions
    UNION
    SELECT e.business_id, e.created_at, NULL FROM journal_entries e
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
SELECT r.id, r.business_id, r.account_id, r.entry_id, n.sequence,
    COALESCE('REV-' || substr(t.reference_number, 5), 'REV-' || r.entry_id), 'credit',
    'reversal', 'success', 'internal', r.amount,
    COALESCE('Release of ' || t.reference_number || ': ' || t.failure_reason,
        'Release of a held transfer'),
    lower(COALESCE('Release of ' || t.reference_number || ': ' || t.failure_reason,
        'Release of a held transfer') || ' '
        || COALESCE('REV-' || substr(t.reference_number, 5), 'REV-' || r.entry_id)),
    r.created_at
FROM released r
JOIN numbered n ON n.business_id = r.business_id AND n.created_at = r.created_at
LEFT JOIN transfers t ON t.business_id = r.business_id
    AND t.source_account_id = r.account_id AND t.updated_at = r.created_at
    AND t.transfer_status IN ('rejected', 'cancelled', 'expired')
WHERE r.amount > 0;

-- The transfers those credits returned name them, as a reversed transfer names its reversal.
UPDATE transfers SET reversal_reference_number = 'REV-' || substr(reference_number, 5)
WHERE transfer_status IN ('rejected', 'cancelled', 'expired')
    AND reversal_reference_number IS NULL
    AND EXISTS (SELECT 1 FROM transactions c
        WHERE c.reference_number = 'REV-' || substr(transfers.reference_number, 5));

-- Every transaction's running balance, in its account's order.
UPDATE transactions SET balance_after = r.running
FROM (SELECT id, sum(CASE transaction_type WHEN 'credit' THEN amount ELSE -amount END)
        OVER (PARTITION BY account_id ORDER BY created_at, id
              ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running
      FROM transactions) r
WHERE r.id = transactions.id;

-- An account's last running balance must be its balance, or the upgrade stops with nothing
-- done (the migration's transaction is rolled back): the row below fails its CHECK.
CREATE TEMP TABLE migration_0019 (
    astray INTEGER NOT NULL,
    CONSTRAINT every_account_s_transactions_sum_to_its_balance CHECK (astray = 0)
);
INSERT INTO migration_0019
SELECT count(*) FROM accounts a
WHERE a.balance <> COALESCE((SELECT t.balance_after FROM transactions t
    WHERE t.account_id = a.id ORDER BY t.created_at DESC, t.id DESC LIMIT 1), 0);
DROP TABLE migration_0019;
