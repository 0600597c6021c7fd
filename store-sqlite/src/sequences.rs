//! `sequences`: named counters (the account number series).

use crate::{StoreError, Tx};

kobo_store::sequences_functions!(backend crate::Backend);

impl kobo_store::sequences::Sequences for crate::Backend {
    async fn next(tx: &mut Tx, name: &str) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar!(
            r#"INSERT INTO sequences (name, value) VALUES (?1, 1)
           ON CONFLICT (name) DO UPDATE SET value = sequences.value + 1
           RETURNING value AS "value!""#,
            name
        )
        .fetch_one(&mut **tx)
        .await?)
    }
}
