//! The rows of `transfers` (see the datastore module of the same name in `kobo`).

use crate::paging::Cursor;

use chrono::{DateTime, Utc};

/// How a transfer is looked up.
pub enum Lookup<'a> {
    Id(&'a str),
    ReferenceNumber(&'a str),
    Reference(&'a str),
}

/// A transfer as the API shows it, with its source account's number. Statuses in their
/// stored spelling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransferRow {
    pub id: String,
    pub reference_number: String,
    pub reference: Option<String>,
    pub amount: i64,
    pub fee: i64,
    pub vat: i64,
    pub transfer_status: String,
    pub approval_status: String,
    pub transfer_type: String,
    pub source_account_number: String,
    pub beneficiary_account_number: String,
    pub beneficiary_account_name: String,
    pub bank_code: String,
    pub bank_name: String,
    pub narration: String,
    pub session_id: Option<String>,
    pub failure_reason: Option<String>,
    pub reversal_reference_number: Option<String>,
    pub initiated_by: String,
    pub initiated_via: String,
    pub reviewed_by: Option<String>,
    pub expires_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A transfer to write, as a payout makes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewTransfer {
    pub row: TransferRow,
    pub business_id: String,
    pub source_account_id: String,
    pub beneficiary_account_id: Option<String>,
    /// The source account's debit; none for a bulk transfer's item, paid from the batch's
    /// reservation (whose debit is the batch's).
    pub debit_transaction_id: Option<String>,
    pub fee_transaction_id: Option<String>,
    /// The Lagos day its amount counts on.
    pub day: String,
    /// For a transfer made with integration credentials, the member who had issued them.
    pub credential_issued_by: Option<String>,
}

/// What `fetch_transfers` filters on, each optional: statuses in their stored spelling,
/// creation in `[from, until)` .
#[derive(Clone, Debug, Default)]
pub struct Filters {
    pub transfer_status: Option<String>,
    pub approval_status: Option<String>,
    pub from: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
    pub source_account_number: Option<String>,
    pub reference: Option<String>,
    pub reference_number: Option<String>,
}

/// A held transfer, as approval and release need it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldRow {
    pub id: String,
    pub business_id: String,
    pub source_account_id: String,
    pub beneficiary_account_id: Option<String>,
    pub beneficiary_account_number: String,
    pub beneficiary_account_name: String,
    pub bank_code: String,
    pub transfer_type: String,
    pub amount: i64,
    pub fee: i64,
    pub vat: i64,
    pub narration: String,
    pub reference_number: String,
    pub debit_transaction_id: Option<String>,
    pub fee_transaction_id: Option<String>,
    pub initiated_by: String,
    pub credential_issued_by: Option<String>,
    pub transfer_status: String,
    /// When the hold ends unreviewed (it can no longer be approved from then on).
    pub expires_at: Option<DateTime<Utc>>,
}

/// A review's change of a held transfer: its new statuses, who reviewed it and why, and for
/// an approval the day its amount now counts on.
#[derive(Clone, Copy, Debug)]
pub struct Review<'a> {
    pub from: &'a str,
    pub to: &'a str,
    pub approval_status: &'a str,
    pub reviewer: Option<&'a str>,
    pub reason: Option<&'a str>,
    pub day: Option<&'a str>,
    pub at: DateTime<Utc>,
}

/// A leased transfer, as the NIP worker needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeasedRow {
    pub id: String,
    pub business_id: String,
    pub source_account_id: String,
    pub submitted: bool,
    pub attempts: i64,
    pub fee: i64,
    pub vat: i64,
    pub debit_transaction_id: Option<String>,
    pub fee_transaction_id: Option<String>,
    pub reference_number: String,
    pub source_account_number: String,
    /// The source account's name and its business's: the originator NIP shows.
    pub source_account_name: String,
    pub business_name: String,
    pub beneficiary_account_number: String,
    pub beneficiary_account_name: String,
    pub bank_code: String,
    pub amount: i64,
    pub narration: String,
}

crate::contract! {
    /// `transfers`, in each store.
    pub trait Transfers in transfers, functions transfers_functions {
        /// The business's transfer found by `lookup`.
        conn fn find(business_id: &str, lookup: Lookup<'_>) -> Option<TransferRow>;
        /// The reference number of the business's transfer that holds the client `reference`.
        ///
        /// Not a prepared statement: PostgreSQL keeps one plan for a prepared statement (its
        /// generic plan), made once on each connection, and on a young table every index that
        /// starts with `business_id` costs the same as the unique one. The kept plan took
        /// `transfers_day`, then (that index dropped) `transfers_keyset`, and filtered every
        /// transfer of the business on the reference, for each payout: quadratic, found by the soak
        /// (515 million index entries read for 60,000 payouts). Planned each time, with the
        /// parameters and the table's size, the unique index wins; planning costs far less.
        conn fn reference_owner(business_id: &str, reference: &str) -> Option<String>;
        /// One keyset page of the business's transfers, newest first: at most `limit + 1` rows.
        pool fn list(
            business_id: &str,
            filters: &Filters,
            cursor: Option<Cursor>,
            limit: u64,
        ) -> Vec<TransferRow>;
        /// The reference numbers of one page of the business's held transfers (from
        /// `source_account_number` when given), oldest first after `cursor`: at most `limit + 1`.
        pool fn pending_references(
            business_id: &str,
            source_account_number: Option<&str>,
            cursor: Option<Cursor>,
            limit: u64,
        ) -> Vec<String>;
        /// The business's transfer with this reference number, as a review reads it.
        conn fn held(business_id: &str, reference: &str) -> Option<HeldRow>;
        /// Applies `review` to transfer `id` if its status is still `review.from`; `false` if not.
        tx fn review(id: &str, review: &Review<'_>) -> bool;
        /// Held transfers past their `expires_at` at `now`, as `(business, reference number)`: at
        /// most 100.
        pool fn due_expiries(now: DateTime<Utc>) -> Vec<(String, String)>;
        /// The reference of a transfer whose money account `account_id` still owns though its
        /// balance no longer shows it: reserved for a held transfer (`pending_approval`) or in
        /// flight to NIP (`processing`).
        tx fn first_reserving(account_id: &str) -> Option<String>;
        /// Leases, until `until`, at most `limit` `processing` transfers due at `now` (not leased
        /// by another worker), oldest first (`FOR UPDATE SKIP LOCKED` on PostgreSQL, so several
        /// processes share the work; SQLite has one writer, whose turn this takes). Returns their
        /// ids.
        pool fn lease_due(now: DateTime<Utc>, until: DateTime<Utc>, limit: i64) -> Vec<String>;
        /// The transfers `ids`, oldest first, in one query.
        pool fn leased(ids: &[String]) -> Vec<LeasedRow>;
        /// Releases `id`'s lease, still `processing`, to be asked again at `next_attempt_at`: one
        /// more attempt, `submitted` as given, the session id when NIP gave one.
        pool fn wait(
            id: &str,
            submitted: bool,
            next_attempt_at: DateTime<Utc>,
            session_id: Option<&str>,
            now: DateTime<Utc>,
        ) -> ();
        /// NIP decided transfer `id`: from `from` to `to`, submitted, its lease released, if it was
        /// still `from`; `false` if another worker decided first.
        tx fn decide(id: &str, from: &str, to: &str, at: DateTime<Utc>) -> bool;
        /// Gives transfer `id` the session id NIP answered.
        tx fn set_session_id(id: &str, session_id: &str) -> ();
        /// Records why transfer `id` failed at NIP and the reference of its reversal (and NIP's
        /// session id, when it gave one).
        tx fn set_reversal(
            id: &str,
            reason: &str,
            reversal_reference: &str,
            session_id: Option<&str>,
        ) -> ();
    }
}
