-- An event's entry in `events_created` (0012) was written with every event, two a payout, for
-- housekeeping's purge alone. The purge now reads each business's expired events through
-- `events_business (business_id, created_at, id)`, a range per business below the cutoff, so
-- a pass still reads only what expired (and a business's few events still queued), and a
-- payout writes two index entries fewer (issue 31).
DROP INDEX events_created;
