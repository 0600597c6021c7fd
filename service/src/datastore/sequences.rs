//! `sequences`: named counters (the account number series).

use super::{dispatch, StoreError, Tx};

/// Takes the next value of the counter `name` (1 for a new one), in `tx`.
pub async fn next(tx: &mut Tx, name: &str) -> Result<i64, StoreError> {
    dispatch!(tx.on(), sequences::next(name))
}
