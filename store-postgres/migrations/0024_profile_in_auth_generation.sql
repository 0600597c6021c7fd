-- A Dashboard session is read with its member's profile (the member, their role and their
-- business, as `get_profile` answers them), and each process keeps it with the session
-- (migration 0015): `get_profile` then reads nothing (issue 31). The kept profile is right only
-- while the generation moves with every change to what it shows, so the triggers of 0015 now
-- also fire for the profile's columns they did not cover: a member's login time, invitation
-- status and join date, a role's name and description, a business's name. A change of a
-- member's open invitation moves nothing: only a member who accepted theirs has a session.
DROP TRIGGER auth_members_changed ON members;
CREATE TRIGGER auth_members_changed
    AFTER UPDATE OF is_active, role_id, password_hash, email, first_name, last_name, business_id,
        last_login, invitation_status, date_joined, created_at
    ON members FOR EACH STATEMENT EXECUTE FUNCTION kobo_auth_changed();
DROP TRIGGER auth_roles_changed ON roles;
CREATE TRIGGER auth_roles_changed
    AFTER UPDATE OF permission_codes, name, description, is_built_in, business_id, created_at,
        updated_at
    ON roles FOR EACH STATEMENT EXECUTE FUNCTION kobo_auth_changed();
DROP TRIGGER auth_businesses_changed ON businesses;
CREATE TRIGGER auth_businesses_changed
    AFTER UPDATE OF status, client_id, client_secret_hash, secret_issued_by, name, created_at
    ON businesses FOR EACH STATEMENT EXECUTE FUNCTION kobo_auth_changed();
