//! `accounts`: every customer-facing account (the business's main pool account, its current
//! accounts, its customers' virtual accounts), each with its stored balance.

use super::{dispatch, Conn, Store, StoreError, Tx};
use crate::kernel::paging::Cursor;
use chrono::{DateTime, Utc};
pub use kobo_store::accounts::{
    AccountRow, Activity, BalanceChange, CurrentAccountFacts, Filters, KoboAccount, Metrics,
    MetricsFilters, NewAccount, PayoutLookup, PayoutRead,
};
use std::collections::HashMap;

/// The account with this id.
pub async fn find_by_id(
    conn: impl Into<Conn<'_>>,
    id: &str,
) -> Result<Option<AccountRow>, StoreError> {
    dispatch!(conn.into().on(), accounts::find_by_id(id))
}

/// The account with this number, whoever's, with its business.
///
/// By the number alone, whose only index is its unique one, so PostgreSQL's kept plan cannot
/// take another: with the business in the `WHERE` too, a plan made while the business had few
/// accounts could read them all through `accounts_business_created` (see
/// [`super::transfers::reference_owner`]), and the lookup had to be planned on every call.
pub async fn find_by_number_anywhere(
    conn: impl Into<Conn<'_>>,
    number: &str,
) -> Result<Option<KoboAccount>, StoreError> {
    dispatch!(conn.into().on(), accounts::find_by_number_anywhere(number))
}

/// The business's main pool account.
pub async fn main_account(
    tx: &mut Tx,
    business_id: &str,
) -> Result<Option<AccountRow>, StoreError> {
    dispatch!(tx.on(), accounts::main_account(business_id))
}

/// The business's name, how many current accounts it holds, and its main pool account.
pub async fn current_account_facts(
    tx: &mut Tx,
    business_id: &str,
) -> Result<CurrentAccountFacts, StoreError> {
    dispatch!(tx.on(), accounts::current_account_facts(business_id))
}

/// Opens `new`, active and empty.
pub async fn insert(tx: &mut Tx, new: &NewAccount<'_>) -> Result<(), StoreError> {
    dispatch!(tx.on(), accounts::insert(new))
}

/// Opens a business's main pool account, active and empty.
pub async fn insert_main(
    tx: &mut Tx,
    id: &str,
    business_id: &str,
    account_number: &str,
    account_name: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    dispatch!(
        tx.on(),
        accounts::insert_main(id, business_id, account_number, account_name, now)
    )
}

/// The number of the business's main pool account.
pub async fn main_account_number(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
) -> Result<Option<String>, StoreError> {
    dispatch!(conn.into().on(), accounts::main_account_number(business_id))
}

/// The status of account `id`, read under a lock held until `tx` ends: on PostgreSQL `FOR
/// SHARE`, so a status change in flight is waited for and seen, and one that comes later
/// waits for `tx`; SQLite's write transaction holds the whole database already.
pub async fn locked_status(tx: &mut Tx, id: &str) -> Result<Option<String>, StoreError> {
    dispatch!(tx.on(), accounts::locked_status(id))
}

/// The id and business of the account with this number, locked until `tx` ends (PostgreSQL:
/// `FOR UPDATE`; the statements after it see whatever committed before the lock was granted).
pub async fn lock_by_number(
    tx: &mut Tx,
    number: &str,
) -> Result<Option<(String, String)>, StoreError> {
    dispatch!(tx.on(), accounts::lock_by_number(number))
}

/// Changes account `id`'s status from `from` to `to`; `false` if it no longer was `from`.
pub async fn set_status(tx: &mut Tx, id: &str, from: &str, to: &str) -> Result<bool, StoreError> {
    dispatch!(tx.on(), accounts::set_status(id, from, to))
}

/// Applies `changes` in one statement, each only if the account stays within zero and
/// `max_balance` and, when it must be (`BalanceChange::must_be_active`), is active (read under
/// the row's lock, so a freeze or a close that commits first stops it); the balances' last update is `at`. Returns the ids of the
/// accounts changed.
pub async fn apply_balance_changes(
    tx: &mut Tx,
    changes: &[BalanceChange<'_>],
    max_balance: i64,
    at: DateTime<Utc>,
) -> Result<Vec<String>, StoreError> {
    dispatch!(
        tx.on(),
        accounts::apply_balance_changes(changes, max_balance, at)
    )
}

/// An account's balance (kobo) and status, read in `tx`; `None` if there is no such account.
pub async fn balance_and_status(
    tx: &mut Tx,
    account_id: &str,
) -> Result<Option<(i64, String)>, StoreError> {
    dispatch!(tx.on(), accounts::balance_and_status(account_id))
}

/// One keyset page of the business's accounts, newest first: at most `limit + 1` rows.
pub async fn list(
    store: &Store,
    business_id: &str,
    filters: &Filters,
    cursor: Option<Cursor>,
    limit: u64,
) -> Result<Vec<AccountRow>, StoreError> {
    dispatch!(
        store.on(),
        accounts::list(business_id, filters, cursor, limit)
    )
}

/// The totals of the accounts `ids`, counting collections in `[from, until)` (stored times)
/// when given. Accounts with no transaction are missing from the map.
pub async fn activity(
    store: &Store,
    ids: &[&str],
    from: Option<DateTime<Utc>>,
    until: Option<DateTime<Utc>>,
) -> Result<HashMap<String, Activity>, StoreError> {
    dispatch!(store.on(), accounts::activity(ids, from, until))
}

/// The totals of the business's accounts that `filters` choose, in one statement.
pub async fn metrics(
    store: &Store,
    business_id: &str,
    filters: &MetricsFilters,
) -> Result<Metrics, StoreError> {
    dispatch!(store.on(), accounts::metrics(business_id, filters))
}

/// The source account and an intra-bank beneficiary's (whoever's), each with its business,
/// and on every row the paying business's settings and the payout's Idempotency-Key if it is
/// stored, in one statement (they were four round trips). By account number only, which only
/// its unique index leads with, so the kept plan cannot read a business's accounts (see
/// [`find_by_number_anywhere`]); the settings and the key are by their keys. An inter-bank
/// payout looks up the source's number twice.
pub async fn payout_reads(
    conn: impl Into<Conn<'_>>,
    lookup: &PayoutLookup<'_>,
) -> Result<Vec<PayoutRead>, StoreError> {
    dispatch!(conn.into().on(), accounts::payout_reads(lookup))
}
