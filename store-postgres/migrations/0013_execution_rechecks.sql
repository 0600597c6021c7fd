-- Money rules found from outside (issue 28). Every row is kept; what changes meaning is
-- brought to the new meaning here.

-- 1. Maker and checker are two people, also through integration credentials: whoever issued
--    the client secret a transfer was made with is its maker and may not approve it.
--    `secret_issued_by` is the member who last regenerated the secret (NULL: the operator
--    issued it); for secrets issued before this migration, the member of the last
--    `regenerate_secret` audit entry, which is written in the regeneration's transaction.
ALTER TABLE businesses ADD COLUMN secret_issued_by TEXT NULL;
UPDATE businesses SET secret_issued_by = (
    SELECT a.user_id FROM audit_logs a
    WHERE a.business_id = businesses.id AND a.action = 'regenerate_secret'
    ORDER BY a.created_at DESC, a.id DESC LIMIT 1
);

--    `credential_issued_by` is that member on each transfer made with integration
--    credentials, as it was when the transfer was made (NULL otherwise). Transfers still
--    held get the business's current issuer: the secret of their time is the current one
--    unless it was regenerated since, which revoked their sessions anyway.
ALTER TABLE transfers ADD COLUMN credential_issued_by TEXT NULL;
UPDATE transfers SET credential_issued_by = (
    SELECT b.secret_issued_by FROM businesses b WHERE b.id = transfers.business_id
)
WHERE initiated_via = 'integration' AND transfer_status = 'pending_approval';

-- 2. A held transfer counts toward the daily limit of the day it executes (its approval), not
--    of the day it was held: the running totals no longer count `pending_approval`. The
--    transfers held now were counted on their day; that is taken back, and their approval
--    counts them on its own day (and sets their `day`).
UPDATE daily_transfer_totals SET amount = amount - COALESCE((
    SELECT SUM(t.amount) FROM transfers t
    WHERE t.business_id = daily_transfer_totals.business_id
      AND t.day = daily_transfer_totals.day
      AND t.transfer_status = 'pending_approval'
), 0);
