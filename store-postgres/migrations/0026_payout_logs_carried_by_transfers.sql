-- Rows a payout writes (issue 31): a payout's audit entry and an integration payout's activity
-- entry are its transfer. The audit entry said what the transfer says (its business, its time,
-- the transfer as its target, the member who made it) and four things more: the action
-- (`funds_transfer`), the maker's name as shown then, the caller's address and the request's
-- id; the activity entry said the same address and request id and what the call was answered
-- (its endpoint and message, a success). Two rows and two index entries of every payout.
--
-- The transfer written in the same batch as its entry now carries it: `audit_user_name` (NULL
-- when it carries no audit entry), `call_ip_address` and `call_request_id` for both entries,
-- and `activity_endpoint` and `activity_message` (NULL when it carries no activity entry).
-- `audit_logs` and `activity_logs` keep every other entry and every row written before this
-- migration, which stays where it is; the listings read both places, each entry once, a page
-- from each by its business's key (`transfers_keyset` for the carried ones), merged. A
-- carried entry's id is its
-- transfer's (an entry names its transfer in `target_id` too); its time is the transfer's
-- creation, which nothing updates, and neither do the carried columns once written (an
-- approval or a NIP settlement updates the transfer's status, never these). The audit
-- entry's response code is 200 and its day the UTC day of its time, as `audit_logs`'. Adding
-- the columns rewrites no table (no default).
ALTER TABLE transfers
    ADD COLUMN audit_user_name text,
    ADD COLUMN call_ip_address text,
    ADD COLUMN call_request_id text,
    ADD COLUMN activity_endpoint text,
    ADD COLUMN activity_message text;
