-- `kobo ledger verify` looks, for every transaction, for the posting of its entry on its account
-- (`entry_id = ? AND account_id = ?`). With one index on each column and no statistics (nothing
-- runs ANALYZE on SQLite), SQLite chose `postings_account`: every posting of the account, for
-- every transaction, quadratic in an account's history (minutes for 85k transactions after the
-- long chaos run). An index on both columns is the best choice with or without statistics; it
-- also serves every lookup by entry alone, so it replaces `postings_entry`.
CREATE INDEX postings_entry_account ON postings (entry_id, account_id);
DROP INDEX postings_entry;
