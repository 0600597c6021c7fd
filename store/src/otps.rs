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
