//! The rows of `transfers` (see the datastore module of the same name in `kobo`).

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
    pub debit_transaction_id: String,
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
