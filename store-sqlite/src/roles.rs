//! `roles`: the built-in roles (`business_id IS NULL`, every business's) and each business's
//! custom ones, with their permission codes (stored as a JSON array) and the key their names
//! are compared by.

use chrono::{DateTime, Utc};

use crate::{on, timestamp, uuid, Store, StoreError, Tx};
pub use kobo_store::roles::{Definition, Grant, Role, RoleName};

/// A role as read, its id still text.
pub(crate) struct RoleRecord {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) is_built_in: bool,
    pub(crate) permission_codes: String,
    pub(crate) created_at: DateTime<Utc>,
    pub(crate) updated_at: DateTime<Utc>,
}

impl RoleRecord {
    pub(crate) fn into_role(self) -> Result<Role, StoreError> {
        Ok(Role {
            id: uuid(&self.id)?,
            name: self.name,
            description: self.description,
            is_built_in: self.is_built_in,
            permission_codes: self.permission_codes,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

kobo_store::roles_functions!(backend crate::Backend);

impl kobo_store::roles::Roles for crate::Backend {
    async fn list_of_business(store: &Store, business_id: &str) -> Result<Vec<Role>, StoreError> {
        let rows = sqlx::query_as!(
            RoleRecord,
            r#"SELECT id AS "id!", name, description, is_built_in AS "is_built_in: bool",
             permission_codes, created_at AS "created_at: DateTime<Utc>",
             updated_at AS "updated_at: DateTime<Utc>"
           FROM roles WHERE business_id IS NULL OR business_id = ?1
           ORDER BY is_built_in DESC, name_key, id"#,
            business_id
        )
        .fetch_all(store.pool())
        .await?;
        rows.into_iter().map(RoleRecord::into_role).collect()
    }

    async fn find(
        conn: Self::Conn<'_>,
        business_id: &str,
        role_id: &str,
    ) -> Result<Option<Role>, StoreError> {
        let query = sqlx::query_as!(
            RoleRecord,
            r#"SELECT id AS "id!", name, description, is_built_in AS "is_built_in: bool",
             permission_codes, created_at AS "created_at: DateTime<Utc>",
             updated_at AS "updated_at: DateTime<Utc>"
           FROM roles WHERE id = ?1 AND (business_id IS NULL OR business_id = ?2)"#,
            role_id,
            business_id
        );
        on!(conn, query, fetch_optional)?
            .map(RoleRecord::into_role)
            .transpose()
    }

    async fn find_grant(
        tx: &mut Tx,
        business_id: &str,
        role_id: &str,
    ) -> Result<Option<Grant>, StoreError> {
        Ok(sqlx::query_as!(
            Grant,
            r#"SELECT id AS "id!", name, permission_codes FROM roles
           WHERE id = ?1 AND (business_id IS NULL OR business_id = ?2)"#,
            role_id,
            business_id
        )
        .fetch_optional(&mut **tx)
        .await?)
    }

    async fn permission_codes_of(tx: &mut Tx, role_id: &str) -> Result<String, StoreError> {
        Ok(
            sqlx::query_scalar!("SELECT permission_codes FROM roles WHERE id = ?1", role_id)
                .fetch_one(&mut **tx)
                .await?,
        )
    }

    async fn holder_of_name(
        tx: &mut Tx,
        business_id: &str,
        name_key: &str,
    ) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar!(
            r#"SELECT id AS "id!" FROM roles
           WHERE name_key = ?1 AND (business_id IS NULL OR business_id = ?2)"#,
            name_key,
            business_id
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
        let now = timestamp(now);
        sqlx::query!(
            "INSERT INTO roles (id, business_id, name, name_key, description, \
           permission_codes, is_built_in, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, ?7, ?7)",
            id,
            business_id,
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
        let now = timestamp(now);
        sqlx::query!(
            "UPDATE roles SET name = ?3, name_key = ?4, description = ?5, permission_codes = ?6, \
           updated_at = ?7 WHERE id = ?1 AND business_id = ?2 AND is_built_in = 0",
            id,
            business_id,
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
           is_built_in, created_at, updated_at) VALUES (?1, NULL, ?2, ?3, ?4, ?5, 1, ?6, ?6) \
         ON CONFLICT (id) DO UPDATE SET name = ?2, name_key = ?3, description = ?4, \
           permission_codes = ?5, is_built_in = 1",
            id,
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

    async fn custom_names(store: &Store) -> Result<Vec<RoleName>, StoreError> {
        Ok(sqlx::query_as!(
            RoleName,
            r#"SELECT id AS "id!", name, name_key FROM roles WHERE business_id IS NOT NULL"#
        )
        .fetch_all(store.pool())
        .await?)
    }

    async fn set_name_key(store: &Store, id: &str, name_key: &str) -> Result<(), StoreError> {
        sqlx::query!("UPDATE roles SET name_key = ?2 WHERE id = ?1", id, name_key)
            .execute(store.pool())
            .await?;
        Ok(())
    }
}
