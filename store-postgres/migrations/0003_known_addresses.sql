-- The addresses each credential (a login email, an integration client_id) has succeeded
-- from. An attempt from a known address is not slowed by failures sent from elsewhere
-- (platform::throttle); housekeeping forgets an address unused for 90 days.
CREATE TABLE known_addresses (
    credential TEXT NOT NULL,
    ip_address TEXT NOT NULL,
    last_success_at TEXT NOT NULL,
    PRIMARY KEY (credential, ip_address)
);
