//! `businesses`: each business with its status, its integration credentials (the client id
//! and the hash of its secret) and its daily transfer limit.

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::Row;

use super::{Conn, FromPrefixedRow, StoreError, Tx};
use crate::kernel::store::{self, Backend, Store};
pub use kobo_store::businesses::{Business, Credentials, NewBusiness};

impl FromPrefixedRow for Business {
    /// A row whose columns are those of [`Business`], each with `prefix` before its name.
    fn from_prefixed_row(row: &AnyRow, prefix: &str) -> Result<Business, StoreError> {
        let column = |name: &str| format!("{prefix}{name}");
        Ok(Business {
            id: store::text(row, &column("id"))?,
            name: store::text(row, &column("name"))?,
            status: store::text(row, &column("status"))?,
            client_id: store::text(row, &column("client_id"))?,
            created_at: store::time(row, &column("created_at"))?,
        })
    }
}

/// Writes a new business at `now`.
pub async fn insert(
    tx: &mut Tx,
    new: &NewBusiness<'_>,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO businesses (id, name, status, client_id, client_secret_hash, created_at, \
           updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6)",
    )
    .bind(new.id)
    .bind(new.name)
    .bind(new.status)
    .bind(new.client_id)
    .bind(new.client_secret_hash)
    .bind(store::timestamp(now))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The business with this id or client id, if any.
pub async fn find(store: &Store, id_or_client_id: &str) -> Result<Option<Business>, StoreError> {
    let row = sqlx::query(
        "SELECT id, name, status, client_id, created_at FROM businesses \
         WHERE id = $1 OR client_id = $1",
    )
    .bind(id_or_client_id)
    .fetch_optional(store.pool())
    .await?;
    row.as_ref()
        .map(|row| Business::from_prefixed_row(row, ""))
        .transpose()
}

/// Every business, oldest first.
pub async fn list(store: &Store) -> Result<Vec<Business>, StoreError> {
    let rows = sqlx::query(
        "SELECT id, name, status, client_id, created_at FROM businesses ORDER BY created_at, id",
    )
    .fetch_all(store.pool())
    .await?;
    rows.iter()
        .map(|row| Business::from_prefixed_row(row, ""))
        .collect()
}

/// The name of the business (it exists).
pub async fn name_of(conn: impl Into<Conn<'_>>, id: &str) -> Result<String, StoreError> {
    let query = sqlx::query("SELECT name FROM businesses WHERE id = $1").bind(id.to_owned());
    let row = conn
        .into()
        .fetch_optional(query)
        .await?
        .ok_or_else(|| StoreError::Unreadable(format!("no business {id}")))?;
    store::text(&row, "name")
}

/// The status (`active`, `inactive`) of the business, if it exists.
pub async fn status_of(conn: impl Into<Conn<'_>>, id: &str) -> Result<Option<String>, StoreError> {
    let query = sqlx::query("SELECT status FROM businesses WHERE id = $1").bind(id.to_owned());
    let row = conn.into().fetch_optional(query).await?;
    row.map(|row| store::text(&row, "status")).transpose()
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
    let lock = match tx.backend() {
        Backend::Postgres => " FOR SHARE",
        Backend::Sqlite => "",
    };
    let sql = format!(
        "SELECT status, COALESCE(daily_transfer_limit, $2) AS daily_limit FROM businesses \
         WHERE id = $1{lock}"
    );
    // Audited: the statement is built from constants only; every value is bound.
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .bind(default_daily_limit)
        .fetch_one(&mut **tx)
        .await?;
    Ok((store::text(&row, "status")?, row.try_get("daily_limit")?))
}

/// The client id of the business (it exists).
pub async fn client_id_of(tx: &mut Tx, id: &str) -> Result<String, StoreError> {
    let row = sqlx::query("SELECT client_id FROM businesses WHERE id = $1")
        .bind(id)
        .fetch_one(&mut **tx)
        .await?;
    store::text(&row, "client_id")
}

/// The credentials of the business whose client id is `client_id`, if any.
pub async fn credentials_of_client(
    store: &Store,
    client_id: &str,
) -> Result<Option<Credentials>, StoreError> {
    let row = sqlx::query("SELECT id, client_secret_hash FROM businesses WHERE client_id = $1")
        .bind(client_id)
        .fetch_optional(store.pool())
        .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    Ok(Some(Credentials {
        id: store::text(&row, "id")?,
        client_secret_hash: store::text(&row, "client_secret_hash")?,
    }))
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
    sqlx::query(
        "UPDATE businesses SET client_secret_hash = $2, updated_at = $3, secret_issued_by = $4 \
         WHERE id = $1",
    )
    .bind(id)
    .bind(client_secret_hash)
    .bind(store::timestamp(now))
    .bind(issuer)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// PostgreSQL: takes the business row's lock (`FOR NO KEY UPDATE`) until `tx` ends.
pub async fn lock(tx: &mut Tx, id: &str) -> Result<(), StoreError> {
    sqlx::query("SELECT id FROM businesses WHERE id = $1 FOR NO KEY UPDATE")
        .bind(id)
        .fetch_optional(&mut **tx)
        .await?;
    Ok(())
}

/// Sets the status (`active` or `inactive`) of the business with this id or client id at
/// `now`, on the pool; returns how many businesses changed.
pub async fn set_status(
    store: &Store,
    id_or_client_id: &str,
    status: &str,
    now: DateTime<Utc>,
) -> Result<u64, StoreError> {
    let updated = sqlx::query(
        "UPDATE businesses SET status = $2, updated_at = $3 WHERE id = $1 OR client_id = $1",
    )
    .bind(id_or_client_id)
    .bind(status)
    .bind(store::timestamp(now))
    .execute(store.pool())
    .await?
    .rows_affected();
    Ok(updated)
}

/// Sets the daily transfer limit in kobo (`None`: the default) of the business with this id
/// or client id, on the pool; returns how many businesses changed.
pub async fn set_daily_transfer_limit(
    store: &Store,
    id_or_client_id: &str,
    limit: Option<i64>,
) -> Result<u64, StoreError> {
    let updated = sqlx::query(
        "UPDATE businesses SET daily_transfer_limit = $2 WHERE id = $1 OR client_id = $1",
    )
    .bind(id_or_client_id)
    .bind(limit)
    .execute(store.pool())
    .await?
    .rows_affected();
    Ok(updated)
}
