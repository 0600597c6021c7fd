-- Keyset pages of one account's transactions (`fetch_transactions` with
-- `filters.account_number`, newest first by (created_at, id)) read this index as a range, so a
-- page costs the same at any depth. Found by `kobo-load bench` (reads at 100k rows).
CREATE INDEX transactions_account_keyset ON transactions (account_id, created_at, id);
