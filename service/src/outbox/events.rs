//! Domain events (`account.created`, `collection.received`, ...): each is written to `events`
//! in the same transaction as the change it describes, so an event exists if and only if its
//! change committed. Webhook delivery ([`super::webhooks`]) reads them from there, due at
//! once; nothing is lost in between.

use chrono::{DateTime, Utc};
use generated_server::{ApiError, OrInternal};
use serde::Serialize;

use crate::kernel::store::{self, Tx};

/// Records the event `kind` of `business_id`, whose `data` is `payload`, at `at`; returns its id.
pub async fn record<T: Serialize>(
    tx: &mut Tx,
    business_id: &str,
    kind: &str,
    payload: &T,
    at: DateTime<Utc>,
) -> Result<String, ApiError> {
    let id = store::new_id();
    let payload = serde_json::to_string(payload).or_internal()?;
    sqlx::query(
        "INSERT INTO events (id, business_id, type, payload, created_at, next_attempt_at) \
         VALUES ($1, $2, $3, $4, $5, $5)",
    )
    .bind(&id)
    .bind(business_id)
    .bind(kind)
    .bind(payload)
    .bind(store::timestamp(at))
    .execute(&mut **tx)
    .await
    .or_internal()?;
    Ok(id)
}
