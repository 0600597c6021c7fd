//! How the API shows members and roles: the row mappings every operation that answers with a
//! member or a role shares (team operations, login, get_profile).

use chrono::{DateTime, Utc};
use generated_server::models;

use crate::datastore::{members, roles, Conn};
use crate::error::{Error, OrInternal};
use crate::kernel::config::Environment;
use crate::platform::{business, permissions};

/// A member as the API shows them at `now` (a pending invitation past its expiry shows as
/// expired).
pub fn member_from(member: members::Member, now: DateTime<Utc>) -> models::Member {
    let invitation_status = match member.invitation_status.as_str() {
        "accepted" => models::InvitationStatus::Accepted,
        _ => match member.invitation_expires_at {
            Some(expires_at) if expires_at > now => models::InvitationStatus::Pending,
            _ => models::InvitationStatus::Expired,
        },
    };
    models::Member {
        created_at: member.created_at,
        date_joined: member.date_joined,
        email: member.email,
        first_name: member.first_name,
        id: member.id,
        invitation_status,
        is_active: member.is_active,
        last_login: member.last_login,
        last_name: member.last_name,
        role_name: member.role_name,
        user_role_id: member.role_id,
    }
}

/// A member's profile as `get_profile` answers it, at `now` (for an invitation's status).
/// `credentials_usable`: whether the business's integration credentials work (their issuer
/// still may manage them).
pub fn profile_from(
    profile: members::Profile,
    credentials_usable: bool,
    now: DateTime<Utc>,
) -> Result<models::Profile, Error> {
    let stored = profile.business;
    let environment = match business::environment_of_client_id(&stored.client_id) {
        Environment::Sandbox => models::BusinessEnvironment::Sandbox,
        Environment::Production => models::BusinessEnvironment::Production,
    };
    let status = match stored.status.as_str() {
        "active" => models::BusinessStatus::Active,
        _ => models::BusinessStatus::Inactive,
    };
    Ok(models::Profile {
        business: models::Business {
            created_at: stored.created_at,
            credentials_usable,
            environment,
            id: stored.id.parse().or_internal()?,
            name: stored.name,
            status,
        },
        member: member_from(profile.member, now),
        role: role_from(profile.role)?,
    })
}

/// A role as the API shows it: its permissions in the catalog's order.
pub fn role_from(role: roles::Role) -> Result<models::Role, Error> {
    let permissions = permissions::parse_stored(&role.permission_codes)?;
    Ok(models::Role {
        created_at: role.created_at,
        description: role.description,
        id: role.id,
        is_built_in: role.is_built_in,
        name: role.name,
        permission_codes: permissions::codes_in_catalog_order(&permissions),
        updated_at: role.updated_at,
    })
}

/// A member of `business_id` as the API shows it.
pub async fn member_view(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
    member_id: &str,
    now: DateTime<Utc>,
) -> Result<Option<models::Member>, Error> {
    let member = members::find(conn, business_id, member_id).await?;
    Ok(member.map(|member| member_from(member, now)))
}

/// A role `business_id` can use (its own or a built-in one) as the API shows it.
pub async fn role_view(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
    role_id: &str,
) -> Result<Option<models::Role>, Error> {
    roles::find(conn, business_id, role_id)
        .await?
        .map(role_from)
        .transpose()
}
