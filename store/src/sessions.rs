//! The rows of `sessions` (see the datastore module of the same name in `kobo`).

use chrono::{DateTime, Utc};

use crate::members::Profile;

/// A session to write.
#[derive(Clone, Copy, Debug)]
pub struct NewSession<'a> {
    pub id: &'a str,
    pub business_id: &'a str,
    /// `dashboard` or `integration`.
    pub family: &'a str,
    pub member_id: Option<&'a str>,
    pub ip_address: &'a str,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

/// A session with what authenticating its token needs: its business, and for a Dashboard
/// session its member (if the member still exists) and the member's role's permissions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Authenticated {
    pub business_id: String,
    pub family: String,
    pub member_id: Option<String>,
    pub expires_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
    /// The member's, `None` when the session has no member (or it is gone).
    pub member: Option<SessionMember>,
    pub business_status: String,
    pub client_id: String,
    pub secret_issued_by: Option<String>,
    /// Whether the business's integration credentials may be used: issued by the bank's
    /// operator, or by a member still active whose role still grants `credential.manage`.
    pub credentials_usable: bool,
    /// The member's profile as `get_profile` answers it, read in the same snapshot: `None`
    /// without a member, or when the member's role is gone or is not one their business can
    /// use.
    pub profile: Option<Profile>,
    /// The generation of what authentication reads (the table `auth_generation`, moved by
    /// triggers on every change that can refuse a live token or change the profile), read in
    /// the same snapshot.
    pub generation: i64,
}

/// The member behind a session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionMember {
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub role_id: String,
    pub is_active: bool,
    /// The role's stored permission codes (a JSON array), `None` when the role is gone.
    pub permission_codes: Option<String>,
}

crate::contract! {
    /// `sessions`, in each store.
    pub trait Sessions in sessions, functions sessions_functions {
        /// Writes a live session.
        tx fn insert(new: &NewSession<'_>) -> ();
        /// The session `id` as authentication reads it, if it exists.
        pool fn find_for_token(id: &str) -> Option<Authenticated>;
        /// The generation of what authentication reads: every change that can refuse a live token
        /// moves it in the change's transaction (triggers of the stores' migrations).
        pool fn auth_generation() -> i64;
        /// Revokes the business's session `id` at `now`, if it is live.
        auth_tx fn revoke(id: &str, business_id: &str, now: DateTime<Utc>) -> ();
        /// Revokes every live session of the member at `now`.
        auth_tx fn revoke_all_of_member(member_id: &str, now: DateTime<Utc>) -> ();
        /// Revokes every live integration session of the business at `now`.
        auth_tx fn revoke_integration_of_business(business_id: &str, now: DateTime<Utc>) -> ();
        /// Deletes the sessions that expired or were revoked before `cutoff`, on the pool; returns
        /// how many.
        pool fn purge_finished(cutoff: DateTime<Utc>) -> u64;
        /// Moves the end of the live Dashboard session `id` on to `until` (its idle timeout),
        /// unless it is revoked, over at `now`, or ends at `until` or later. Whether it moved.
        tx fn extend_idle(id: &str, now: DateTime<Utc>, until: DateTime<Utc>) -> bool;
    }
}
