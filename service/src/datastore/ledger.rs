//! The ledger's tables: `ledger_heads` (each business's place in its ledger), `journal_entries`
//! and their `postings`, and `internal_accounts` (the bank's own accounts, seeded by migration).
//! Customer accounts' balances are `accounts`' (`datastore::accounts`).

use super::batch::{Batch, NewEntry, Write};
use super::{dispatch, On, StoreError, Tx};
use crate::kernel::store;
use chrono::{DateTime, Utc};
pub use kobo_store::ledger::{AdvancedHead, HeadsAndMoney, Money};

/// Advances each business's head by its places, in one statement that locks the heads until
/// `tx` ends (in the order given, which must be the businesses' id order): a new head starts
/// at its places, an existing one moves on by them, its time to `now` (`$2`, microseconds)
/// or past its last. Returns the heads as advanced, in no particular order.
pub async fn advance_heads(
    tx: &mut Tx,
    businesses: &[(&str, i64)],
    now: DateTime<Utc>,
) -> Result<Vec<AdvancedHead>, StoreError> {
    dispatch!(tx.on(), ledger::advance_heads(businesses, now))
}

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

/// Sets a head's time (both columns) to `last_place`: once, for a head from before migration
/// 0010.
pub async fn set_head_time(
    tx: &mut Tx,
    business_id: &str,
    last_place: DateTime<Utc>,
) -> Result<(), StoreError> {
    dispatch!(tx.on(), ledger::set_head_time(business_id, last_place))
}

/// Writes a journal entry and its postings (`(account id, signed kobo)`, credit positive) as
/// a write of `batch`, all at `at`. Returns the entry's id.
pub fn record_entry_into(
    batch: &mut Batch,
    business_id: &str,
    kind: &str,
    postings: &[(&str, i64)],
    at: DateTime<Utc>,
) -> String {
    let entry_id = store::new_id();
    batch.push(Write::Entry(NewEntry {
        id: entry_id.clone(),
        business_id: business_id.to_owned(),
        kind: kind.to_owned(),
        postings: postings
            .iter()
            .map(|(account_id, amount)| (store::new_id(), (*account_id).to_owned(), *amount))
            .collect(),
        at,
    }));
    entry_id
}
