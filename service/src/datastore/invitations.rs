//! `invitations`: the invitations sent to pending members (only their tokens' hashes), each
//! usable once until it expires or is revoked.

use super::{dispatch, Store, StoreError, Tx};
use chrono::{DateTime, Utc};
pub use kobo_store::invitations::{Invitation, NewInvitation};

/// Writes an open invitation at `now`.
pub async fn insert(
    tx: &mut Tx,
    new: &NewInvitation<'_>,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    dispatch!(tx.on(), invitations::insert(new, now))
}

/// The invitation whose token hashes to `token_hash`, if any.
pub async fn find_by_token_hash(
    store: &Store,
    token_hash: &str,
) -> Result<Option<Invitation>, StoreError> {
    dispatch!(store.on(), invitations::find_by_token_hash(token_hash))
}

/// Uses the invitation `id` at `now`; `false` when it was used or revoked already.
pub async fn use_up(tx: &mut Tx, id: &str, now: DateTime<Utc>) -> Result<bool, StoreError> {
    dispatch!(tx.on(), invitations::use_up(id, now))
}

/// Revokes the member's open invitations at `now`; returns how many.
pub async fn revoke_open_of_member(
    tx: &mut Tx,
    member_id: &str,
    now: DateTime<Utc>,
) -> Result<u64, StoreError> {
    dispatch!(tx.on(), invitations::revoke_open_of_member(member_id, now))
}
