//! Kobo's PostgreSQL store: every statement of the bank's datastore (`kobo`'s
//! `service/src/datastore`), written for PostgreSQL with its native types and checked against
//! the schema at compile time by sqlx's query macros.
//!
//! # What lives here
//!
//! One module per datastore module, with the same names, functions and types (the rows of
//! [`kobo_store`], `&str` ids, `DateTime<Utc>` times, `i64` kobo): the service calls either
//! this crate or its SQLite twin. Reads take `conn: impl Into<Conn<'_>>` (the pool, a
//! transaction or one connection); writes inside a transaction take `&mut Tx`. A
//! [`kobo_store::batch::Batch`] of writes runs as one statement ([`batch::run`]). The schema is
//! [`MIGRATOR`]'s: migrations 0001 to 0013 are byte-identical to those the release before this
//! crate applied (so a database it migrated is upgraded in place), 0014 moves every column to
//! its native type.
//!
//! The signatures differ from the service's only where its types are the service's own: a
//! function that ran on `&Store` takes `pool: &PgPool` ([`Conn::Pool`] holds a `&PgPool`), and
//! the `render*` functions that turned a batch's writes into SQL are gone ([`batch::run`] reads
//! the typed writes itself). An id this crate must write that is not a UUID is refused
//! ([`StoreError::Unreadable`]); one it looks up by finds nothing, as before.
//!
//! # Type mapping
//!
//! | Rust (interface) | column | notes |
//! | --- | --- | --- |
//! | `&str` / `String` id | `uuid` | an id that is not a UUID finds nothing; actor columns (`initiated_by`, `user_id`, ...) stay `text` |
//! | `DateTime<Utc>` | `timestamptz` | microseconds, as before |
//! | `bool` | `boolean` | were `SMALLINT` 0/1 |
//! | `&str` / `String` day (`YYYY-MM-DD`) | `date` | bound as text, read as text |
//! | `i64` kobo, counters | `bigint` | |
//! | `i128` sums | `numeric` | read back as text and parsed: exact at any size |
//! | `Vec<String>` lists | `text[]` | the webhook endpoint's whitelist and event types |
//! | JSON (`String`) | `text` | kept as written: payloads are signed byte for byte |
//!
//! # Offline data
//!
//! The query macros build from `store-postgres/.sqlx` (`SQLX_OFFLINE=true` in
//! `.cargo/config.toml`), so building needs no database. After changing a query or a
//! migration, run `store-postgres/prepare` (a PostgreSQL on 127.0.0.1:5432, user `postgres`):
//! it migrates a fresh database, compiles this crate against it
//! (`KOBO_PG_PREPARE_URL`, named by `sqlx.toml` so that another crate's `DATABASE_URL` never
//! applies here) and rewrites `.sqlx`. `prepare --check` only compares, as CI may.

use sha2::{Digest, Sha256};
use sqlx::pool::PoolConnection;
use sqlx::{PgConnection, PgPool, Postgres};

pub use kobo_store::error::StoreError;

pub mod accounts;
pub mod approval_policies;
pub mod audit;
pub mod batch;
pub mod businesses;
pub mod customers;
pub mod daily_totals;
pub mod events;
pub mod idempotency_keys;
pub mod invitations;
pub mod ledger;
pub mod logs;
pub mod members;
pub mod notifications;
pub mod otps;
pub mod roles;
pub mod seeding;
pub mod sequences;
pub mod sessions;
mod sums;
pub mod throttles;
pub mod transactions;
pub mod transfers;
pub mod webhook_endpoints;

/// A transaction on the store: `&mut **tx` runs a query in it; dropped without commit, it
/// rolls back.
pub type Tx = sqlx::Transaction<'static, Postgres>;

/// The schema: 0001-0013 as the release before this crate wrote them, 0014 the native types.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// A short fingerprint of the embedded migrations (their versions and checksums), as the
/// service's `Store::schema_fingerprint`: two databases migrated by builds with the same
/// fingerprint have the same schema.
pub fn schema_fingerprint() -> String {
    let mut digest = Sha256::new();
    for migration in MIGRATOR.iter() {
        digest.update(migration.version.to_le_bytes());
        digest.update(&migration.checksum);
    }
    hex::encode(&digest.finalize()[..6])
}

/// Where a read runs: on the pool (a connection of its own, no transaction), in a transaction
/// the caller holds, or on one connection the caller holds.
pub enum Conn<'c> {
    Pool(&'c PgPool),
    Tx(&'c mut Tx),
    Connection(&'c mut PgConnection),
}

impl<'c> From<&'c PgPool> for Conn<'c> {
    fn from(pool: &'c PgPool) -> Conn<'c> {
        Conn::Pool(pool)
    }
}

impl<'c> From<&'c mut Tx> for Conn<'c> {
    fn from(tx: &'c mut Tx) -> Conn<'c> {
        Conn::Tx(tx)
    }
}

impl<'c> From<&'c mut PgConnection> for Conn<'c> {
    fn from(connection: &'c mut PgConnection) -> Conn<'c> {
        Conn::Connection(connection)
    }
}

/// The connection a [`Conn`] runs on: one taken from the pool, or the caller's.
pub(crate) enum Held<'c> {
    Pooled(PoolConnection<Postgres>),
    Borrowed(&'c mut PgConnection),
}

impl<'c> Conn<'c> {
    /// The connection to run on (the pool's is returned to it when dropped).
    pub(crate) async fn acquire(self) -> Result<Held<'c>, StoreError> {
        Ok(match self {
            Conn::Pool(pool) => Held::Pooled(pool.acquire().await?),
            Conn::Tx(tx) => Held::Borrowed(tx),
            Conn::Connection(connection) => Held::Borrowed(connection),
        })
    }
}

impl std::ops::Deref for Held<'_> {
    type Target = PgConnection;

    fn deref(&self) -> &PgConnection {
        match self {
            Held::Pooled(connection) => connection,
            Held::Borrowed(connection) => connection,
        }
    }
}

impl std::ops::DerefMut for Held<'_> {
    fn deref_mut(&mut self) -> &mut PgConnection {
        match self {
            Held::Pooled(connection) => connection,
            Held::Borrowed(connection) => connection,
        }
    }
}

/// An id to look a row up by: one that is not a UUID can name no row, so it becomes the nil
/// UUID, which no row has (ids are random, version 4), and the lookup finds nothing, as the
/// text column found nothing.
pub(crate) fn id(text: &str) -> uuid::Uuid {
    uuid::Uuid::parse_str(text).unwrap_or(uuid::Uuid::nil())
}

/// An id to write: one that is not a UUID is refused (the `uuid` column could not hold it).
pub(crate) fn new_id(text: &str) -> Result<uuid::Uuid, StoreError> {
    uuid::Uuid::parse_str(text)
        .map_err(|error| StoreError::Unreadable(format!("id {text:?} is not a UUID: {error}")))
}

/// [`new_id`] of an optional id.
pub(crate) fn new_opt_id(text: Option<&str>) -> Result<Option<uuid::Uuid>, StoreError> {
    text.map(new_id).transpose()
}

/// Ids read back as the interface's text.
pub(crate) fn text_ids(ids: Vec<uuid::Uuid>) -> Vec<String> {
    ids.into_iter().map(|id| id.to_string()).collect()
}
