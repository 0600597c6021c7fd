//! `notifications`: the outbox of messages to people, written with the change that causes
//! them and sent afterwards by the dispatcher.
//!
//! The writes outside a transaction ([`claim`], [`mark_sent`], [`mark_failed`]) run on the
//! pool: on SQLite the caller holds the write turn (`Store::write_turn`) across each.

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::Row;

use super::{FromAnyRow, StoreError, Tx};
use crate::kernel::store::{self, Store};
pub use kobo_store::notifications::{NewNotification, Notification, Unsent};

/// Every column of `notifications` that [`Notification`] holds.
macro_rules! select_notifications {
    () => {
        "SELECT id, business_id, channel, recipient, subject, body, created_at, sent_at, \
         attempts, last_error FROM notifications"
    };
}

impl FromAnyRow for Notification {
    fn from_any(row: &AnyRow) -> Result<Notification, StoreError> {
        Ok(Notification {
            id: store::text(row, "id")?,
            business_id: store::optional_text(row, "business_id")?,
            channel: store::text(row, "channel")?,
            recipient: store::text(row, "recipient")?,
            subject: store::text(row, "subject")?,
            body: store::text(row, "body")?,
            created_at: store::time(row, "created_at")?,
            sent_at: store::optional_time(row, "sent_at")?,
            attempts: row.try_get("attempts")?,
            last_error: store::optional_text(row, "last_error")?,
        })
    }
}

/// Writes `new` as of `now` in `tx`; returns its id.
pub async fn insert(
    tx: &mut Tx,
    new: &NewNotification<'_>,
    now: DateTime<Utc>,
) -> Result<String, StoreError> {
    let id = store::new_id();
    sqlx::query(
        "INSERT INTO notifications (id, business_id, channel, recipient, subject, body, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&id)
    .bind(new.business_id)
    .bind(new.channel)
    .bind(new.recipient)
    .bind(new.subject)
    .bind(new.body)
    .bind(store::timestamp(now))
    .execute(&mut **tx)
    .await?;
    Ok(id)
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
    let rows = sqlx::query(concat!(
        select_notifications!(),
        " WHERE sent_at IS NULL AND channel = $1 AND attempts < $2 \
         AND (next_attempt_at IS NULL OR next_attempt_at <= $3) \
         ORDER BY created_at, id LIMIT $4"
    ))
    .bind(channel)
    .bind(max_attempts)
    .bind(store::timestamp(now))
    .bind(limit)
    .fetch_all(store.pool())
    .await?;
    rows.iter().map(Notification::from_any).collect()
}

/// Moves an unsent message due at `now` to `lease_end` (on the pool); `false` when it is not
/// due any more (another process has it).
pub async fn claim(
    store: &Store,
    id: &str,
    lease_end: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let result = sqlx::query(
        "UPDATE notifications SET next_attempt_at = $1 \
         WHERE id = $2 AND sent_at IS NULL \
         AND (next_attempt_at IS NULL OR next_attempt_at <= $3)",
    )
    .bind(store::timestamp(lease_end))
    .bind(id)
    .bind(store::timestamp(now))
    .execute(store.pool())
    .await?;
    Ok(result.rows_affected() == 1)
}

/// Records the message sent at `at`, one more attempt (on the pool).
pub async fn mark_sent(store: &Store, id: &str, at: DateTime<Utc>) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE notifications SET sent_at = $1, attempts = attempts + 1, \
         last_error = NULL, next_attempt_at = NULL WHERE id = $2",
    )
    .bind(store::timestamp(at))
    .bind(id)
    .execute(store.pool())
    .await?;
    Ok(())
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
    sqlx::query(
        "UPDATE notifications SET attempts = $1, last_error = $2, next_attempt_at = $3 \
         WHERE id = $4",
    )
    .bind(attempts)
    .bind(last_error)
    .bind(next_attempt_at.map(store::timestamp))
    .bind(id)
    .execute(store.pool())
    .await?;
    Ok(())
}

/// The newest `limit` messages, newest first.
pub async fn recent(store: &Store, limit: i64) -> Result<Vec<Notification>, StoreError> {
    let rows = sqlx::query(concat!(
        select_notifications!(),
        " ORDER BY created_at DESC, id DESC LIMIT $1"
    ))
    .bind(limit)
    .fetch_all(store.pool())
    .await?;
    rows.iter().map(Notification::from_any).collect()
}

/// How many messages wait to be sent, and since when.
pub async fn unsent(store: &Store, max_attempts: i64) -> Result<Unsent, StoreError> {
    let row = sqlx::query(
        "SELECT COUNT(*) AS unsent, MIN(created_at) AS oldest FROM notifications \
         WHERE sent_at IS NULL AND attempts < $1",
    )
    .bind(max_attempts)
    .fetch_one(store.pool())
    .await?;
    Ok(Unsent {
        count: row.try_get("unsent")?,
        oldest_created_at: store::optional_time(&row, "oldest")?,
    })
}
