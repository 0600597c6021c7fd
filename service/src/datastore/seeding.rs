//! Bulk loading for `kobo bench` (sandbox stores only): an account's history written many rows
//! a statement, and the few reads the benchmark tools make.

use super::contract::*;

use crate::kernel::store::TxOn;
use chrono::{DateTime, Utc};
pub use kobo_store::seeding::SeededCredit;

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

kobo_store::seeding_functions!(dispatch);
