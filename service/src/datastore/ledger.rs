//! The ledger's tables: `ledger_heads` (each business's place in its ledger), `journal_entries`
//! and their `postings`, and `internal_accounts` (the bank's own accounts, seeded by migration).
//! Customer accounts' balances are `accounts`' (`datastore::accounts`).

use super::contract::*;

use chrono::{DateTime, Utc};
pub use kobo_store::ledger::{AdvancedHead, HeadsAndMoney, InOne, Money};

/// A payout's heads, daily total and balances in one statement on PostgreSQL (one round trip
/// where the steps take three): see `kobo_store_postgres::ledger::advance_and_move`. `None` on
/// SQLite, whose statements run in process: the caller takes the steps one by one there.
/// When it reads the business's standing (`Money::business_must_be_active`, `Money::daily`),
/// `tx` must hold it ([`Tx::holds_standing`]).
pub async fn advance_and_move(
    tx: &mut Tx,
    businesses: &[(&str, i64)],
    now: DateTime<Utc>,
    money: &Money<'_>,
) -> Result<Option<HeadsAndMoney>, StoreError> {
    match tx.on() {
        On::Sqlite(_) => Ok(None),
        On::Postgres(tx) => {
            kobo_store_postgres::ledger::advance_and_move(tx, businesses, now, money)
                .await
                .map(Some)
        }
    }
}

pub use kobo_store::ledger::record_entry_into;

kobo_store::ledger_functions!(dispatch);
