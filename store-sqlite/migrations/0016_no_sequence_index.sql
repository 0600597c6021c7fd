-- `transactions_sequence` checked that a business's sequences never repeat, at the cost of an
-- index entry per transaction (issue 31, as PostgreSQL's migration 0020). The business's
-- ledger head hands each place out once, in the write turn that moves the money
-- (`money::ledger`); nothing reads transactions by sequence, and `kobo ledger verify` reports
-- a repeated one.
DROP INDEX transactions_sequence;
