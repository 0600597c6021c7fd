//! `activity_logs` (calls made with integration credentials) and `audit_logs` (the actions of
//! Dashboard members): both append-only, and listed newest first with keyset paging.

use super::contract::*;

use chrono::{DateTime, Utc};
pub use kobo_store::logs::{
    Activity, ActivityEntry, ActivityFilter, AuditEntry, AuditFilter, NewAuditEntry,
};

pub use kobo_store::batch::activity_into;

pub use kobo_store::batch::audit_into;

kobo_store::logs_functions!(dispatch);
