//! `idempotency_keys`: each `Idempotency-Key` a business used for an operation, the hash of
//! the body it came with, and the answer (or lasting refusal) stored for its retries.

use chrono::{DateTime, Utc};

use crate::{on, timestamp, Store, StoreError, Tx};
use kobo_store::batch::{Answer, KeyClaim};
pub use kobo_store::idempotency_keys::{KeyOf, StoredKey};

pub use kobo_store::idempotency_keys::complete_into;

/// [`Write::Answer`], run in `tx` ([`crate::batch::run`]).
pub(crate) async fn write_answer(tx: &mut Tx, answer: Answer) -> Result<(), StoreError> {
    if let Some(claim) = &answer.claim {
        return claim_with_answer(tx, &answer, claim).await;
    }
    sqlx::query!(
        "UPDATE idempotency_keys SET response_data = ?4 \
         WHERE business_id = ?1 AND operation = ?2 AND idempotency_key = ?3",
        answer.business_id,
        answer.operation,
        answer.key,
        answer.data
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Claims the key with its answer, as [`claim`] at `claim.at` followed by the answer would
/// (see `kobo_store::batch::Answer::claim`): `StoreError::KeyTaken` when an unexpired key is
/// stored.
async fn claim_with_answer(
    tx: &mut Tx,
    answer: &Answer,
    claim: &KeyClaim,
) -> Result<(), StoreError> {
    let at = timestamp(claim.at);
    let cutoff = timestamp(claim.expired_before);
    let written = sqlx::query!(
        "INSERT INTO idempotency_keys \
           (business_id, operation, idempotency_key, request_hash, response_data, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
         ON CONFLICT (business_id, operation, idempotency_key) DO UPDATE \
           SET request_hash = excluded.request_hash, response_data = excluded.response_data, \
             refusal_code = NULL, refusal_message = NULL, created_at = excluded.created_at \
           WHERE idempotency_keys.created_at < ?7",
        answer.business_id,
        answer.operation,
        answer.key,
        claim.request_hash,
        answer.data,
        at,
        cutoff
    )
    .execute(&mut **tx)
    .await?
    .rows_affected();
    if written == 1 {
        Ok(())
    } else {
        Err(StoreError::KeyTaken)
    }
}

kobo_store::idempotency_keys_functions!(backend crate::Backend);

impl kobo_store::idempotency_keys::IdempotencyKeys for crate::Backend {
    async fn claim(
        tx: &mut Tx,
        key: &KeyOf<'_>,
        request_hash: &str,
        now: DateTime<Utc>,
        cutoff: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let now = timestamp(now);
        let cutoff = timestamp(cutoff);
        // One statement: ON CONFLICT instead of catching the violation.
        let inserted = sqlx::query!(
            "INSERT INTO idempotency_keys \
           (business_id, operation, idempotency_key, request_hash, response_data, created_at) \
         VALUES (?1, ?2, ?3, ?4, NULL, ?5) \
         ON CONFLICT (business_id, operation, idempotency_key) DO UPDATE \
           SET request_hash = excluded.request_hash, response_data = NULL, \
             refusal_code = NULL, refusal_message = NULL, created_at = excluded.created_at \
           WHERE idempotency_keys.created_at < ?6",
            key.business_id,
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
        let cutoff = timestamp(cutoff);
        let query = sqlx::query_as!(
            StoredKey,
            "SELECT request_hash, response_data, refusal_code, refusal_message \
         FROM idempotency_keys \
         WHERE business_id = ?1 AND operation = ?2 AND idempotency_key = ?3 AND created_at >= ?4",
            key.business_id,
            key.operation,
            key.key,
            cutoff
        );
        Ok(on!(conn, query, fetch_optional)?)
    }

    async fn store_refusal(
        tx: &mut Tx,
        key: &KeyOf<'_>,
        code: &str,
        message: &str,
    ) -> Result<(), StoreError> {
        sqlx::query!(
            "UPDATE idempotency_keys SET refusal_code = ?4, refusal_message = ?5 \
         WHERE business_id = ?1 AND operation = ?2 AND idempotency_key = ?3",
            key.business_id,
            key.operation,
            key.key,
            code,
            message
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn purge_expired(store: &Store, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
        let cutoff = timestamp(cutoff);
        let deleted = sqlx::query!("DELETE FROM idempotency_keys WHERE created_at < ?1", cutoff)
            .execute(store.pool())
            .await?
            .rows_affected();
        Ok(deleted)
    }
}
