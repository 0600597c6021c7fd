//! Bulk loading for `kobo bench` (sandbox stores only): an account's history written many rows
//! a statement, and the few reads the benchmark tools make.

use super::{dispatch, On, Store, StoreError, Tx};
use crate::kernel::store::TxOn;
use chrono::{DateTime, Utc};
pub use kobo_store::seeding::SeededCredit;

/// Fresh statistics of `transactions` on PostgreSQL, whose planner otherwise took a scan for
/// the first page of a freshly seeded 100k-row account (233 ms until the table was analysed,
/// 0.18 ms after). Nothing on SQLite, whose stores are never analysed otherwise, so a benchmark
/// of an analysed one would measure a store no deployment has; and its statistics' samples
/// (STAT4, built into the bundled SQLite) make SQLite plan a statement again whenever a
/// parameter it compared to them is bound (the page's cursor, the date window).
pub async fn analyze_transactions(store: &Store) -> Result<(), StoreError> {
    dispatch!(store.on(), seeding::analyze_transactions())
}

/// Whether any posting names one of `account_ids`, the bank's internal accounts.
pub async fn any_posting_to(store: &Store, account_ids: [&str; 4]) -> Result<bool, StoreError> {
    dispatch!(store.on(), seeding::any_posting_to(account_ids))
}

/// The business that holds the account numbered `number`.
pub async fn business_of_account(
    store: &Store,
    number: &str,
) -> Result<Option<String>, StoreError> {
    dispatch!(store.on(), seeding::business_of_account(number))
}

/// The numbers of the business's active accounts, the richest first.
pub async fn active_accounts_by_balance(
    store: &Store,
    business_id: &str,
) -> Result<Vec<String>, StoreError> {
    dispatch!(store.on(), seeding::active_accounts_by_balance(business_id))
}

/// Adds `total` kobo to the account's balance in one update, its last update at `last_at`,
/// unless the balance would pass `max_balance`; `false` if it would.
pub async fn add_to_balance(
    tx: &mut Tx,
    account_id: &str,
    total: i64,
    last_at: DateTime<Utc>,
    max_balance: i64,
) -> Result<bool, StoreError> {
    dispatch!(
        tx.on(),
        seeding::add_to_balance(account_id, total, last_at, max_balance)
    )
}

/// The rows of a batch of seeded credits, gathered for the store of the transaction that
/// inserts them ([`SeedRows::for_tx`]).
pub enum SeedRows {
    Sqlite(kobo_store_sqlite::seeding::SeedRows),
    Postgres(Box<kobo_store_postgres::seeding::SeedRows>),
}

impl SeedRows {
    /// Room for `batch` credits, in the form `tx`'s store inserts them.
    pub fn for_tx(tx: &Tx, batch: usize) -> SeedRows {
        match tx.on {
            TxOn::Sqlite(_) => {
                SeedRows::Sqlite(kobo_store_sqlite::seeding::SeedRows::with_capacity(batch))
            }
            TxOn::Postgres(_) => SeedRows::Postgres(Box::new(
                kobo_store_postgres::seeding::SeedRows::with_capacity(batch),
            )),
        }
    }

    /// The rows of `credit`: its journal entry, two postings (out of NIP settlement, into the
    /// account), the transaction and the settlement.
    pub fn push(&mut self, credit: &SeededCredit<'_>) {
        match self {
            SeedRows::Sqlite(rows) => rows.push(credit),
            SeedRows::Postgres(rows) => rows.push(credit),
        }
    }

    /// Inserts every row, table by table, in `tx`.
    pub async fn insert(&self, tx: &mut Tx) -> Result<(), StoreError> {
        match (self, tx.on()) {
            (SeedRows::Sqlite(rows), On::Sqlite(tx)) => rows.insert(tx).await,
            (SeedRows::Postgres(rows), On::Postgres(tx)) => rows.insert(tx).await,
            _ => unreachable!("seed rows inserted in another store than they were made for"),
        }
    }
}
