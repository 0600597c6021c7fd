//! The rows of `accounts` (see the datastore module of the same name in `kobo`).

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
