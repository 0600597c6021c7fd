//! The rows of `notifications` (see the datastore module of the same name in `kobo`).

use chrono::{DateTime, Utc};

/// One message of the outbox, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notification {
    pub id: String,
    pub business_id: Option<String>,
    pub channel: String,
    pub recipient: String,
    pub subject: String,
    pub body: String,
    pub created_at: DateTime<Utc>,
    pub sent_at: Option<DateTime<Utc>>,
    pub attempts: i64,
    pub last_error: Option<String>,
}

/// A message to write.
#[derive(Clone, Copy, Debug)]
pub struct NewNotification<'a> {
    pub business_id: Option<&'a str>,
    pub channel: &'a str,
    pub recipient: &'a str,
    pub subject: &'a str,
    pub body: &'a str,
}

/// The messages neither sent nor given up (fewer than `max_attempts` attempts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unsent {
    pub count: i64,
    /// When the oldest of them was written; `None` when none waits.
    pub oldest_created_at: Option<DateTime<Utc>>,
}
