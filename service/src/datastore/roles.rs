//! `roles`: the built-in roles (`business_id IS NULL`, every business's) and each business's
//! custom ones, with their permission codes (stored as a JSON array) and the key their names
//! are compared by.

use super::contract::*;

use chrono::{DateTime, Utc};
pub use kobo_store::roles::{Definition, Grant, Role, RoleName};

kobo_store::roles_functions!(dispatch);
