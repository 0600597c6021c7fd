//! `roles`: the built-in roles (`business_id IS NULL`, every business's) and each business's
//! custom ones, with their permission codes (stored as a JSON array) and the key their names
//! are compared by.

use super::{dispatch, Conn, Store, StoreError, Tx};
use chrono::{DateTime, Utc};
pub use kobo_store::roles::{Definition, Grant, Role, RoleName};

/// The roles the business can use (its own and the built-in ones), built-in first, then by
/// name.
pub async fn list_of_business(store: &Store, business_id: &str) -> Result<Vec<Role>, StoreError> {
    dispatch!(store.on(), roles::list_of_business(business_id))
}

/// The role `role_id` if the business can use it (its own or a built-in one).
pub async fn find(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
    role_id: &str,
) -> Result<Option<Role>, StoreError> {
    dispatch!(conn.into().on(), roles::find(business_id, role_id))
}

/// The name and permissions of the role `role_id`, if the business can use it.
pub async fn find_grant(
    tx: &mut Tx,
    business_id: &str,
    role_id: &str,
) -> Result<Option<Grant>, StoreError> {
    dispatch!(tx.on(), roles::find_grant(business_id, role_id))
}

/// The stored permission codes (a JSON array) of the role `role_id` (it exists).
pub async fn permission_codes_of(tx: &mut Tx, role_id: &str) -> Result<String, StoreError> {
    dispatch!(tx.on(), roles::permission_codes_of(role_id))
}

/// The id of the role the business can use whose name compares as `name_key`, if any.
pub async fn holder_of_name(
    tx: &mut Tx,
    business_id: &str,
    name_key: &str,
) -> Result<Option<String>, StoreError> {
    dispatch!(tx.on(), roles::holder_of_name(business_id, name_key))
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
    dispatch!(tx.on(), roles::insert_custom(id, business_id, role, now))
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
    tx.touch_auth();
    dispatch!(tx.on(), roles::update_custom(id, business_id, role, now))
}

/// Writes or rewrites the built-in role `id` (no business), dated `since` when new.
pub async fn upsert_built_in(
    tx: &mut Tx,
    id: &str,
    role: &Definition<'_>,
    since: &str,
) -> Result<(), StoreError> {
    tx.touch_auth();
    dispatch!(tx.on(), roles::upsert_built_in(id, role, since))
}

/// The names of every custom role, of every business.
pub async fn custom_names(store: &Store) -> Result<Vec<RoleName>, StoreError> {
    dispatch!(store.on(), roles::custom_names())
}

/// Sets the comparison key of the role `id`, on the pool ([`StoreError::Conflict`] when it is
/// another role's).
pub async fn set_name_key(store: &Store, id: &str, name_key: &str) -> Result<(), StoreError> {
    dispatch!(store.on(), roles::set_name_key(id, name_key))
}
