//! The datastore: every SQL statement of the bank, one module per resource (a table, or a few
//! tables that live and die together), as omicron's datastore is cut. The domain calls these
//! functions and reads their typed rows; it never builds SQL, binds a parameter or reads a
//! column by name. Each function says what it does in the domain's words and runs one
//! statement (or one round trip) on a transaction ([`Tx`]) or on the pool ([`Conn::Pool`]).
//!
//! The rules a module keeps:
//! - a statement on a table lives in that table's module; a join lives in the module of the
//!   rows it returns;
//! - rows are structs with named, typed fields, decoded here and nowhere else; flags are
//!   `bool`, times `DateTime<Utc>`, amounts `i64` kobo;
//! - a function returns [`StoreError`], classified where it arises; refusals (not found, not
//!   allowed) are the domain's to decide from what the function returns (`Option`, a count of
//!   rows changed, `bool`).
//!
//! Today both stores run the same SQL through `sqlx::Any` (`kernel::store`); the datastore is
//! the seam behind which each store gets its own types and queries (issue 30).

use sqlx::any::AnyRow;
use sqlx::{Any, AnyConnection};

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

pub use crate::kernel::store::{Store, StoreError, Tx};

/// A row of the interface's types read from a query of `sqlx::Any`.
pub(crate) trait FromAnyRow: Sized {
    fn from_any(row: &AnyRow) -> Result<Self, StoreError>;
}

/// [`FromAnyRow`] for a row whose columns carry a prefix (a join that reads two tables' ids).
pub(crate) trait FromPrefixedRow: Sized {
    fn from_prefixed_row(row: &AnyRow, prefix: &str) -> Result<Self, StoreError>;
}

/// Where a read of the datastore runs: on the pool (a connection of its own, no transaction)
/// or in a transaction the caller holds. `From` either, so a function that reads both ways
/// takes `impl Into<Conn<'_>>`.
pub enum Conn<'c> {
    Pool(&'c Store),
    Tx(&'c mut Tx),
    /// One connection of the pool, held by the caller (tests that watch a connection's state).
    Connection(&'c mut AnyConnection),
}

impl<'c> From<&'c Store> for Conn<'c> {
    fn from(store: &'c Store) -> Conn<'c> {
        Conn::Pool(store)
    }
}

impl<'c> From<&'c mut Tx> for Conn<'c> {
    fn from(tx: &'c mut Tx) -> Conn<'c> {
        Conn::Tx(tx)
    }
}

type AnyQuery<'q> = sqlx::query::Query<'q, Any, sqlx::any::AnyArguments>;

impl Conn<'_> {
    /// Runs `query`, answering its one row if any.
    pub async fn fetch_optional(self, query: AnyQuery<'_>) -> Result<Option<AnyRow>, StoreError> {
        Ok(match self {
            Conn::Pool(store) => query.fetch_optional(store.pool()).await?,
            Conn::Tx(tx) => query.fetch_optional(&mut **tx).await?,
            Conn::Connection(connection) => query.fetch_optional(connection).await?,
        })
    }

    /// Runs `query`, answering every row.
    pub async fn fetch_all(self, query: AnyQuery<'_>) -> Result<Vec<AnyRow>, StoreError> {
        Ok(match self {
            Conn::Pool(store) => query.fetch_all(store.pool()).await?,
            Conn::Tx(tx) => query.fetch_all(&mut **tx).await?,
            Conn::Connection(connection) => query.fetch_all(connection).await?,
        })
    }

    /// Runs `query`, answering how many rows it changed.
    pub async fn execute(self, query: AnyQuery<'_>) -> Result<u64, StoreError> {
        Ok(match self {
            Conn::Pool(store) => query.execute(store.pool()).await?,
            Conn::Tx(tx) => query.execute(&mut **tx).await?,
            Conn::Connection(connection) => query.execute(connection).await?,
        }
        .rows_affected())
    }
}
