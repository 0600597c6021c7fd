//! `otps`: the one-time passwords issued to members (only their hashes), each with its
//! attempts, expiry and use.

use super::{dispatch, Store, StoreError, Tx};
use chrono::{DateTime, Utc};
pub use kobo_store::otps::{Attempted, Issued, NewOtp};

/// The OTPs issued to the member at or after `since`.
pub async fn issued_since(
    tx: &mut Tx,
    member_id: &str,
    since: DateTime<Utc>,
) -> Result<Issued, StoreError> {
    dispatch!(tx.on(), otps::issued_since(member_id, since))
}

/// Uses up, at `now`, every OTP of the member not used yet (a new one replaces them).
pub async fn use_up_all_of_member(
    tx: &mut Tx,
    member_id: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    dispatch!(tx.on(), otps::use_up_all_of_member(member_id, now))
}

/// Writes a new OTP.
pub async fn insert(tx: &mut Tx, new: &NewOtp<'_>) -> Result<(), StoreError> {
    dispatch!(tx.on(), otps::insert(new))
}

/// Counts one attempt on the member's newest unused OTP, if it is live at `now` (not expired,
/// fewer than `max_attempts` attempts): that OTP, or `None` when there is no live one.
pub async fn count_attempt(
    tx: &mut Tx,
    member_id: &str,
    now: DateTime<Utc>,
    max_attempts: i64,
) -> Result<Option<Attempted>, StoreError> {
    dispatch!(tx.on(), otps::count_attempt(member_id, now, max_attempts))
}

/// Uses up the OTP `id` at `now`; `false` when it was used already.
pub async fn use_up(tx: &mut Tx, id: &str, now: DateTime<Utc>) -> Result<bool, StoreError> {
    dispatch!(tx.on(), otps::use_up(id, now))
}

/// Deletes the OTPs that expired before `cutoff`, on the pool; returns how many.
pub async fn purge_expired(store: &Store, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
    dispatch!(store.on(), otps::purge_expired(cutoff))
}
