//! `events` and `webhook_attempts`: the domain events written with their change, their
//! delivery to the business's endpoint (status, lease, next attempt), and each attempt made.
//!
//! The writes outside a transaction ([`skip_due_unconfigured`], [`claim`], [`settle`]) run on
//! the pool: the caller holds the write turn ([`crate::Store::write_turn`]) across each.

use chrono::{DateTime, Utc};

use crate::NO_TIME_BOUND;
use crate::{first_rows, json_array, new_id, optional_time, timestamp, Store, StoreError, Tx};
use kobo_store::batch::NewEvent;
pub use kobo_store::events::{
    Attempt, AttemptMade, Delivery, DeliveryFilter, Due, Pending, ToSend,
};

pub use kobo_store::batch::event_into as record_into;

/// [`Write::Event`], run in `tx` ([`crate::batch::run`]). Due at once if the business has an
/// active endpoint; otherwise recorded `skipped` (the spec: events that happen while delivery
/// is paused, or before any configuration exists), never queued. Queued and skipped later,
/// each event left a dead entry in `events_due` that every dispatcher pass stepped over until
/// the table was vacuumed.
pub(crate) async fn write(tx: &mut Tx, event: NewEvent) -> Result<(), StoreError> {
    let at = timestamp(event.at);
    sqlx::query!(
        "INSERT INTO events (id, business_id, type, payload, created_at, next_attempt_at, \
           delivery_status) \
         SELECT ?1, ?2, ?3, ?4, ?5, CASE WHEN e.active > 0 THEN ?5 END, \
           CASE WHEN e.active > 0 THEN 'pending' ELSE 'skipped' END \
         FROM (SELECT COUNT(*) AS active FROM webhook_configurations c \
               WHERE c.business_id = ?2 AND c.is_active = 1) e",
        event.id,
        event.business_id,
        event.kind,
        event.payload,
        at
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}

kobo_store::events_functions!(backend crate::Backend);

impl kobo_store::events::Events for crate::Backend {
    async fn skip_pending_of_business(tx: &mut Tx, business_id: &str) -> Result<(), StoreError> {
        sqlx::query!(
            "UPDATE events SET delivery_status = 'skipped', next_attempt_at = NULL \
         WHERE business_id = ?1 AND delivery_status = 'pending'",
            business_id
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn find_delivery(
        store: &Store,
        business_id: &str,
        event_id: &str,
        since: DateTime<Utc>,
    ) -> Result<Option<Delivery>, StoreError> {
        let since = timestamp(since);
        Ok(sqlx::query_as!(
            Delivery,
            r#"SELECT id AS "id!", type AS kind, payload,
             created_at AS "created_at: DateTime<Utc>", delivery_status, attempts, budget_start,
             next_attempt_at AS "next_attempt_at: DateTime<Utc>",
             last_attempt_at AS "last_attempt_at: DateTime<Utc>",
             last_response_status, last_error
           FROM events WHERE id = ?1 AND business_id = ?2 AND created_at >= ?3"#,
            event_id,
            business_id,
            since
        )
        .fetch_optional(store.pool())
        .await?)
    }

    async fn list_deliveries(
        store: &Store,
        filter: &DeliveryFilter,
    ) -> Result<Vec<Delivery>, StoreError> {
        let since = timestamp(filter.since);
        let from = filter.from.map(timestamp);
        let until = filter.until.map(timestamp);
        let cursor_at = filter.cursor.as_ref().map(|c| timestamp(c.created_at));
        let cursor_id = filter.cursor.as_ref().map(|c| c.id.to_string());
        let query = sqlx::query_as!(
            Delivery,
            r#"SELECT id AS "id!", type AS kind, payload,
             created_at AS "created_at: DateTime<Utc>", delivery_status, attempts, budget_start,
             next_attempt_at AS "next_attempt_at: DateTime<Utc>",
             last_attempt_at AS "last_attempt_at: DateTime<Utc>",
             last_response_status, last_error
           FROM events
           WHERE business_id = ?1
             AND (created_at, id) < (COALESCE(?7, ?9), COALESCE(?8, ''))
             AND created_at >= ?2
             AND created_at >= COALESCE(?3, '') AND created_at < COALESCE(?4, ?9)
             AND (?5 IS NULL OR delivery_status = ?5)
             AND (?6 IS NULL OR type = ?6)
           ORDER BY created_at DESC, id DESC"#,
            filter.business_id,
            since,
            from,
            until,
            filter.delivery_status,
            filter.kind,
            cursor_at,
            cursor_id,
            NO_TIME_BOUND
        );
        first_rows(query.fetch(store.pool()), filter.page_size + 1).await
    }

    async fn newest_attempts(
        store: &Store,
        event_ids: &[String],
        max: i64,
    ) -> Result<Vec<Attempt>, StoreError> {
        if event_ids.is_empty() {
            return Ok(Vec::new());
        }
        let ids = json_array(event_ids.iter().map(String::as_str));
        Ok(sqlx::query_as!(
            Attempt,
            r#"SELECT event_id AS "event_id!", attempted_at AS "attempted_at!: DateTime<Utc>",
             response_status, error, latency_ms AS "latency_ms!", response_body
           FROM (SELECT a.*, ROW_NUMBER() OVER (
             PARTITION BY event_id ORDER BY attempted_at DESC, id DESC) AS position
             FROM webhook_attempts a WHERE event_id IN (SELECT value FROM json_each(?1))) newest
           WHERE position <= ?2 ORDER BY event_id, position"#,
            ids,
            max
        )
        .fetch_all(store.pool())
        .await?)
    }

    async fn requeue(
        tx: &mut Tx,
        event_id: &str,
        business_id: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let now = timestamp(now);
        let queued = sqlx::query!(
        "UPDATE events SET delivery_status = 'pending', budget_start = attempts, \
           next_attempt_at = ?3 WHERE id = ?1 AND business_id = ?2 AND delivery_status <> 'pending'",
        event_id,
        business_id,
        now
    )
    .execute(&mut **tx)
    .await?
    .rows_affected();
        Ok(queued != 0)
    }

    async fn pending(store: &Store) -> Result<Pending, StoreError> {
        let row = sqlx::query!(
            r#"SELECT COUNT(*) AS "pending!: i64", MIN(created_at) AS "oldest?: String" FROM events
           WHERE delivery_status = 'pending'"#
        )
        .fetch_one(store.pool())
        .await?;
        Ok(Pending {
            count: row.pending,
            oldest_created_at: optional_time(row.oldest)?,
        })
    }

    async fn due(
        store: &Store,
        now: DateTime<Utc>,
        per_business: i64,
        limit: i64,
    ) -> Result<Vec<Due>, StoreError> {
        let now = timestamp(now);
        Ok(sqlx::query_as!(
            Due,
            r#"SELECT id AS "id!", business_id AS "business_id!" FROM (
             SELECT id, business_id, next_attempt_at, ROW_NUMBER() OVER (
               PARTITION BY business_id ORDER BY next_attempt_at, id) AS position
             FROM events WHERE delivery_status = 'pending' AND next_attempt_at <= ?1
           ) due WHERE position <= ?2 ORDER BY next_attempt_at, id LIMIT ?3"#,
            now,
            per_business,
            limit
        )
        .fetch_all(store.pool())
        .await?)
    }

    async fn any_due_unconfigured(store: &Store, now: DateTime<Utc>) -> Result<bool, StoreError> {
        let now = timestamp(now);
        let any = sqlx::query_scalar!(
            r#"SELECT 1 AS "one!: i64" FROM events
           WHERE delivery_status = 'pending' AND next_attempt_at <= ?1
             AND NOT EXISTS (SELECT 1 FROM webhook_configurations c
               WHERE c.business_id = events.business_id AND c.is_active = 1)
           LIMIT 1"#,
            now
        )
        .fetch_optional(store.pool())
        .await?;
        Ok(any.is_some())
    }

    async fn skip_due_unconfigured(store: &Store, now: DateTime<Utc>) -> Result<u64, StoreError> {
        let now = timestamp(now);
        let skipped = sqlx::query!(
            "UPDATE events SET delivery_status = 'skipped', next_attempt_at = NULL \
         WHERE delivery_status = 'pending' AND next_attempt_at <= ?1 \
           AND NOT EXISTS (SELECT 1 FROM webhook_configurations c \
             WHERE c.business_id = events.business_id AND c.is_active = 1)",
            now
        )
        .execute(store.pool())
        .await?
        .rows_affected();
        Ok(skipped)
    }

    async fn claim(
        store: &Store,
        ids: &[&str],
        lease: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Vec<String>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let lease = timestamp(lease);
        let now = timestamp(now);
        let ids = json_array(ids.iter().copied());
        Ok(sqlx::query_scalar!(
            r#"UPDATE events SET next_attempt_at = ?1
           WHERE delivery_status = 'pending' AND next_attempt_at <= ?2
             AND id IN (SELECT value FROM json_each(?3))
           RETURNING id AS "id!""#,
            lease,
            now,
            ids
        )
        .fetch_all(store.pool())
        .await?)
    }

    async fn to_send(store: &Store, id: &str) -> Result<ToSend, StoreError> {
        Ok(sqlx::query_as!(
            ToSend,
            r#"SELECT type AS kind, payload, created_at AS "created_at: DateTime<Utc>", attempts,
             budget_start
           FROM events WHERE id = ?1"#,
            id
        )
        .fetch_one(store.pool())
        .await?)
    }

    async fn record_attempt(
        tx: &mut Tx,
        event_id: &str,
        at: DateTime<Utc>,
        attempt: &AttemptMade<'_>,
    ) -> Result<(), StoreError> {
        let id = new_id();
        let at = timestamp(at);
        sqlx::query!(
            "INSERT INTO webhook_attempts (id, event_id, attempted_at, url, response_status, \
           error, latency_ms, response_body) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            id,
            event_id,
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
        let next_attempt_at = next_attempt_at.map(timestamp);
        let at = timestamp(at);
        let lease = timestamp(lease);
        let updated = sqlx::query!(
        "UPDATE events SET delivery_status = ?1, next_attempt_at = ?2, attempts = attempts + 1, \
           last_attempt_at = ?3, last_response_status = ?4, last_error = ?5 \
         WHERE id = ?6 AND next_attempt_at = ?7",
        status,
        next_attempt_at,
        at,
        attempt.response_status,
        attempt.error,
        id,
        lease
    )
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(updated != 0)
    }

    async fn settle(
        store: &Store,
        id: &str,
        lease: DateTime<Utc>,
        status: &str,
        next_attempt_at: Option<DateTime<Utc>>,
        error: Option<&str>,
    ) -> Result<(), StoreError> {
        let next_attempt_at = next_attempt_at.map(timestamp);
        let lease = timestamp(lease);
        sqlx::query!(
            "UPDATE events SET delivery_status = ?1, next_attempt_at = ?2, \
           last_error = COALESCE(?3, last_error) WHERE id = ?4 AND next_attempt_at = ?5",
            status,
            next_attempt_at,
            error,
            id,
            lease
        )
        .execute(store.pool())
        .await?;
        Ok(())
    }

    async fn purge_attempts(tx: &mut Tx, cutoff: DateTime<Utc>) -> Result<(), StoreError> {
        let cutoff = timestamp(cutoff);
        sqlx::query!(
            "DELETE FROM webhook_attempts WHERE event_id IN \
         (SELECT id FROM events WHERE created_at < ?1 AND delivery_status <> 'pending')",
            cutoff
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn purge(tx: &mut Tx, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
        let cutoff = timestamp(cutoff);
        let deleted = sqlx::query!(
            "DELETE FROM events WHERE created_at < ?1 AND delivery_status <> 'pending'",
            cutoff
        )
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(deleted)
    }
}
