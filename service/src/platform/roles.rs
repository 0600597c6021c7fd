//! Roles: the permission catalog, the business's roles (built-in and custom), and the
//! creation and editing of custom roles. Built-in roles (`business_id IS NULL`) belong to every
//! business and can't be edited; a member grants only permissions they hold.

use std::collections::BTreeSet;

use generated_server::models::{self, AuditAction};
use generated_server::{Permission, ResponseCode};

use crate::datastore::roles::{self as stored, Definition};
use crate::datastore::StoreError;
use crate::error::{Error, OrInternal};
use crate::kernel::store::{self, Tx};
use crate::kernel::text;
use crate::platform::caller::Caller;
use crate::platform::idempotency::Keyed;
use crate::platform::logs::{self, AuditEntry};
use crate::platform::permissions::{self};
use crate::platform::principal::member_of;
use crate::platform::team_views::{role_from, role_view};

use crate::platform::context::Platform;
use crate::platform::team::{check_grantable, invalid, invalid_state, role_not_found};

/// `fetch_permissions`: the catalog, by code.
pub fn fetch_permissions() -> Result<Vec<models::Permission>, Error> {
    let mut catalog: Vec<Permission> = Permission::ALL.to_vec();
    catalog.sort_by_key(|permission| permission.as_str());
    catalog
        .into_iter()
        .map(|permission| {
            Ok(models::Permission {
                code: permission.as_str().parse().or_internal()?,
                description: permission.description().to_owned(),
                id: permissions::permission_id(permission),
                name: permission.name().to_owned(),
            })
        })
        .collect()
}

pub async fn fetch_roles(
    platform: &Platform,
    caller: &Caller,
    _body: models::EmptyObject,
) -> Result<Vec<models::Role>, Error> {
    let store = &platform.store;
    let rows = stored::list_of_business(store, &caller.principal.business_id).await?;
    let mut roles = rows
        .into_iter()
        .map(role_from)
        .collect::<Result<Vec<_>, _>>()?;
    // Built-in roles in their fixed order (Owner first), then custom ones by name.
    let built_in_rank = |role: &models::Role| {
        permissions::BUILT_IN_ROLES
            .iter()
            .position(|built_in| built_in.id == role.id.to_string())
            .unwrap_or(usize::MAX)
    };
    roles.sort_by_key(|role| (built_in_rank(role), role.name.to_lowercase()));
    Ok(roles)
}

/// A role name as stored, and the key it is compared by (`text::name_key`: case, compatibility
/// forms and look-alikes folded); `01` when blank or holding a character names may not.
fn role_name(name: &str) -> Result<(String, String), Error> {
    let name = name.trim();
    if name.is_empty() {
        return Err(invalid("`name`: must not be blank"));
    }
    text::check_name("name", name)?;
    Ok((name.to_owned(), text::name_key(name)))
}

async fn check_role_name_free(
    tx: &mut Tx,
    business_id: &str,
    name: &str,
    name_key: &str,
    except_role_id: Option<&str>,
) -> Result<(), Error> {
    let holder = stored::holder_of_name(tx, business_id, name_key).await?;
    match holder {
        Some(id) if Some(id.as_str()) != except_role_id => Err(duplicate_role(name)),
        _ => Ok(()),
    }
}

fn duplicate_role(name: &str) -> Error {
    Error::new(ResponseCode::Duplicate).with_message(format!("A role named {name} already exists"))
}

pub async fn create_role(
    platform: &Platform,
    caller: &Caller,
    body: models::CreateRoleRequest,
) -> Result<models::Role, Error> {
    let Platform { store, clock, .. } = platform;
    let now = clock.now();
    let business_id = caller.principal.business_id.as_str();
    let (name, name_key) = role_name(&body.name)?;
    let permissions: BTreeSet<Permission> = permissions::parse_requested(
        "permission_codes",
        body.permission_codes.iter().map(|code| code.as_str()),
    )?;
    check_grantable(member_of(&caller.principal)?, &permissions)?;
    let description = body
        .description
        .as_ref()
        .map(|description| description.trim().to_owned())
        .unwrap_or_default();

    Keyed::new(store, clock, caller, &body)
        .run_in_transaction(async |tx, _| {
            check_role_name_free(tx, business_id, &name, &name_key, None).await?;
            let role_id = store::new_id();
            let codes = permissions::to_stored(&permissions);
            let role = Definition {
                name: &name,
                name_key: &name_key,
                description: &description,
                permission_codes: &codes,
            };
            stored::insert_custom(tx, &role_id, business_id, &role, now)
                .await
                .map_err(|error| role_write_error(error, &name))?;
            let entry = AuditEntry::by(caller, AuditAction::CreateRole).target("role", &role_id);
            logs::audit(tx, now, entry).await?;
            role_view(tx, business_id, &role_id)
                .await?
                .ok_or_else(|| Error::internal("the new role vanished"))
        })
        .await
}

/// A failed role insert or update: a taken name (`26`), or an internal error.
#[track_caller]
fn role_write_error(error: StoreError, name: &str) -> Error {
    if error.is_conflict() {
        duplicate_role(name)
    } else {
        Error::from(error)
    }
}

pub async fn update_role(
    platform: &Platform,
    caller: &Caller,
    body: models::UpdateRoleRequest,
) -> Result<models::Role, Error> {
    let Platform { store, clock, .. } = platform;
    let now = clock.now();
    if body.name.is_none() && body.description.is_none() && body.permission_codes.is_none() {
        return Err(invalid(
            "`name`: send name, description or permission_codes",
        ));
    }
    let business_id = caller.principal.business_id.as_str();
    let role_id = body.role_id.to_string();
    let name = body.name.as_ref().map(|name| role_name(name)).transpose()?;
    let permissions = body
        .permission_codes
        .as_ref()
        .map(|codes| {
            permissions::parse_requested("permission_codes", codes.iter().map(|c| c.as_str()))
        })
        .transpose()?;

    let actor = member_of(&caller.principal)?;
    if let Some(permissions) = &permissions {
        check_grantable(actor, permissions)?;
    }

    let mut tx = store.begin().await?;
    let current = role_view(&mut tx, business_id, &role_id)
        .await?
        .ok_or_else(|| role_not_found(&role_id))?;
    if current.is_built_in {
        return Err(invalid_state("Built-in roles cannot be edited"));
    }
    if actor.role_id == role_id {
        return Err(Error::new(ResponseCode::PermissionDenied)
            .with_message("You cannot edit the role you hold: ask another member"));
    }
    if let Some((name, name_key)) = &name {
        check_role_name_free(&mut tx, business_id, name, name_key, Some(&role_id)).await?;
    }
    let (name, name_key) =
        name.unwrap_or_else(|| (current.name.clone(), text::name_key(&current.name)));
    let description = body
        .description
        .as_ref()
        .map(|description| description.trim().to_owned())
        .unwrap_or(current.description);
    let codes = match &permissions {
        Some(permissions) => permissions::to_stored(permissions),
        None => serde_json::to_string(&current.permission_codes).or_internal()?,
    };
    let role = Definition {
        name: &name,
        name_key: &name_key,
        description: &description,
        permission_codes: &codes,
    };
    stored::update_custom(&mut tx, &role_id, business_id, &role, now)
        .await
        .map_err(|error| role_write_error(error, &name))?;
    logs::audit(
        &mut tx,
        now,
        AuditEntry::by(caller, AuditAction::UpdateRole).target("role", &role_id),
    )
    .await?;
    let role = role_view(&mut tx, business_id, &role_id)
        .await?
        .ok_or_else(|| role_not_found(&role_id))?;
    tx.commit().await.or_internal()?;
    Ok(role)
}
