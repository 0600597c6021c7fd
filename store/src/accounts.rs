//! The rows of `accounts` (see the datastore module of the same name in `kobo`).

use crate::paging::Cursor;
use std::collections::HashMap;

use chrono::{DateTime, Utc};

/// An account as stored, with its parent's number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountRow {
    pub id: String,
    pub account_number: String,
    pub account_name: String,
    /// `pool`, `current` or `virtual`.
    pub account_type: String,
    /// `primary` (the main pool account) or `secondary`.
    pub account_class: String,
    pub status: String,
    pub balance: i64,
    pub last_balance_update: Option<DateTime<Utc>>,
    pub parent_account_number: Option<String>,
    pub customer_id: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// An account of any business, with the business that holds it: how a payer or a payee
/// outside the business sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KoboAccount {
    pub account: AccountRow,
    pub business_id: String,
    /// The business's registered name.
    pub business_name: String,
}

/// What opening a current account reads of the business, in `tx`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CurrentAccountFacts {
    pub business_name: String,
    pub current_accounts: i64,
    pub main_account_id: Option<String>,
}

/// A secondary account to open: a current account, or a customer's virtual account.
#[derive(Clone, Copy, Debug)]
pub struct NewAccount<'a> {
    pub id: &'a str,
    pub business_id: &'a str,
    pub account_number: &'a str,
    pub account_name: &'a str,
    pub account_type: &'a str,
    pub parent_account_id: &'a str,
    pub customer_id: Option<&'a str>,
    pub created_at: DateTime<Utc>,
}

/// One account's share of a journal entry: the sum of its postings, and whether the account
/// must be `active` when the change is applied: when any posting debits it, and when it is
/// credited as a recipient (an intra-bank beneficiary, an inbound credit), which a closed or
/// blocked account cannot be. Money coming home (a reversal, a refused hold) needs neither.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BalanceChange<'a> {
    pub account_id: &'a str,
    pub amount: i64,
    pub must_be_active: bool,
}

/// The account filters the lists share, each optional. `account_type` is one of the API's
/// type filters (`normal`, `virtual`, `current`, `savings`); kinds in the API's spelling.
#[derive(Clone, Debug, Default)]
pub struct Filters {
    pub account_type: Option<String>,
    pub account_number: Option<String>,
    pub status: Option<String>,
    pub is_available: Option<bool>,
    pub parent_account_number: Option<String>,
    pub account_class: Option<String>,
    /// A part of the name (any case) or of the number, as a person types it in a picker: a
    /// `LIKE` pattern made by [`crate::paging::contains_pattern`].
    pub search: Option<String>,
}

/// Per-account totals read from the transactions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Activity {
    pub collections: i64,
    /// Kobo collected.
    pub collected: i128,
    pub last_collection: Option<DateTime<Utc>>,
    pub transfers: i64,
    /// Kobo sent.
    pub transferred: i128,
    pub transactions: i64,
}

/// What `get_total_account_metrics` filters on: an account type filter, accounts created in
/// `[from, until)` ( collections in the same window), the newest `count`.
#[derive(Clone, Debug, Default)]
pub struct MetricsFilters {
    pub account_type: Option<String>,
    pub from: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
    pub count: Option<i64>,
}

/// The business's totals over the accounts `filters` choose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Metrics {
    pub active: i64,
    pub inactive: i64,
    pub virtual_accounts: i64,
    /// Kobo held by the accounts.
    pub balance: i128,
    /// Kobo the accounts collected in the window.
    pub collected: i128,
}

/// What a payout looks up before its transaction ([`PayoutRead`]).
#[derive(Clone, Copy, Debug)]
pub struct PayoutLookup<'a> {
    /// The daily limit of a business without one of its own.
    pub default_daily_limit: i64,
    pub business_id: &'a str,
    /// The source account's number.
    pub source: &'a str,
    /// An intra-bank beneficiary's account number.
    pub intra_beneficiary: Option<&'a str>,
    /// The payout's client reference.
    pub reference: Option<&'a str>,
    /// The payout's Idempotency-Key, and the time before which a stored one has expired.
    pub key: Option<(crate::idempotency_keys::KeyOf<'a>, DateTime<Utc>)>,
}

/// What a payout reads before its transaction, one row per account found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PayoutRead {
    pub account: KoboAccount,
    /// The paying business's name, daily limit (its own, or `default_daily_limit`) and, if it
    /// has an active approval policy, the amount from which it holds a transfer.
    pub payer_name: String,
    pub daily_limit: i64,
    pub policy_minimum: Option<i64>,
    /// The reference number of the business's transfer that holds the payout's client
    /// reference, if one does.
    pub reference_owner: Option<String>,
    /// The payout's Idempotency-Key, if it is stored and unexpired.
    pub stored_key: Option<crate::idempotency_keys::StoredKey>,
}

crate::contract! {
    /// `accounts`, in each store.
    pub trait Accounts in accounts, functions accounts_functions {
        /// The account with this id.
        conn fn find_by_id(id: &str) -> Option<AccountRow>;
        /// The account with this number, whoever's, with its business.
        ///
        /// By the number alone, whose only index is its unique one, so PostgreSQL's kept plan
        /// cannot take another: with the business in the `WHERE` too, a plan made while the
        /// business had few accounts could read them all through `accounts_business_created` (see
        /// [`super::transfers::reference_owner`]), and the lookup had to be planned on every call.
        conn fn find_by_number_anywhere(number: &str) -> Option<KoboAccount>;
        /// The business's main pool account.
        tx fn main_account(business_id: &str) -> Option<AccountRow>;
        /// The business's name, how many current accounts it holds, and its main pool account.
        tx fn current_account_facts(business_id: &str) -> CurrentAccountFacts;
        /// Opens `new`, active and empty.
        tx fn insert(new: &NewAccount<'_>) -> ();
        /// Opens a business's main pool account, active and empty.
        tx fn insert_main(
            id: &str,
            business_id: &str,
            account_number: &str,
            account_name: &str,
            now: DateTime<Utc>,
        ) -> ();
        /// The number of the business's main pool account.
        conn fn main_account_number(business_id: &str) -> Option<String>;
        /// The status of account `id`, read under a lock held until `tx` ends: on PostgreSQL `FOR
        /// SHARE`, so a status change in flight is waited for and seen, and one that comes later
        /// waits for `tx`; SQLite's write transaction holds the whole database already.
        tx fn locked_status(id: &str) -> Option<String>;
        /// The id and business of the account with this number, locked until `tx` ends (PostgreSQL:
        /// `FOR UPDATE`; the statements after it see whatever committed before the lock was
        /// granted).
        tx fn lock_by_number(number: &str) -> Option<(String, String)>;
        /// Changes account `id`'s status from `from` to `to`; `false` if it no longer was `from`.
        tx fn set_status(id: &str, from: &str, to: &str) -> bool;
        /// Applies `changes` in one statement, each only if the account stays within zero and
        /// `max_balance` and, when it must be (`BalanceChange::must_be_active`), is active (read
        /// under the row's lock, so a freeze or a close that commits first stops it); the balances'
        /// last update is `at`. Returns the ids of the accounts changed.
        tx fn apply_balance_changes(
            changes: &[BalanceChange<'_>],
            max_balance: i64,
            at: DateTime<Utc>,
        ) -> Vec<String>;
        /// An account's balance (kobo) and status, read in `tx`; `None` if there is no such
        /// account.
        tx fn balance_and_status(account_id: &str) -> Option<(i64, String)>;
        /// One keyset page of the business's accounts, newest first: at most `limit + 1` rows.
        pool fn list(
            business_id: &str,
            filters: &Filters,
            cursor: Option<Cursor>,
            limit: u64,
        ) -> Vec<AccountRow>;
        /// The totals of the accounts `ids`, counting collections in `[from, until)` (stored times)
        /// when given. Accounts with no transaction are missing from the map.
        pool fn activity(
            ids: &[&str],
            from: Option<DateTime<Utc>>,
            until: Option<DateTime<Utc>>,
        ) -> HashMap<String, Activity>;
        /// The totals of the business's accounts that `filters` choose, in one statement.
        pool fn metrics(business_id: &str, filters: &MetricsFilters) -> Metrics;
        /// The source account and an intra-bank beneficiary's (whoever's), each with its business,
        /// and on every row the paying business's settings and the payout's Idempotency-Key if it
        /// is stored, in one statement (they were four round trips). By account number only, which
        /// only its unique index leads with, so the kept plan cannot read a business's accounts
        /// (see [`find_by_number_anywhere`]); the settings and the key are by their keys. An
        /// inter-bank payout looks up the source's number twice.
        conn fn payout_reads(lookup: &PayoutLookup<'_>) -> Vec<PayoutRead>;
    }
}
