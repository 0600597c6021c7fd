-- `transfers_day` served the daily limit's sum over a business's transfers of the day; the
-- running totals of `daily_transfer_totals` (0010) replaced that sum, and nothing reads it by
-- day any more (`kobo ledger verify` groups the whole table). Worse, it matched a client
-- reference's lookup (business_id, reference) on its first column as well as the unique
-- `transfers_reference` does on both: PostgreSQL's plan for that prepared statement, made on a
-- young table, could take it and filter every transfer of the business on each payout.
DROP INDEX transfers_day;
