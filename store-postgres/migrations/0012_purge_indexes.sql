-- Housekeeping deletes what expired by its time: idempotency keys past their 24 hours, webhook
-- events past their 30 days. Without an index on that time, each pass read the whole table
-- (one key and two events per payout, each with its JSON), and on SQLite it did so holding the
-- process's write turn: every five minutes, a soak's payouts stalled for hundreds of
-- milliseconds. With these, a pass reads only the expired rows.
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
CREATE INDEX events_created ON events (created_at) WHERE delivery_status <> 'pending';
