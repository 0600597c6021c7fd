-- Scheduled bulk transfers (issue 60): a batch created with an `execute_at` still ahead is
-- reserved when authorised (or approved) and waits `scheduled`, `next_attempt_at` its
-- `execute_at`, until the executor's pass at that time makes it `executing`. The column and the
-- status were written with the table (0031); this is what finds the due ones.
CREATE INDEX bulk_transfers_scheduled ON bulk_transfers (next_attempt_at)
    WHERE status = 'scheduled';
