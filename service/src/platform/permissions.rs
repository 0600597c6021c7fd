//! The permission catalog and the built-in roles.
//!
//! The catalog is the spec's (`x-permissions`, generated into [`Permission`]). Role permission
//! lists are shown in the catalog's order, as the spec's examples do (`self.manage` first);
//! `fetch_permissions` lists the catalog sorted by code.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use anyhow::Context;
use generated_server::{Permission, ResponseCode};

use crate::datastore::roles::{self, Definition};
use crate::error::Error;
use crate::kernel::store::Store;
use crate::kernel::text;

/// The id of a permission: UUID v5 of `kobo:permission:<code>` in the URL namespace, so it is
/// the same on every server and in the spec's examples.
pub fn permission_id(permission: Permission) -> uuid::Uuid {
    uuid::Uuid::new_v5(
        &uuid::Uuid::NAMESPACE_URL,
        format!("kobo:permission:{}", permission.as_str()).as_bytes(),
    )
}

/// The codes of `permissions` in the catalog's order.
pub fn codes_in_catalog_order(permissions: &BTreeSet<Permission>) -> Vec<String> {
    catalog_order()
        .iter()
        .filter(|permission| permissions.contains(permission))
        .map(|permission| permission.as_str().to_owned())
        .collect()
}

/// Every permission in the order of `x-permissions` in the spec.
pub fn catalog_order() -> &'static [Permission] {
    static ORDER: OnceLock<Vec<Permission>> = OnceLock::new();
    ORDER.get_or_init(|| {
        let spec: serde_json::Value =
            serde_json::from_str(generated_server::OPENAPI_JSON).unwrap_or_default();
        let mut order: Vec<Permission> = spec["x-permissions"]
            .as_array()
            .map(|entries| {
                entries
                    .iter()
                    .filter_map(|entry| entry["code"].as_str())
                    .filter_map(Permission::from_code)
                    .collect()
            })
            .unwrap_or_default();
        // Anything the spec text did not list (it always does) goes last, sorted.
        for permission in Permission::ALL {
            if !order.contains(permission) {
                order.push(*permission);
            }
        }
        order
    })
}

/// The permissions of `codes` as stored (a JSON array), plus the implicit `self.manage`.
pub fn parse_stored(codes_json: &str) -> Result<BTreeSet<Permission>, Error> {
    let codes: Vec<String> = serde_json::from_str(codes_json).map_err(|error| {
        Error::internal(format!("bad permission_codes {codes_json:?}: {error}"))
    })?;
    let mut permissions: BTreeSet<Permission> = codes
        .iter()
        .filter_map(|code| Permission::from_code(code))
        .collect();
    permissions.insert(Permission::SelfManage);
    Ok(permissions)
}

/// The stored form of `permissions`: a JSON array of codes in catalog order.
pub fn to_stored(permissions: &BTreeSet<Permission>) -> String {
    serde_json::to_string(&codes_in_catalog_order(permissions)).expect("strings serialize")
}

/// The permissions a request names, plus `self.manage`; `01` names the first unknown code as
/// `field[i]`.
pub fn parse_requested<'a>(
    field: &str,
    codes: impl IntoIterator<Item = &'a str>,
) -> Result<BTreeSet<Permission>, Error> {
    let mut permissions = BTreeSet::from([Permission::SelfManage]);
    for (index, code) in codes.into_iter().enumerate() {
        let permission = Permission::from_code(code).ok_or_else(|| {
            Error::new(ResponseCode::InvalidRequest).with_message(format!(
                "`{field}[{index}]`: unknown permission code \"{code}\""
            ))
        })?;
        permissions.insert(permission);
    }
    Ok(permissions)
}

/// A role every business has and nobody can edit.
#[derive(Clone, Copy, Debug)]
pub struct BuiltInRole {
    pub id: &'static str,
    pub name: &'static str,
    pub description: &'static str,
}

impl BuiltInRole {
    pub fn permissions(&self) -> BTreeSet<Permission> {
        let all = Permission::ALL.iter().copied();
        let mut permissions: BTreeSet<Permission> = match self.id {
            OWNER_ROLE_ID | ADMIN_ROLE_ID => all.collect(),
            MAKER_ROLE_ID => [
                Permission::AccountView,
                Permission::TransactionView,
                Permission::TransferInitiate,
                Permission::TransferView,
            ]
            .into(),
            CHECKER_ROLE_ID => [
                Permission::AccountView,
                Permission::TransactionView,
                Permission::TransferView,
                Permission::TransferApprove,
            ]
            .into(),
            _ => all.filter(|p| p.as_str().ends_with(".view")).collect(),
        };
        permissions.insert(Permission::SelfManage);
        permissions
    }
}

pub const OWNER_ROLE_ID: &str = "4f1b6c2e-0a1d-4e5f-8b9c-000000000001";
pub const ADMIN_ROLE_ID: &str = "4f1b6c2e-0a1d-4e5f-8b9c-000000000002";
pub const MAKER_ROLE_ID: &str = "4f1b6c2e-0a1d-4e5f-8b9c-000000000003";
pub const CHECKER_ROLE_ID: &str = "4f1b6c2e-0a1d-4e5f-8b9c-000000000004";
pub const VIEWER_ROLE_ID: &str = "4f1b6c2e-0a1d-4e5f-8b9c-000000000005";

/// The built-in roles, in the order `fetch_roles` lists them (the spec's `fetch_roles`
/// description gives their permissions).
pub const BUILT_IN_ROLES: [BuiltInRole; 5] = [
    BuiltInRole {
        id: OWNER_ROLE_ID,
        name: "Owner",
        description: "Every permission, including granting and removing the Owner role.",
    },
    BuiltInRole {
        id: ADMIN_ROLE_ID,
        name: "Admin",
        description: "Every permission; cannot grant or remove the Owner role.",
    },
    BuiltInRole {
        id: MAKER_ROLE_ID,
        name: "Maker",
        description: "Initiates transfers and reads accounts and transactions.",
    },
    BuiltInRole {
        id: CHECKER_ROLE_ID,
        name: "Checker",
        description: "Reviews and approves transfers held by the approval policy.",
    },
    BuiltInRole {
        id: VIEWER_ROLE_ID,
        name: "Viewer",
        description: "Reads everything; changes nothing.",
    },
];

/// When the built-in roles came to be: their `created_at` and `updated_at` on every server.
pub const BUILT_IN_ROLES_SINCE: &str = "2026-10-15T10:00:00.000000Z";

/// Upserts the built-in roles (fixed ids, names and permissions). Idempotent; run at start.
pub async fn seed_built_in_roles(store: &Store) -> anyhow::Result<()> {
    let mut tx = store.begin().await?;
    for role in BUILT_IN_ROLES {
        let name_key = text::name_key(role.name);
        let codes = to_stored(&role.permissions());
        let definition = Definition {
            name: role.name,
            name_key: &name_key,
            description: role.description,
            permission_codes: &codes,
        };
        roles::upsert_built_in(&mut tx, role.id, &definition, BUILT_IN_ROLES_SINCE)
            .await
            .with_context(|| format!("cannot seed the built-in role {}", role.name))?;
    }
    tx.commit().await?;
    Ok(())
}

/// Recomputes the comparison key of custom roles whose stored key predates
/// `text::name_key` (run at start, after the seeding; a no-op once every key is current). A
/// role whose new key is already another role's keeps its old key, and is named in the log.
pub async fn rekey_role_names(store: &Store) -> anyhow::Result<()> {
    let custom = roles::custom_names(store)
        .await
        .context("cannot read the custom roles")?;
    for roles::RoleName {
        id,
        name,
        name_key: stored_key,
    } in custom
    {
        let key = text::name_key(&name);
        if key == stored_key {
            continue;
        }
        let updated = roles::set_name_key(store, &id, &key).await;
        if let Err(error) = updated {
            tracing::warn!(role_id = %id, %error, "a role's name looks like another's; its old key stays");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_ids_are_the_specs() {
        let id = |p| permission_id(p).to_string();
        assert_eq!(
            id(Permission::AccountView),
            "e347ccc4-e130-5e92-9699-248fbf891241"
        );
        assert_eq!(
            id(Permission::TransferInitiate),
            "71786161-599e-5e9d-8d01-c24e5e543e99"
        );
    }

    #[test]
    fn catalog_order_is_the_specs_and_complete() {
        let order = catalog_order();
        assert_eq!(order.len(), Permission::ALL.len());
        assert_eq!(order[0], Permission::SelfManage);
        assert_eq!(order[1], Permission::AccountView);
        assert_eq!(order[2], Permission::AccountCreate);
    }

    #[test]
    fn built_in_roles_have_the_specs_permissions() {
        let codes = |role: &BuiltInRole| codes_in_catalog_order(&role.permissions()).join(" ");
        let [owner, admin, maker, checker, viewer] = BUILT_IN_ROLES;
        assert_eq!(owner.permissions().len(), Permission::ALL.len());
        assert_eq!(admin.permissions().len(), Permission::ALL.len());
        assert_eq!(
            codes(&maker),
            "self.manage account.view transaction.view transfer.initiate transfer.view"
        );
        assert_eq!(
            codes(&checker),
            "self.manage account.view transaction.view transfer.view transfer.approve"
        );
        assert_eq!(
            codes(&viewer),
            "self.manage account.view transaction.view transfer.view approval_policy.view \
             member.view role.view activity_log.view audit_log.view webhook.view"
        );
    }

    #[test]
    fn requested_codes_name_the_unknown_one() {
        let error = parse_requested("permission_codes", ["account.view", "logs.read"]).unwrap_err();
        assert_eq!(
            error.message(),
            "`permission_codes[1]`: unknown permission code \"logs.read\""
        );
        let ok = parse_requested("permission_codes", ["account.view"]).unwrap();
        assert_eq!(codes_in_catalog_order(&ok), ["self.manage", "account.view"]);
    }
}
