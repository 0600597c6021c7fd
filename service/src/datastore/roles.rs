//! `roles`: the built-in roles (`business_id IS NULL`, every business's) and each business's
//! custom ones, with their permission codes (stored as a JSON array) and the key their names
//! are compared by.

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;

use super::{Conn, FromPrefixedRow, StoreError, Tx};
use crate::kernel::store::{self, Store};
pub use kobo_store::roles::{Definition, Grant, Role, RoleName};

/// The columns [`Role`] reads.
const ROLE_COLUMNS: &str =
    "id, name, description, is_built_in, permission_codes, created_at, updated_at";

/// The columns of [`Role`] of `roles r`, each named with the prefix `r_`, for a query that also
/// reads another table's columns of the same names.
pub(super) const ROLE_COLUMNS_AS_R: &str = "r.id AS r_id, r.name AS r_name, \
    r.description AS r_description, r.is_built_in AS r_is_built_in, \
    r.permission_codes AS r_permission_codes, r.created_at AS r_created_at, \
    r.updated_at AS r_updated_at";

impl FromPrefixedRow for Role {
    /// A row whose columns are [`ROLE_COLUMNS`] with `prefix` before each name.
    fn from_prefixed_row(row: &AnyRow, prefix: &str) -> Result<Role, StoreError> {
        let column = |name: &str| format!("{prefix}{name}");
        Ok(Role {
            id: store::uuid(row, &column("id"))?,
            name: store::text(row, &column("name"))?,
            description: store::text(row, &column("description"))?,
            is_built_in: store::flag(row, &column("is_built_in"))?,
            permission_codes: store::text(row, &column("permission_codes"))?,
            created_at: store::time(row, &column("created_at"))?,
            updated_at: store::time(row, &column("updated_at"))?,
        })
    }
}

/// The roles the business can use (its own and the built-in ones), built-in first, then by
/// name.
pub async fn list_of_business(store: &Store, business_id: &str) -> Result<Vec<Role>, StoreError> {
    let sql = format!(
        "SELECT {ROLE_COLUMNS}, name_key FROM roles \
         WHERE business_id IS NULL OR business_id = $1 ORDER BY is_built_in DESC, name_key, id"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(business_id)
        .fetch_all(store.pool())
        .await?;
    rows.iter()
        .map(|row| Role::from_prefixed_row(row, ""))
        .collect()
}

/// The role `role_id` if the business can use it (its own or a built-in one).
pub async fn find(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
    role_id: &str,
) -> Result<Option<Role>, StoreError> {
    let sql = format!(
        "SELECT {ROLE_COLUMNS} FROM roles \
         WHERE id = $1 AND (business_id IS NULL OR business_id = $2)"
    );
    let query = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(role_id)
        .bind(business_id);
    let row = conn.into().fetch_optional(query).await?;
    row.as_ref()
        .map(|row| Role::from_prefixed_row(row, ""))
        .transpose()
}

/// The name and permissions of the role `role_id`, if the business can use it.
pub async fn find_grant(
    tx: &mut Tx,
    business_id: &str,
    role_id: &str,
) -> Result<Option<Grant>, StoreError> {
    let row = sqlx::query(
        "SELECT id, name, permission_codes FROM roles \
         WHERE id = $1 AND (business_id IS NULL OR business_id = $2)",
    )
    .bind(role_id)
    .bind(business_id)
    .fetch_optional(&mut **tx)
    .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    Ok(Some(Grant {
        id: store::text(&row, "id")?,
        name: store::text(&row, "name")?,
        permission_codes: store::text(&row, "permission_codes")?,
    }))
}

/// The stored permission codes (a JSON array) of the role `role_id` (it exists).
pub async fn permission_codes_of(tx: &mut Tx, role_id: &str) -> Result<String, StoreError> {
    let row = sqlx::query("SELECT permission_codes FROM roles WHERE id = $1")
        .bind(role_id)
        .fetch_one(&mut **tx)
        .await?;
    store::text(&row, "permission_codes")
}

/// The id of the role the business can use whose name compares as `name_key`, if any.
pub async fn holder_of_name(
    tx: &mut Tx,
    business_id: &str,
    name_key: &str,
) -> Result<Option<String>, StoreError> {
    let row = sqlx::query(
        "SELECT id FROM roles WHERE name_key = $1 AND (business_id IS NULL OR business_id = $2)",
    )
    .bind(name_key)
    .bind(business_id)
    .fetch_optional(&mut **tx)
    .await?;
    row.as_ref().map(|row| store::text(row, "id")).transpose()
}

/// Writes the business's custom role `id` at `now` ([`StoreError::Conflict`] when its name is
/// taken).
pub async fn insert_custom(
    tx: &mut Tx,
    id: &str,
    business_id: &str,
    role: &Definition<'_>,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO roles (id, business_id, name, name_key, description, \
               permission_codes, is_built_in, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $7)",
    )
    .bind(id)
    .bind(business_id)
    .bind(role.name)
    .bind(role.name_key)
    .bind(role.description)
    .bind(role.permission_codes)
    .bind(store::timestamp(now))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Rewrites the business's custom role `id` at `now` ([`StoreError::Conflict`] when its name is
/// taken).
pub async fn update_custom(
    tx: &mut Tx,
    id: &str,
    business_id: &str,
    role: &Definition<'_>,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE roles SET name = $3, name_key = $4, description = $5, permission_codes = $6, \
           updated_at = $7 WHERE id = $1 AND business_id = $2 AND is_built_in = 0",
    )
    .bind(id)
    .bind(business_id)
    .bind(role.name)
    .bind(role.name_key)
    .bind(role.description)
    .bind(role.permission_codes)
    .bind(store::timestamp(now))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Writes or rewrites the built-in role `id` (no business), dated `since` when new.
pub async fn upsert_built_in(
    tx: &mut Tx,
    id: &str,
    role: &Definition<'_>,
    since: &str,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO roles (id, business_id, name, name_key, description, permission_codes, \
           is_built_in, created_at, updated_at) VALUES ($1, NULL, $2, $3, $4, $5, 1, $6, $6) \
         ON CONFLICT (id) DO UPDATE SET name = $2, name_key = $3, description = $4, \
           permission_codes = $5, is_built_in = 1",
    )
    .bind(id)
    .bind(role.name)
    .bind(role.name_key)
    .bind(role.description)
    .bind(role.permission_codes)
    .bind(since)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The names of every custom role, of every business.
pub async fn custom_names(store: &Store) -> Result<Vec<RoleName>, StoreError> {
    let rows = sqlx::query("SELECT id, name, name_key FROM roles WHERE business_id IS NOT NULL")
        .fetch_all(store.pool())
        .await?;
    rows.iter()
        .map(|row| {
            Ok(RoleName {
                id: store::text(row, "id")?,
                name: store::text(row, "name")?,
                name_key: store::text(row, "name_key")?,
            })
        })
        .collect()
}

/// Sets the comparison key of the role `id`, on the pool ([`StoreError::Conflict`] when it is
/// another role's).
pub async fn set_name_key(store: &Store, id: &str, name_key: &str) -> Result<(), StoreError> {
    sqlx::query("UPDATE roles SET name_key = $2 WHERE id = $1")
        .bind(id)
        .bind(name_key)
        .execute(store.pool())
        .await?;
    Ok(())
}
