//! `request_budgets` (PostgreSQL only): each credential's request budget, one for every
//! process on the database. The embedded SQLite store has one process, which counts in memory
//! (`platform::rate_limit`).

use chrono::{DateTime, TimeDelta, Utc};

pub use kobo_store_postgres::request_budgets::Claimed;

use super::{On, Store, StoreError};

/// Whether `store` keeps budgets for every process on it: PostgreSQL's does; SQLite's store is
/// one process's, which counts in memory.
pub fn shared(store: &Store) -> bool {
    match store.on() {
        On::Sqlite(_) => false,
        On::Postgres(_) => true,
    }
}

/// Claims `units` requests of `credential`'s budget (`burst` of them, each costing `interval`),
/// all or none; `None` on SQLite, whose budgets are the process's own.
pub async fn claim(
    store: &Store,
    credential: &str,
    units: i64,
    interval: TimeDelta,
    burst: i64,
) -> Result<Option<Claimed>, StoreError> {
    match store.on() {
        On::Sqlite(_) => Ok(None),
        On::Postgres(pool) => {
            kobo_store_postgres::request_budgets::claim(pool, credential, units, interval, burst)
                .await
                .map(Some)
        }
    }
}

/// Deletes the budgets that were full again before `cutoff`; `0` on SQLite.
pub async fn purge_full(store: &Store, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
    match store.on() {
        On::Sqlite(_) => Ok(0),
        On::Postgres(pool) => kobo_store_postgres::request_budgets::purge_full(pool, cutoff).await,
    }
}
