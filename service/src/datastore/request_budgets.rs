//! `request_budgets` (PostgreSQL only): each credential's request budget, one for every
//! process on the database. The embedded SQLite store has one process, which counts in memory
//! (`platform::rate_limit`).

use chrono::{DateTime, TimeDelta, Utc};

pub use kobo_store_postgres::request_budgets::Claimed;

use super::{On, Store, StoreError};

/// The budgets `store` keeps for every process on it: PostgreSQL's; `None` for SQLite's store,
/// one process's, which counts in memory.
pub fn shared(store: &Store) -> Option<SharedBudgets<'_>> {
    match store.on() {
        On::Sqlite(_) => None,
        On::Postgres(pool) => Some(SharedBudgets(pool)),
    }
}

/// The request budgets of every process on one PostgreSQL database ([`shared`]).
#[derive(Clone, Copy)]
pub struct SharedBudgets<'a>(&'a kobo_store_postgres::Pool);

impl SharedBudgets<'_> {
    /// Claims `units` requests of `credential`'s budget (`burst` of them, each costing
    /// `interval`), all or none.
    pub async fn claim(
        self,
        credential: &str,
        units: i64,
        interval: TimeDelta,
        burst: i64,
    ) -> Result<Claimed, StoreError> {
        kobo_store_postgres::request_budgets::claim(self.0, credential, units, interval, burst)
            .await
    }
}

/// Deletes the budgets that were full again before `cutoff`; `0` on SQLite.
pub async fn purge_full(store: &Store, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
    match store.on() {
        On::Sqlite(_) => Ok(0),
        On::Postgres(pool) => kobo_store_postgres::request_budgets::purge_full(pool, cutoff).await,
    }
}
