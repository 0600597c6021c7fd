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

/// A transaction whose running balance is not what its account's transactions add up to, in
/// order, up to it (kobo): `stored` is `None` when it has none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunningAstray {
    pub reference_number: String,
    pub stored: Option<i64>,
    pub summed: i64,
}

/// An account whose balance is not its last transaction's running balance (kobo; `last` is 0
/// for an account without transactions).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClosingAstray {
    pub account_number: String,
    pub balance: i64,
    pub last: i64,
}

crate::contract! {
    /// `audit`, in each store.
    pub trait Audit in audit, functions audit_functions {
        /// How many rows `table` holds.
        pool fn count(table: Counted) -> i64;
        /// Every account's stored balance and the sum of its postings.
        pool fn account_balances() -> Vec<AccountBalance>;
        /// Journal entries with fewer than two postings, with how many they have.
        pool fn short_entries() -> Vec<(String, i64)>;
        /// Journal entries whose postings do not sum to zero, with their sum (kobo). Per entry a
        /// plain `SUM` cannot overflow: an entry has a few postings, each at most 10^18.
        pool fn unbalanced_entries() -> Vec<(String, i64)>;
        /// The sum of every posting (kobo): zero in a sound ledger.
        pool fn postings_total() -> i128;
        /// Places a business's ledger head handed out twice: `(business, sequence, transactions)`.
        pool fn repeated_sequences() -> Vec<(String, i64, i64)>;
        /// Rows of the ledger and of transfers that name a parent which is not there (no foreign
        /// key checks them on PostgreSQL since migration 0022): `(what, row)`, the row by its id or
        /// reference number. A transaction's and a transfer's source account must be their
        /// business's.
        pool fn rows_without_parent() -> Vec<(String, String)>;
        /// Postings to an account that is neither a customer's nor the bank's, as `(posting,
        /// account)`.
        pool fn postings_to_unknown_accounts() -> Vec<(String, String)>;
        /// The reference numbers of the transactions (not `failed`) whose entry has no posting
        /// of their signed amount on their account; a `reversal` whose entry's postings on its
        /// account sum to its amount (a release written before migration 0028, whose amount and
        /// charges came back as two postings) is backed.
        pool fn transactions_without_posting() -> Vec<String>;
        /// Days whose running total for the daily limit (`daily_transfer_totals`) differs from the
        /// sum of the business's transfers of the day that count toward it: those whose money moved
        /// (`processing`, `success`; a held transfer counts from its approval, on that day).
        pool fn daily_totals_astray() -> Vec<DayAstray>;
        /// Transactions whose `balance_after` is not the sum of their account's transactions in
        /// `(created_at, id)` order up to and including them (whatever their status: each moved
        /// the balance when written).
        pool fn running_balances_astray() -> Vec<RunningAstray>;
        /// Accounts whose balance is not their last transaction's `balance_after`.
        pool fn closing_balances_astray() -> Vec<ClosingAstray>;
    }
}
