//! Kobo's PostgreSQL store: every statement of the bank's datastore (`kobo`'s
//! `service/src/datastore`), written for PostgreSQL with its native types and checked against
//! the schema at compile time by sqlx's query macros.
//!
//! # What lives here
//!
//! One module per datastore module, with the same names, functions and types (the rows of
//! [`kobo_store`], `&str` ids, `DateTime<Utc>` times, `i64` kobo): the service calls either
//! this crate or its SQLite twin. Reads take `conn: impl Into<Conn<'_>>` (the pool, a
//! transaction or one connection); writes inside a transaction take `&mut Tx`; what runs on
//! the pool goes through [`Pool::run`], which knows whether a transaction pooler
//! (PgBouncer) is in between ([`PoolMode`]). A
//! [`kobo_store::batch::Batch`] of writes runs as one statement ([`batch::run`]). The schema is
//! [`MIGRATOR`]'s: migrations 0001 to 0013 are byte-identical to those the release before this
//! crate applied (so a database it migrated is upgraded in place), 0014 moves every column to
//! its native type.
//!
//! The signatures differ from the service's only where its types are the service's own: a
//! function that ran on `&Store` takes `pool: &Pool` ([`Conn::Pool`] holds a `&Pool`), and
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
use sqlx::{PgConnection, PgPool, Postgres};

pub use kobo_store::error::StoreError;

pub mod accounts;
pub mod approval_policies;
pub mod audit;
pub mod batch;
pub mod beneficiaries;
pub mod bulk_transfers;
pub mod businesses;
pub mod customers;
pub mod daily_totals;
pub mod deployment;
pub mod events;
pub mod exports;
pub mod groups;
pub mod idempotency_keys;
pub mod invitations;
pub mod ledger;
pub mod logs;
pub mod members;
pub mod notifications;
pub mod otps;
pub mod outcome;
pub mod request_budgets;
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

/// PostgreSQL, as the stores' contract names a store ([`kobo_store::contract`]): each resource
/// module implements its trait for it.
#[derive(Clone, Copy, Debug)]
pub struct Backend;

impl kobo_store::contract::Backend for Backend {
    type Pool = Pool;
    type Tx = Tx;
    type Conn<'c> = Conn<'c>;
}

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

/// How the connections of the pool reach PostgreSQL.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PoolMode {
    /// Each connection is a server session of its own: PostgreSQL itself, or a pooler in
    /// session mode. Statements are prepared once per connection and kept (sqlx's cache).
    #[default]
    Session,
    /// A pooler in transaction mode (PgBouncer's `pool_mode = transaction`) lends a server
    /// connection for one transaction at a time, so a statement must be prepared and run in
    /// the same transaction: nothing is kept prepared between transactions (no statement
    /// cache), every transaction begins by dropping what the connection's previous borrower
    /// left prepared ([`Pool::begin`]), and a statement outside a transaction the caller holds
    /// runs in one of its own ([`Pool::run`]). PgBouncer before 1.21 (Debian 12 has 1.18)
    /// cannot carry a prepared statement from one server connection to another. What needs a session of its own (`LISTEN`, the
    /// migrations' advisory lock) goes to the server directly, not through this pool.
    Transaction,
}

/// The pool every statement outside a caller's transaction runs on, and how its connections
/// reach PostgreSQL ([`PoolMode`]).
#[derive(Clone, Debug)]
pub struct Pool {
    inner: PgPool,
    mode: PoolMode,
    /// The commits whose answer was lost, by what was found out ([`outcome::find_out`]).
    lost: std::sync::Arc<outcome::Lost>,
}

/// The text of [`PAYOUT_PLANS`], for `concat!`.
macro_rules! payout_plans {
    () => {
        "SET LOCAL plan_cache_mode = force_generic_plan; SET LOCAL enable_seqscan = off; \
         SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off"
    };
}

/// How a payout's transaction plans its statements (`ledger::advance_and_move`, `batch::run`):
/// on the generic plan each connection keeps for the statement, never planned again, and with
/// index reads only. Planning them for every payout was a tenth of the machine, and most of it
/// inside the ledger head's lock; without `enable_seqscan = off` their generic plans, made
/// while a table is small, scan it whole, and keep scanning it as it grows and bloats. Every
/// table they read is read by its key, for which an index is right at any size
/// (`tests/plans.rs` holds them to it). Nor do they join by hash or merge: a table they join
/// to a few rows of their own (a transfer's client reference, a key) is read by a lookup per
/// row, never whole (a generic plan made while `transfers` was small hashed its whole index
/// for each payout, the rows read by `json_to_recordset` being estimated at 100).
pub const PAYOUT_PLANS: &str = payout_plans!();

/// `BEGIN` with [`PAYOUT_PLANS`], in one round trip.
const PAYOUT_BEGIN: &str = concat!("BEGIN; ", payout_plans!());

/// `BEGIN` through a transaction pooler ([`Pool::begin`]).
const TRANSACTION_POOLER_BEGIN: &str = "BEGIN; DEALLOCATE ALL";

impl Pool {
    pub fn new(inner: PgPool, mode: PoolMode) -> Pool {
        Pool {
            inner,
            mode,
            lost: std::sync::Arc::default(),
        }
    }

    /// The commits on this pool whose answer was lost since it opened, by what was found out.
    pub fn lost_commits(&self) -> outcome::LostCommits {
        self.lost.read()
    }

    /// `options` as [`PoolMode`] `mode` needs them: through a transaction pooler, no
    /// statement is kept prepared (it would be asked for on another server connection).
    pub fn connect_options(
        options: sqlx::postgres::PgConnectOptions,
        mode: PoolMode,
    ) -> sqlx::postgres::PgConnectOptions {
        match mode {
            PoolMode::Session => options,
            PoolMode::Transaction => options.statement_cache_capacity(0),
        }
    }

    /// sqlx's pool, for what runs on it directly (transactions, tests).
    pub fn inner(&self) -> &PgPool {
        &self.inner
    }

    pub fn mode(&self) -> PoolMode {
        self.mode
    }

    /// A transaction: `&mut **tx` runs a statement in it. Through a transaction pooler it
    /// first drops every statement prepared on the server connection it was lent, in the same
    /// round trip as `BEGIN`: sqlx names its statements `sqlx_s_1`, `sqlx_s_2`, ... on each
    /// client connection, so the previous borrower's would collide with this one's ("prepared
    /// statement already exists").
    pub async fn begin(&self) -> Result<Tx, StoreError> {
        Ok(match self.mode {
            PoolMode::Session => self.inner.begin().await?,
            PoolMode::Transaction => self.inner.begin_with(TRANSACTION_POOLER_BEGIN).await?,
        })
    }

    /// [`Pool::begin`] for a payout: its statements run on the plans this connection keeps
    /// for them, which read only indexes ([`PAYOUT_PLANS`], in the same round trip as
    /// `BEGIN`; through a transaction pooler no statement is kept, so nothing is set), and,
    /// when money leaves business `standing`, holding its standing lock shared
    /// ([`businesses::hold_standing_shared`], in that round trip too), so that the payout's
    /// statements read its status and daily limit as they stand until it commits.
    pub async fn begin_payout(&self, standing: Option<&str>) -> Result<Tx, StoreError> {
        let begin = match self.mode {
            PoolMode::Session => PAYOUT_BEGIN,
            PoolMode::Transaction => TRANSACTION_POOLER_BEGIN,
        };
        let Some(business_id) = standing else {
            return Ok(self.inner.begin_with(begin).await?);
        };
        let begin = format!(
            "{begin}; {}",
            businesses::hold_standing_shared(business_id)?
        );
        Ok(self.inner.begin_with(sqlx::AssertSqlSafe(begin)).await?)
    }

    /// Runs `statements` on a connection of the pool: in [`PoolMode::Transaction`], in a
    /// transaction of their own, committed when they succeed (so each is prepared and run on
    /// the one server connection the pooler lends for it).
    pub(crate) async fn run<T>(
        &self,
        statements: impl AsyncFnOnce(&mut PgConnection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        match self.mode {
            PoolMode::Session => {
                let mut connection = self.inner.acquire().await?;
                statements(&mut connection).await
            }
            PoolMode::Transaction => {
                let mut tx = self.begin().await?;
                let ran = statements(&mut tx).await?;
                tx.commit().await?;
                Ok(ran)
            }
        }
    }
}

impl From<PgPool> for Pool {
    /// A pool of direct connections ([`PoolMode::Session`]).
    fn from(inner: PgPool) -> Pool {
        Pool::new(inner, PoolMode::Session)
    }
}

/// Where a read runs: on the pool (a connection of its own, outside the caller's
/// transactions: [`Pool::run`]), in a transaction the caller holds, or on one connection the
/// caller holds.
pub enum Conn<'c> {
    Pool(&'c Pool),
    Tx(&'c mut Tx),
    Connection(&'c mut PgConnection),
}

impl<'c> From<&'c Pool> for Conn<'c> {
    fn from(pool: &'c Pool) -> Conn<'c> {
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

impl Conn<'_> {
    /// Runs `statements` where the [`Conn`] says: on the pool ([`Pool::run`]) or on the
    /// caller's transaction or connection.
    pub(crate) async fn run<T>(
        self,
        statements: impl AsyncFnOnce(&mut PgConnection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        match self {
            Conn::Pool(pool) => pool.run(statements).await,
            Conn::Tx(tx) => statements(tx).await,
            Conn::Connection(connection) => statements(connection).await,
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
