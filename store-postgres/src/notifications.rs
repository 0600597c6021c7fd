//! `notifications`: the outbox of messages to people, written with the change that causes
//! them and sent afterwards by the dispatcher.
//!
//! The writes outside a transaction ([`claim`], [`mark_sent`], [`mark_failed`]) run on the
//! pool.

use chrono::{DateTime, Utc};

use crate::Pool;
use crate::{new_opt_id, StoreError, Tx};
pub use kobo_store::notifications::{NewNotification, Notification, Unsent};

kobo_store::notifications_functions!(backend crate::Backend);

impl kobo_store::notifications::Notifications for crate::Backend {
    async fn insert(
        tx: &mut Tx,
        new: &NewNotification<'_>,
        now: DateTime<Utc>,
    ) -> Result<String, StoreError> {
        let id = uuid::Uuid::new_v4();
        sqlx::query!(
        "INSERT INTO notifications (id, business_id, channel, recipient, subject, body, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
        id,
        new_opt_id(new.business_id)?,
        new.channel,
        new.recipient,
        new.subject,
        new.body,
        now
    )
    .execute(&mut **tx)
    .await?;
        Ok(id.to_string())
    }

    async fn due(
        pool: &Pool,
        channel: &str,
        max_attempts: i64,
        now: DateTime<Utc>,
        limit: i64,
    ) -> Result<Vec<Notification>, StoreError> {
        pool.run(async |pool| {
            Ok(sqlx::query_as!(
                Notification,
                r#"SELECT id::text AS "id!", business_id::text AS business_id, channel, recipient,
           subject, body, created_at, sent_at, attempts, last_error FROM notifications
         WHERE sent_at IS NULL AND channel = $1 AND attempts < $2
           AND (next_attempt_at IS NULL OR next_attempt_at <= $3)
         ORDER BY created_at, id LIMIT $4"#,
                channel,
                max_attempts,
                now,
                limit
            )
            .fetch_all(&mut *pool)
            .await?)
        })
        .await
    }

    async fn claim(
        pool: &Pool,
        id: &str,
        lease_end: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        pool.run(async |pool| {
            let result = sqlx::query!(
                "UPDATE notifications SET next_attempt_at = $1 \
         WHERE id = $2 AND sent_at IS NULL \
         AND (next_attempt_at IS NULL OR next_attempt_at <= $3)",
                lease_end,
                crate::id(id),
                now
            )
            .execute(&mut *pool)
            .await?;
            Ok(result.rows_affected() == 1)
        })
        .await
    }

    async fn mark_sent(pool: &Pool, id: &str, at: DateTime<Utc>) -> Result<(), StoreError> {
        pool.run(async |pool| {
            sqlx::query!(
                "UPDATE notifications SET sent_at = $1, attempts = attempts + 1, \
         last_error = NULL, next_attempt_at = NULL WHERE id = $2",
                at,
                crate::id(id)
            )
            .execute(&mut *pool)
            .await?;
            Ok(())
        })
        .await
    }

    async fn mark_failed(
        pool: &Pool,
        id: &str,
        attempts: i64,
        last_error: &str,
        next_attempt_at: Option<DateTime<Utc>>,
    ) -> Result<(), StoreError> {
        pool.run(async |pool| {
            sqlx::query!(
                "UPDATE notifications SET attempts = $1, last_error = $2, next_attempt_at = $3 \
         WHERE id = $4",
                attempts,
                last_error,
                next_attempt_at,
                crate::id(id)
            )
            .execute(&mut *pool)
            .await?;
            Ok(())
        })
        .await
    }

    async fn recent(pool: &Pool, limit: i64) -> Result<Vec<Notification>, StoreError> {
        pool.run(async |pool| {
            Ok(sqlx::query_as!(
                Notification,
                r#"SELECT id::text AS "id!", business_id::text AS business_id, channel, recipient,
           subject, body, created_at, sent_at, attempts, last_error FROM notifications
         ORDER BY created_at DESC, id DESC LIMIT $1"#,
                limit
            )
            .fetch_all(&mut *pool)
            .await?)
        })
        .await
    }

    async fn unsent(pool: &Pool, max_attempts: i64) -> Result<Unsent, StoreError> {
        pool.run(async |pool| {
            Ok(sqlx::query_as!(
            Unsent,
            r#"SELECT COUNT(*) AS "count!", MIN(created_at) AS oldest_created_at FROM notifications
         WHERE sent_at IS NULL AND attempts < $1"#,
            max_attempts
        )
        .fetch_one(&mut *pool)
        .await?)
        })
        .await
    }
}
