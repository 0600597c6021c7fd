//! `throttles` (the attempts counted at a key, and its lock) and `known_addresses` (the
//! addresses a credential succeeded from).

use chrono::{DateTime, Utc};

crate::contract! {
    /// `throttles`, in each store.
    pub trait Throttles in throttles, functions throttles_functions {
        /// Counts one attempt at `key` at `now` (a window started before `window_start` starts
        /// again at 1), unless the key is locked at `now`: the count reached, or `None` when
        /// locked. On PostgreSQL the row stays held until `tx` ends.
        tx fn count_attempt(
            key: &str,
            now: DateTime<Utc>,
            window_start: DateTime<Utc>,
        ) -> Option<i64>;
        /// Until when `key` is locked (`None`: not locked); the key exists.
        tx fn locked_until(key: &str) -> Option<DateTime<Utc>>;
        /// Locks `key` until `until`.
        tx fn lock(key: &str, until: DateTime<Utc>) -> ();
        /// Takes one attempt off `key`; below `free_attempts` the key is not locked any more.
        tx fn give_back(key: &str, free_attempts: i64) -> ();
        /// Deletes `key` if it has no attempt left.
        tx fn delete_if_spent(key: &str) -> ();
        /// Deletes `key` (its attempts are forgotten).
        tx fn delete(key: &str) -> ();
        /// Deletes the key `credential` and every key that begins with `prefix`.
        tx fn delete_credential(credential: &str, prefix: &str) -> ();
        /// Deletes the keys whose window started before `cutoff` and that are not locked past it,
        /// on the pool; returns how many.
        pool fn purge_expired(cutoff: DateTime<Utc>) -> u64;
        /// Whether `credential` succeeded from `address` before.
        pool fn is_known_address(credential: &str, address: &str) -> bool;
        /// Records that `credential` succeeded from `address` at `now`.
        tx fn remember_address(credential: &str, address: &str, now: DateTime<Utc>) -> ();
        /// Forgets the addresses whose last success was before `cutoff`, on the pool; returns how
        /// many.
        pool fn purge_known_addresses(cutoff: DateTime<Utc>) -> u64;
    }
}
