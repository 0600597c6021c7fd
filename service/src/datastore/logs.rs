//! `activity_logs` (calls made with integration credentials) and `audit_logs` (the actions of
//! Dashboard members): both append-only, and listed newest first with keyset paging.

use super::batch::{Batch, NewActivity, NewAudit, Write};
use super::{dispatch, Conn, Store, StoreError};
use crate::kernel::store;
use chrono::{DateTime, Utc};
pub use kobo_store::logs::{
    Activity, ActivityEntry, ActivityFilter, AuditEntry, AuditFilter, NewAuditEntry,
};

/// Appends `entries`, each as of its time, to the activity log in one statement.
pub async fn record_activities(
    conn: impl Into<Conn<'_>>,
    entries: &[(DateTime<Utc>, &Activity)],
) -> Result<(), StoreError> {
    dispatch!(conn.into().on(), logs::record_activities(entries))
}

/// The business's activity-log entries, newest first, after the cursor: at most
/// `page_size + 1` (the one more tells whether more follow).
pub async fn list_activity(
    store: &Store,
    filter: &ActivityFilter,
) -> Result<Vec<ActivityEntry>, StoreError> {
    dispatch!(store.on(), logs::list_activity(filter))
}

/// The business's audit-log entries, newest first, after the cursor: at most
/// `page_size + 1` (the one more tells whether more follow).
pub async fn list_audit(
    store: &Store,
    filter: &AuditFilter,
) -> Result<Vec<AuditEntry>, StoreError> {
    dispatch!(store.on(), logs::list_audit(filter))
}

/// Writes `activity`, as of `at`, as a statement of `batch`.
pub fn activity_into(batch: &mut Batch, at: DateTime<Utc>, activity: Activity) {
    batch.push(Write::Activity(NewActivity {
        id: store::new_id(),
        activity,
        at,
    }));
}

/// Writes `entry`, as of `now` (and its UTC day), as a statement of `batch`.
pub fn audit_into(batch: &mut Batch, now: DateTime<Utc>, entry: NewAuditEntry) {
    batch.push(Write::Audit(NewAudit {
        id: store::new_id(),
        entry,
        at: now,
    }));
}
