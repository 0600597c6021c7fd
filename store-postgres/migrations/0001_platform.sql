-- The platform: businesses, credentials, team, roles, sessions, OTPs, logs, notifications,
-- idempotency keys and the accounts every business starts with.
--
-- One migration set for both stores: the same DDL and queries run on SQLite and PostgreSQL
-- through sqlx::Any. Portable conventions:
-- ids are UUID text; timestamps are RFC 3339 UTC text with microseconds
-- (`2026-11-02T09:20:00.000000Z`), so text order is time order; flags are SMALLINT 0/1;
-- money is BIGINT in kobo (minor units). Every business-owned row carries business_id.

CREATE TABLE businesses (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'inactive')),
    client_id TEXT NOT NULL UNIQUE,
    client_secret_hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE roles (
    id TEXT PRIMARY KEY,
    business_id TEXT NULL REFERENCES businesses (id), -- NULL for the built-in roles
    name TEXT NOT NULL,
    name_key TEXT NOT NULL, -- lower-cased name, for case-insensitive uniqueness
    description TEXT NOT NULL,
    permission_codes TEXT NOT NULL, -- JSON array of codes, sorted
    is_built_in SMALLINT NOT NULL CHECK (is_built_in IN (0, 1)),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX roles_business_name ON roles (business_id, name_key);

CREATE TABLE members (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses (id),
    email TEXT NOT NULL, -- lower-cased
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    role_id TEXT NOT NULL REFERENCES roles (id),
    password_hash TEXT NULL,
    is_active SMALLINT NOT NULL CHECK (is_active IN (0, 1)),
    invitation_status TEXT NOT NULL CHECK (invitation_status IN ('pending', 'accepted')),
    last_login TEXT NULL,
    date_joined TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
-- A person logs in with their email alone, so an email belongs to one member of one business.
CREATE UNIQUE INDEX members_email ON members (email);
CREATE INDEX members_business_joined ON members (business_id, date_joined, id);

CREATE TABLE invitations (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses (id),
    member_id TEXT NOT NULL REFERENCES members (id),
    token_hash TEXT NOT NULL UNIQUE,
    expires_at TEXT NOT NULL,
    used_at TEXT NULL,
    revoked_at TEXT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX invitations_member ON invitations (member_id);

CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses (id),
    family TEXT NOT NULL CHECK (family IN ('dashboard', 'integration')),
    member_id TEXT NULL REFERENCES members (id), -- set for dashboard sessions
    ip_address TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    revoked_at TEXT NULL
);
CREATE INDEX sessions_member ON sessions (member_id);
CREATE INDEX sessions_business ON sessions (business_id, family);

CREATE TABLE otps (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses (id),
    member_id TEXT NOT NULL REFERENCES members (id),
    code_hash TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    expires_at TEXT NOT NULL,
    used_at TEXT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX otps_member ON otps (member_id, created_at);

-- Progressive throttling of failed credential checks, per key (`login:email:...`, `login:ip:...`).
CREATE TABLE throttles (
    key TEXT PRIMARY KEY,
    failures INTEGER NOT NULL,
    window_started_at TEXT NOT NULL,
    locked_until TEXT NULL
);

CREATE TABLE activity_logs (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses (id),
    endpoint TEXT NOT NULL,
    method TEXT NOT NULL,
    response_code INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('success', 'error')),
    message TEXT NOT NULL,
    ip_address TEXT NOT NULL,
    request_id TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX activity_logs_keyset ON activity_logs (business_id, created_at, id);

CREATE TABLE audit_logs (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses (id),
    action TEXT NOT NULL,
    user_name TEXT NOT NULL,
    user_id TEXT NULL,
    ip_address TEXT NOT NULL,
    response_code INTEGER NOT NULL,
    day TEXT NOT NULL, -- YYYY-MM-DD of created_at: the entry's start_date and end_date
    target_type TEXT NULL,
    target_id TEXT NULL,
    request_id TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX audit_logs_keyset ON audit_logs (business_id, created_at, id);

-- Messages to people (invitations, OTPs). Kept even when sent, so an operator can read them
-- (`kobo outbox`); sent_at is set once the SMTP channel delivered it.
CREATE TABLE notifications (
    id TEXT PRIMARY KEY,
    business_id TEXT NULL REFERENCES businesses (id),
    channel TEXT NOT NULL,
    recipient TEXT NOT NULL,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    sent_at TEXT NULL,
    last_error TEXT NULL
);
CREATE INDEX notifications_created ON notifications (created_at, id);

CREATE TABLE idempotency_keys (
    business_id TEXT NOT NULL REFERENCES businesses (id),
    operation TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    response_data TEXT NULL, -- the `data` of the first success, JSON; NULL while in progress
    created_at TEXT NOT NULL,
    PRIMARY KEY (business_id, operation, idempotency_key)
);

CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses (id),
    account_number TEXT NOT NULL UNIQUE,
    account_name TEXT NOT NULL,
    account_type TEXT NOT NULL CHECK (account_type IN ('pool', 'current', 'virtual')),
    account_class TEXT NOT NULL CHECK (account_class IN ('primary', 'secondary')),
    status TEXT NOT NULL CHECK (status IN ('active', 'inactive', 'blocked', 'closed', 'pending')),
    parent_account_id TEXT NULL REFERENCES accounts (id),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX accounts_business_created ON accounts (business_id, created_at, id);

-- Monotonic counters (the NUBAN serial of each account kind).
CREATE TABLE sequences (
    name TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);
