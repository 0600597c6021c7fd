//! `roles`: the built-in roles (`business_id IS NULL`, every business's) and each business's
//! custom ones, with their permission codes (stored as a JSON array) and the key their names
//! are compared by.

use chrono::{DateTime, Utc};

use crate::Pool;
use crate::{id, new_id, StoreError, Tx};
pub use kobo_store::roles::{Definition, Grant, Role, RoleName};

kobo_store::roles_functions!(backend crate::Backend);

impl kobo_store::roles::Roles for crate::Backend {
    async fn list_of_business(pool: &Pool, business_id: &str) -> Result<Vec<Role>, StoreError> {
        pool.run(async |pool| {
            Ok(sqlx::query_as!(
            Role,
            "SELECT id, name, description, is_built_in, permission_codes, created_at, updated_at \
         FROM roles WHERE business_id IS NULL OR business_id = $1 \
         ORDER BY is_built_in DESC, name_key, id",
            id(business_id)
        )
            .fetch_all(&mut *pool)
            .await?)
        })
        .await
    }

    async fn find(
        conn: Self::Conn<'_>,
        business_id: &str,
        role_id: &str,
    ) -> Result<Option<Role>, StoreError> {
        conn.run(async |conn| {
            Ok(sqlx::query_as!(
        Role,
        "SELECT id, name, description, is_built_in, permission_codes, created_at, updated_at \
         FROM roles WHERE id = $1 AND (business_id IS NULL OR business_id = $2)",
        id(role_id),
        id(business_id)
    )
            .fetch_optional(&mut *conn)
            .await?)
        })
        .await
    }

    async fn find_grant(
        tx: &mut Tx,
        business_id: &str,
        role_id: &str,
    ) -> Result<Option<Grant>, StoreError> {
        Ok(sqlx::query_as!(
            Grant,
            r#"SELECT id::text AS "id!", name, permission_codes FROM roles
         WHERE id = $1 AND (business_id IS NULL OR business_id = $2)"#,
            id(role_id),
            id(business_id)
        )
        .fetch_optional(&mut **tx)
        .await?)
    }

    async fn permission_codes_of(tx: &mut Tx, role_id: &str) -> Result<String, StoreError> {
        Ok(sqlx::query_scalar!(
            "SELECT permission_codes FROM roles WHERE id = $1",
            id(role_id)
        )
        .fetch_one(&mut **tx)
        .await?)
    }

    async fn holder_of_name(
        tx: &mut Tx,
        business_id: &str,
        name_key: &str,
    ) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar!(
            r#"SELECT id::text AS "id!" FROM roles
         WHERE name_key = $1 AND (business_id IS NULL OR business_id = $2)"#,
            name_key,
            id(business_id)
        )
        .fetch_optional(&mut **tx)
        .await?)
    }

    async fn insert_custom(
        tx: &mut Tx,
        id: &str,
        business_id: &str,
        role: &Definition<'_>,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        sqlx::query!(
            "INSERT INTO roles (id, business_id, name, name_key, description, \
               permission_codes, is_built_in, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, false, $7, $7)",
            new_id(id)?,
            new_id(business_id)?,
            role.name,
            role.name_key,
            role.description,
            role.permission_codes,
            now
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn update_custom(
        tx: &mut Tx,
        id: &str,
        business_id: &str,
        role: &Definition<'_>,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        sqlx::query!(
            "UPDATE roles SET name = $3, name_key = $4, description = $5, permission_codes = $6, \
           updated_at = $7 WHERE id = $1 AND business_id = $2 AND NOT is_built_in",
            crate::id(id),
            crate::id(business_id),
            role.name,
            role.name_key,
            role.description,
            role.permission_codes,
            now
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn upsert_built_in(
        tx: &mut Tx,
        id: &str,
        role: &Definition<'_>,
        since: &str,
    ) -> Result<(), StoreError> {
        sqlx::query!(
            "INSERT INTO roles (id, business_id, name, name_key, description, permission_codes, \
           is_built_in, created_at, updated_at) \
         VALUES ($1, NULL, $2, $3, $4, $5, true, $6::text::timestamptz, $6::text::timestamptz) \
         ON CONFLICT (id) DO UPDATE SET name = $2, name_key = $3, description = $4, \
           permission_codes = $5, is_built_in = true",
            new_id(id)?,
            role.name,
            role.name_key,
            role.description,
            role.permission_codes,
            since
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn custom_names(pool: &Pool) -> Result<Vec<RoleName>, StoreError> {
        pool.run(async |pool| {
            Ok(sqlx::query_as!(
            RoleName,
            r#"SELECT id::text AS "id!", name, name_key FROM roles WHERE business_id IS NOT NULL"#
        )
        .fetch_all(&mut *pool)
        .await?)
        })
        .await
    }

    async fn set_name_key(pool: &Pool, id: &str, name_key: &str) -> Result<(), StoreError> {
        pool.run(async |pool| {
            sqlx::query!(
                "UPDATE roles SET name_key = $2 WHERE id = $1",
                crate::id(id),
                name_key
            )
            .execute(&mut *pool)
            .await?;
            Ok(())
        })
        .await
    }
}
