//! `webhook_configurations`: a business's webhook endpoint, at most one per business: its URL,
//! whether delivery runs, the addresses it may resolve to, the events it wants, and its
//! signing secrets. Lists are stored as JSON arrays of text.

use super::{dispatch, Conn, StoreError, Tx};
use chrono::{DateTime, Utc};
pub use kobo_store::webhook_endpoints::{Change, Configuration, Endpoint, NewEndpoint};

/// The business's endpoint, if it has one.
pub async fn find(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
) -> Result<Option<Configuration>, StoreError> {
    dispatch!(conn.into().on(), webhook_endpoints::find(business_id))
}

/// The business's endpoint with its secrets, if it has one.
pub async fn find_endpoint(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
) -> Result<Option<Endpoint>, StoreError> {
    dispatch!(
        conn.into().on(),
        webhook_endpoints::find_endpoint(business_id)
    )
}

/// Creates the business's endpoint at `now`; `false` if it has one already (nothing changes).
pub async fn insert(
    tx: &mut Tx,
    new: &NewEndpoint<'_>,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    dispatch!(tx.on(), webhook_endpoints::insert(new, now))
}

/// Changes what is given of the business's endpoint at `now`, as part of `tx` (with the
/// change's audit entry); `false` if it has none.
pub async fn update(
    tx: &mut Tx,
    business_id: &str,
    change: &Change<'_>,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    dispatch!(tx.on(), webhook_endpoints::update(business_id, change, now))
}

/// Makes `secret` the endpoint's secret at `now`, the current one its previous one until
/// `previous_expires_at`; `false` if the business has no endpoint.
pub async fn rotate_secret(
    tx: &mut Tx,
    business_id: &str,
    secret: &str,
    previous_expires_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    dispatch!(
        tx.on(),
        webhook_endpoints::rotate_secret(business_id, secret, previous_expires_at, now)
    )
}

/// The id of the business's endpoint (it has one).
pub async fn id_of(tx: &mut Tx, business_id: &str) -> Result<String, StoreError> {
    dispatch!(tx.on(), webhook_endpoints::id_of(business_id))
}
