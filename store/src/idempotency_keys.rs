//! The rows of `idempotency_keys` (see the datastore module of the same name in `kobo`).

use crate::batch::Answer;
use crate::batch::Batch;
use crate::batch::KeyClaim;
use crate::batch::Write;

use chrono::{DateTime, Utc};

/// Which key: the business's, for one operation.
#[derive(Clone, Copy, Debug)]
pub struct KeyOf<'a> {
    pub business_id: &'a str,
    /// The operation's id.
    pub operation: &'a str,
    pub key: &'a str,
}

/// A key as stored: the body's hash, and the answer or the refusal once there is one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredKey {
    pub request_hash: String,
    /// The answer's `data`, JSON text.
    pub response_data: Option<String>,
    pub refusal_code: Option<String>,
    pub refusal_message: Option<String>,
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

crate::contract! {
    /// `idempotency_keys`, in each store.
    pub trait IdempotencyKeys in idempotency_keys, functions idempotency_keys_functions {
        /// Claims the key for a request hashing to `request_hash` at `now`: a new key is inserted,
        /// a key written before `cutoff` (expired) replaced as if it had been deleted first;
        /// `false` when an unexpired one is stored (left as it is).
        tx fn claim(
            key: &KeyOf<'_>,
            request_hash: &str,
            now: DateTime<Utc>,
            cutoff: DateTime<Utc>,
        ) -> bool;
        /// The key, if it is stored and was written at or after `cutoff` (unexpired).
        conn fn find_unexpired(key: &KeyOf<'_>, cutoff: DateTime<Utc>) -> Option<StoredKey>;
        /// Stores a refusal (its code and message) as the key's answer.
        tx fn store_refusal(key: &KeyOf<'_>, code: &str, message: &str) -> ();
        /// Deletes the keys written before `cutoff`, on the pool; returns how many.
        pool fn purge_expired(cutoff: DateTime<Utc>) -> u64;
    }
}
