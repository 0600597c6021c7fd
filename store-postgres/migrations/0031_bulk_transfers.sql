-- Bulk transfers (issue 60): a business pays many beneficiaries in one run. A batch is written
-- with its items as they were sent, then validated by a worker under a lease (each item's name
-- enquired, its amount, fee and VAT judged), so a batch of thousands never holds a request open
-- and a process that stops mid-validation leaves the rest to the next. Nothing moves until the
-- batch is authorised.
--
-- Each item's `transfer_id` is drawn when the batch is written: the item's transfer, when it
-- pays, has that id, so the primary key of `transfers` refuses a second payment of one item
-- whatever crashed or was retried.
CREATE TABLE bulk_transfers (
    id UUID PRIMARY KEY,
    business_id UUID NOT NULL REFERENCES businesses (id),
    -- The client's own, unique in the business for ever.
    reference TEXT,
    source_account_id UUID NOT NULL REFERENCES accounts (id),
    source_account_number TEXT NOT NULL,
    on_invalid TEXT NOT NULL CHECK (on_invalid IN ('refuse_batch', 'skip_invalid')),
    status TEXT NOT NULL CHECK (status IN ('validating', 'validated', 'invalid',
        'pending_approval', 'scheduled', 'executing', 'completed', 'cancelled', 'rejected',
        'expired')),
    narration TEXT,
    execute_at TIMESTAMPTZ,
    item_count BIGINT NOT NULL CHECK (item_count >= 1),
    valid_count BIGINT NOT NULL DEFAULT 0,
    invalid_count BIGINT NOT NULL DEFAULT 0,
    -- Of the valid items.
    total_amount BIGINT NOT NULL DEFAULT 0,
    total_fee BIGINT NOT NULL DEFAULT 0,
    total_vat BIGINT NOT NULL DEFAULT 0,
    created_by TEXT NOT NULL,
    created_via TEXT NOT NULL CHECK (created_via IN ('dashboard', 'integration')),
    -- The validation worker's bookkeeping.
    attempts BIGINT NOT NULL DEFAULT 0,
    lease_owner TEXT,
    lease_until TIMESTAMPTZ,
    next_attempt_at TIMESTAMPTZ,
    validated_at TIMESTAMPTZ,
    cancelled_at TIMESTAMPTZ,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX bulk_transfers_reference ON bulk_transfers (reference, business_id);
-- The business's list, newest first.
CREATE INDEX bulk_transfers_business ON bulk_transfers (business_id, created_at, id);
-- What the validation worker takes up, due first.
CREATE INDEX bulk_transfers_validating ON bulk_transfers (next_attempt_at)
    WHERE status = 'validating';

CREATE TABLE bulk_transfer_items (
    bulk_transfer_id UUID NOT NULL REFERENCES bulk_transfers (id),
    idx BIGINT NOT NULL CHECK (idx >= 0),
    transfer_id UUID NOT NULL,
    -- The saved beneficiary the item named, if it named one (its details are copied here).
    beneficiary_id UUID,
    account_number TEXT NOT NULL,
    bank_code TEXT NOT NULL,
    -- As sent; the holder's name as the bank gave it is `confirmed_name`.
    account_name TEXT NOT NULL,
    amount BIGINT NOT NULL,
    narration TEXT,
    reference TEXT,
    validation TEXT NOT NULL CHECK (validation IN ('pending', 'valid', 'invalid')),
    bank_name TEXT,
    transfer_type TEXT CHECK (transfer_type IN ('intra', 'inter')),
    confirmed_name TEXT,
    enquired_at TIMESTAMPTZ,
    fee BIGINT,
    vat BIGINT,
    refusal_code TEXT,
    refusal_message TEXT,
    PRIMARY KEY (bulk_transfer_id, idx)
);
