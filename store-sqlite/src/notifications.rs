//! `notifications`: the outbox of messages to people, written with the change that causes
//! them and sent afterwards by the dispatcher.
//!
//! The writes outside a transaction ([`claim`], [`mark_sent`], [`mark_failed`]) run on the
//! pool: the caller holds the write turn ([`crate::Store::write_turn`]) across each.

use chrono::{DateTime, Utc};

use crate::{new_id, optional_time, timestamp, Store, StoreError, Tx};
pub use kobo_store::notifications::{NewNotification, Notification, Unsent};

kobo_store::notifications_functions!(backend crate::Backend);

impl kobo_store::notifications::Notifications for crate::Backend {
    async fn insert(
        tx: &mut Tx,
        new: &NewNotification<'_>,
        now: DateTime<Utc>,
    ) -> Result<String, StoreError> {
        let id = new_id();
        let now = timestamp(now);
        sqlx::query!(
        "INSERT INTO notifications (id, business_id, channel, recipient, subject, body, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        id,
        new.business_id,
        new.channel,
        new.recipient,
        new.subject,
        new.body,
        now
    )
    .execute(&mut **tx)
    .await?;
        Ok(id)
    }

    async fn due(
        store: &Store,
        channel: &str,
        max_attempts: i64,
        now: DateTime<Utc>,
        limit: i64,
    ) -> Result<Vec<Notification>, StoreError> {
        let now = timestamp(now);
        Ok(sqlx::query_as!(
            Notification,
            r#"SELECT id AS "id!", business_id, channel, recipient, subject, body,
             created_at AS "created_at: DateTime<Utc>", sent_at AS "sent_at: DateTime<Utc>",
             attempts, last_error
           FROM notifications
           WHERE sent_at IS NULL AND channel = ?1 AND attempts < ?2
             AND (next_attempt_at IS NULL OR next_attempt_at <= ?3)
           ORDER BY created_at, id LIMIT ?4"#,
            channel,
            max_attempts,
            now,
            limit
        )
        .fetch_all(store.pool())
        .await?)
    }

    async fn claim(
        store: &Store,
        id: &str,
        lease_end: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let lease_end = timestamp(lease_end);
        let now = timestamp(now);
        let result = sqlx::query!(
            "UPDATE notifications SET next_attempt_at = ?1 \
         WHERE id = ?2 AND sent_at IS NULL \
         AND (next_attempt_at IS NULL OR next_attempt_at <= ?3)",
            lease_end,
            id,
            now
        )
        .execute(store.pool())
        .await?;
        Ok(result.rows_affected() == 1)
    }

    async fn mark_sent(store: &Store, id: &str, at: DateTime<Utc>) -> Result<(), StoreError> {
        let at = timestamp(at);
        sqlx::query!(
            "UPDATE notifications SET sent_at = ?1, attempts = attempts + 1, \
         last_error = NULL, next_attempt_at = NULL WHERE id = ?2",
            at,
            id
        )
        .execute(store.pool())
        .await?;
        Ok(())
    }

    async fn mark_failed(
        store: &Store,
        id: &str,
        attempts: i64,
        last_error: &str,
        next_attempt_at: Option<DateTime<Utc>>,
    ) -> Result<(), StoreError> {
        let next_attempt_at = next_attempt_at.map(timestamp);
        sqlx::query!(
            "UPDATE notifications SET attempts = ?1, last_error = ?2, next_attempt_at = ?3 \
         WHERE id = ?4",
            attempts,
            last_error,
            next_attempt_at,
            id
        )
        .execute(store.pool())
        .await?;
        Ok(())
    }

    async fn recent(store: &Store, limit: i64) -> Result<Vec<Notification>, StoreError> {
        Ok(sqlx::query_as!(
            Notification,
            r#"SELECT id AS "id!", business_id, channel, recipient, subject, body,
             created_at AS "created_at: DateTime<Utc>", sent_at AS "sent_at: DateTime<Utc>",
             attempts, last_error
           FROM notifications ORDER BY created_at DESC, id DESC LIMIT ?1"#,
            limit
        )
        .fetch_all(store.pool())
        .await?)
    }

    async fn unsent(store: &Store, max_attempts: i64) -> Result<Unsent, StoreError> {
        let row = sqlx::query!(
            r#"SELECT COUNT(*) AS "unsent!: i64", MIN(created_at) AS "oldest?: String"
           FROM notifications WHERE sent_at IS NULL AND attempts < ?1"#,
            max_attempts
        )
        .fetch_one(store.pool())
        .await?;
        Ok(Unsent {
            count: row.unsent,
            oldest_created_at: optional_time(row.oldest)?,
        })
    }
}
