-- A payout in fewer round trips (issue 31).
--
-- 1. The client reference is looked up in the statement that reads the payout's accounts, a
--    prepared statement whose plan PostgreSQL keeps. A kept (generic) plan is made without the
--    parameters' values, and on a young table every index that starts with `business_id`
--    costs the same as the reference's own: it read the business's transfers and filtered
--    them (0011). The reference's unique index now leads with the reference, the only index
--    that does, so the kept plan can find the row by nothing else. Same rows, same rule.
CREATE UNIQUE INDEX transfers_reference_first ON transfers (reference, business_id);
DROP INDEX transfers_reference;
ALTER INDEX transfers_reference_first RENAME TO transfers_reference;

-- 2. The ledger head, the daily total and the balances move in one statement, which computes
--    the times from `last_posted_micros` (0010). A head last advanced before 0010 had only
--    `last_posted_at`: it gets its microseconds now, the same instant, so the next place is
--    after it exactly as before.
UPDATE ledger_heads
SET last_posted_micros = (EXTRACT(EPOCH FROM last_posted_at) * 1000000)::bigint
WHERE last_posted_micros IS NULL;
