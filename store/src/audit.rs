//! The rows of `audit` (see the datastore module of the same name in `kobo`).

/// The tables whose rows the report counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counted {
    Accounts,
    JournalEntries,
    Postings,
    Transactions,
}

/// An account's stored balance beside the sum of its postings (kobo).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountBalance {
    pub account_number: String,
    pub balance: i64,
    pub posted: i128,
}

/// A day whose running total for the daily limit differs from its transfers' sum (kobo).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DayAstray {
    pub business_id: String,
    pub day: String,
    pub kept: i64,
    pub spent: i64,
}
