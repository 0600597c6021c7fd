//! The rows of `roles` (see the datastore module of the same name in `kobo`).

use chrono::{DateTime, Utc};

/// A role as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Role {
    pub id: uuid::Uuid,
    pub name: String,
    pub description: String,
    pub is_built_in: bool,
    /// The stored permission codes, a JSON array.
    pub permission_codes: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// What granting a role hands out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    pub id: String,
    pub name: String,
    /// The stored permission codes, a JSON array.
    pub permission_codes: String,
}

/// A role's name, description and permissions as written.
#[derive(Clone, Copy, Debug)]
pub struct Definition<'a> {
    pub name: &'a str,
    pub name_key: &'a str,
    pub description: &'a str,
    /// The stored permission codes, a JSON array.
    pub permission_codes: &'a str,
}

/// A custom role's name and the key it is compared by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoleName {
    pub id: String,
    pub name: String,
    pub name_key: String,
}

crate::contract! {
    /// `roles`, in each store.
    pub trait Roles in roles, functions roles_functions {
        /// The roles the business can use (its own and the built-in ones), built-in first, then by
        /// name.
        pool fn list_of_business(business_id: &str) -> Vec<Role>;
        /// The role `role_id` if the business can use it (its own or a built-in one).
        conn fn find(business_id: &str, role_id: &str) -> Option<Role>;
        /// The name and permissions of the role `role_id`, if the business can use it.
        tx fn find_grant(business_id: &str, role_id: &str) -> Option<Grant>;
        /// The stored permission codes (a JSON array) of the role `role_id` (it exists).
        tx fn permission_codes_of(role_id: &str) -> String;
        /// The id of the role the business can use whose name compares as `name_key`, if any.
        tx fn holder_of_name(business_id: &str, name_key: &str) -> Option<String>;
        /// Writes the business's custom role `id` at `now` ([`StoreError::Conflict`] when its name
        /// is taken).
        tx fn insert_custom(
            id: &str,
            business_id: &str,
            role: &Definition<'_>,
            now: DateTime<Utc>,
        ) -> ();
        /// Rewrites the business's custom role `id` at `now` ([`StoreError::Conflict`] when its
        /// name is taken).
        auth_tx fn update_custom(
            id: &str,
            business_id: &str,
            role: &Definition<'_>,
            now: DateTime<Utc>,
        ) -> ();
        /// Writes or rewrites the built-in role `id` (no business), dated `since` when new.
        auth_tx fn upsert_built_in(id: &str, role: &Definition<'_>, since: &str) -> ();
        /// The names of every custom role, of every business.
        pool fn custom_names() -> Vec<RoleName>;
        /// Sets the comparison key of the role `id`, on the pool ([`StoreError::Conflict`] when it
        /// is another role's).
        pool fn set_name_key(id: &str, name_key: &str) -> ();
    }
}
