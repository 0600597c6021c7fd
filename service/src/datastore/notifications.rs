//! `notifications`: the outbox of messages to people, written with the change that causes
//! them and sent afterwards by the dispatcher.
//!
//! The writes outside a transaction ([`claim`], [`mark_sent`], [`mark_failed`]) run on the
//! pool: on SQLite the caller holds the write turn (`Store::write_turn`) across each.

use super::{dispatch, Store, StoreError, Tx};
use chrono::{DateTime, Utc};
pub use kobo_store::notifications::{NewNotification, Notification, Unsent};

/// Writes `new` as of `now` in `tx`; returns its id.
pub async fn insert(
    tx: &mut Tx,
    new: &NewNotification<'_>,
    now: DateTime<Utc>,
) -> Result<String, StoreError> {
    dispatch!(tx.on(), notifications::insert(new, now))
}

/// The unsent messages of `channel` due at `now` with fewer than `max_attempts` attempts,
/// oldest first, at most `limit`.
pub async fn due(
    store: &Store,
    channel: &str,
    max_attempts: i64,
    now: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<Notification>, StoreError> {
    dispatch!(
        store.on(),
        notifications::due(channel, max_attempts, now, limit)
    )
}

/// Moves an unsent message due at `now` to `lease_end` (on the pool); `false` when it is not
/// due any more (another process has it).
pub async fn claim(
    store: &Store,
    id: &str,
    lease_end: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    dispatch!(store.on(), notifications::claim(id, lease_end, now))
}

/// Records the message sent at `at`, one more attempt (on the pool).
pub async fn mark_sent(store: &Store, id: &str, at: DateTime<Utc>) -> Result<(), StoreError> {
    dispatch!(store.on(), notifications::mark_sent(id, at))
}

/// Records a failed attempt: the attempts made, the error, the next attempt (`None`: none), on
/// the pool.
pub async fn mark_failed(
    store: &Store,
    id: &str,
    attempts: i64,
    last_error: &str,
    next_attempt_at: Option<DateTime<Utc>>,
) -> Result<(), StoreError> {
    dispatch!(
        store.on(),
        notifications::mark_failed(id, attempts, last_error, next_attempt_at)
    )
}

/// The newest `limit` messages, newest first.
pub async fn recent(store: &Store, limit: i64) -> Result<Vec<Notification>, StoreError> {
    dispatch!(store.on(), notifications::recent(limit))
}

/// How many messages wait to be sent, and since when.
pub async fn unsent(store: &Store, max_attempts: i64) -> Result<Unsent, StoreError> {
    dispatch!(store.on(), notifications::unsent(max_attempts))
}
