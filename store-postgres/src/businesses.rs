//! `businesses`: each business with its status, its integration credentials (the client id
//! and the hash of its secret) and its daily transfer limit.

use chrono::{DateTime, Utc};

use crate::Pool;
use crate::{id, new_id, StoreError, Tx};
pub use kobo_store::businesses::{Business, Credentials, NewBusiness};

/// The class (the first key) of the advisory locks that guard businesses' standing, their
/// status and daily limit: "kobo" in ASCII.
pub(crate) const STANDING: i32 = 0x6b6f_626f;

/// The second key of business `id`'s standing lock: the first four bytes of its id, random in
/// a v4 UUID. Two businesses may share one (one pair in 2^32): a change to one's standing then
/// also waits for the other's payouts in flight, nothing worse.
pub(crate) fn standing_key(id: &str) -> Result<i32, StoreError> {
    Ok(standing_key_of(new_id(id)?))
}

/// [`standing_key`] of an id read as a UUID.
fn standing_key_of(id: uuid::Uuid) -> i32 {
    let bytes = id.into_bytes();
    i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

/// The statement that holds business `id`'s standing lock shared until its transaction ends:
/// what a payout takes before it reads the business (`Pool::begin_payout`, in `BEGIN`'s round
/// trip), so that its next statement's snapshot, taken after it, sees any change of standing
/// committed before, and no change commits until the payout has.
pub(crate) fn hold_standing_shared(id: &str) -> Result<String, StoreError> {
    Ok(format!(
        "SELECT pg_advisory_xact_lock_shared({STANDING}, {})",
        standing_key(id)?
    ))
}

/// Holds business `id`'s standing lock alone until `tx` ends: a change of its status or daily
/// limit takes it before it writes, so it waits for every payout that read the old standing
/// to commit, and the payouts that come after it wait for it to commit. A row lock did this
/// before (`FOR SHARE` in every payout), at one MultiXact a payout and stalls of seconds in
/// the soaks (BENCHMARKS.md, "The business's standing under an advisory lock").
pub async fn hold_standing(tx: &mut Tx, id: &str) -> Result<(), StoreError> {
    hold_standing_of(tx, new_id(id)?).await
}

/// [`hold_standing`] of an id read as a UUID.
async fn hold_standing_of(tx: &mut Tx, id: uuid::Uuid) -> Result<(), StoreError> {
    sqlx::query_scalar!(
        r#"SELECT true AS "held!" FROM pg_advisory_xact_lock($1, $2)"#,
        STANDING,
        standing_key_of(id)
    )
    .fetch_one(&mut **tx)
    .await?;
    Ok(())
}

/// The ids of the business with this id or client id (none, or one).
async fn ids_of(tx: &mut Tx, id_or_client_id: &str) -> Result<Vec<uuid::Uuid>, StoreError> {
    Ok(sqlx::query_scalar!(
        "SELECT id FROM businesses WHERE id = $1 OR client_id = $2",
        id(id_or_client_id),
        id_or_client_id
    )
    .fetch_all(&mut **tx)
    .await?)
}

/// A transaction of its own holding the standing lock ([`hold_standing`]) of the business with
/// this id or client id, and its id (none, or one), for a change of its standing.
async fn begin_standing_change(
    pool: &Pool,
    id_or_client_id: &str,
) -> Result<(Tx, Vec<uuid::Uuid>), StoreError> {
    let mut tx = pool.begin().await?;
    let ids = ids_of(&mut tx, id_or_client_id).await?;
    for business_id in &ids {
        hold_standing_of(&mut tx, *business_id).await?;
    }
    Ok((tx, ids))
}

kobo_store::businesses_functions!(backend crate::Backend);

impl kobo_store::businesses::Businesses for crate::Backend {
    async fn set_status(
        pool: &Pool,
        id_or_client_id: &str,
        status: &str,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        let (mut tx, ids) = begin_standing_change(pool, id_or_client_id).await?;
        let updated = sqlx::query!(
            "UPDATE businesses SET status = $2, updated_at = $3 WHERE id = ANY($1)",
            &ids,
            status,
            now
        )
        .execute(&mut *tx)
        .await?
        .rows_affected();
        tx.commit().await?;
        Ok(updated)
    }

    async fn insert(
        tx: &mut Tx,
        new: &NewBusiness<'_>,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        sqlx::query!(
            "INSERT INTO businesses (id, name, status, client_id, client_secret_hash, created_at, \
           updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6)",
            new_id(new.id)?,
            new.name,
            new.status,
            new.client_id,
            new.client_secret_hash,
            now
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn find(pool: &Pool, id_or_client_id: &str) -> Result<Option<Business>, StoreError> {
        pool.run(async |pool| {
            Ok(sqlx::query_as!(
                Business,
                r#"SELECT id::text AS "id!", name, status, client_id, created_at FROM businesses
         WHERE id = $1 OR client_id = $2"#,
                id(id_or_client_id),
                id_or_client_id
            )
            .fetch_optional(&mut *pool)
            .await?)
        })
        .await
    }

    async fn list(pool: &Pool) -> Result<Vec<Business>, StoreError> {
        pool.run(async |pool| {
            Ok(sqlx::query_as!(
                Business,
                r#"SELECT id::text AS "id!", name, status, client_id, created_at FROM businesses
         ORDER BY created_at, id"#
            )
            .fetch_all(&mut *pool)
            .await?)
        })
        .await
    }

    async fn name_of(conn: Self::Conn<'_>, id: &str) -> Result<String, StoreError> {
        conn.run(async |conn| {
            sqlx::query_scalar!("SELECT name FROM businesses WHERE id = $1", crate::id(id))
                .fetch_optional(&mut *conn)
                .await?
                .ok_or_else(|| StoreError::Unreadable(format!("no business {id}")))
        })
        .await
    }

    async fn status_of(conn: Self::Conn<'_>, id: &str) -> Result<Option<String>, StoreError> {
        conn.run(async |conn| {
            Ok(
                sqlx::query_scalar!("SELECT status FROM businesses WHERE id = $1", crate::id(id))
                    .fetch_optional(&mut *conn)
                    .await?,
            )
        })
        .await
    }

    async fn locked_for_execution(
        tx: &mut Tx,
        id: &str,
        default_daily_limit: i64,
    ) -> Result<(String, i64), StoreError> {
        let row = sqlx::query!(
            r#"SELECT status, COALESCE(daily_transfer_limit, $2) AS "daily_limit!" FROM businesses
         WHERE id = $1 FOR SHARE"#,
            crate::id(id),
            default_daily_limit
        )
        .fetch_one(&mut **tx)
        .await?;
        Ok((row.status, row.daily_limit))
    }

    async fn client_id_of(tx: &mut Tx, id: &str) -> Result<String, StoreError> {
        Ok(sqlx::query_scalar!(
            "SELECT client_id FROM businesses WHERE id = $1",
            crate::id(id)
        )
        .fetch_one(&mut **tx)
        .await?)
    }

    async fn credentials_of_client(
        pool: &Pool,
        client_id: &str,
    ) -> Result<Option<Credentials>, StoreError> {
        pool.run(async |pool| {
            Ok(sqlx::query_as!(
                Credentials,
                r#"SELECT b.id::text AS "id!", b.client_secret_hash,
               (b.secret_issued_by IS NULL OR EXISTS (
                  SELECT 1 FROM members im JOIN roles ir ON ir.id = im.role_id
                  WHERE im.business_id = b.id AND im.id::text = b.secret_issued_by
                    AND im.is_active
                    AND (ir.business_id IS NULL OR ir.business_id = im.business_id)
                    AND position('"credential.manage"' IN ir.permission_codes) > 0))
                 AS "usable!"
               FROM businesses b WHERE b.client_id = $1"#,
                client_id
            )
            .fetch_optional(&mut *pool)
            .await?)
        })
        .await
    }

    async fn set_client_secret(
        tx: &mut Tx,
        id: &str,
        client_secret_hash: &str,
        issuer: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        sqlx::query!(
        "UPDATE businesses SET client_secret_hash = $2, updated_at = $3, secret_issued_by = $4 \
         WHERE id = $1",
        crate::id(id),
        client_secret_hash,
        now,
        issuer
    )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    /// Takes the business row's lock (`FOR NO KEY UPDATE`) until `tx` ends.
    async fn lock(tx: &mut Tx, id: &str) -> Result<(), StoreError> {
        sqlx::query_scalar!(
            "SELECT id FROM businesses WHERE id = $1 FOR NO KEY UPDATE",
            crate::id(id)
        )
        .fetch_optional(&mut **tx)
        .await?;
        Ok(())
    }

    async fn set_daily_transfer_limit(
        pool: &Pool,
        id_or_client_id: &str,
        limit: Option<i64>,
    ) -> Result<u64, StoreError> {
        let (mut tx, ids) = begin_standing_change(pool, id_or_client_id).await?;
        let updated = sqlx::query!(
            "UPDATE businesses SET daily_transfer_limit = $2 WHERE id = ANY($1)",
            &ids,
            limit
        )
        .execute(&mut *tx)
        .await?
        .rows_affected();
        tx.commit().await?;
        Ok(updated)
    }
}
