-- The generation of what authentication reads (issue 31): a counter every change that can
-- refuse a live token moves, in the same transaction as the change. Each process keeps the
-- sessions it authenticated in memory with the generation they were read at, and reads the
-- counter a few times a second: a token is checked without a read, and a revocation made
-- anywhere (another process, the operator's command line, a statement by hand) is seen
-- within the poll. Triggers move it, so no writer can forget to.
CREATE TABLE auth_generation (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    value BIGINT NOT NULL
);
INSERT INTO auth_generation (id, value) VALUES (1, 0);

CREATE TRIGGER auth_sessions_revoked AFTER UPDATE OF revoked_at, expires_at ON sessions
BEGIN
    UPDATE auth_generation SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER auth_sessions_deleted AFTER DELETE ON sessions WHEN OLD.revoked_at IS NULL
BEGIN
    UPDATE auth_generation SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER auth_members_changed
AFTER UPDATE OF is_active, role_id, password_hash, email, first_name, last_name, business_id ON members
BEGIN
    UPDATE auth_generation SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER auth_members_deleted AFTER DELETE ON members
BEGIN
    UPDATE auth_generation SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER auth_roles_changed AFTER UPDATE OF permission_codes ON roles
BEGIN
    UPDATE auth_generation SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER auth_roles_deleted AFTER DELETE ON roles
BEGIN
    UPDATE auth_generation SET value = value + 1 WHERE id = 1;
END;
CREATE TRIGGER auth_businesses_changed
AFTER UPDATE OF status, client_id, client_secret_hash, secret_issued_by ON businesses
BEGIN
    UPDATE auth_generation SET value = value + 1 WHERE id = 1;
END;
