//! The reads of `kobo ledger verify`: the ledger's tables checked against each other. Each
//! function returns what does not add up (or the figures the domain compares), read on the
//! pool outside any transaction.

use super::{dispatch, Store, StoreError};
pub use kobo_store::audit::{AccountBalance, Counted, DayAstray};

/// How many rows `table` holds.
pub async fn count(store: &Store, table: Counted) -> Result<i64, StoreError> {
    dispatch!(store.on(), audit::count(table))
}

/// Every account's stored balance and the sum of its postings.
pub async fn account_balances(store: &Store) -> Result<Vec<AccountBalance>, StoreError> {
    dispatch!(store.on(), audit::account_balances())
}

/// Journal entries with fewer than two postings, with how many they have.
pub async fn short_entries(store: &Store) -> Result<Vec<(String, i64)>, StoreError> {
    dispatch!(store.on(), audit::short_entries())
}

/// Journal entries whose postings do not sum to zero, with their sum (kobo). Per entry a plain
/// `SUM` cannot overflow: an entry has a few postings, each at most 10^18.
pub async fn unbalanced_entries(store: &Store) -> Result<Vec<(String, i64)>, StoreError> {
    dispatch!(store.on(), audit::unbalanced_entries())
}

/// The sum of every posting (kobo): zero in a sound ledger.
pub async fn postings_total(store: &Store) -> Result<i128, StoreError> {
    dispatch!(store.on(), audit::postings_total())
}

/// Places a business's ledger head handed out twice: `(business, sequence, transactions)`.
pub async fn repeated_sequences(store: &Store) -> Result<Vec<(String, i64, i64)>, StoreError> {
    dispatch!(store.on(), audit::repeated_sequences())
}

/// Rows of the ledger and of transfers that name a parent which is not there (no foreign key
/// checks them on PostgreSQL since migration 0022): `(what, row)`, the row by its id or
/// reference number. A transaction's and a transfer's source account must be their business's.
pub async fn rows_without_parent(store: &Store) -> Result<Vec<(String, String)>, StoreError> {
    dispatch!(store.on(), audit::rows_without_parent())
}

/// Postings to an account that is neither a customer's nor the bank's, as `(posting, account)`.
pub async fn postings_to_unknown_accounts(
    store: &Store,
) -> Result<Vec<(String, String)>, StoreError> {
    dispatch!(store.on(), audit::postings_to_unknown_accounts())
}

/// The reference numbers of [`TRANSACTIONS_WITHOUT_POSTING`].
pub async fn transactions_without_posting(store: &Store) -> Result<Vec<String>, StoreError> {
    dispatch!(store.on(), audit::transactions_without_posting())
}

/// Days whose running total for the daily limit (`daily_transfer_totals`) differs from the sum
/// of the business's transfers of the day that count toward it: those whose money moved
/// (`processing`, `success`; a held transfer counts from its approval, on that day).
pub async fn daily_totals_astray(store: &Store) -> Result<Vec<DayAstray>, StoreError> {
    dispatch!(store.on(), audit::daily_totals_astray())
}
