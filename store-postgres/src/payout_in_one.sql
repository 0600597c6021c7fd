-- An intra-bank payout in one statement, for a payout whose ledger head is foreseen: a member
-- of its business's group commit after one that advanced it (`groups.rs`,
-- `Member::known_head`: the group's transaction holds the head's row lock), or a group's first
-- member, from the head as the group before it left it. Its places and their times are then
-- computed before the statement and written into its rows and answers. The parts of
-- `advance_and_move.sql` (its parameters $1 to $13) then those of `payout_batch.sql` (theirs
-- from $14 on), word for word but for the lines marked `as foreseen` (`batch.rs`'s test
-- `a_payout_in_one_is_its_two_statements`), and the first's last `SELECT` with the keys
-- claimed. Those lines make the statement write nothing unless the head is where the payout
-- foresaw it ($79, its last sequence before the payout): it then answers no row, having only
-- locked the head, and the caller takes the two statements. The batch's rows are otherwise
-- written whatever the movement decided: a refused payout is rolled back by its caller.
--
-- Unless the transaction held the head before the payout ($80: a member of the group after one
-- that advanced it, `Member::holds_head`), which then has no savepoint to roll back to. The
-- gate first checks, from what the statement reads, every condition its writes check: each
-- account can take its change, the business is active with room under its limit on the day
-- of the payout's first place, the client reference is free, the key unclaimed. If one fails,
-- the head is not advanced and nothing is written: the caller then sets its savepoint and
-- takes the two statements, which answer the refusal. What the gate reads cannot change before
-- the writes: every writer of a business's daily total, references and balances takes its
-- head first, and the business's status and limit stand under its standing lock. Only an
-- account frozen, or a key claimed by another process, between the statement's snapshot and
-- its writes can still make one refuse after the gate passed: the caller then sees a refusal
-- with the rows written, and fails the whole group (nothing of it kept, each member told to
-- retry).
WITH
gate AS MATERIALIZED ( -- as foreseen
  SELECT NOT $80::boolean OR ( -- as foreseen
    (SELECT count(*) FROM unnest($9::uuid[], $10::bigint[], $11::boolean[]) -- as foreseen
        AS c (id, amount, must_be_active) -- as foreseen
      JOIN accounts a ON a.id = c.id -- as foreseen
      WHERE a.balance + c.amount >= 0 AND a.balance + c.amount <= $12 -- as foreseen
        AND (a.status = 'active' OR NOT c.must_be_active)) = cardinality($9::uuid[]) -- as foreseen
    AND (NOT ($13::boolean OR $7::bigint IS NOT NULL) OR EXISTS ( -- as foreseen
      SELECT 1 FROM businesses b, ledger_heads h -- as foreseen
      WHERE b.id = $5::uuid AND b.status = 'active' AND h.business_id = $5::uuid -- as foreseen
        AND ($7::bigint IS NULL OR ($7::bigint <= COALESCE(b.daily_transfer_limit, $8::bigint) -- as foreseen
          AND $7::bigint + COALESCE((SELECT d.amount FROM daily_transfer_totals d -- as foreseen
              WHERE d.business_id = $5::uuid AND d.day = DATE '1970-01-01' -- as foreseen
                + ((GREATEST(h.last_posted_micros + 1, $2) + 3600000000) / 86400000000)::int), -- as foreseen
            0) <= COALESCE(b.daily_transfer_limit, $8::bigint))))) -- as foreseen
    AND NOT EXISTS (SELECT 1 FROM unnest($37::uuid[], $39::text[]) AS r (business_id, reference) -- as foreseen
      JOIN transfers t ON t.reference = r.reference AND t.business_id = r.business_id) -- as foreseen
    AND NOT EXISTS (SELECT 1 FROM unnest($73::uuid[], $74::text[], $75::text[]) -- as foreseen
        AS k (business_id, operation, idempotency_key) -- as foreseen
      WHERE (SELECT i.created_at FROM idempotency_keys i WHERE i.business_id = k.business_id -- as foreseen
          AND i.operation = k.operation AND i.idempotency_key = k.idempotency_key) -- as foreseen
        >= $72::timestamptz) -- as foreseen
  ) AS ok -- as foreseen
), -- as foreseen
heads AS (
  INSERT INTO ledger_heads (business_id, last_sequence, last_posted_at, last_posted_micros)
  SELECT h.business_id, h.places, $1, $2 + h.places - 1
  FROM unnest($3::uuid[], $4::bigint[]) WITH ORDINALITY AS h (business_id, places, n)
  WHERE (SELECT ok FROM gate) -- as foreseen
  ORDER BY h.n
  ON CONFLICT (business_id) DO UPDATE SET
    last_sequence = ledger_heads.last_sequence + excluded.last_sequence,
    last_posted_micros = CASE
      WHEN ledger_heads.last_posted_micros < $2 THEN $2 + excluded.last_sequence - 1
      ELSE ledger_heads.last_posted_micros + excluded.last_sequence END
    WHERE ledger_heads.last_sequence = $79 -- as foreseen
  RETURNING business_id, last_sequence, last_posted_micros, last_posted_at
),
place AS MATERIALIZED (
  SELECT DATE '1970-01-01' + ((s.micros + 3600000000) / 86400000000)::int AS day,
    TIMESTAMPTZ 'epoch' + s.micros * INTERVAL '1 microsecond' AS at
  FROM (SELECT max(last_posted_micros - $6::bigint + 1)
          FILTER (WHERE business_id = $5::uuid) AS micros
        FROM heads) s
  WHERE s.micros IS NOT NULL -- as foreseen
),
business AS MATERIALIZED (
  SELECT b.status = 'active' AS active,
    COALESCE(b.daily_transfer_limit, $8::bigint) AS daily_limit
  FROM businesses b
  WHERE b.id = $5::uuid AND ($13::boolean OR $7::bigint IS NOT NULL)
),
daily AS (
  INSERT INTO daily_transfer_totals (business_id, day, amount)
  SELECT $5::uuid, p.day, $7::bigint FROM place p, business b
  WHERE $7::bigint IS NOT NULL AND b.active AND $7::bigint <= b.daily_limit
  ON CONFLICT (business_id, day) DO UPDATE
    SET amount = daily_transfer_totals.amount + excluded.amount
    WHERE daily_transfer_totals.amount + excluded.amount
      <= (SELECT daily_limit FROM business)
  RETURNING 1
),
moved AS (
  UPDATE accounts a SET balance = a.balance + c.amount, last_balance_update = p.at,
    updated_at = p.at
  FROM unnest($9::uuid[], $10::bigint[], $11::boolean[]) AS c (id, amount, must_be_active),
    place p
  WHERE a.id = c.id AND a.balance + c.amount >= 0 AND a.balance + c.amount <= $12
    AND (a.status = 'active' OR NOT c.must_be_active)
    AND (NOT $13::boolean OR EXISTS (SELECT 1 FROM business WHERE active))
    AND ($7::bigint IS NULL OR EXISTS (SELECT 1 FROM daily))
  RETURNING a.id
),
new_transactions AS (
    SELECT * FROM unnest($14::uuid[], $15::uuid[], $16::uuid[], $17::uuid[], $18::bigint[],
        $19::text[], $20::text[], $21::text[], $22::text[], $23::text[], $24::bigint[],
        $25::text[], $26::text[], $27::text[], $28::text[], $29::text[], $30::text[],
        $31::text[], $32::timestamptz[], $33::boolean[], $34::boolean[], $35::text[])
        AS t (id, business_id, account_id, entry_id, sequence, reference_number,
            transaction_type, category, status, channel, amount, narration, narration_key,
            session_id, originator_account_number, originator_account_name,
            originator_bank_code, originator_bank_name, created_at, settled, carries_posting,
            entry_kind)
    WHERE EXISTS (SELECT 1 FROM place) -- as foreseen
),
-- A settled transaction (a collection) is its own settlement (`settlements` is their view).
transactions AS (
    INSERT INTO transactions (id, business_id, account_id, entry_id, sequence,
        reference_number, transaction_type, category, status, channel, amount, narration,
        narration_key, session_id, originator_account_number, originator_account_name,
        originator_bank_code, originator_bank_name, created_at, settled, carries_posting,
        entry_kind)
    SELECT id, business_id, account_id, entry_id, sequence, reference_number,
        transaction_type, category, status, channel, amount, narration, narration_key,
        session_id, originator_account_number, originator_account_name, originator_bank_code,
        originator_bank_name, created_at, settled, carries_posting, entry_kind
    FROM new_transactions
),
transfers AS (
    INSERT INTO transfers (id, business_id, reference_number, reference, source_account_id,
        beneficiary_account_number, beneficiary_account_name, beneficiary_account_id,
        bank_code, bank_name, transfer_type, amount, fee, vat, narration, transfer_status,
        approval_status, session_id, failure_reason, reversal_reference_number,
        debit_transaction_id, fee_transaction_id, initiated_by, initiated_via, reviewed_by,
        expires_at, day, submitted, attempts, next_attempt_at, lease_until, created_at,
        updated_at, credential_issued_by, audit_user_name, call_ip_address, call_request_id,
        activity_endpoint, activity_message)
    SELECT id, business_id, reference_number, reference, source_account_id,
        beneficiary_account_number, beneficiary_account_name, beneficiary_account_id,
        bank_code, bank_name, transfer_type, amount, fee, vat, narration, transfer_status,
        approval_status, NULL, NULL, NULL, debit_transaction_id, fee_transaction_id,
        initiated_by, initiated_via, NULL, expires_at, day::date, false, 0, NULL, NULL,
        created_at, updated_at, credential_issued_by, audit_user_name, call_ip_address,
        call_request_id, activity_endpoint, activity_message
    FROM unnest($36::uuid[], $37::uuid[], $38::text[], $39::text[], $40::uuid[], $41::text[],
        $42::text[], $43::uuid[], $44::text[], $45::text[], $46::text[], $47::bigint[],
        $48::bigint[], $49::bigint[], $50::text[], $51::text[], $52::text[], $53::uuid[],
        $54::uuid[], $55::text[], $56::text[], $57::timestamptz[], $58::text[],
        $59::timestamptz[], $60::timestamptz[], $61::text[], $62::text[], $63::text[],
        $64::text[], $65::text[], $66::text[])
        AS t (id, business_id, reference_number, reference, source_account_id,
            beneficiary_account_number, beneficiary_account_name, beneficiary_account_id,
            bank_code, bank_name, transfer_type, amount, fee, vat, narration, transfer_status,
            approval_status, debit_transaction_id, fee_transaction_id, initiated_by,
            initiated_via, expires_at, day, created_at, updated_at, credential_issued_by,
            audit_user_name, call_ip_address, call_request_id, activity_endpoint,
            activity_message)
    WHERE EXISTS (SELECT 1 FROM place) -- as foreseen
),
-- An event is due at once if its business has an active endpoint; otherwise it is recorded
-- `skipped`, never queued (a queued event skipped later left a dead entry in `events_due`).
events AS (
    INSERT INTO events (id, business_id, type, payload, created_at, next_attempt_at,
        delivery_status)
    SELECT e.id, e.business_id, e.kind, e.payload, e.at,
        CASE WHEN active.any THEN e.at END,
        CASE WHEN active.any THEN 'pending' ELSE 'skipped' END
    FROM unnest($67::uuid[], $68::uuid[], $69::text[], $70::text[], $71::timestamptz[])
        AS e (id, business_id, kind, payload, at)
    CROSS JOIN LATERAL (SELECT EXISTS (SELECT 1 FROM webhook_configurations c
        WHERE c.business_id = e.business_id AND c.is_active) AS any) active
    WHERE EXISTS (SELECT 1 FROM place) -- as foreseen
),
-- The keys the batch claims with their answers: a new key is inserted, one stored before the
-- cutoff ($72, expired) replaced; an unexpired one is left alone and not counted. A key
-- another transaction is inserting makes this wait for it, as the claim at a transaction's
-- start would.
claimed AS (
    INSERT INTO idempotency_keys (business_id, operation, idempotency_key, request_hash,
        response_data, created_at)
    SELECT * FROM unnest($73::uuid[], $74::text[], $75::text[], $76::text[], $77::text[],
        $78::timestamptz[])
    WHERE EXISTS (SELECT 1 FROM place) -- as foreseen
    ON CONFLICT (business_id, operation, idempotency_key) DO UPDATE
        SET request_hash = excluded.request_hash, response_data = excluded.response_data,
            refusal_code = NULL, refusal_message = NULL, created_at = excluded.created_at
        WHERE idempotency_keys.created_at < $72::timestamptz
    RETURNING 1
)
SELECT h.business_id::text AS "business_id!", h.last_sequence AS "last_sequence!",
  h.last_posted_micros, h.last_posted_at AS "last_posted_at!",
  (SELECT active FROM business) AS business_active,
  (SELECT daily_limit FROM business) AS business_daily_limit,
  ($7::bigint IS NULL OR EXISTS (SELECT 1 FROM daily)) AS "counted!",
  (SELECT array_agg(id) FROM moved) AS moved,
  (SELECT count(*) FROM claimed) AS "claimed!"
FROM heads h
