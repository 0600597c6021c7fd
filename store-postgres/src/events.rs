//! `events` and `webhook_attempts`: the domain events written with their change, their
//! delivery to the business's endpoint (status, lease, next attempt), and each attempt made.
//!
//! The writes outside a transaction ([`skip_due_unconfigured`], [`claim`], [`settle`]) run on
//! the pool.

use chrono::{DateTime, Utc};

use crate::Pool;
use crate::{id, text_ids, StoreError, Tx};
pub use kobo_store::events::{
    Attempt, AttemptMade, Delivery, DeliveryFilter, Due, Pending, ToSend,
};

pub use kobo_store::batch::event_into as record_into;

kobo_store::events_functions!(backend crate::Backend);

impl kobo_store::events::Events for crate::Backend {
    async fn skip_pending_of_business(tx: &mut Tx, business_id: &str) -> Result<(), StoreError> {
        sqlx::query!(
            "UPDATE events SET delivery_status = 'skipped', next_attempt_at = NULL \
         WHERE business_id = $1 AND delivery_status = 'pending'",
            id(business_id)
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn find_delivery(
        pool: &Pool,
        business_id: &str,
        event_id: &str,
        since: DateTime<Utc>,
    ) -> Result<Option<Delivery>, StoreError> {
        pool.run(async |pool| {
            Ok(sqlx::query_as!(
                Delivery,
                r#"SELECT id::text AS "id!", type AS kind, payload, created_at, delivery_status,
           attempts, budget_start, next_attempt_at, last_attempt_at, last_response_status,
           last_error FROM events
         WHERE id = $1 AND business_id = $2 AND created_at >= $3"#,
                id(event_id),
                id(business_id),
                since
            )
            .fetch_optional(&mut *pool)
            .await?)
        })
        .await
    }

    async fn list_deliveries(
        pool: &Pool,
        filter: &DeliveryFilter,
    ) -> Result<Vec<Delivery>, StoreError> {
        pool.run(async |pool| {
            let (cursor_at, cursor_id) = match &filter.cursor {
                Some(cursor) => (Some(cursor.created_at), Some(cursor.id)),
                None => (None, None),
            };
            Ok(sqlx::query_as!(
                Delivery,
                r#"SELECT id::text AS "id!", type AS kind, payload, created_at, delivery_status,
           attempts, budget_start, next_attempt_at, last_attempt_at, last_response_status,
           last_error FROM events
         WHERE business_id = $1 AND created_at >= $2
           AND created_at >= COALESCE($3::timestamptz, '-infinity')
           AND created_at < COALESCE($4::timestamptz, 'infinity')
           AND ($5::text IS NULL OR delivery_status = $5)
           AND ($6::text IS NULL OR type = $6)
           AND (created_at, id) < (COALESCE($7::timestamptz, 'infinity'),
                COALESCE($8::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
         ORDER BY created_at DESC, id DESC
         LIMIT $9"#,
                id(&filter.business_id),
                filter.since,
                filter.from,
                filter.until,
                filter.delivery_status.as_deref(),
                filter.kind.as_deref(),
                cursor_at,
                cursor_id,
                (filter.page_size + 1) as i64
            )
            .fetch_all(&mut *pool)
            .await?)
        })
        .await
    }

    async fn newest_attempts(
        pool: &Pool,
        event_ids: &[String],
        max: i64,
    ) -> Result<Vec<Attempt>, StoreError> {
        pool.run(async |pool| {
            if event_ids.is_empty() {
                return Ok(Vec::new());
            }
            let ids: Vec<uuid::Uuid> = event_ids.iter().map(|event| id(event)).collect();
            Ok(sqlx::query_as!(
                Attempt,
                r#"SELECT event_id::text AS "event_id!", attempted_at AS "attempted_at!",
           response_status, error, latency_ms AS "latency_ms!", response_body
         FROM (SELECT a.*, ROW_NUMBER() OVER (
           PARTITION BY event_id ORDER BY attempted_at DESC, id DESC) AS position
           FROM webhook_attempts a WHERE event_id = ANY($1)) newest
         WHERE position <= $2 ORDER BY event_id, position"#,
                &ids,
                max
            )
            .fetch_all(&mut *pool)
            .await?)
        })
        .await
    }

    async fn requeue(
        tx: &mut Tx,
        event_id: &str,
        business_id: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let queued = sqlx::query!(
        "UPDATE events SET delivery_status = 'pending', budget_start = attempts, \
           next_attempt_at = $3 WHERE id = $1 AND business_id = $2 AND delivery_status <> 'pending'",
        id(event_id),
        id(business_id),
        now
    )
    .execute(&mut **tx)
    .await?
    .rows_affected();
        Ok(queued != 0)
    }

    async fn pending(pool: &Pool) -> Result<Pending, StoreError> {
        pool.run(async |pool| {
            Ok(sqlx::query_as!(
                Pending,
                r#"SELECT COUNT(*) AS "count!", MIN(created_at) AS oldest_created_at FROM events
         WHERE delivery_status = 'pending'"#
            )
            .fetch_one(&mut *pool)
            .await?)
        })
        .await
    }

    async fn due(
        pool: &Pool,
        now: DateTime<Utc>,
        per_business: i64,
        limit: i64,
    ) -> Result<Vec<Due>, StoreError> {
        pool.run(async |pool| {
            Ok(sqlx::query_as!(
                Due,
                r#"SELECT id::text AS "id!", business_id::text AS "business_id!" FROM (
           SELECT id, business_id, next_attempt_at, ROW_NUMBER() OVER (
             PARTITION BY business_id ORDER BY next_attempt_at, id) AS position
           FROM events WHERE delivery_status = 'pending' AND next_attempt_at <= $1
         ) due WHERE position <= $2 ORDER BY next_attempt_at, id LIMIT $3"#,
                now,
                per_business,
                limit
            )
            .fetch_all(&mut *pool)
            .await?)
        })
        .await
    }

    async fn any_due_unconfigured(pool: &Pool, now: DateTime<Utc>) -> Result<bool, StoreError> {
        pool.run(async |pool| {
            let any = sqlx::query_scalar!(
                "SELECT 1 FROM events WHERE delivery_status = 'pending' AND next_attempt_at <= $1 \
           AND NOT EXISTS (SELECT 1 FROM webhook_configurations c \
             WHERE c.business_id = events.business_id AND c.is_active) \
         LIMIT 1",
                now
            )
            .fetch_optional(&mut *pool)
            .await?;
            Ok(any.is_some())
        })
        .await
    }

    async fn skip_due_unconfigured(pool: &Pool, now: DateTime<Utc>) -> Result<u64, StoreError> {
        pool.run(async |pool| {
            let skipped = sqlx::query!(
                "UPDATE events SET delivery_status = 'skipped', next_attempt_at = NULL \
         WHERE delivery_status = 'pending' AND next_attempt_at <= $1 \
           AND NOT EXISTS (SELECT 1 FROM webhook_configurations c \
             WHERE c.business_id = events.business_id AND c.is_active)",
                now
            )
            .execute(&mut *pool)
            .await?
            .rows_affected();
            Ok(skipped)
        })
        .await
    }

    async fn claim(
        pool: &Pool,
        ids: &[&str],
        lease: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Vec<String>, StoreError> {
        pool.run(async |pool| {
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let ids: Vec<uuid::Uuid> = ids.iter().map(|event| id(event)).collect();
            let claimed = sqlx::query_scalar!(
                "UPDATE events SET next_attempt_at = $1 \
         WHERE delivery_status = 'pending' AND next_attempt_at <= $2 AND id = ANY($3) \
         RETURNING id",
                lease,
                now,
                &ids
            )
            .fetch_all(&mut *pool)
            .await?;
            Ok(text_ids(claimed))
        })
        .await
    }

    async fn to_send(pool: &Pool, id: &str) -> Result<ToSend, StoreError> {
        pool.run(async |pool| {
            Ok(sqlx::query_as!(
                ToSend,
                "SELECT type AS kind, payload, created_at, attempts, budget_start FROM events \
         WHERE id = $1",
                crate::id(id)
            )
            .fetch_one(&mut *pool)
            .await?)
        })
        .await
    }

    async fn record_attempt(
        tx: &mut Tx,
        event_id: &str,
        at: DateTime<Utc>,
        attempt: &AttemptMade<'_>,
    ) -> Result<(), StoreError> {
        sqlx::query!(
            "INSERT INTO webhook_attempts (id, event_id, attempted_at, url, response_status, \
           error, latency_ms, response_body) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            uuid::Uuid::new_v4(),
            crate::new_id(event_id)?,
            at,
            attempt.url,
            attempt.response_status,
            attempt.error,
            attempt.latency_ms,
            attempt.response_body
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn finish_attempt(
        tx: &mut Tx,
        id: &str,
        lease: DateTime<Utc>,
        status: &str,
        next_attempt_at: Option<DateTime<Utc>>,
        at: DateTime<Utc>,
        attempt: &AttemptMade<'_>,
    ) -> Result<bool, StoreError> {
        let updated = sqlx::query!(
        "UPDATE events SET delivery_status = $1, next_attempt_at = $2, attempts = attempts + 1, \
           last_attempt_at = $3, last_response_status = $4, last_error = $5 \
         WHERE id = $6 AND next_attempt_at = $7",
        status,
        next_attempt_at,
        at,
        attempt.response_status,
        attempt.error,
        crate::id(id),
        lease
    )
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(updated != 0)
    }

    async fn settle(
        pool: &Pool,
        id: &str,
        lease: DateTime<Utc>,
        status: &str,
        next_attempt_at: Option<DateTime<Utc>>,
        error: Option<&str>,
    ) -> Result<(), StoreError> {
        pool.run(async |pool| {
            sqlx::query!(
                "UPDATE events SET delivery_status = $1, next_attempt_at = $2, \
           last_error = COALESCE($3, last_error) WHERE id = $4 AND next_attempt_at = $5",
                status,
                next_attempt_at,
                error,
                crate::id(id),
                lease
            )
            .execute(&mut *pool)
            .await?;
            Ok(())
        })
        .await
    }

    async fn purge_attempts(tx: &mut Tx, cutoff: DateTime<Utc>) -> Result<(), StoreError> {
        sqlx::query!(
            "DELETE FROM webhook_attempts WHERE event_id IN (SELECT e.id FROM businesses b \
           CROSS JOIN LATERAL (SELECT id FROM events WHERE business_id = b.id \
             AND created_at < $1 AND delivery_status <> 'pending') e)",
            cutoff
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn purge(tx: &mut Tx, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
        let deleted = sqlx::query!(
            "DELETE FROM events WHERE id IN (SELECT e.id FROM businesses b \
           CROSS JOIN LATERAL (SELECT id FROM events WHERE business_id = b.id \
             AND created_at < $1 AND delivery_status <> 'pending') e)",
            cutoff
        )
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(deleted)
    }
}
