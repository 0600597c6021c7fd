//! `throttles` (the attempts counted at a key, and its lock) and `known_addresses` (the
//! addresses a credential succeeded from).

use super::{dispatch, Store, StoreError, Tx};
use chrono::{DateTime, Utc};

/// Counts one attempt at `key` at `now` (a window started before `window_start` starts again
/// at 1), unless the key is locked at `now`: the count reached, or `None` when locked. On
/// PostgreSQL the row stays held until `tx` ends.
pub async fn count_attempt(
    tx: &mut Tx,
    key: &str,
    now: DateTime<Utc>,
    window_start: DateTime<Utc>,
) -> Result<Option<i64>, StoreError> {
    dispatch!(tx.on(), throttles::count_attempt(key, now, window_start))
}

/// Until when `key` is locked (`None`: not locked); the key exists.
pub async fn locked_until(tx: &mut Tx, key: &str) -> Result<Option<DateTime<Utc>>, StoreError> {
    dispatch!(tx.on(), throttles::locked_until(key))
}

/// Locks `key` until `until`.
pub async fn lock(tx: &mut Tx, key: &str, until: DateTime<Utc>) -> Result<(), StoreError> {
    dispatch!(tx.on(), throttles::lock(key, until))
}

/// Takes one attempt off `key`; below `free_attempts` the key is not locked any more.
pub async fn give_back(tx: &mut Tx, key: &str, free_attempts: i64) -> Result<(), StoreError> {
    dispatch!(tx.on(), throttles::give_back(key, free_attempts))
}

/// Deletes `key` if it has no attempt left.
pub async fn delete_if_spent(tx: &mut Tx, key: &str) -> Result<(), StoreError> {
    dispatch!(tx.on(), throttles::delete_if_spent(key))
}

/// Deletes `key` (its attempts are forgotten).
pub async fn delete(tx: &mut Tx, key: &str) -> Result<(), StoreError> {
    dispatch!(tx.on(), throttles::delete(key))
}

/// Deletes the key `credential` and every key that begins with `prefix`.
pub async fn delete_credential(
    tx: &mut Tx,
    credential: &str,
    prefix: &str,
) -> Result<(), StoreError> {
    dispatch!(tx.on(), throttles::delete_credential(credential, prefix))
}

/// Deletes the keys whose window started before `cutoff` and that are not locked past it, on
/// the pool; returns how many.
pub async fn purge_expired(store: &Store, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
    dispatch!(store.on(), throttles::purge_expired(cutoff))
}

/// Whether `credential` succeeded from `address` before.
pub async fn is_known_address(
    store: &Store,
    credential: &str,
    address: &str,
) -> Result<bool, StoreError> {
    dispatch!(store.on(), throttles::is_known_address(credential, address))
}

/// Records that `credential` succeeded from `address` at `now`.
pub async fn remember_address(
    tx: &mut Tx,
    credential: &str,
    address: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    dispatch!(
        tx.on(),
        throttles::remember_address(credential, address, now)
    )
}

/// Forgets the addresses whose last success was before `cutoff`, on the pool; returns how
/// many.
pub async fn purge_known_addresses(
    store: &Store,
    cutoff: DateTime<Utc>,
) -> Result<u64, StoreError> {
    dispatch!(store.on(), throttles::purge_known_addresses(cutoff))
}
