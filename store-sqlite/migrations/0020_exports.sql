-- Exports (issue 61): files written in the background, a part at a time. Each part is
-- committed with where the next one starts (`cursor_created_at`, `cursor_id`) and the counts
-- so far, so a process that stops mid-export leaves it `running` under a lease that ends, and
-- the next worker resumes after the last committed part. `ready` is written only by the worker
-- that holds the lease, after the last part: a ready export never misses a part.
CREATE TABLE exports (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses (id),
    category TEXT NOT NULL CHECK (category IN ('transaction_csv', 'account_statement_csv',
        'account_statement_ofx', 'account_statement_camt053')),
    status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'ready', 'failed', 'expired')),
    account_id TEXT REFERENCES accounts (id),
    account_number TEXT,
    start_date TEXT NOT NULL,
    end_date TEXT NOT NULL,
    row_count INTEGER NOT NULL DEFAULT 0,
    size_bytes INTEGER NOT NULL DEFAULT 0,
    parts INTEGER NOT NULL DEFAULT 0,
    cursor_created_at TEXT,
    cursor_id TEXT,
    file_name TEXT NOT NULL,
    content_type TEXT NOT NULL,
    failure_reason TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    lease_owner TEXT,
    lease_until TEXT,
    requested_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    completed_at TEXT,
    expires_at TEXT
);
CREATE INDEX exports_business ON exports (business_id, created_at, id);
CREATE INDEX exports_waiting ON exports (created_at, id) WHERE status IN ('pending', 'running');
CREATE INDEX exports_expiring ON exports (expires_at) WHERE status = 'ready';

CREATE TABLE export_parts (
    export_id TEXT NOT NULL REFERENCES exports (id),
    part INTEGER NOT NULL CHECK (part >= 1),
    rows INTEGER NOT NULL,
    content BLOB NOT NULL,
    PRIMARY KEY (export_id, part)
);
