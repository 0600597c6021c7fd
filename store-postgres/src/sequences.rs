//! `sequences`: named counters (the account number series).

use crate::{StoreError, Tx};

/// Takes the next value of the counter `name` (1 for a new one), in `tx`.
pub async fn next(tx: &mut Tx, name: &str) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar!(
        "INSERT INTO sequences (name, value) VALUES ($1, 1) \
         ON CONFLICT (name) DO UPDATE SET value = sequences.value + 1 \
         RETURNING value",
        name
    )
    .fetch_one(&mut **tx)
    .await?)
}
