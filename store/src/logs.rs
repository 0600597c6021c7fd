//! The rows of `logs` (see the datastore module of the same name in `kobo`).

use crate::paging::Cursor;
use chrono::{DateTime, Utc};

/// One call made with integration credentials, as the activity log keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Activity {
    pub business_id: String,
    pub endpoint: &'static str,
    pub http_status: u16,
    pub success: bool,
    pub message: String,
    pub ip_address: String,
    pub request_id: String,
}

/// One audit-log entry to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewAuditEntry {
    pub business_id: String,
    pub action: String,
    pub user_name: String,
    pub user_id: Option<String>,
    pub ip_address: String,
    pub response_code: i64,
    pub target_type: Option<&'static str>,
    pub target_id: Option<String>,
    pub request_id: String,
}

/// Which activity-log entries of a business [`list_activity`] reads.
#[derive(Clone, Debug, Default)]
pub struct ActivityFilter {
    pub business_id: String,
    /// `success` or `error`.
    pub status: Option<String>,
    pub method: Option<String>,
    pub endpoint: Option<String>,
    pub response_code: Option<i64>,
    /// Written at or after this stored time.
    pub from: Option<DateTime<Utc>>,
    /// Written before this stored time.
    pub until: Option<DateTime<Utc>>,
    /// Found, ignoring case, in the endpoint, the message or the address.
    pub search: Option<String>,
    /// After this one, newest first.
    pub cursor: Option<Cursor>,
    pub page_size: u64,
}

/// An activity-log entry as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActivityEntry {
    pub id: uuid::Uuid,
    pub endpoint: String,
    pub method: String,
    pub response_code: i64,
    /// `success` or `error`.
    pub status: String,
    pub message: String,
    pub ip_address: String,
    pub request_id: String,
    pub created_at: DateTime<Utc>,
}

/// Which audit-log entries of a business [`list_audit`] reads.
#[derive(Clone, Debug, Default)]
pub struct AuditFilter {
    pub business_id: String,
    /// Written at or after this stored time.
    pub from: Option<DateTime<Utc>>,
    /// Written before this stored time.
    pub until: Option<DateTime<Utc>>,
    pub action: Option<String>,
    pub user_id: Option<String>,
    /// Found, ignoring case, in the action, the user's name or the address.
    pub search: Option<String>,
    /// After this one, newest first.
    pub cursor: Option<Cursor>,
    pub page_size: u64,
}

/// An audit-log entry as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditEntry {
    pub id: uuid::Uuid,
    pub action: String,
    pub user_name: String,
    pub user_id: Option<String>,
    pub ip_address: String,
    pub response_code: i64,
    /// The UTC day of the action, `YYYY-MM-DD`.
    pub day: String,
    pub target_type: Option<String>,
    pub target_id: Option<String>,
    pub request_id: String,
    pub created_at: DateTime<Utc>,
}

crate::contract! {
    /// `logs`, in each store.
    pub trait Logs in logs, functions logs_functions {
        /// Appends `entries`, each as of its time, to the activity log in one statement.
        conn fn record_activities(entries: &[(DateTime<Utc>, &Activity)]) -> ();
        /// The business's activity-log entries, newest first, after the cursor: at most `page_size
        /// + 1` (the one more tells whether more follow).
        pool fn list_activity(filter: &ActivityFilter) -> Vec<ActivityEntry>;
        /// The business's audit-log entries, newest first, after the cursor: at most `page_size +
        /// 1` (the one more tells whether more follow).
        pool fn list_audit(filter: &AuditFilter) -> Vec<AuditEntry>;
    }
}
