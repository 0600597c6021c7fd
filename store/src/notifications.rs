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

crate::contract! {
    /// `notifications`, in each store.
    pub trait Notifications in notifications, functions notifications_functions {
        /// Writes `new` as of `now` in `tx`; returns its id.
        tx fn insert(new: &NewNotification<'_>, now: DateTime<Utc>) -> String;
        /// The unsent messages of `channel` due at `now` with fewer than `max_attempts` attempts,
        /// oldest first, at most `limit`.
        pool fn due(
            channel: &str,
            max_attempts: i64,
            now: DateTime<Utc>,
            limit: i64,
        ) -> Vec<Notification>;
        /// Moves an unsent message due at `now` to `lease_end` (on the pool); `false` when it is
        /// not due any more (another process has it).
        pool fn claim(id: &str, lease_end: DateTime<Utc>, now: DateTime<Utc>) -> bool;
        /// Records the message sent at `at`, one more attempt (on the pool).
        pool fn mark_sent(id: &str, at: DateTime<Utc>) -> ();
        /// Records a failed attempt: the attempts made, the error, the next attempt (`None`: none),
        /// on the pool.
        pool fn mark_failed(
            id: &str,
            attempts: i64,
            last_error: &str,
            next_attempt_at: Option<DateTime<Utc>>,
        ) -> ();
        /// The newest `limit` messages, newest first.
        pool fn recent(limit: i64) -> Vec<Notification>;
        /// How many messages wait to be sent, and since when.
        pool fn unsent(max_attempts: i64) -> Unsent;
    }
}
