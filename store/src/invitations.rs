//! The rows of `invitations` (see the datastore module of the same name in `kobo`).

use chrono::{DateTime, Utc};

/// An invitation to write.
#[derive(Clone, Copy, Debug)]
pub struct NewInvitation<'a> {
    pub business_id: &'a str,
    pub member_id: &'a str,
    pub token_hash: &'a str,
    pub expires_at: DateTime<Utc>,
}

/// An invitation with its member and its business's client id, as accepting it reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invitation {
    pub id: String,
    pub business_id: String,
    pub member_id: String,
    pub expires_at: DateTime<Utc>,
    pub used_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
    /// The member's: `pending` or `accepted`.
    pub invitation_status: String,
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    /// The business's.
    pub client_id: String,
}

crate::contract! {
    /// `invitations`, in each store.
    pub trait Invitations in invitations, functions invitations_functions {
        /// Writes an open invitation at `now`.
        tx fn insert(new: &NewInvitation<'_>, now: DateTime<Utc>) -> ();
        /// The invitation whose token hashes to `token_hash`, if any.
        pool fn find_by_token_hash(token_hash: &str) -> Option<Invitation>;
        /// Uses the invitation `id` at `now`; `false` when it was used or revoked already.
        tx fn use_up(id: &str, now: DateTime<Utc>) -> bool;
        /// Revokes the member's open invitations at `now`; returns how many.
        tx fn revoke_open_of_member(member_id: &str, now: DateTime<Utc>) -> u64;
    }
}
