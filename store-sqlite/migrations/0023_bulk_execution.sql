-- Authorising and paying a bulk transfer (issue 60): see PostgreSQL's 0032_bulk_execution.sql.
INSERT INTO internal_accounts (id, code, name, created_at) VALUES
    ('00000000-0000-4000-8000-000000000005', 'sandbox.bulk_reserved', 'Bulk transfers authorised, not yet paid (sandbox)', '2026-12-07T00:00:00.000000Z'),
    ('00000000-0000-4000-8000-000000000015', 'production.bulk_reserved', 'Bulk transfers authorised, not yet paid', '2026-12-07T00:00:00.000000Z');

ALTER TABLE bulk_transfers ADD COLUMN created_by_name TEXT;
ALTER TABLE bulk_transfers ADD COLUMN authorised_by_name TEXT;
ALTER TABLE bulk_transfers ADD COLUMN reviewed_by_name TEXT;
ALTER TABLE bulk_transfers ADD COLUMN authorised_by TEXT;
ALTER TABLE bulk_transfers ADD COLUMN credential_issued_by TEXT;
ALTER TABLE bulk_transfers ADD COLUMN authorised_at TEXT;
ALTER TABLE bulk_transfers ADD COLUMN reviewed_by TEXT;
ALTER TABLE bulk_transfers ADD COLUMN reviewed_at TEXT;
ALTER TABLE bulk_transfers ADD COLUMN review_reason TEXT;
ALTER TABLE bulk_transfers ADD COLUMN expires_at TEXT;
ALTER TABLE bulk_transfers ADD COLUMN reserved INTEGER NOT NULL DEFAULT 0;
ALTER TABLE bulk_transfers ADD COLUMN paid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE bulk_transfers ADD COLUMN released INTEGER NOT NULL DEFAULT 0;
ALTER TABLE bulk_transfers ADD COLUMN next_index INTEGER NOT NULL DEFAULT 0;
ALTER TABLE bulk_transfers ADD COLUMN executed_at TEXT;
ALTER TABLE bulk_transfers ADD COLUMN completed_at TEXT;
CREATE INDEX bulk_transfers_held ON bulk_transfers (expires_at)
    WHERE status = 'pending_approval';
CREATE INDEX bulk_transfers_executing ON bulk_transfers (next_attempt_at)
    WHERE status = 'executing';

ALTER TABLE bulk_transfer_items ADD COLUMN failure_code TEXT;
ALTER TABLE bulk_transfer_items ADD COLUMN failure_message TEXT;
