-- Index entries a payout writes (issue 31), continued from 0019: each index of a table a payout
-- inserts into costs an entry (and a log record) per row, so two indexes that serve the same
-- readers become one, and a table read only by its keyset takes the keyset as its primary key.

-- `transactions_sequence` checked that a business's sequences never repeat. Its ledger head
-- hands each place out once, under the head's row lock, in the statement that moves the money
-- (`money::ledger`); nothing reads transactions by sequence, and `kobo ledger verify` reports
-- a repeated one. Two entries a payout.
DROP INDEX transactions_sequence;

-- One index of an account's transactions: the page of one account reads it in order
-- (`created_at`, `id`), and the per-account sums (collections, activity) read the columns it
-- carries without the table. It replaces `transactions_account`, whose leading category and
-- status nobody needed apart from the time range. Two entries a payout.
CREATE INDEX transactions_account_keyset_wide ON transactions (account_id, created_at, id)
    INCLUDE (category, status, transaction_type, amount);
DROP INDEX transactions_account_keyset;
ALTER INDEX transactions_account_keyset_wide RENAME TO transactions_account_keyset;
DROP INDEX transactions_account;

-- A posting is read by its entry (`kobo ledger verify`, the transactions' check), never by its
-- id alone: the entry's index becomes the key. Two entries a payout.
ALTER TABLE postings DROP CONSTRAINT postings_pkey,
    ADD CONSTRAINT postings_pkey PRIMARY KEY (entry_id, account_id, id);
DROP INDEX postings_entry_account;

-- The audit and activity logs are read only by business, newest first (their keyset): the
-- keyset is the key. One entry each.
ALTER TABLE audit_logs DROP CONSTRAINT audit_logs_pkey,
    ADD CONSTRAINT audit_logs_pkey PRIMARY KEY (business_id, created_at, id);
DROP INDEX audit_logs_keyset;
ALTER TABLE activity_logs DROP CONSTRAINT activity_logs_pkey,
    ADD CONSTRAINT activity_logs_pkey PRIMARY KEY (business_id, created_at, id);
DROP INDEX activity_logs_keyset;
