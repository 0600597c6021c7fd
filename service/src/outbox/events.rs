//! Domain events (`account.created`, `collection.received`, ...): each is written to `events`
//! in the same transaction as the change it describes, so an event exists if and only if its
//! change committed. Webhook delivery ([`super::webhooks`]) reads them from there, due at
//! once; nothing is lost in between. An event of a business with no active endpoint is
//! recorded `skipped` (replayable) and never queued.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::datastore::batch::{self, Batch};
use crate::datastore::events;
use crate::error::{Error, OrInternal};
use crate::kernel::store::Tx;

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
    batch::run(tx, batch).await?;
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
    let payload = serde_json::to_string(payload).or_internal()?;
    Ok(events::record_into(batch, business_id, kind, payload, at))
}
