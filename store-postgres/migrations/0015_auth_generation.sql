-- The generation of what authentication reads (issue 31): a counter every change that can
-- refuse a live token moves, in the same transaction as the change, and announces on the
-- channel `kobo_auth` at commit. Each process keeps the sessions it authenticated in memory
-- with the generation they were read at, listens on the channel and reads the counter a few
-- times a second besides: a token is checked without a read, and a revocation made anywhere
-- (another process, the operator's command line, a statement by hand) is seen at once, or
-- within the poll if a notification is lost. Triggers move it, so no writer can forget to;
-- they fire once per statement, and only for the columns authentication reads.
CREATE TABLE auth_generation (
    id SMALLINT PRIMARY KEY CHECK (id = 1),
    value BIGINT NOT NULL
);
INSERT INTO auth_generation (id, value) VALUES (1, 0);

CREATE FUNCTION kobo_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    generation BIGINT;
BEGIN
    UPDATE auth_generation SET value = value + 1 WHERE id = 1 RETURNING value INTO generation;
    PERFORM pg_notify('kobo_auth', generation::text);
    RETURN NULL;
END
$$;

CREATE TRIGGER auth_sessions_revoked AFTER UPDATE OF revoked_at, expires_at ON sessions
    FOR EACH STATEMENT EXECUTE FUNCTION kobo_auth_changed();
CREATE TRIGGER auth_sessions_deleted AFTER DELETE ON sessions
    FOR EACH STATEMENT EXECUTE FUNCTION kobo_auth_changed();
CREATE TRIGGER auth_members_changed
    AFTER UPDATE OF is_active, role_id, password_hash, email, first_name, last_name, business_id
    ON members FOR EACH STATEMENT EXECUTE FUNCTION kobo_auth_changed();
CREATE TRIGGER auth_members_deleted AFTER DELETE ON members
    FOR EACH STATEMENT EXECUTE FUNCTION kobo_auth_changed();
CREATE TRIGGER auth_roles_changed AFTER UPDATE OF permission_codes ON roles
    FOR EACH STATEMENT EXECUTE FUNCTION kobo_auth_changed();
CREATE TRIGGER auth_roles_deleted AFTER DELETE ON roles
    FOR EACH STATEMENT EXECUTE FUNCTION kobo_auth_changed();
CREATE TRIGGER auth_businesses_changed
    AFTER UPDATE OF status, client_id, client_secret_hash, secret_issued_by ON businesses
    FOR EACH STATEMENT EXECUTE FUNCTION kobo_auth_changed();
