//! Domain events (`account.created`, `collection.received`, ...): each is written to `events`
//! in the same transaction as the change it describes, so an event exists if and only if its
//! change committed. Webhook delivery ([`super::webhooks`]) reads them from there, due at
//! once; nothing is lost in between. An event of a business with no active endpoint is
//! recorded `skipped` (replayable) and never queued.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::error::{Error, OrInternal};
use crate::kernel::batch::Batch;
use crate::kernel::store::{self, Tx};

/// Records the event `kind` of `business_id`, whose `data` is `payload`, at `at`; returns its id.
pub async fn record<T: Serialize>(
    tx: &mut Tx,
    business_id: &str,
    kind: &str,
    payload: &T,
    at: DateTime<Utc>,
) -> Result<String, Error> {
    let mut batch = Batch::new();
    let id = record_into(&mut batch, business_id, kind, payload, at)?;
    batch.run(tx).await?;
    Ok(id)
}

/// [`record`] as a statement of `batch`, written when the batch runs in the change's
/// transaction.
pub fn record_into<T: Serialize>(
    batch: &mut Batch,
    business_id: &str,
    kind: &str,
    payload: &T,
    at: DateTime<Utc>,
) -> Result<String, Error> {
    let id = store::new_id();
    let payload = serde_json::to_string(payload).or_internal()?;
    // Due at once if the business has an active endpoint; otherwise recorded `skipped` (the
    // spec: events that happen while delivery is paused, or before any configuration exists),
    // never queued. Queued and skipped later, each event left a dead entry in `events_due`
    // that every dispatcher pass stepped over until the table was vacuumed.
    batch
        .push(
            "INSERT INTO events (id, business_id, type, payload, created_at, next_attempt_at, \
               delivery_status) \
             SELECT $1, $2, $3, $4, $5, CASE WHEN e.active > 0 THEN $5 END, \
               CASE WHEN e.active > 0 THEN 'pending' ELSE 'skipped' END \
             FROM (SELECT COUNT(*) AS active FROM webhook_configurations c \
                   WHERE c.business_id = $2 AND c.is_active = 1) e",
        )
        .bind(id.clone())
        .bind(business_id.to_owned())
        .bind(kind.to_owned())
        .bind(payload)
        .bind(store::timestamp(at));
    Ok(id)
}
