-- Delivery state of the notification outbox, for the bounded dispatcher of `kobo serve`.
-- attempts: deliveries tried so far (the dispatcher gives up at its limit; the message stays
-- readable with `kobo outbox`). next_attempt_at: when the message may be tried next; NULL means
-- now. Claiming a message moves next_attempt_at past a lease, so two `kobo` processes sharing a
-- database never send the same message at the same time.
ALTER TABLE notifications ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE notifications ADD COLUMN next_attempt_at TEXT NULL;
CREATE INDEX notifications_unsent ON notifications (sent_at, next_attempt_at);
