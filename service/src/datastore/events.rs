//! `events` and `webhook_attempts`: the domain events written with their change, their
//! delivery to the business's endpoint (status, lease, next attempt), and each attempt made.
//!
//! The writes outside a transaction ([`skip_due_unconfigured`], [`claim`], [`settle`]) run on
//! the pool: on SQLite the caller holds the write turn (`Store::write_turn`) across each.

use super::batch::{Batch, NewEvent, Write};
use super::{dispatch, Store, StoreError, Tx};
use crate::kernel::store;
use chrono::{DateTime, Utc};
pub use kobo_store::events::{
    Attempt, AttemptMade, Delivery, DeliveryFilter, Due, Pending, ToSend,
};

/// Marks `skipped` every queued event of the business (its endpoint is new: what came before
/// is not sent now).
pub async fn skip_pending_of_business(tx: &mut Tx, business_id: &str) -> Result<(), StoreError> {
    dispatch!(tx.on(), events::skip_pending_of_business(business_id))
}

/// The event `event_id` of the business, if it was written at or after `since`.
pub async fn find_delivery(
    store: &Store,
    business_id: &str,
    event_id: &str,
    since: DateTime<Utc>,
) -> Result<Option<Delivery>, StoreError> {
    dispatch!(
        store.on(),
        events::find_delivery(business_id, event_id, since)
    )
}

/// The business's events, newest first, after the cursor: at most `page_size + 1` (the one
/// more tells whether more follow).
pub async fn list_deliveries(
    store: &Store,
    filter: &DeliveryFilter,
) -> Result<Vec<Delivery>, StoreError> {
    dispatch!(store.on(), events::list_deliveries(filter))
}

/// The newest `max` attempts of each event of `event_ids`, by event and newest first, in one
/// query (none asked: none read).
pub async fn newest_attempts(
    store: &Store,
    event_ids: &[String],
    max: i64,
) -> Result<Vec<Attempt>, StoreError> {
    dispatch!(store.on(), events::newest_attempts(event_ids, max))
}

/// Queues the business's event again, due at `now`, with a new budget of attempts; `false`
/// when it is queued already (or is not the business's).
pub async fn requeue(
    tx: &mut Tx,
    event_id: &str,
    business_id: &str,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    dispatch!(tx.on(), events::requeue(event_id, business_id, now))
}

/// How many events wait for delivery, and since when.
pub async fn pending(store: &Store) -> Result<Pending, StoreError> {
    dispatch!(store.on(), events::pending())
}

/// The events due at `now`, at most `per_business` of each business, oldest first across
/// businesses, at most `limit` in all.
pub async fn due(
    store: &Store,
    now: DateTime<Utc>,
    per_business: i64,
    limit: i64,
) -> Result<Vec<Due>, StoreError> {
    dispatch!(store.on(), events::due(now, per_business, limit))
}

/// Whether any event due at `now` has a business with no active endpoint (a read).
pub async fn any_due_unconfigured(store: &Store, now: DateTime<Utc>) -> Result<bool, StoreError> {
    dispatch!(store.on(), events::any_due_unconfigured(now))
}

/// Marks `skipped` the events due at `now` whose business has no active endpoint (on the
/// pool); returns how many.
pub async fn skip_due_unconfigured(store: &Store, now: DateTime<Utc>) -> Result<u64, StoreError> {
    dispatch!(store.on(), events::skip_due_unconfigured(now))
}

/// Moves the events of `ids` still due at `now` to `lease` (their `next_attempt_at`), in one
/// statement on the pool; returns the ids it moved.
pub async fn claim(
    store: &Store,
    ids: &[&str],
    lease: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Vec<String>, StoreError> {
    dispatch!(store.on(), events::claim(ids, lease, now))
}

/// The event `id` as an attempt sends it (it exists: the attempt claimed it).
pub async fn to_send(store: &Store, id: &str) -> Result<ToSend, StoreError> {
    dispatch!(store.on(), events::to_send(id))
}

/// Records an attempt at the event `event_id` made at `at`.
pub async fn record_attempt(
    tx: &mut Tx,
    event_id: &str,
    at: DateTime<Utc>,
    attempt: &AttemptMade<'_>,
) -> Result<(), StoreError> {
    dispatch!(tx.on(), events::record_attempt(event_id, at, attempt))
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
    dispatch!(
        tx.on(),
        events::finish_attempt(id, lease, status, next_attempt_at, at, attempt)
    )
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
    dispatch!(
        store.on(),
        events::settle(id, lease, status, next_attempt_at, error)
    )
}

/// Deletes the attempts of the events [`purge`] deletes.
pub async fn purge_attempts(tx: &mut Tx, cutoff: DateTime<Utc>) -> Result<(), StoreError> {
    dispatch!(tx.on(), events::purge_attempts(cutoff))
}

/// Deletes the events written before `cutoff`, unless still queued; returns how many.
pub async fn purge(tx: &mut Tx, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
    dispatch!(tx.on(), events::purge(cutoff))
}

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
