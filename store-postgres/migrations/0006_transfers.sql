-- Transfers: money leaving an account, within Kobo (one transaction) or over NIP (debited
-- into the NIP in-flight account first, then submitted by a worker that leases the row).

CREATE TABLE transfers (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses (id),
    reference_number TEXT NOT NULL UNIQUE,
    reference TEXT NULL, -- the client's own, unique in the business for ever
    source_account_id TEXT NOT NULL REFERENCES accounts (id),
    beneficiary_account_number TEXT NOT NULL,
    beneficiary_account_name TEXT NOT NULL,
    beneficiary_account_id TEXT NULL REFERENCES accounts (id), -- intra-bank only
    bank_code TEXT NOT NULL,
    bank_name TEXT NOT NULL,
    transfer_type TEXT NOT NULL CHECK (transfer_type IN ('intra', 'inter')),
    amount BIGINT NOT NULL CHECK (amount > 0),
    fee BIGINT NOT NULL CHECK (fee >= 0),
    vat BIGINT NOT NULL CHECK (vat >= 0),
    narration TEXT NOT NULL,
    transfer_status TEXT NOT NULL CHECK (transfer_status IN ('pending_approval', 'processing',
        'success', 'failed', 'reversed', 'rejected', 'cancelled', 'expired')),
    approval_status TEXT NOT NULL CHECK (approval_status IN ('not_required', 'awaiting_approval',
        'approved', 'rejected')),
    session_id TEXT NULL,
    failure_reason TEXT NULL,
    reversal_reference_number TEXT NULL,
    debit_transaction_id TEXT NULL REFERENCES transactions (id),
    fee_transaction_id TEXT NULL REFERENCES transactions (id),
    initiated_by TEXT NOT NULL,
    initiated_via TEXT NOT NULL CHECK (initiated_via IN ('dashboard', 'integration')),
    reviewed_by TEXT NULL,
    expires_at TEXT NULL,
    day TEXT NOT NULL, -- YYYY-MM-DD in Lagos time: the daily limit's day
    -- The NIP worker's bookkeeping.
    submitted SMALLINT NOT NULL DEFAULT 0 CHECK (submitted IN (0, 1)),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NULL,
    lease_until TEXT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX transfers_reference ON transfers (business_id, reference);
CREATE INDEX transfers_keyset ON transfers (business_id, created_at, id);
CREATE INDEX transfers_day ON transfers (business_id, day);
CREATE INDEX transfers_due ON transfers (transfer_status, next_attempt_at);

-- A business's daily transfer limit in kobo; NULL: the configured default.
ALTER TABLE businesses ADD COLUMN daily_transfer_limit BIGINT NULL;

-- Refusals an idempotent retry meets again (`06`, `26`, `42`, `49`) are stored and replayed.
ALTER TABLE idempotency_keys ADD COLUMN refusal_code TEXT NULL;
ALTER TABLE idempotency_keys ADD COLUMN refusal_message TEXT NULL;

-- Funds reserved by transfers awaiting approval, per environment.
INSERT INTO internal_accounts (id, code, name, created_at) VALUES
    ('00000000-0000-4000-8000-000000000004', 'sandbox.held', 'Transfers awaiting approval (sandbox)', '2026-11-23T00:00:00.000000Z'),
    ('00000000-0000-4000-8000-000000000014', 'production.held', 'Transfers awaiting approval', '2026-11-23T00:00:00.000000Z');

-- The maker-checker policy: at most one per business.
CREATE TABLE approval_policies (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL UNIQUE REFERENCES businesses (id),
    is_active SMALLINT NOT NULL CHECK (is_active IN (0, 1)),
    min_amount BIGINT NOT NULL CHECK (min_amount >= 0),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
