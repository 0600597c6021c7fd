//! `idempotency_keys`: each `Idempotency-Key` a business used for an operation, the hash of
//! the body it came with, and the answer (or lasting refusal) stored for its retries.

use super::batch::{Answer, Batch, KeyClaim, Write};
use super::{dispatch, Conn, Store, StoreError, Tx};
use chrono::{DateTime, Utc};
pub use kobo_store::idempotency_keys::{KeyOf, StoredKey};

/// Claims the key for a request hashing to `request_hash` at `now`: a new key is inserted, a
/// key written before `cutoff` (expired) replaced as if it had been deleted first; `false`
/// when an unexpired one is stored (left as it is).
pub async fn claim(
    tx: &mut Tx,
    key: &KeyOf<'_>,
    request_hash: &str,
    now: DateTime<Utc>,
    cutoff: DateTime<Utc>,
) -> Result<bool, StoreError> {
    dispatch!(
        tx.on(),
        idempotency_keys::claim(key, request_hash, now, cutoff)
    )
}

/// The key, if it is stored and was written at or after `cutoff` (unexpired).
pub async fn find_unexpired(
    conn: impl Into<Conn<'_>>,
    key: &KeyOf<'_>,
    cutoff: DateTime<Utc>,
) -> Result<Option<StoredKey>, StoreError> {
    dispatch!(
        conn.into().on(),
        idempotency_keys::find_unexpired(key, cutoff)
    )
}

/// Stores a refusal (its code and message) as the key's answer.
pub async fn store_refusal(
    tx: &mut Tx,
    key: &KeyOf<'_>,
    code: &str,
    message: &str,
) -> Result<(), StoreError> {
    dispatch!(tx.on(), idempotency_keys::store_refusal(key, code, message))
}

/// Deletes the keys written before `cutoff`, on the pool; returns how many.
pub async fn purge_expired(store: &Store, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
    dispatch!(store.on(), idempotency_keys::purge_expired(cutoff))
}

/// Stores `data` (JSON text) as the key's answer, as a statement of `batch`.
pub fn complete_into(batch: &mut Batch, key: &KeyOf<'_>, data: String) {
    batch.push(Write::Answer(Answer {
        business_id: key.business_id.to_owned(),
        operation: key.operation.to_owned(),
        key: key.key.to_owned(),
        data,
        claim: None,
    }));
}

/// Claims the key with `data` (JSON text) as its answer, as a statement of `batch`: the claim
/// made at the end of the transaction instead of at its start (`kobo_store::batch::Answer::claim`).
/// The batch fails with `StoreError::KeyTaken` when an unexpired key is stored.
pub fn claim_into(batch: &mut Batch, key: &KeyOf<'_>, data: String, claim: KeyClaim) {
    batch.push(Write::Answer(Answer {
        business_id: key.business_id.to_owned(),
        operation: key.operation.to_owned(),
        key: key.key.to_owned(),
        data,
        claim: Some(claim),
    }));
}
