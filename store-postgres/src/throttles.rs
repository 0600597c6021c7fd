//! `throttles` (the attempts counted at a key, and its lock) and `known_addresses` (the
//! addresses a credential succeeded from).

use chrono::{DateTime, Utc};

use crate::Pool;
use crate::{StoreError, Tx};

kobo_store::throttles_functions!(backend crate::Backend);

impl kobo_store::throttles::Throttles for crate::Backend {
    async fn count_attempt(
        tx: &mut Tx,
        key: &str,
        now: DateTime<Utc>,
        window_start: DateTime<Utc>,
    ) -> Result<Option<i64>, StoreError> {
        Ok(sqlx::query_scalar!(
            "INSERT INTO throttles (key, failures, window_started_at, locked_until) \
         VALUES ($1, 1, $2, NULL) \
         ON CONFLICT (key) DO UPDATE SET \
           failures = CASE WHEN throttles.window_started_at < $3 THEN 1 \
                           ELSE throttles.failures + 1 END, \
           window_started_at = CASE WHEN throttles.window_started_at < $3 THEN $2 \
                                    ELSE throttles.window_started_at END \
         WHERE throttles.locked_until IS NULL OR throttles.locked_until <= $2 \
         RETURNING failures",
            key,
            now,
            window_start
        )
        .fetch_optional(&mut **tx)
        .await?)
    }

    async fn locked_until(tx: &mut Tx, key: &str) -> Result<Option<DateTime<Utc>>, StoreError> {
        Ok(
            sqlx::query_scalar!("SELECT locked_until FROM throttles WHERE key = $1", key)
                .fetch_one(&mut **tx)
                .await?,
        )
    }

    async fn lock(tx: &mut Tx, key: &str, until: DateTime<Utc>) -> Result<(), StoreError> {
        sqlx::query!(
            "UPDATE throttles SET locked_until = $2 WHERE key = $1",
            key,
            until
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn give_back(tx: &mut Tx, key: &str, free_attempts: i64) -> Result<(), StoreError> {
        sqlx::query!(
            "UPDATE throttles SET failures = failures - 1, \
           locked_until = CASE WHEN failures - 1 >= $2 THEN locked_until ELSE NULL END \
         WHERE key = $1 AND failures > 0",
            key,
            free_attempts
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn delete_if_spent(tx: &mut Tx, key: &str) -> Result<(), StoreError> {
        sqlx::query!(
            "DELETE FROM throttles WHERE key = $1 AND failures <= 0",
            key
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn delete(tx: &mut Tx, key: &str) -> Result<(), StoreError> {
        sqlx::query!("DELETE FROM throttles WHERE key = $1", key)
            .execute(&mut **tx)
            .await?;
        Ok(())
    }

    async fn delete_credential(
        tx: &mut Tx,
        credential: &str,
        prefix: &str,
    ) -> Result<(), StoreError> {
        sqlx::query!(
            "DELETE FROM throttles WHERE key = $1 OR substr(key, 1, length($2)) = $2",
            credential,
            prefix
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn purge_expired(pool: &Pool, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
        pool.run(async |pool| {
            let deleted = sqlx::query!(
                "DELETE FROM throttles WHERE window_started_at < $1 \
         AND (locked_until IS NULL OR locked_until < $1)",
                cutoff
            )
            .execute(&mut *pool)
            .await?
            .rows_affected();
            Ok(deleted)
        })
        .await
    }

    async fn is_known_address(
        pool: &Pool,
        credential: &str,
        address: &str,
    ) -> Result<bool, StoreError> {
        pool.run(async |pool| {
            let known = sqlx::query_scalar!(
                "SELECT 1 FROM known_addresses WHERE credential = $1 AND ip_address = $2",
                credential,
                address
            )
            .fetch_optional(&mut *pool)
            .await?;
            Ok(known.is_some())
        })
        .await
    }

    async fn remember_address(
        tx: &mut Tx,
        credential: &str,
        address: &str,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        sqlx::query!(
            "INSERT INTO known_addresses (credential, ip_address, last_success_at) \
         VALUES ($1, $2, $3) \
         ON CONFLICT (credential, ip_address) DO UPDATE SET last_success_at = $3",
            credential,
            address,
            now
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn purge_known_addresses(pool: &Pool, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
        pool.run(async |pool| {
            let deleted = sqlx::query!(
                "DELETE FROM known_addresses WHERE last_success_at < $1",
                cutoff
            )
            .execute(&mut *pool)
            .await?
            .rows_affected();
            Ok(deleted)
        })
        .await
    }
}
