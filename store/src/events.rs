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
    pub from: Option<String>,
    /// Written before this stored time.
    pub until: Option<String>,
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
