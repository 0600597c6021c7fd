//! The rows of `transactions` (see the datastore module of the same name in `kobo`).

use crate::paging::Cursor;
use chrono::{DateTime, Utc};

/// A transaction to write: its account's side of an entry, at its place in the business's
/// ledger. Kinds are the API's spellings (`credit`, `collection`, `success`, `nip`, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewTransaction {
    pub id: uuid::Uuid,
    pub business_id: String,
    pub account_id: String,
    pub entry_id: String,
    pub sequence: i64,
    pub reference_number: String,
    pub transaction_type: String,
    pub category: String,
    pub status: String,
    pub channel: String,
    pub amount: i64,
    pub narration: String,
    pub session_id: Option<String>,
    pub originator: Option<Originator>,
    pub created_at: DateTime<Utc>,
    /// Whether the credit is also a settlement (a successful collection).
    pub settled: bool,
}

impl NewTransaction {
    /// Its amount as it moves its account's balance: a credit's positive, a debit's negative.
    pub fn signed_amount(&self) -> i64 {
        if self.transaction_type == "credit" {
            self.amount
        } else {
            -self.amount
        }
    }
}

/// Who sent an inbound credit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Originator {
    pub account_number: String,
    pub account_name: String,
    pub bank_code: String,
    pub bank_name: String,
}

/// A transaction as the lists read it, with its account's number and name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransactionRow {
    pub id: uuid::Uuid,
    pub reference_number: String,
    pub transaction_type: String,
    pub category: String,
    pub status: String,
    pub channel: String,
    pub amount: i64,
    pub narration: String,
    pub session_id: Option<String>,
    pub originator_account_number: Option<String>,
    pub originator_account_name: Option<String>,
    pub originator_bank_code: Option<String>,
    pub originator_bank_name: Option<String>,
    pub created_at: DateTime<Utc>,
    pub account_number: String,
    pub account_name: String,
    /// Its account's balance right after it (kobo).
    pub balance_after: i64,
}

/// A transaction as its account's statement shows it: with its account's balance right after
/// it (`balance_after`, kobo).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatementLine {
    pub id: uuid::Uuid,
    pub reference_number: String,
    pub transaction_type: String,
    pub category: String,
    pub status: String,
    pub channel: String,
    pub amount: i64,
    pub narration: String,
    pub session_id: Option<String>,
    pub originator_account_number: Option<String>,
    pub originator_account_name: Option<String>,
    pub originator_bank_code: Option<String>,
    pub originator_bank_name: Option<String>,
    pub created_at: DateTime<Utc>,
    pub balance_after: i64,
}

/// An account's credits and debits over a period: how many, and their sums in kobo.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeriodTotals {
    pub credits: i64,
    pub credited: i128,
    pub debits: i64,
    pub debited: i128,
}

/// Which rows a list reads: every transaction, or the settled collections.
/// The credit booked for a NIP session: what a notification of the same session must repeat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionCredit {
    pub id: String,
    /// The credited account's number.
    pub account_number: String,
    /// Kobo.
    pub amount: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listing {
    Transactions,
    Settlements,
}

/// The filters a transaction list may use, each optional; times in their stored form
/// (`paging::day_range`), kinds in the API's spelling.
#[derive(Clone, Debug, Default)]
pub struct Filters {
    pub account_number: Option<String>,
    pub from: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
    pub status: Option<String>,
    pub transaction_type: Option<String>,
    pub category: Option<String>,
    pub reference_number: Option<String>,
    pub channel: Option<String>,
    pub search: Option<String>,
}

/// Which page of a list: after a keyset cursor, or at an offset; `size + 1` rows are read so
/// the caller can tell whether more follow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    pub size: u64,
    pub cursor: Option<Cursor>,
    pub offset: Option<i64>,
}

/// One day's side of the money in and out: its day (`YYYY-MM-DD`), whether it is money in,
/// how many transactions, and their sum in kobo.
pub type DayTotal = (String, bool, i64, i128);

crate::contract! {
    /// `transactions`, in each store.
    pub trait Transactions in transactions, functions transactions_functions {
        /// Changes the status of transaction `id` (`pending` becoming `success`, `reversed` or
        /// `failed`): its amount and place in the listing never change.
        tx fn set_status(id: &str, status: &str) -> ();
        /// The credit booked for NIP session `session_id`, if one was.
        conn fn credit_of_session(session_id: &str) -> Option<SessionCredit>;
        /// Gives transaction `id` the NIP session id its transfer got.
        tx fn set_session_id(id: &str, session_id: &str) -> ();
        /// One page of the business's transactions or settlements, newest first by `(created_at,
        /// id)`, at most `window.size + 1` rows.
        pool fn list(
            listing: Listing,
            business_id: &str,
            filters: &Filters,
            window: &Window,
        ) -> Vec<TransactionRow>;
        /// The business's (or its account `account_id`'s) money in and out per UTC day in
        /// `[from, until)`: successful credits but the returns of failed transfers
        /// (`reversal`), and debits that succeeded or are pending (in flight, or reserved for an
        /// approval). Days with nothing are missing.
        pool fn per_day(
            business_id: &str,
            account_id: Option<&str>,
            from: DateTime<Utc>,
            until: DateTime<Utc>,
        ) -> Vec<DayTotal>;
        /// The account's balance just before `at`: the running balance of its last transaction
        /// earlier than `at` (one row of `transactions_account_keyset`, read backwards, however
        /// long its history), 0 before its first.
        pool fn balance_before(account_id: &str, at: DateTime<Utc>) -> i64;
        /// The account's transactions after `after` (a line's time and id: the page's cursor)
        /// and before `until`, oldest first by `(created_at, id)`, at most `limit`.
        pool fn statement_lines(
            account_id: &str,
            after: &Cursor,
            until: DateTime<Utc>,
            limit: u64,
        ) -> Vec<StatementLine>;
        /// The account's credits and debits in `[from, until)`, whatever their status: each
        /// moved its balance when written (a failed or reversed one has the credit that gave
        /// the money back).
        pool fn period_totals(
            account_id: &str,
            from: DateTime<Utc>,
            until: DateTime<Utc>,
        ) -> PeriodTotals;
    }
}
