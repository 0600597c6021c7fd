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
