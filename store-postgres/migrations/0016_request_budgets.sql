-- Each credential's request budget, one for all the processes on this database (issue 34):
-- the theoretical arrival time of the credential's next request (GCRA). A request, or a small
-- lease of them kept by one process, is granted by moving it forward in one statement, as long
-- as it stays within the burst of now. Idle credentials' rows are purged by housekeeping.
-- A table of its own: the previous release's processes never read it.
CREATE TABLE request_budgets (
    credential TEXT PRIMARY KEY,
    tat TIMESTAMPTZ NOT NULL
);
