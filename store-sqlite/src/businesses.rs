//! `businesses`: each business with its status, its integration credentials (the client id
//! and the hash of its secret) and its daily transfer limit.

use chrono::{DateTime, Utc};

use crate::{on, timestamp, Store, StoreError, Tx};
pub use kobo_store::businesses::{Business, Credentials, NewBusiness};

kobo_store::businesses_functions!(backend crate::Backend);

impl kobo_store::businesses::Businesses for crate::Backend {
    async fn set_status(
        store: &Store,
        id_or_client_id: &str,
        status: &str,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        let now = timestamp(now);
        let updated = sqlx::query!(
            "UPDATE businesses SET status = ?2, updated_at = ?3 WHERE id = ?1 OR client_id = ?1",
            id_or_client_id,
            status,
            now
        )
        .execute(store.pool())
        .await?
        .rows_affected();
        Ok(updated)
    }

    async fn insert(
        tx: &mut Tx,
        new: &NewBusiness<'_>,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let now = timestamp(now);
        sqlx::query!(
            "INSERT INTO businesses (id, name, status, client_id, client_secret_hash, created_at, \
           updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
            new.id,
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

    async fn find(store: &Store, id_or_client_id: &str) -> Result<Option<Business>, StoreError> {
        Ok(sqlx::query_as!(
            Business,
            r#"SELECT id AS "id!", name, status, client_id,
             created_at AS "created_at: DateTime<Utc>"
           FROM businesses WHERE id = ?1 OR client_id = ?1"#,
            id_or_client_id
        )
        .fetch_optional(store.pool())
        .await?)
    }

    async fn list(store: &Store) -> Result<Vec<Business>, StoreError> {
        Ok(sqlx::query_as!(
            Business,
            r#"SELECT id AS "id!", name, status, client_id,
             created_at AS "created_at: DateTime<Utc>"
           FROM businesses ORDER BY created_at, id"#
        )
        .fetch_all(store.pool())
        .await?)
    }

    async fn name_of(conn: Self::Conn<'_>, id: &str) -> Result<String, StoreError> {
        let query = sqlx::query_scalar!("SELECT name FROM businesses WHERE id = ?1", id);
        on!(conn, query, fetch_optional)?
            .ok_or_else(|| StoreError::Unreadable(format!("no business {id}")))
    }

    async fn status_of(conn: Self::Conn<'_>, id: &str) -> Result<Option<String>, StoreError> {
        let query = sqlx::query_scalar!("SELECT status FROM businesses WHERE id = ?1", id);
        Ok(on!(conn, query, fetch_optional)?)
    }

    async fn locked_for_execution(
        tx: &mut Tx,
        id: &str,
        default_daily_limit: i64,
    ) -> Result<(String, i64), StoreError> {
        let row = sqlx::query!(
            r#"SELECT status, COALESCE(daily_transfer_limit, ?2) AS "daily_limit!: i64"
           FROM businesses WHERE id = ?1"#,
            id,
            default_daily_limit
        )
        .fetch_one(&mut **tx)
        .await?;
        Ok((row.status, row.daily_limit))
    }

    async fn client_id_of(tx: &mut Tx, id: &str) -> Result<String, StoreError> {
        Ok(
            sqlx::query_scalar!("SELECT client_id FROM businesses WHERE id = ?1", id)
                .fetch_one(&mut **tx)
                .await?,
        )
    }

    async fn credentials_of_client(
        store: &Store,
        client_id: &str,
    ) -> Result<Option<Credentials>, StoreError> {
        Ok(sqlx::query_as!(
            Credentials,
            r#"SELECT b.id AS "id!", b.client_secret_hash,
             (b.secret_issued_by IS NULL OR EXISTS (
                SELECT 1 FROM members im JOIN roles ir ON ir.id = im.role_id
                WHERE im.business_id = b.id AND im.id = b.secret_issued_by AND im.is_active
                  AND (ir.business_id IS NULL OR ir.business_id = im.business_id)
                  AND instr(ir.permission_codes, '"credential.manage"') > 0))
               AS "usable!: bool"
           FROM businesses b WHERE b.client_id = ?1"#,
            client_id
        )
        .fetch_optional(store.pool())
        .await?)
    }

    async fn set_client_secret(
        tx: &mut Tx,
        id: &str,
        client_secret_hash: &str,
        issuer: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let now = timestamp(now);
        sqlx::query!(
        "UPDATE businesses SET client_secret_hash = ?2, updated_at = ?3, secret_issued_by = ?4 \
         WHERE id = ?1",
        id,
        client_secret_hash,
        now,
        issuer
    )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    /// PostgreSQL takes the business row's lock (`FOR NO KEY UPDATE`) until `tx` ends; SQLite's
    /// write transaction holds the whole database already, so this only checks that `tx` is open.
    async fn lock(tx: &mut Tx, id: &str) -> Result<(), StoreError> {
        sqlx::query_scalar!(r#"SELECT id AS "id!" FROM businesses WHERE id = ?1"#, id)
            .fetch_optional(&mut **tx)
            .await?;
        Ok(())
    }

    async fn set_daily_transfer_limit(
        store: &Store,
        id_or_client_id: &str,
        limit: Option<i64>,
    ) -> Result<u64, StoreError> {
        let updated = sqlx::query!(
            "UPDATE businesses SET daily_transfer_limit = ?2 WHERE id = ?1 OR client_id = ?1",
            id_or_client_id,
            limit
        )
        .execute(store.pool())
        .await?
        .rows_affected();
        Ok(updated)
    }
}
