//! `otps`: the one-time passwords issued to members (only their hashes), each with its
//! attempts, expiry and use.

use chrono::{DateTime, Utc};

use crate::Pool;
use crate::{id, new_id, StoreError, Tx};
pub use kobo_store::otps::{Attempted, Issued, NewOtp};

kobo_store::otps_functions!(backend crate::Backend);

impl kobo_store::otps::Otps for crate::Backend {
    async fn issued_since(
        tx: &mut Tx,
        member_id: &str,
        since: DateTime<Utc>,
    ) -> Result<Issued, StoreError> {
        Ok(sqlx::query_as!(
            Issued,
            r#"SELECT COUNT(*) AS "count!", MIN(created_at) AS oldest FROM otps
         WHERE member_id = $1 AND created_at >= $2"#,
            id(member_id),
            since
        )
        .fetch_one(&mut **tx)
        .await?)
    }

    async fn use_up_all_of_member(
        tx: &mut Tx,
        member_id: &str,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        sqlx::query!(
            "UPDATE otps SET used_at = $2 WHERE member_id = $1 AND used_at IS NULL",
            id(member_id),
            now
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn insert(tx: &mut Tx, new: &NewOtp<'_>) -> Result<(), StoreError> {
        sqlx::query!(
        "INSERT INTO otps (id, business_id, member_id, code_hash, attempts, expires_at, used_at, \
           created_at) VALUES ($1, $2, $3, $4, 0, $5, NULL, $6)",
        new_id(new.id)?,
        new_id(new.business_id)?,
        new_id(new.member_id)?,
        new.code_hash,
        new.expires_at,
        new.created_at
    )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn count_attempt(
        tx: &mut Tx,
        member_id: &str,
        now: DateTime<Utc>,
        max_attempts: i64,
    ) -> Result<Option<Attempted>, StoreError> {
        Ok(sqlx::query_as!(
            Attempted,
            r#"UPDATE otps SET attempts = attempts + 1
         WHERE id = (SELECT id FROM otps WHERE member_id = $1 AND used_at IS NULL
                     ORDER BY created_at DESC LIMIT 1)
           AND used_at IS NULL AND expires_at > $2 AND attempts < $3
         RETURNING id::text AS "id!", code_hash, attempts"#,
            id(member_id),
            now,
            max_attempts
        )
        .fetch_optional(&mut **tx)
        .await?)
    }

    async fn use_up(tx: &mut Tx, id: &str, now: DateTime<Utc>) -> Result<bool, StoreError> {
        let spent = sqlx::query!(
            "UPDATE otps SET used_at = $2 WHERE id = $1 AND used_at IS NULL",
            crate::id(id),
            now
        )
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(spent == 1)
    }

    async fn purge_expired(pool: &Pool, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
        pool.run(async |pool| {
            let deleted = sqlx::query!("DELETE FROM otps WHERE expires_at < $1", cutoff)
                .execute(&mut *pool)
                .await?
                .rows_affected();
            Ok(deleted)
        })
        .await
    }
}
