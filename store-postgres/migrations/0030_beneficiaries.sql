-- Saved beneficiaries (issue 60): accounts a business pays again and again, each saved once
-- per business (the unique index is the dedupe: saving it again refreshes the row), with the
-- holder's name as the bank gave it at `enquired_at`.
CREATE TABLE beneficiaries (
    id UUID PRIMARY KEY,
    business_id UUID NOT NULL REFERENCES businesses (id),
    bank_code TEXT NOT NULL,
    bank_name TEXT NOT NULL,
    account_number TEXT NOT NULL,
    account_name TEXT NOT NULL,
    nickname TEXT,
    enquired_at TIMESTAMPTZ NOT NULL,
    created_by TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX beneficiaries_account ON beneficiaries (business_id, bank_code, account_number);
-- The business's list, newest first, and its count.
CREATE INDEX beneficiaries_business ON beneficiaries (business_id, created_at, id);
