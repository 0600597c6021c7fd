-- Authorising and paying a bulk transfer (issue 60). Authorisation reserves the batch's whole
-- total from its source account into `bulk_reserved` (one entry); a worker then pays each valid
-- item from the reservation as a transfer of its own, in order, moving `next_index` past the
-- item in the same commit (so a crash resumes after the last item paid, and an item's transfer,
-- whose id was drawn with the item, is never written twice); what the items did not spend is
-- released to the source account once the last item was paid.
INSERT INTO internal_accounts (id, code, name, created_at) VALUES
    ('00000000-0000-4000-8000-000000000005', 'sandbox.bulk_reserved', 'Bulk transfers authorised, not yet paid (sandbox)', '2026-12-07T00:00:00.000000Z'),
    ('00000000-0000-4000-8000-000000000015', 'production.bulk_reserved', 'Bulk transfers authorised, not yet paid', '2026-12-07T00:00:00.000000Z');

ALTER TABLE bulk_transfers
    -- The members' names as they were when they acted, for a checker who cannot read the team.
    ADD COLUMN created_by_name TEXT,
    ADD COLUMN authorised_by_name TEXT,
    ADD COLUMN reviewed_by_name TEXT,
    -- The member who authorised it, or `integration` (then `credential_issued_by` is the member
    -- who had issued the credentials: the maker, for the approval policy).
    ADD COLUMN authorised_by TEXT,
    ADD COLUMN credential_issued_by TEXT,
    ADD COLUMN authorised_at TIMESTAMPTZ,
    ADD COLUMN reviewed_by TEXT,
    ADD COLUMN reviewed_at TIMESTAMPTZ,
    ADD COLUMN review_reason TEXT,
    -- A held batch not reviewed by then expires, its reservation released.
    ADD COLUMN expires_at TIMESTAMPTZ,
    -- Kobo: set aside at authorisation, moved out to items' transfers, returned unspent.
    ADD COLUMN reserved BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN paid BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN released BIGINT NOT NULL DEFAULT 0,
    -- The first item not yet taken by the executor.
    ADD COLUMN next_index BIGINT NOT NULL DEFAULT 0,
    -- When the unspent reservation was released (every item paid or refused).
    ADD COLUMN executed_at TIMESTAMPTZ,
    ADD COLUMN completed_at TIMESTAMPTZ;
-- Held batches, by when they expire.
CREATE INDEX bulk_transfers_held ON bulk_transfers (expires_at)
    WHERE status = 'pending_approval';
-- What the executor takes up, due first.
CREATE INDEX bulk_transfers_executing ON bulk_transfers (next_attempt_at)
    WHERE status = 'executing';

-- Why a valid item was refused when it was to be paid (no transfer was written for it).
ALTER TABLE bulk_transfer_items
    ADD COLUMN failure_code TEXT,
    ADD COLUMN failure_message TEXT;
