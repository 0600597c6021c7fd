-- Exports (issue 61): files written in the background, a part at a time. Each part is
-- committed with where the next one starts (`cursor_created_at`, `cursor_id`) and the counts
-- so far, so a process that stops mid-export leaves it `running` under a lease that ends, and
-- the next worker resumes after the last committed part. `ready` is written only by the worker
-- that holds the lease, after the last part: a ready export never misses a part.
CREATE TABLE exports (
    id UUID PRIMARY KEY,
    business_id UUID NOT NULL REFERENCES businesses (id),
    category TEXT NOT NULL CHECK (category IN ('transaction_csv', 'account_statement_csv',
        'account_statement_ofx', 'account_statement_camt053')),
    status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'ready', 'failed', 'expired')),
    account_id UUID REFERENCES accounts (id),
    account_number TEXT,
    start_date DATE NOT NULL,
    end_date DATE NOT NULL,
    row_count BIGINT NOT NULL DEFAULT 0,
    size_bytes BIGINT NOT NULL DEFAULT 0,
    parts BIGINT NOT NULL DEFAULT 0,
    cursor_created_at TIMESTAMPTZ,
    cursor_id UUID,
    file_name TEXT NOT NULL,
    content_type TEXT NOT NULL,
    failure_reason TEXT,
    attempts BIGINT NOT NULL DEFAULT 0,
    lease_owner TEXT,
    lease_until TIMESTAMPTZ,
    requested_by TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    completed_at TIMESTAMPTZ,
    expires_at TIMESTAMPTZ
);
-- The business's list, newest first, and its count of unfinished exports.
CREATE INDEX exports_business ON exports (business_id, created_at, id);
-- What a worker takes up, oldest first.
CREATE INDEX exports_waiting ON exports (created_at, id) WHERE status IN ('pending', 'running');
-- What expires.
CREATE INDEX exports_expiring ON exports (expires_at) WHERE status = 'ready';

CREATE TABLE export_parts (
    export_id UUID NOT NULL REFERENCES exports (id),
    part BIGINT NOT NULL CHECK (part >= 1),
    rows BIGINT NOT NULL,
    content BYTEA NOT NULL,
    PRIMARY KEY (export_id, part)
);
