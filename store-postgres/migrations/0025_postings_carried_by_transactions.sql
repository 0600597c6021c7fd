-- Rows a payout writes (issue 31): a customer's posting is its transaction. An intra-bank
-- payout's entry posts to two customer accounts, and each of those postings said again what the
-- transaction of that side says (its entry, its account, its amount signed by its type); the
-- entry's row said what the debit's transaction says (its business, its time) and
-- one word, its kind. Three rows and three index entries of each payout repeated another row.
--
-- A transaction written with its entry's posting now carries it (`carries_posting`), and one
-- transaction of the entry's business written with the entry carries the entry's row
-- (`entry_kind`, the entry's kind; NULL on every other transaction). `postings` and
-- `journal_entries` keep the rest: the postings to the bank's internal accounts, which have no
-- transaction, every entry written apart from its transactions (a NIP transfer's reversal, an
-- approval's), and every row written before this migration, which stays where it is. The
-- ledger as a whole is read through two views, `ledger_postings` and `ledger_entries`: the
-- rows of both places, each posting and each entry once (`kobo ledger verify` reads them). A
-- carried posting's id and time are its transaction's (a fee's transaction, or a recipient's
-- in its own ledger, may be a microsecond after the entry); nothing compares either.
--
-- Nothing online reads postings by entry or account, and a transaction's entry, account,
-- amount, type and time never change once written (only its status and NIP session do), so
-- what a carried posting says is as fixed as a row of `postings`. Adding the columns rewrites
-- no table (a constant default, PostgreSQL 11 and later).
ALTER TABLE transactions
    ADD COLUMN carries_posting boolean NOT NULL DEFAULT false,
    ADD COLUMN entry_kind text;

CREATE VIEW ledger_postings AS
    SELECT id, entry_id, account_id, amount, created_at FROM postings
    UNION ALL
    SELECT id, entry_id, account_id,
        CASE transaction_type WHEN 'credit' THEN amount ELSE -amount END, created_at
    FROM transactions WHERE carries_posting;

CREATE VIEW ledger_entries AS
    SELECT id, business_id, kind, created_at FROM journal_entries
    UNION ALL
    SELECT entry_id, business_id, entry_kind, created_at
    FROM transactions WHERE entry_kind IS NOT NULL;
