//! How the API shows members and roles: the queries and row mappings every operation that
//! answers with a member or a role shares (team operations, login, get_profile).

use chrono::{DateTime, Utc};
use generated_server::models;
use sqlx::any::AnyRow;
use sqlx::{Any, Executor};

use crate::error::{Error, OrInternal};
use crate::kernel::store;
use crate::platform::permissions;

/// The columns [`member_from_row`] reads, from `members m JOIN roles r`.
pub const MEMBER_COLUMNS: &str = "m.id, m.email, m.first_name, m.last_name, m.role_id, \
    r.name AS role_name, m.is_active, m.invitation_status, m.last_login, m.date_joined, \
    m.created_at, (SELECT MAX(i.expires_at) FROM invitations i WHERE i.member_id = m.id \
    AND i.used_at IS NULL AND i.revoked_at IS NULL) AS invitation_expires_at";

pub const ROLE_COLUMNS: &str =
    "id, name, description, is_built_in, permission_codes, created_at, updated_at";

/// [`ROLE_COLUMNS`] of `roles r`, each named with the prefix `r_`, for a query that also reads
/// another table's columns of the same names; read with [`role_from_prefixed_row`].
pub const ROLE_COLUMNS_AS_R: &str = "r.id AS r_id, r.name AS r_name, \
    r.description AS r_description, r.is_built_in AS r_is_built_in, \
    r.permission_codes AS r_permission_codes, r.created_at AS r_created_at, \
    r.updated_at AS r_updated_at";

/// A member row (with [`MEMBER_COLUMNS`]) as the API shows it at `now` (a pending invitation
/// past its expiry shows as expired).
pub fn member_from_row(row: &AnyRow, now: DateTime<Utc>) -> Result<models::Member, Error> {
    let invitation_status = match store::text(row, "invitation_status")?.as_str() {
        "accepted" => models::InvitationStatus::Accepted,
        _ => match store::optional_time(row, "invitation_expires_at")? {
            Some(expires_at) if expires_at > now => models::InvitationStatus::Pending,
            _ => models::InvitationStatus::Expired,
        },
    };
    Ok(models::Member {
        created_at: store::time(row, "created_at")?,
        date_joined: store::time(row, "date_joined")?,
        email: store::text(row, "email")?,
        first_name: store::text(row, "first_name")?,
        id: store::uuid(row, "id")?,
        invitation_status,
        is_active: store::flag(row, "is_active")?,
        last_login: store::optional_time(row, "last_login")?,
        last_name: store::text(row, "last_name")?,
        role_name: store::text(row, "role_name")?,
        user_role_id: store::uuid(row, "role_id")?,
    })
}

pub fn role_from_row(row: &AnyRow) -> Result<models::Role, Error> {
    role_from_prefixed_row(row, "")
}

/// A role row whose columns are [`ROLE_COLUMNS`] with `prefix` before each name.
pub fn role_from_prefixed_row(row: &AnyRow, prefix: &str) -> Result<models::Role, Error> {
    let column = |name: &str| format!("{prefix}{name}");
    let permissions = permissions::parse_stored(&store::text(row, &column("permission_codes"))?)?;
    Ok(models::Role {
        created_at: store::time(row, &column("created_at"))?,
        description: store::text(row, &column("description"))?,
        id: store::uuid(row, &column("id"))?,
        is_built_in: store::flag(row, &column("is_built_in"))?,
        name: store::text(row, &column("name"))?,
        permission_codes: permissions::codes_in_catalog_order(&permissions),
        updated_at: store::time(row, &column("updated_at"))?,
    })
}

/// A member of `business_id` as the API shows it.
pub async fn member_view<'e, E>(
    executor: E,
    business_id: &str,
    member_id: &str,
    now: DateTime<Utc>,
) -> Result<Option<models::Member>, Error>
where
    E: Executor<'e, Database = Any>,
{
    let sql = format!(
        "SELECT {MEMBER_COLUMNS} FROM members m JOIN roles r ON r.id = m.role_id \
         WHERE m.id = $1 AND m.business_id = $2"
    );
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(member_id)
        .bind(business_id)
        .fetch_optional(executor)
        .await
        .or_internal()?;
    row.as_ref()
        .map(|row| member_from_row(row, now))
        .transpose()
}

/// A role `business_id` can use (its own or a built-in one) as the API shows it.
pub async fn role_view<'e, E>(
    executor: E,
    business_id: &str,
    role_id: &str,
) -> Result<Option<models::Role>, Error>
where
    E: Executor<'e, Database = Any>,
{
    let sql = format!(
        "SELECT {ROLE_COLUMNS} FROM roles \
         WHERE id = $1 AND (business_id IS NULL OR business_id = $2)"
    );
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(role_id)
        .bind(business_id)
        .fetch_optional(executor)
        .await
        .or_internal()?;
    row.as_ref().map(role_from_row).transpose()
}
