-- Index entries a payout writes (issue 31). Every index of a table a payout inserts into takes
-- an entry (and a log record) per row, so an index no payout-time read needs goes, or keeps
-- only the rows its readers look for.
--
-- `postings_account` indexed every posting by account, two per payout; nothing online reads
-- postings by account (`kobo ledger verify` reads them all). Its one reader by key, the bench
-- tools' check for production postings, looks only for the bank's internal accounts, whose ids
-- are the smallest UUIDs (migrations 0005 and 0006): only those postings are kept.
CREATE INDEX postings_internal ON postings (account_id)
    WHERE account_id < '00000000-0000-4000-8000-000000000100';
DROP INDEX postings_account;

-- `transfers_due` indexed every transfer by status; its readers (the NIP worker's lease, the
-- expiry of held transfers, a source's reserved money) look only for transfers still open,
-- held or in flight, and an intra-bank payout is written final.
CREATE INDEX transfers_open ON transfers (transfer_status, next_attempt_at)
    WHERE transfer_status IN ('pending_approval', 'processing');
DROP INDEX transfers_due;
