//! `idempotency_keys`: each `Idempotency-Key` a business used for an operation, the hash of
//! the body it came with, and the answer (or lasting refusal) stored for its retries.

use chrono::{DateTime, Utc};

use crate::Pool;
use crate::{id, new_id, StoreError, Tx};
pub use kobo_store::idempotency_keys::{KeyOf, StoredKey};

pub use kobo_store::idempotency_keys::complete_into;

kobo_store::idempotency_keys_functions!(backend crate::Backend);

impl kobo_store::idempotency_keys::IdempotencyKeys for crate::Backend {
    async fn claim(
        tx: &mut Tx,
        key: &KeyOf<'_>,
        request_hash: &str,
        now: DateTime<Utc>,
        cutoff: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        // One statement: ON CONFLICT instead of catching the violation, since a failed statement
        // would abort the whole transaction.
        let inserted = sqlx::query!(
            "INSERT INTO idempotency_keys \
           (business_id, operation, idempotency_key, request_hash, response_data, created_at) \
         VALUES ($1, $2, $3, $4, NULL, $5) \
         ON CONFLICT (business_id, operation, idempotency_key) DO UPDATE \
           SET request_hash = excluded.request_hash, response_data = NULL, \
             refusal_code = NULL, refusal_message = NULL, created_at = excluded.created_at \
           WHERE idempotency_keys.created_at < $6",
            new_id(key.business_id)?,
            key.operation,
            key.key,
            request_hash,
            now,
            cutoff
        )
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(inserted == 1)
    }

    async fn find_unexpired(
        conn: Self::Conn<'_>,
        key: &KeyOf<'_>,
        cutoff: DateTime<Utc>,
    ) -> Result<Option<StoredKey>, StoreError> {
        conn.run(async |conn| {
            Ok(sqlx::query_as!(
                StoredKey,
                "SELECT request_hash, response_data, refusal_code, refusal_message \
         FROM idempotency_keys \
         WHERE business_id = $1 AND operation = $2 AND idempotency_key = $3 AND created_at >= $4",
                id(key.business_id),
                key.operation,
                key.key,
                cutoff
            )
            .fetch_optional(&mut *conn)
            .await?)
        })
        .await
    }

    async fn store_refusal(
        tx: &mut Tx,
        key: &KeyOf<'_>,
        code: &str,
        message: &str,
    ) -> Result<(), StoreError> {
        sqlx::query!(
            "UPDATE idempotency_keys SET refusal_code = $4, refusal_message = $5 \
         WHERE business_id = $1 AND operation = $2 AND idempotency_key = $3",
            id(key.business_id),
            key.operation,
            key.key,
            code,
            message
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn purge_expired(pool: &Pool, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
        pool.run(async |pool| {
            let deleted =
                sqlx::query!("DELETE FROM idempotency_keys WHERE created_at < $1", cutoff)
                    .execute(&mut *pool)
                    .await?
                    .rows_affected();
            Ok(deleted)
        })
        .await
    }
}
