-- The foreign keys of the rows a payout inserts (issue 31). PostgreSQL checks each one after
-- the statement, row by row, with a query of its own that locks the parent row: about twenty a
-- payout, 12% of PostgreSQL's time in a payouts run (`perf`, BENCHMARKS.md), and with a
-- business's payouts in one group commit, the locks of the members' subtransactions on one
-- parent row made MultiXacts. Every parent is one the payout's own statement inserts (the
-- journal entry, the transactions) or has just read under a lock (the accounts whose balances
-- it moves, the business whose standing it holds), and no business, account, entry or
-- transaction is ever deleted. `kobo ledger verify` checks what these keys checked, and more:
-- a transaction's account must be its business's (`missing_parent`).
--
-- Kept: the foreign keys of everything else (members, sessions, accounts, ...), and
-- `webhook_attempts` to `events`, whose cascade the purge relies on.
ALTER TABLE journal_entries DROP CONSTRAINT journal_entries_business_id_fkey;
ALTER TABLE postings DROP CONSTRAINT postings_entry_id_fkey;
ALTER TABLE transactions DROP CONSTRAINT transactions_account_id_fkey,
    DROP CONSTRAINT transactions_business_id_fkey,
    DROP CONSTRAINT transactions_entry_id_fkey;
ALTER TABLE settlements DROP CONSTRAINT settlements_account_id_fkey,
    DROP CONSTRAINT settlements_business_id_fkey,
    DROP CONSTRAINT settlements_id_fkey;
ALTER TABLE transfers DROP CONSTRAINT transfers_beneficiary_account_id_fkey,
    DROP CONSTRAINT transfers_business_id_fkey,
    DROP CONSTRAINT transfers_debit_transaction_id_fkey,
    DROP CONSTRAINT transfers_fee_transaction_id_fkey,
    DROP CONSTRAINT transfers_source_account_id_fkey;
-- A log entry, an event and an idempotency key name the business of the caller or of the
-- change they record, read in the same request.
ALTER TABLE events DROP CONSTRAINT events_business_id_fkey;
ALTER TABLE audit_logs DROP CONSTRAINT audit_logs_business_id_fkey;
ALTER TABLE activity_logs DROP CONSTRAINT activity_logs_business_id_fkey;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_business_id_fkey;
