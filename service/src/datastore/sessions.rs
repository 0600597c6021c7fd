//! `sessions`: every token's row, checked on every request, so revocation is immediate.

use super::{dispatch, Store, StoreError, Tx};
use chrono::{DateTime, Utc};
pub use kobo_store::sessions::{Authenticated, NewSession, SessionMember};

/// Writes a live session.
pub async fn insert(tx: &mut Tx, new: &NewSession<'_>) -> Result<(), StoreError> {
    dispatch!(tx.on(), sessions::insert(new))
}

/// The session `id` as authentication reads it, if it exists.
pub async fn find_for_token(store: &Store, id: &str) -> Result<Option<Authenticated>, StoreError> {
    dispatch!(store.on(), sessions::find_for_token(id))
}

/// Revokes the business's session `id` at `now`, if it is live.
pub async fn revoke(
    tx: &mut Tx,
    id: &str,
    business_id: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    tx.touch_auth();
    dispatch!(tx.on(), sessions::revoke(id, business_id, now))
}

/// Revokes every live session of the member at `now`.
pub async fn revoke_all_of_member(
    tx: &mut Tx,
    member_id: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    tx.touch_auth();
    dispatch!(tx.on(), sessions::revoke_all_of_member(member_id, now))
}

/// Revokes every live integration session of the business at `now`.
pub async fn revoke_integration_of_business(
    tx: &mut Tx,
    business_id: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    tx.touch_auth();
    dispatch!(
        tx.on(),
        sessions::revoke_integration_of_business(business_id, now)
    )
}

/// Deletes the sessions that expired or were revoked before `cutoff`, on the pool; returns
/// how many.
pub async fn purge_finished(store: &Store, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
    dispatch!(store.on(), sessions::purge_finished(cutoff))
}

/// The generation of what authentication reads: every change that can refuse a live token
/// moves it in the change's transaction (triggers of the stores' migrations).
pub async fn auth_generation(store: &Store) -> Result<i64, StoreError> {
    dispatch!(store.on(), sessions::auth_generation())
}
