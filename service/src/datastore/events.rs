//! `events` and `webhook_attempts`: the domain events written with their change, their
//! delivery to the business's endpoint (status, lease, next attempt), and each attempt made.
//!
//! The writes outside a transaction ([`skip_due_unconfigured`], [`claim`], [`settle`]) run on
//! the pool: on SQLite the caller holds the write turn (`Store::write_turn`) across each.

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::Row;

use super::batch::{Batch, NewEvent, SqlBatch, Write};
use super::logs::time_range;
use super::{FromAnyRow, StoreError, Tx};
use crate::kernel::paging::{Conditions, Sql};
use crate::kernel::store::{self, Store};
pub use kobo_store::events::{
    Attempt, AttemptMade, Delivery, DeliveryFilter, Due, Pending, ToSend,
};

/// Writes the event `kind` of `business_id` with its `payload` (JSON text) at `at`, as a
/// statement of `batch`: due at once if the business has an active endpoint, otherwise
/// recorded `skipped`. Returns the event's id.
pub fn record_into(
    batch: &mut Batch,
    business_id: &str,
    kind: &str,
    payload: String,
    at: DateTime<Utc>,
) -> String {
    let id = store::new_id();
    batch.push(Write::Event(NewEvent {
        id: id.clone(),
        business_id: business_id.to_owned(),
        kind: kind.to_owned(),
        payload,
        at,
    }));
    id
}

/// [`Write::Event`] as a statement of `sql`. Due at once if the business has an active
/// endpoint; otherwise recorded `skipped` (the spec: events that happen while delivery is
/// paused, or before any configuration exists), never queued. Queued and skipped later, each
/// event left a dead entry in `events_due` that every dispatcher pass stepped over until the
/// table was vacuumed.
pub(super) fn render(sql: &mut SqlBatch, event: NewEvent) {
    sql.push(
        "INSERT INTO events (id, business_id, type, payload, created_at, next_attempt_at, \
           delivery_status) \
         SELECT $1, $2, $3, $4, $5, CASE WHEN e.active > 0 THEN $5 END, \
           CASE WHEN e.active > 0 THEN 'pending' ELSE 'skipped' END \
         FROM (SELECT COUNT(*) AS active FROM webhook_configurations c \
               WHERE c.business_id = $2 AND c.is_active = 1) e",
    )
    .bind(event.id)
    .bind(event.business_id)
    .bind(event.kind)
    .bind(event.payload)
    .bind(store::timestamp(event.at));
}

/// Marks `skipped` every queued event of the business (its endpoint is new: what came before
/// is not sent now).
pub async fn skip_pending_of_business(tx: &mut Tx, business_id: &str) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE events SET delivery_status = 'skipped', next_attempt_at = NULL \
         WHERE business_id = $1 AND delivery_status = 'pending'",
    )
    .bind(business_id)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Every column a [`Delivery`] is read from.
const SELECT_EVENTS: &str = "SELECT id, type, payload, created_at, delivery_status, attempts, \
     budget_start, next_attempt_at, last_attempt_at, last_response_status, last_error FROM events";

impl FromAnyRow for Delivery {
    fn from_any(row: &AnyRow) -> Result<Delivery, StoreError> {
        Ok(Delivery {
            id: store::text(row, "id")?,
            kind: store::text(row, "type")?,
            payload: store::text(row, "payload")?,
            created_at: store::time(row, "created_at")?,
            delivery_status: store::text(row, "delivery_status")?,
            attempts: row.try_get("attempts")?,
            budget_start: row.try_get("budget_start")?,
            next_attempt_at: store::optional_time(row, "next_attempt_at")?,
            last_attempt_at: store::optional_time(row, "last_attempt_at")?,
            last_response_status: row.try_get("last_response_status")?,
            last_error: store::optional_text(row, "last_error")?,
        })
    }
}

/// The event `event_id` of the business, if it was written at or after `since`.
pub async fn find_delivery(
    store: &Store,
    business_id: &str,
    event_id: &str,
    since: DateTime<Utc>,
) -> Result<Option<Delivery>, StoreError> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "{SELECT_EVENTS} WHERE id = $1 AND business_id = $2 AND created_at >= $3"
    )))
    .bind(event_id)
    .bind(business_id)
    .bind(store::timestamp(since))
    .fetch_optional(store.pool())
    .await?;
    row.as_ref().map(Delivery::from_any).transpose()
}

/// The business's events, newest first, after the cursor: at most `page_size + 1` (the one
/// more tells whether more follow).
pub async fn list_deliveries(
    store: &Store,
    filter: &DeliveryFilter,
) -> Result<Vec<Delivery>, StoreError> {
    let mut sql = Sql::new(SELECT_EVENTS);
    let mut conditions = Conditions::default();
    conditions.add(format!(
        "business_id = {}",
        sql.arg(filter.business_id.as_str())
    ));
    conditions.add(format!(
        "created_at >= {}",
        sql.arg(store::timestamp(filter.since))
    ));
    time_range(
        &mut sql,
        &mut conditions,
        filter.from.clone(),
        filter.until.clone(),
    );
    if let Some(status) = &filter.delivery_status {
        conditions.add(format!("delivery_status = {}", sql.arg(status.as_str())));
    }
    if let Some(kind) = &filter.kind {
        conditions.add(format!("type = {}", sql.arg(kind.as_str())));
    }
    if let Some(cursor) = &filter.cursor {
        let at = sql.arg(cursor.created_at.as_str());
        let id = sql.arg(cursor.id.as_str());
        conditions.add(format!(
            "(created_at < {at} OR (created_at = {at} AND id < {id}))"
        ));
    }
    sql.push(&conditions.where_clause());
    sql.push(" ORDER BY created_at DESC, id DESC")
        .limit(filter.page_size + 1);
    let rows = sql.fetch_all(store.pool()).await?;
    rows.iter().map(Delivery::from_any).collect()
}

/// The newest `max` attempts of each event of `event_ids`, by event and newest first, in one
/// query (none asked: none read).
pub async fn newest_attempts(
    store: &Store,
    event_ids: &[String],
    max: i64,
) -> Result<Vec<Attempt>, StoreError> {
    if event_ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut sql = Sql::new(
        "SELECT event_id, attempted_at, response_status, error, latency_ms, response_body \
         FROM (SELECT a.*, ROW_NUMBER() OVER ( \
           PARTITION BY event_id ORDER BY attempted_at DESC, id DESC) AS position \
           FROM webhook_attempts a WHERE event_id IN (",
    );
    let placeholders: Vec<String> = event_ids.iter().map(|id| sql.arg(id.as_str())).collect();
    sql.push(&placeholders.join(", "));
    let limit = sql.arg(max);
    sql.push(&format!(
        ")) newest WHERE position <= {limit} ORDER BY event_id, position"
    ));
    let rows = sql.fetch_all(store.pool()).await?;
    rows.iter()
        .map(|row| {
            Ok(Attempt {
                event_id: store::text(row, "event_id")?,
                attempted_at: store::time(row, "attempted_at")?,
                response_status: row.try_get("response_status")?,
                error: store::optional_text(row, "error")?,
                latency_ms: row.try_get("latency_ms")?,
                response_body: store::optional_text(row, "response_body")?,
            })
        })
        .collect()
}

/// Queues the business's event again, due at `now`, with a new budget of attempts; `false`
/// when it is queued already (or is not the business's).
pub async fn requeue(
    tx: &mut Tx,
    event_id: &str,
    business_id: &str,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let queued = sqlx::query(
        "UPDATE events SET delivery_status = 'pending', budget_start = attempts, \
           next_attempt_at = $3 WHERE id = $1 AND business_id = $2 AND delivery_status <> 'pending'",
    )
    .bind(event_id)
    .bind(business_id)
    .bind(store::timestamp(now))
    .execute(&mut **tx)
    .await?
    .rows_affected();
    Ok(queued != 0)
}

/// How many events wait for delivery, and since when.
pub async fn pending(store: &Store) -> Result<Pending, StoreError> {
    let row = sqlx::query(
        "SELECT COUNT(*) AS pending, MIN(created_at) AS oldest FROM events \
         WHERE delivery_status = 'pending'",
    )
    .fetch_one(store.pool())
    .await?;
    Ok(Pending {
        count: row.try_get("pending")?,
        oldest_created_at: store::optional_time(&row, "oldest")?,
    })
}

/// The events due at `now`, at most `per_business` of each business, oldest first across
/// businesses, at most `limit` in all.
pub async fn due(
    store: &Store,
    now: DateTime<Utc>,
    per_business: i64,
    limit: i64,
) -> Result<Vec<Due>, StoreError> {
    let rows = sqlx::query(
        "SELECT id, business_id, next_attempt_at FROM ( \
           SELECT id, business_id, next_attempt_at, ROW_NUMBER() OVER ( \
             PARTITION BY business_id ORDER BY next_attempt_at, id) AS position \
           FROM events WHERE delivery_status = 'pending' AND next_attempt_at <= $1 \
         ) due WHERE position <= $2 ORDER BY next_attempt_at, id LIMIT $3",
    )
    .bind(store::timestamp(now))
    .bind(per_business)
    .bind(limit)
    .fetch_all(store.pool())
    .await?;
    rows.iter()
        .map(|row| {
            Ok(Due {
                id: store::text(row, "id")?,
                business_id: store::text(row, "business_id")?,
            })
        })
        .collect()
}

/// The events due at `now` whose business has no active endpoint.
const UNCONFIGURED: &str = "delivery_status = 'pending' AND next_attempt_at <= $1 \
     AND NOT EXISTS (SELECT 1 FROM webhook_configurations c \
       WHERE c.business_id = events.business_id AND c.is_active = 1)";

/// Whether any event due at `now` has a business with no active endpoint (a read).
pub async fn any_due_unconfigured(store: &Store, now: DateTime<Utc>) -> Result<bool, StoreError> {
    let any = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT 1 FROM events WHERE {UNCONFIGURED} LIMIT 1"
    )))
    .bind(store::timestamp(now))
    .fetch_optional(store.pool())
    .await?;
    Ok(any.is_some())
}

/// Marks `skipped` the events due at `now` whose business has no active endpoint (on the
/// pool); returns how many.
pub async fn skip_due_unconfigured(store: &Store, now: DateTime<Utc>) -> Result<u64, StoreError> {
    let skipped = sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE events SET delivery_status = 'skipped', next_attempt_at = NULL \
         WHERE {UNCONFIGURED}"
    )))
    .bind(store::timestamp(now))
    .execute(store.pool())
    .await?
    .rows_affected();
    Ok(skipped)
}

/// Moves the events of `ids` still due at `now` to `lease` (their `next_attempt_at`), in one
/// statement on the pool; returns the ids it moved.
pub async fn claim(
    store: &Store,
    ids: &[&str],
    lease: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Vec<String>, StoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let placeholders: Vec<String> = (0..ids.len()).map(|i| format!("${}", i + 3)).collect();
    let sql = format!(
        "UPDATE events SET next_attempt_at = $1 \
         WHERE delivery_status = 'pending' AND next_attempt_at <= $2 AND id IN ({}) \
         RETURNING id",
        placeholders.join(", ")
    );
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(store::timestamp(lease))
        .bind(store::timestamp(now));
    for id in ids {
        query = query.bind(id.to_string());
    }
    let rows = query.fetch_all(store.pool()).await?;
    rows.iter().map(|row| store::text(row, "id")).collect()
}

/// The event `id` as an attempt sends it (it exists: the attempt claimed it).
pub async fn to_send(store: &Store, id: &str) -> Result<ToSend, StoreError> {
    let row = sqlx::query(
        "SELECT type, payload, created_at, attempts, budget_start FROM events WHERE id = $1",
    )
    .bind(id)
    .fetch_one(store.pool())
    .await?;
    Ok(ToSend {
        kind: store::text(&row, "type")?,
        payload: store::text(&row, "payload")?,
        created_at: store::time(&row, "created_at")?,
        attempts: row.try_get("attempts")?,
        budget_start: row.try_get("budget_start")?,
    })
}

/// Records an attempt at the event `event_id` made at `at`.
pub async fn record_attempt(
    tx: &mut Tx,
    event_id: &str,
    at: DateTime<Utc>,
    attempt: &AttemptMade<'_>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO webhook_attempts (id, event_id, attempted_at, url, response_status, \
           error, latency_ms, response_body) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(store::new_id())
    .bind(event_id)
    .bind(store::timestamp(at))
    .bind(attempt.url)
    .bind(attempt.response_status)
    .bind(attempt.error)
    .bind(attempt.latency_ms)
    .bind(attempt.response_body)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Ends an attempt at the event `id` held under `lease`: its new status and next attempt, one
/// more attempt counted, the answer; `false` when the lease was lost (another process has it).
pub async fn finish_attempt(
    tx: &mut Tx,
    id: &str,
    lease: DateTime<Utc>,
    status: &str,
    next_attempt_at: Option<DateTime<Utc>>,
    at: DateTime<Utc>,
    attempt: &AttemptMade<'_>,
) -> Result<bool, StoreError> {
    let updated = sqlx::query(
        "UPDATE events SET delivery_status = $1, next_attempt_at = $2, attempts = attempts + 1, \
           last_attempt_at = $3, last_response_status = $4, last_error = $5 \
         WHERE id = $6 AND next_attempt_at = $7",
    )
    .bind(status)
    .bind(next_attempt_at.map(store::timestamp))
    .bind(store::timestamp(at))
    .bind(attempt.response_status)
    .bind(attempt.error)
    .bind(id)
    .bind(store::timestamp(lease))
    .execute(&mut **tx)
    .await?
    .rows_affected();
    Ok(updated != 0)
}

/// Ends a claim of the event `id` held under `lease` without an attempt: its status, next
/// attempt and (if given) error, on the pool.
pub async fn settle(
    store: &Store,
    id: &str,
    lease: DateTime<Utc>,
    status: &str,
    next_attempt_at: Option<DateTime<Utc>>,
    error: Option<&str>,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE events SET delivery_status = $1, next_attempt_at = $2, \
           last_error = COALESCE($3, last_error) WHERE id = $4 AND next_attempt_at = $5",
    )
    .bind(status)
    .bind(next_attempt_at.map(store::timestamp))
    .bind(error)
    .bind(id)
    .bind(store::timestamp(lease))
    .execute(store.pool())
    .await?;
    Ok(())
}

/// [`purge_attempts`]' statement (`$1`: the cutoff).
pub(crate) const PURGE_ATTEMPTS: &str = "DELETE FROM webhook_attempts WHERE event_id IN \
     (SELECT id FROM events WHERE created_at < $1 AND delivery_status <> 'pending')";

/// [`purge`]'s statement (`$1`: the cutoff); through `events_created`, whose predicate is
/// this `WHERE`'s.
pub(crate) const PURGE_EVENTS: &str =
    "DELETE FROM events WHERE created_at < $1 AND delivery_status <> 'pending'";

/// Deletes the attempts of the events [`purge`] deletes.
pub async fn purge_attempts(tx: &mut Tx, cutoff: DateTime<Utc>) -> Result<(), StoreError> {
    sqlx::query(PURGE_ATTEMPTS)
        .bind(store::timestamp(cutoff))
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Deletes the events written before `cutoff`, unless still queued; returns how many.
pub async fn purge(tx: &mut Tx, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
    let deleted = sqlx::query(PURGE_EVENTS)
        .bind(store::timestamp(cutoff))
        .execute(&mut **tx)
        .await?
        .rows_affected();
    Ok(deleted)
}
