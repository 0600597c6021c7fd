//! `idempotency_keys`: each `Idempotency-Key` a business used for an operation, the hash of
//! the body it came with, and the answer (or lasting refusal) stored for its retries.

use super::contract::*;

use chrono::{DateTime, Utc};
pub use kobo_store::idempotency_keys::{KeyOf, StoredKey};

pub use kobo_store::idempotency_keys::complete_into;

pub use kobo_store::idempotency_keys::claim_into;

kobo_store::idempotency_keys_functions!(dispatch);
