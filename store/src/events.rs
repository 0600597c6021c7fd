//! The rows of `events` (see the datastore module of the same name in `kobo`).

use crate::paging::Cursor;
use chrono::{DateTime, Utc};

/// An event and where its delivery stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    pub id: String,
    pub kind: String,
    /// The event's data, JSON text.
    pub payload: String,
    pub created_at: DateTime<Utc>,
    /// `pending`, `delivered`, `failed` or `skipped`.
    pub delivery_status: String,
    pub attempts: i64,
    /// The attempts made before the current budget began (a replay starts a new one).
    pub budget_start: i64,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub last_attempt_at: Option<DateTime<Utc>>,
    pub last_response_status: Option<i64>,
    pub last_error: Option<String>,
}

/// Which events of a business [`list_deliveries`] reads.
#[derive(Clone, Debug)]
pub struct DeliveryFilter {
    pub business_id: String,
    /// Written at or after this (the retention).
    pub since: DateTime<Utc>,
    /// Written at or after this stored time.
    pub from: Option<DateTime<Utc>>,
    /// Written before this stored time.
    pub until: Option<DateTime<Utc>>,
    pub delivery_status: Option<String>,
    pub kind: Option<String>,
    /// After this one, newest first.
    pub cursor: Option<Cursor>,
    pub page_size: u64,
}

/// One attempt at delivering an event, as recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    pub event_id: String,
    pub attempted_at: DateTime<Utc>,
    pub response_status: Option<i64>,
    pub error: Option<String>,
    pub latency_ms: i64,
    pub response_body: Option<String>,
}

/// The events waiting for delivery, of every business.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pending {
    pub count: i64,
    /// When the oldest of them was written; `None` when none waits.
    pub oldest_created_at: Option<DateTime<Utc>>,
}

/// An event due for delivery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Due {
    pub id: String,
    pub business_id: String,
}

/// What an attempt sends of its event, and the attempts counted so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToSend {
    pub kind: String,
    /// The event's data, JSON text.
    pub payload: String,
    pub created_at: DateTime<Utc>,
    pub attempts: i64,
    pub budget_start: i64,
}

/// How one attempt went, as `webhook_attempts` and the event keep it.
#[derive(Clone, Copy, Debug)]
pub struct AttemptMade<'a> {
    pub url: &'a str,
    pub response_status: Option<i64>,
    pub error: Option<&'a str>,
    pub latency_ms: i64,
    pub response_body: Option<&'a str>,
}

crate::contract! {
    /// `events`, in each store.
    pub trait Events in events, functions events_functions {
        /// Marks `skipped` every queued event of the business (its endpoint is new: what came
        /// before is not sent now).
        tx fn skip_pending_of_business(business_id: &str) -> ();
        /// The event `event_id` of the business, if it was written at or after `since`.
        pool fn find_delivery(
            business_id: &str,
            event_id: &str,
            since: DateTime<Utc>,
        ) -> Option<Delivery>;
        /// The business's events, newest first, after the cursor: at most `page_size + 1` (the one
        /// more tells whether more follow).
        pool fn list_deliveries(filter: &DeliveryFilter) -> Vec<Delivery>;
        /// The newest `max` attempts of each event of `event_ids`, by event and newest first, in
        /// one query (none asked: none read).
        pool fn newest_attempts(event_ids: &[String], max: i64) -> Vec<Attempt>;
        /// Queues the business's event again, due at `now`, with a new budget of attempts; `false`
        /// when it is queued already (or is not the business's).
        tx fn requeue(event_id: &str, business_id: &str, now: DateTime<Utc>) -> bool;
        /// How many events wait for delivery, and since when.
        pool fn pending() -> Pending;
        /// The events due at `now`, at most `per_business` of each business, oldest first across
        /// businesses, at most `limit` in all.
        pool fn due(now: DateTime<Utc>, per_business: i64, limit: i64) -> Vec<Due>;
        /// Whether any event due at `now` has a business with no active endpoint (a read).
        pool fn any_due_unconfigured(now: DateTime<Utc>) -> bool;
        /// Marks `skipped` the events due at `now` whose business has no active endpoint (on the
        /// pool); returns how many.
        pool fn skip_due_unconfigured(now: DateTime<Utc>) -> u64;
        /// Moves the events of `ids` still due at `now` to `lease` (their `next_attempt_at`), in
        /// one statement on the pool; returns the ids it moved.
        pool fn claim(ids: &[&str], lease: DateTime<Utc>, now: DateTime<Utc>) -> Vec<String>;
        /// The event `id` as an attempt sends it (it exists: the attempt claimed it).
        pool fn to_send(id: &str) -> ToSend;
        /// Records an attempt at the event `event_id` made at `at`.
        tx fn record_attempt(event_id: &str, at: DateTime<Utc>, attempt: &AttemptMade<'_>) -> ();
        /// Ends an attempt at the event `id` held under `lease`: its new status and next attempt,
        /// one more attempt counted, the answer; `false` when the lease was lost (another process
        /// has it).
        tx fn finish_attempt(
            id: &str,
            lease: DateTime<Utc>,
            status: &str,
            next_attempt_at: Option<DateTime<Utc>>,
            at: DateTime<Utc>,
            attempt: &AttemptMade<'_>,
        ) -> bool;
        /// Ends a claim of the event `id` held under `lease` without an attempt: its status, next
        /// attempt and (if given) error, on the pool.
        pool fn settle(
            id: &str,
            lease: DateTime<Utc>,
            status: &str,
            next_attempt_at: Option<DateTime<Utc>>,
            error: Option<&str>,
        ) -> ();
        /// Deletes the attempts of the events [`purge`] deletes.
        tx fn purge_attempts(cutoff: DateTime<Utc>) -> ();
        /// Deletes the events written before `cutoff`, unless still queued; returns how many.
        tx fn purge(cutoff: DateTime<Utc>) -> u64;
    }
}
