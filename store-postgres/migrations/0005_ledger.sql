-- The ledger: balances, customers of virtual accounts, journal entries of balanced postings,
-- the transactions and settlements businesses see, and the domain events webhooks deliver.
--
-- Money is BIGINT kobo everywhere. A posting's amount is signed, credit positive: the postings
-- of one journal entry sum to zero, and so does the whole ledger. Customer-facing balances
-- live on `accounts.balance` and never go negative (the posting statement checks it; the
-- CHECK is the last line of defence). Internal accounts (the bank's own) keep no stored
-- balance: theirs is the sum of their postings, so no hot row serializes every business.

ALTER TABLE accounts ADD COLUMN balance BIGINT NOT NULL DEFAULT 0 CHECK (balance >= 0);
ALTER TABLE accounts ADD COLUMN last_balance_update TEXT NULL;
ALTER TABLE accounts ADD COLUMN customer_id TEXT NULL;
CREATE INDEX accounts_parent ON accounts (parent_account_id);

-- The end-customer behind a virtual account. BVN and NIN are never stored: only a keyed hash
-- (to refuse a second account for the same person) and which of the two was verified.
CREATE TABLE customers (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses (id),
    email TEXT NULL,
    phone TEXT NULL,
    bvn_hash TEXT NULL,
    nin_hash TEXT NULL,
    verified_identities TEXT NOT NULL, -- JSON array: ["bvn"], ["nin"] or ["bvn", "nin"]
    verified_name TEXT NOT NULL,
    metadata TEXT NOT NULL, -- JSON object, as given
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX customers_bvn ON customers (business_id, bvn_hash);
CREATE UNIQUE INDEX customers_nin ON customers (business_id, nin_hash);

-- The bank's own accounts, per environment: inbound settlement (money arriving over NIP),
-- NIP in flight, fees.
CREATE TABLE internal_accounts (
    id TEXT PRIMARY KEY,
    code TEXT NOT NULL UNIQUE, -- `sandbox.nip_settlement`, ...
    name TEXT NOT NULL,
    created_at TEXT NOT NULL
);

-- One row per business, locked by every posting of the business: it hands out the listing
-- sequence and a strictly increasing `created_at`, so the order of a business's transactions
-- is their commit order (a reader paging by cursor never has a row appear behind it).
CREATE TABLE ledger_heads (
    business_id TEXT PRIMARY KEY REFERENCES businesses (id),
    last_sequence BIGINT NOT NULL,
    last_posted_at TEXT NOT NULL
);

CREATE TABLE journal_entries (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses (id),
    kind TEXT NOT NULL, -- `inbound_credit`, ...
    created_at TEXT NOT NULL
);

CREATE TABLE postings (
    id TEXT PRIMARY KEY,
    entry_id TEXT NOT NULL REFERENCES journal_entries (id),
    account_id TEXT NOT NULL, -- accounts.id or internal_accounts.id
    amount BIGINT NOT NULL CHECK (amount <> 0), -- kobo, credit positive
    created_at TEXT NOT NULL
);
CREATE INDEX postings_entry ON postings (entry_id);
CREATE INDEX postings_account ON postings (account_id);

CREATE TABLE transactions (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses (id),
    account_id TEXT NOT NULL REFERENCES accounts (id),
    entry_id TEXT NOT NULL REFERENCES journal_entries (id),
    sequence BIGINT NOT NULL, -- from ledger_heads: commit order within the business
    reference_number TEXT NOT NULL UNIQUE,
    transaction_type TEXT NOT NULL CHECK (transaction_type IN ('credit', 'debit')),
    category TEXT NOT NULL CHECK (category IN ('collection', 'transfer', 'reversal', 'fee')),
    status TEXT NOT NULL CHECK (status IN ('success', 'pending', 'failed', 'reversed')),
    channel TEXT NOT NULL CHECK (channel IN ('nip', 'intra', 'internal')),
    amount BIGINT NOT NULL CHECK (amount > 0),
    narration TEXT NOT NULL,
    narration_key TEXT NOT NULL, -- lower-cased narration and reference, for `search`
    session_id TEXT NULL,
    originator_account_number TEXT NULL,
    originator_account_name TEXT NULL,
    originator_bank_code TEXT NULL,
    originator_bank_name TEXT NULL,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX transactions_sequence ON transactions (business_id, sequence);
CREATE INDEX transactions_keyset ON transactions (business_id, created_at, id);
-- Per-account aggregates (collections, summaries, metrics) read only the index.
CREATE INDEX transactions_account ON transactions (account_id, category, status, created_at, amount);

-- Settlements: inbound credits cleared to an account (one per collection, same id).
CREATE TABLE settlements (
    id TEXT PRIMARY KEY REFERENCES transactions (id),
    business_id TEXT NOT NULL REFERENCES businesses (id),
    account_id TEXT NOT NULL REFERENCES accounts (id),
    reference TEXT NOT NULL,
    amount BIGINT NOT NULL CHECK (amount > 0),
    status TEXT NOT NULL,
    settlement_date TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX settlements_keyset ON settlements (business_id, created_at, id);

-- Domain events (`account.created`, `collection.received`, ...), written in the transaction
-- of the change they describe; webhook delivery reads them from here.
CREATE TABLE events (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses (id),
    type TEXT NOT NULL,
    payload TEXT NOT NULL, -- the event's `data`, JSON
    created_at TEXT NOT NULL
);
CREATE INDEX events_business ON events (business_id, created_at, id);

-- The internal accounts of both environments (fixed ids: `money::ledger::Internal`).
INSERT INTO internal_accounts (id, code, name, created_at) VALUES
    ('00000000-0000-4000-8000-000000000001', 'sandbox.nip_settlement', 'NIP settlement (sandbox)', '2026-11-23T00:00:00.000000Z'),
    ('00000000-0000-4000-8000-000000000002', 'sandbox.nip_in_flight', 'NIP transfers in flight (sandbox)', '2026-11-23T00:00:00.000000Z'),
    ('00000000-0000-4000-8000-000000000003', 'sandbox.fees', 'Fee income (sandbox)', '2026-11-23T00:00:00.000000Z'),
    ('00000000-0000-4000-8000-000000000011', 'production.nip_settlement', 'NIP settlement', '2026-11-23T00:00:00.000000Z'),
    ('00000000-0000-4000-8000-000000000012', 'production.nip_in_flight', 'NIP transfers in flight', '2026-11-23T00:00:00.000000Z'),
    ('00000000-0000-4000-8000-000000000013', 'production.fees', 'Fee income', '2026-11-23T00:00:00.000000Z');
