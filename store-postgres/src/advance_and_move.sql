-- A payout's first statement (see ledger.rs, `advance_and_move`): the heads advanced, the
-- amount counted toward the day's total, the balances moved, in one round trip.
-- `payout_in_one.sql`, a payout's movement and rows in one statement, is made from this
-- statement's parts and `batch.sql`'s by `cargo xtask codegen`: a line `-- in one: ...` is a
-- line of `payout_in_one.sql` alone.
WITH heads AS (
  INSERT INTO ledger_heads (business_id, last_sequence, last_posted_at, last_posted_micros)
  SELECT h.business_id, h.places, $1, $2 + h.places - 1
  FROM unnest($3::uuid[], $4::bigint[]) WITH ORDINALITY AS h (business_id, places, n)
  -- in one: WHERE (SELECT ok FROM gate)
  ORDER BY h.n
  ON CONFLICT (business_id) DO UPDATE SET
    last_sequence = ledger_heads.last_sequence + excluded.last_sequence,
    last_posted_micros = CASE
      WHEN ledger_heads.last_posted_micros < $2 THEN $2 + excluded.last_sequence - 1
      ELSE ledger_heads.last_posted_micros + excluded.last_sequence END
    -- in one: WHERE ledger_heads.last_sequence = {foreseen}
  RETURNING business_id, last_sequence, last_posted_micros, last_posted_at
),
place AS MATERIALIZED (
  SELECT DATE '1970-01-01' + ((s.micros + 3600000000) / 86400000000)::int AS day,
    TIMESTAMPTZ 'epoch' + s.micros * INTERVAL '1 microsecond' AS at
  FROM (SELECT max(last_posted_micros - $6::bigint + 1)
          FILTER (WHERE business_id = $5::uuid) AS micros
        FROM heads) s
  -- in one: WHERE s.micros IS NOT NULL
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
  RETURNING a.id, a.balance
)
SELECT h.business_id::text AS "business_id!", h.last_sequence AS "last_sequence!",
  h.last_posted_micros, h.last_posted_at AS "last_posted_at!",
  (SELECT active FROM business) AS business_active,
  (SELECT daily_limit FROM business) AS business_daily_limit,
  ($7::bigint IS NULL OR EXISTS (SELECT 1 FROM daily)) AS "counted!",
  (SELECT array_agg(id) FROM moved) AS moved
FROM heads h
