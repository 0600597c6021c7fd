//! The rows of `beneficiaries`: accounts a business saved to pay again, each at most once per
//! business (by bank and account number), with the holder's name as it was last looked up.

use crate::paging::Cursor;
use chrono::{DateTime, Utc};

/// A saved beneficiary as it is stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BeneficiaryRow {
    pub id: uuid::Uuid,
    pub business_id: String,
    pub bank_code: String,
    pub bank_name: String,
    pub account_number: String,
    /// The holder's name, as the bank gave it at `enquired_at`.
    pub account_name: String,
    pub nickname: Option<String>,
    pub enquired_at: DateTime<Utc>,
    /// The member who saved it, or `integration`.
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// What [`save`] writes: a beneficiary, its holder's name looked up at `now`.
#[derive(Clone, Debug)]
pub struct NewBeneficiary {
    pub id: uuid::Uuid,
    pub business_id: String,
    pub bank_code: String,
    pub bank_name: String,
    pub account_number: String,
    pub account_name: String,
    pub nickname: Option<String>,
    pub created_by: String,
    pub now: DateTime<Utc>,
}

crate::contract! {
    /// `beneficiaries`: the accounts a business pays again and again.
    pub trait Beneficiaries in beneficiaries, functions beneficiaries_functions {
        /// Saves `new`, or, when the business already saved this bank's account, refreshes
        /// that one (the holder's name and `enquired_at`, the nickname when `new` has one) and
        /// keeps its id. A new one is written only while the business keeps fewer than `max`:
        /// `None` then, and nothing written. Two saves racing count each other (PostgreSQL
        /// takes a lock of the business's beneficiaries first).
        tx fn save(new: &NewBeneficiary, max: i64) -> Option<BeneficiaryRow>;
        /// The business's beneficiary `id`.
        conn fn get(business_id: &str, id: &uuid::Uuid) -> Option<BeneficiaryRow>;
        /// One page of the business's beneficiaries, newest first by `(created_at, id)`, after
        /// `cursor`: those of `bank_code` when given, and those whose name, nickname or
        /// account number holds `pattern` (a lower-case `LIKE` pattern, `\` escaping) when
        /// given; at most `limit` rows.
        conn fn list(
            business_id: &str,
            pattern: Option<&str>,
            bank_code: Option<&str>,
            cursor: Option<&Cursor>,
            limit: u64,
        ) -> Vec<BeneficiaryRow>;
        /// Deletes the business's beneficiary `id`; returns it as it was.
        tx fn delete(business_id: &str, id: &uuid::Uuid) -> Option<BeneficiaryRow>;
    }
}
