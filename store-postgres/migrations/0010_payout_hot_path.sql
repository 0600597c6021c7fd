-- Two costs a payout paid while it held its business's ledger head (BENCHMARKS.md, "Where a
-- payout's time goes"):
--
-- 1. The daily limit summed every transfer of the business's day, on every payout: the cost
--    grew with the day's volume. `daily_transfer_totals` keeps that sum, per business and Lagos
--    day: a transfer adds its amount when it is made (counted: `pending_approval`, `processing`,
--    `success`) and takes it back when it leaves those statuses (rejected, expired, failed,
--    reversed), in the same database transaction. `kobo ledger verify` checks it against the
--    transfers.
CREATE TABLE daily_transfer_totals (
    business_id TEXT NOT NULL REFERENCES businesses (id),
    day TEXT NOT NULL, -- YYYY-MM-DD in Lagos time, as transfers.day
    amount BIGINT NOT NULL CHECK (amount >= 0),
    PRIMARY KEY (business_id, day)
);

INSERT INTO daily_transfer_totals (business_id, day, amount)
SELECT business_id, day, SUM(amount) FROM transfers
WHERE transfer_status IN ('pending_approval', 'processing', 'success')
GROUP BY business_id, day;

-- 2. Taking the head was two statements: the upsert that locks it and returns the last time,
--    then an update with the next time, computed in Rust (one microsecond after the last when
--    the clock has not moved past it). As microseconds since the Unix epoch the next time is
--    computed by the upsert itself. NULL until a head is first advanced after this migration,
--    which then reads `last_posted_at` once; `last_posted_at` keeps the time of heads that were
--    last advanced before it.
ALTER TABLE ledger_heads ADD COLUMN last_posted_micros BIGINT NULL;
