-- The gate of `payout_in_one.sql`, its first part (`cargo xtask codegen` puts it there). For a
-- transaction that held the payout's ledger head before the payout (the last parameter: a member of
-- its business's group commit after one that advanced the head, `Member::holds_head`), which
-- has no savepoint to roll back to, it checks first, from what the statement reads, every
-- condition its writes check: each account can take its change, the business is active with
-- room under its limit on the day of the payout's first place, the client reference is free,
-- the key unclaimed. If one fails, the head is not advanced and nothing is written: the store
-- then sets the member's savepoint and takes the two statements, which answer the refusal.
-- What the gate reads cannot change before the writes: every writer of a business's daily
-- total, references and balances takes its head first, and the business's status and limit
-- stand under its standing lock. Only an account frozen, or a key claimed by another process,
-- between the statement's snapshot and its writes can still make one refuse after the gate
-- passed: the store then sees a refusal with the rows written, and fails the whole group
-- (nothing of it kept, each member told to retry). Its parameters are
-- `advance_and_move.sql`'s, and three of `batch.sql`'s, numbered as `payout_in_one.sql` numbers them.
gate AS MATERIALIZED (
  SELECT NOT {holds_head}::boolean OR (
    (SELECT count(*) FROM unnest($9::uuid[], $10::bigint[], $11::boolean[])
        AS c (id, amount, must_be_active)
      JOIN accounts a ON a.id = c.id
      WHERE a.balance + c.amount >= 0 AND a.balance + c.amount <= $12
        AND (a.status = 'active' OR NOT c.must_be_active)) = cardinality($9::uuid[])
    AND (NOT ($13::boolean OR $7::bigint IS NOT NULL) OR EXISTS (
      SELECT 1 FROM businesses b, ledger_heads h
      WHERE b.id = $5::uuid AND b.status = 'active' AND h.business_id = $5::uuid
        AND ($7::bigint IS NULL OR ($7::bigint <= COALESCE(b.daily_transfer_limit, $8::bigint)
          AND $7::bigint + COALESCE((SELECT d.amount FROM daily_transfer_totals d
              WHERE d.business_id = $5::uuid AND d.day = DATE '1970-01-01'
                + ((GREATEST(h.last_posted_micros + 1, $2) + 3600000000) / 86400000000)::int),
            0) <= COALESCE(b.daily_transfer_limit, $8::bigint)))))
    AND NOT EXISTS (SELECT 1 FROM json_to_recordset({batch $4}::text::json)
        AS r (business_id uuid, reference text)
      JOIN transfers t ON t.reference = r.reference AND t.business_id = r.business_id)
    AND NOT EXISTS (SELECT 1 FROM json_to_recordset({batch $9}::text::json)
        AS k (business_id uuid, operation text, idempotency_key text)
      WHERE (SELECT i.created_at FROM idempotency_keys i WHERE i.business_id = k.business_id
          AND i.operation = k.operation AND i.idempotency_key = k.idempotency_key)
        >= {batch $10}::timestamptz)
  ) AS ok
),
