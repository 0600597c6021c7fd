//! Progressive throttling of failed credential checks (`throttles` table).
//!
//! A key names what is throttled (`login:email:<email>`, `login:address:<ip>`, ...). Failures
//! are counted per key in a window; past the policy's free failures each one locks the key for
//! longer ([`ThrottlePolicy::lock_seconds`]). While locked, the check answers `29` with
//! `Retry-After` before any password is looked at. Failures are recorded in their own
//! transaction, because the operation that failed rolls its own back.

use chrono::{DateTime, Duration, Utc};
use generated_server::OrInternal;
use generated_server::{ApiError, ResponseCode};
use sqlx::Row;

use crate::kernel::config::ThrottlePolicy;
use crate::kernel::store::{self, Store, Tx};

/// `29` unless every key is unlocked at `now`.
pub async fn check(store: &Store, keys: &[&str], now: DateTime<Utc>) -> Result<(), ApiError> {
    let mut wait_seconds: i64 = 0;
    for key in keys {
        let locked_until: Option<String> =
            sqlx::query_scalar("SELECT locked_until FROM throttles WHERE key = $1")
                .bind(*key)
                .fetch_optional(store.pool())
                .await
                .or_internal()?
                .flatten();
        if let Some(until) = locked_until {
            let until = store::parse_timestamp(&until)?;
            let remaining = until - now;
            if remaining > Duration::zero() {
                // Round up: a client that waits exactly Retry-After seconds must get through.
                let seconds = (remaining.num_milliseconds() + 999) / 1000;
                wait_seconds = wait_seconds.max(seconds);
            }
        }
    }
    if wait_seconds > 0 {
        return Err(too_many(wait_seconds as u64));
    }
    Ok(())
}

/// The `29` answer.
pub fn too_many(retry_after_seconds: u64) -> ApiError {
    ApiError::new(ResponseCode::TooManyRequests)
        .with_message(format!(
            "Too many attempts: try again in {retry_after_seconds} seconds"
        ))
        .with_retry_after_seconds(retry_after_seconds.max(1))
}

/// Counts one failure for `key` (committed at once) and locks the key when the policy says so.
pub async fn record_failure(
    store: &Store,
    key: &str,
    policy: &ThrottlePolicy,
    now: DateTime<Utc>,
) -> Result<(), ApiError> {
    let mut tx = store.begin().await?;
    let window_start = now - Duration::seconds(policy.window_seconds as i64);
    // One statement, so concurrent failures on PostgreSQL are all counted.
    let row = sqlx::query(
        "INSERT INTO throttles (key, failures, window_started_at, locked_until) \
         VALUES ($1, 1, $2, NULL) \
         ON CONFLICT (key) DO UPDATE SET \
           failures = CASE WHEN throttles.window_started_at < $3 THEN 1 \
                           ELSE throttles.failures + 1 END, \
           window_started_at = CASE WHEN throttles.window_started_at < $3 THEN $2 \
                                    ELSE throttles.window_started_at END \
         RETURNING failures",
    )
    .bind(key)
    .bind(store::timestamp(now))
    .bind(store::timestamp(window_start))
    .fetch_one(&mut *tx)
    .await
    .or_internal()?;
    let failures: i64 = row.try_get("failures").or_internal()?;
    let lock_seconds = policy.lock_seconds(failures);
    if lock_seconds > 0 {
        let until = now + Duration::seconds(lock_seconds as i64);
        sqlx::query("UPDATE throttles SET locked_until = $2 WHERE key = $1")
            .bind(key)
            .bind(store::timestamp(until))
            .execute(&mut *tx)
            .await
            .or_internal()?;
    }
    tx.commit().await.or_internal()
}

/// Forgets the failures of `key` (after a success), inside the caller's transaction.
pub async fn clear(tx: &mut Tx, key: &str) -> Result<(), ApiError> {
    sqlx::query("DELETE FROM throttles WHERE key = $1")
        .bind(key)
        .execute(&mut **tx)
        .await
        .or_internal()?;
    Ok(())
}
