//! `otps`: the one-time passwords issued to members (only their hashes), each with its
//! attempts, expiry and use.

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::{StoreError, Tx};
use crate::kernel::store::{self, Store};
pub use kobo_store::otps::{Attempted, Issued, NewOtp};

/// The OTPs issued to the member at or after `since`.
pub async fn issued_since(
    tx: &mut Tx,
    member_id: &str,
    since: DateTime<Utc>,
) -> Result<Issued, StoreError> {
    let row = sqlx::query(
        "SELECT COUNT(*) AS issued, MIN(created_at) AS oldest FROM otps \
         WHERE member_id = $1 AND created_at >= $2",
    )
    .bind(member_id)
    .bind(store::timestamp(since))
    .fetch_one(&mut **tx)
    .await?;
    Ok(Issued {
        count: row.try_get("issued")?,
        oldest: store::optional_time(&row, "oldest")?,
    })
}

/// Uses up, at `now`, every OTP of the member not used yet (a new one replaces them).
pub async fn use_up_all_of_member(
    tx: &mut Tx,
    member_id: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE otps SET used_at = $2 WHERE member_id = $1 AND used_at IS NULL")
        .bind(member_id)
        .bind(store::timestamp(now))
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Writes a new OTP.
pub async fn insert(tx: &mut Tx, new: &NewOtp<'_>) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO otps (id, business_id, member_id, code_hash, attempts, expires_at, used_at, \
           created_at) VALUES ($1, $2, $3, $4, 0, $5, NULL, $6)",
    )
    .bind(new.id)
    .bind(new.business_id)
    .bind(new.member_id)
    .bind(new.code_hash)
    .bind(store::timestamp(new.expires_at))
    .bind(store::timestamp(new.created_at))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Counts one attempt on the member's newest unused OTP, if it is live at `now` (not expired,
/// fewer than `max_attempts` attempts): that OTP, or `None` when there is no live one.
pub async fn count_attempt(
    tx: &mut Tx,
    member_id: &str,
    now: DateTime<Utc>,
    max_attempts: i64,
) -> Result<Option<Attempted>, StoreError> {
    let row = sqlx::query(
        "UPDATE otps SET attempts = attempts + 1 \
         WHERE id = (SELECT id FROM otps WHERE member_id = $1 AND used_at IS NULL \
                     ORDER BY created_at DESC LIMIT 1) \
           AND used_at IS NULL AND expires_at > $2 AND attempts < $3 \
         RETURNING id, code_hash, attempts",
    )
    .bind(member_id)
    .bind(store::timestamp(now))
    .bind(max_attempts)
    .fetch_optional(&mut **tx)
    .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    Ok(Some(Attempted {
        id: store::text(&row, "id")?,
        code_hash: store::text(&row, "code_hash")?,
        attempts: row.try_get("attempts")?,
    }))
}

/// Uses up the OTP `id` at `now`; `false` when it was used already.
pub async fn use_up(tx: &mut Tx, id: &str, now: DateTime<Utc>) -> Result<bool, StoreError> {
    let spent = sqlx::query("UPDATE otps SET used_at = $2 WHERE id = $1 AND used_at IS NULL")
        .bind(id)
        .bind(store::timestamp(now))
        .execute(&mut **tx)
        .await?
        .rows_affected();
    Ok(spent == 1)
}

/// Deletes the OTPs that expired before `cutoff`, on the pool; returns how many.
pub async fn purge_expired(store: &Store, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
    let deleted = sqlx::query("DELETE FROM otps WHERE expires_at < $1")
        .bind(store::timestamp(cutoff))
        .execute(store.pool())
        .await?
        .rows_affected();
    Ok(deleted)
}
