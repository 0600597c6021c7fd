//! The rows of `otps` (see the datastore module of the same name in `kobo`).

use chrono::{DateTime, Utc};

/// The OTPs issued to a member in a window: how many, and when the oldest was.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Issued {
    pub count: i64,
    pub oldest: Option<DateTime<Utc>>,
}

/// An OTP to write, unused and with no attempt.
#[derive(Clone, Copy, Debug)]
pub struct NewOtp<'a> {
    pub id: &'a str,
    pub business_id: &'a str,
    pub member_id: &'a str,
    pub code_hash: &'a str,
    pub expires_at: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
}

/// The OTP an attempt was counted on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempted {
    pub id: String,
    pub code_hash: String,
    /// The attempts counted, this one included.
    pub attempts: i64,
}

crate::contract! {
    /// `otps`, in each store.
    pub trait Otps in otps, functions otps_functions {
        /// The OTPs issued to the member at or after `since`.
        tx fn issued_since(member_id: &str, since: DateTime<Utc>) -> Issued;
        /// Uses up, at `now`, every OTP of the member not used yet (a new one replaces them).
        tx fn use_up_all_of_member(member_id: &str, now: DateTime<Utc>) -> ();
        /// Writes a new OTP.
        tx fn insert(new: &NewOtp<'_>) -> ();
        /// Counts one attempt on the member's newest unused OTP, if it is live at `now` (not
        /// expired, fewer than `max_attempts` attempts): that OTP, or `None` when there is no live
        /// one.
        tx fn count_attempt(
            member_id: &str,
            now: DateTime<Utc>,
            max_attempts: i64,
        ) -> Option<Attempted>;
        /// Uses up the OTP `id` at `now`; `false` when it was used already.
        tx fn use_up(id: &str, now: DateTime<Utc>) -> bool;
        /// Deletes the OTPs that expired before `cutoff`, on the pool; returns how many.
        pool fn purge_expired(cutoff: DateTime<Utc>) -> u64;
    }
}
