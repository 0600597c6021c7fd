-- Webhooks: each business's endpoint and signing secrets, the delivery state of every domain
-- event (kept on `events`, written with the change it describes), and every attempt's outcome.

CREATE TABLE webhook_configurations (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL UNIQUE REFERENCES businesses (id),
    url TEXT NOT NULL,
    is_active SMALLINT NOT NULL CHECK (is_active IN (0, 1)),
    ip_whitelist TEXT NOT NULL, -- JSON array of addresses and CIDR ranges; [] = no restriction
    event_types TEXT NOT NULL, -- JSON array of event kinds; [] = every kind
    -- The signing secret (`whsec_<base64>`): HMAC needs it, so it is kept, not hashed.
    secret TEXT NOT NULL,
    -- After a rotation, the previous secret signs too until it expires.
    previous_secret TEXT NULL,
    previous_secret_expires_at TEXT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

-- Delivery state. `next_attempt_at` doubles as the lease: the dispatcher that claims an event
-- moves it past the attempt's longest possible duration, so no other process sends it meanwhile.
ALTER TABLE events ADD COLUMN delivery_status TEXT NOT NULL DEFAULT 'pending'
    CHECK (delivery_status IN ('pending', 'delivered', 'failed', 'skipped'));
ALTER TABLE events ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
-- `attempts` when the current retry budget began (a replay starts a fresh one).
ALTER TABLE events ADD COLUMN budget_start INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN next_attempt_at TEXT NULL;
ALTER TABLE events ADD COLUMN last_attempt_at TEXT NULL;
ALTER TABLE events ADD COLUMN last_response_status INTEGER NULL;
ALTER TABLE events ADD COLUMN last_error TEXT NULL;
-- Events from before webhooks existed had no endpoint to go to.
UPDATE events SET delivery_status = 'skipped';
CREATE INDEX events_due ON events (next_attempt_at) WHERE delivery_status = 'pending';

-- One row per delivery attempt, shown by fetch_webhook_events.
CREATE TABLE webhook_attempts (
    id TEXT PRIMARY KEY,
    event_id TEXT NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    attempted_at TEXT NOT NULL,
    url TEXT NOT NULL,
    response_status INTEGER NULL, -- NULL: no HTTP answer (see error)
    error TEXT NULL,
    latency_ms BIGINT NOT NULL,
    response_body TEXT NULL -- the first KiB of the answer
);
CREATE INDEX webhook_attempts_event ON webhook_attempts (event_id, attempted_at);
