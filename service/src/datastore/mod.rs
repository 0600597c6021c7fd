//! The datastore: every SQL statement of the bank, one module per resource (a table, or a few
//! tables that live and die together), as omicron's datastore is cut. The domain calls these
//! functions and reads their typed rows; it never builds SQL, binds a parameter or reads a
//! column by name. Each function says what it does in the domain's words and runs one
//! statement (or one round trip) on a transaction ([`Tx`]) or on the pool ([`Conn::Pool`]).
//!
//! The rules a module keeps:
//! - a statement on a table lives in that table's module; a join lives in the module of the
//!   rows it returns;
//! - rows are structs with named, typed fields, decoded here and nowhere else; flags are
//!   `bool`, times `DateTime<Utc>`, amounts `i64` kobo;
//! - a function returns [`StoreError`], classified where it arises; refusals (not found, not
//!   allowed) are the domain's to decide from what the function returns (`Option`, a count of
//!   rows changed, `bool`).
//!
//! Today both stores run the same SQL through `sqlx::Any` (`kernel::store`); the datastore is
//! the seam behind which each store gets its own types and queries (issue 30).

pub use crate::kernel::store::{Conn, StoreError, Tx};
pub mod approval_policies;
pub mod businesses;
pub mod events;
pub mod idempotency_keys;
pub mod invitations;
pub mod logs;
pub mod members;
pub mod notifications;
pub mod otps;
pub mod roles;
pub mod sessions;
pub mod throttles;
pub mod webhook_endpoints;
