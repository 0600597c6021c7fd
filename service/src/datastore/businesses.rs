//! `businesses`: each business with its status, its integration credentials (the client id
//! and the hash of its secret) and its daily transfer limit.

use super::{dispatch, Conn, On, Store, StoreError, Tx};
use chrono::{DateTime, Utc};
pub use kobo_store::businesses::{Business, Credentials, NewBusiness};

/// Writes a new business at `now`.
pub async fn insert(
    tx: &mut Tx,
    new: &NewBusiness<'_>,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    dispatch!(tx.on(), businesses::insert(new, now))
}

/// The business with this id or client id, if any.
pub async fn find(store: &Store, id_or_client_id: &str) -> Result<Option<Business>, StoreError> {
    dispatch!(store.on(), businesses::find(id_or_client_id))
}

/// Every business, oldest first.
pub async fn list(store: &Store) -> Result<Vec<Business>, StoreError> {
    dispatch!(store.on(), businesses::list())
}

/// The name of the business (it exists).
pub async fn name_of(conn: impl Into<Conn<'_>>, id: &str) -> Result<String, StoreError> {
    dispatch!(conn.into().on(), businesses::name_of(id))
}

/// The status (`active`, `inactive`) of the business, if it exists.
pub async fn status_of(conn: impl Into<Conn<'_>>, id: &str) -> Result<Option<String>, StoreError> {
    dispatch!(conn.into().on(), businesses::status_of(id))
}

/// What a transfer's execution reads of its business: its status and daily limit (its own,
/// or `default_daily_limit`), under a share lock until `tx` ends on PostgreSQL (a
/// deactivation waits for it, or it for the deactivation); SQLite's write transaction holds
/// the whole database already.
pub async fn locked_for_execution(
    tx: &mut Tx,
    id: &str,
    default_daily_limit: i64,
) -> Result<(String, i64), StoreError> {
    dispatch!(
        tx.on(),
        businesses::locked_for_execution(id, default_daily_limit)
    )
}

/// The client id of the business (it exists).
pub async fn client_id_of(tx: &mut Tx, id: &str) -> Result<String, StoreError> {
    dispatch!(tx.on(), businesses::client_id_of(id))
}

/// The credentials of the business whose client id is `client_id`, if any.
pub async fn credentials_of_client(
    store: &Store,
    client_id: &str,
) -> Result<Option<Credentials>, StoreError> {
    dispatch!(store.on(), businesses::credentials_of_client(client_id))
}

/// Replaces the business's client secret (its hash) at `now`; `issuer` is the member who asked
/// for it.
pub async fn set_client_secret(
    tx: &mut Tx,
    id: &str,
    client_secret_hash: &str,
    issuer: Option<&str>,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    tx.touch_auth();
    dispatch!(
        tx.on(),
        businesses::set_client_secret(id, client_secret_hash, issuer, now)
    )
}

/// PostgreSQL: takes the business row's lock (`FOR NO KEY UPDATE`) until `tx` ends.
pub async fn lock(tx: &mut Tx, id: &str) -> Result<(), StoreError> {
    dispatch!(tx.on(), businesses::lock(id))
}

/// Holds the business's standing (its status and daily limit) alone until `tx` ends, as a
/// change of them does: on PostgreSQL its standing lock, which every payout of the business
/// holds shared from its start (`Store::begin_payout`); on SQLite nothing (the write
/// transaction holds the database).
pub async fn hold_standing(tx: &mut Tx, id: &str) -> Result<(), StoreError> {
    match tx.on() {
        On::Sqlite(_) => Ok(()),
        On::Postgres(tx) => kobo_store_postgres::businesses::hold_standing(tx, id).await,
    }
}

/// Sets the status (`active` or `inactive`) of the business with this id or client id at
/// `now`, in a transaction of its own holding its standing ([`hold_standing`]); returns how
/// many businesses changed.
pub async fn set_status(
    store: &Store,
    id_or_client_id: &str,
    status: &str,
    now: DateTime<Utc>,
) -> Result<u64, StoreError> {
    let changed = dispatch!(
        store.on(),
        businesses::set_status(id_or_client_id, status, now)
    );
    crate::kernel::store::auth_changed_here();
    changed
}

/// Sets the daily transfer limit in kobo (`None`: the default) of the business with this id
/// or client id, in a transaction of its own holding its standing ([`hold_standing`]);
/// returns how many businesses changed.
pub async fn set_daily_transfer_limit(
    store: &Store,
    id_or_client_id: &str,
    limit: Option<i64>,
) -> Result<u64, StoreError> {
    dispatch!(
        store.on(),
        businesses::set_daily_transfer_limit(id_or_client_id, limit)
    )
}
