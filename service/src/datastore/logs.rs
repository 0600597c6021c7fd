//! `activity_logs` (calls made with integration credentials) and `audit_logs` (the actions of
//! Dashboard members): both append-only, and listed newest first with keyset paging.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::Row;

use super::batch::{Batch, NewAudit, SqlBatch, Write};
use super::{Conn, FromAnyRow, StoreError};
use crate::kernel::paging::{self, Conditions, Cursor, Sql};
use crate::kernel::store::{self, Store};
pub use kobo_store::logs::{
    Activity, ActivityEntry, ActivityFilter, AuditEntry, AuditFilter, NewAuditEntry,
};

/// Appends `entries`, each as of its time, to the activity log in one statement.
pub async fn record_activities(
    conn: impl Into<Conn<'_>>,
    entries: &[(DateTime<Utc>, &Activity)],
) -> Result<(), StoreError> {
    let mut sql = String::from(
        "INSERT INTO activity_logs (id, business_id, endpoint, method, response_code, status, \
           message, ip_address, request_id, created_at) VALUES ",
    );
    for n in 0..entries.len() {
        let first = n * 10;
        let separator = if n == 0 { "" } else { ", " };
        let placeholders: Vec<String> = (first + 1..=first + 10).map(|p| format!("${p}")).collect();
        let _ = write!(sql, "{separator}({})", placeholders.join(", "));
    }
    // Audited: the statement is built from placeholders only; every value is bound.
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
    for (now, activity) in entries {
        query = query
            .bind(store::new_id())
            .bind(activity.business_id.as_str())
            .bind(activity.endpoint)
            .bind("POST")
            .bind(i64::from(activity.http_status))
            .bind(if activity.success { "success" } else { "error" })
            .bind(activity.message.as_str())
            .bind(activity.ip_address.as_str())
            .bind(activity.request_id.as_str())
            .bind(store::timestamp(*now));
    }
    conn.into().execute(query).await?;
    Ok(())
}

/// Writes `entry`, as of `now` (and its UTC day), as a statement of `batch`.
pub fn audit_into(batch: &mut Batch, now: DateTime<Utc>, entry: NewAuditEntry) {
    batch.push(Write::Audit(NewAudit {
        id: store::new_id(),
        entry,
        at: now,
    }));
}

/// [`Write::Audit`] as a statement of `sql`.
pub(super) fn render_audit(sql: &mut SqlBatch, audit: NewAudit) {
    let entry = audit.entry;
    sql.push(
        "INSERT INTO audit_logs (id, business_id, action, user_name, user_id, ip_address, \
           response_code, day, target_type, target_id, request_id, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
    )
    .bind(audit.id)
    .bind(entry.business_id)
    .bind(entry.action)
    .bind(entry.user_name)
    .bind(entry.user_id)
    .bind(entry.ip_address)
    .bind(entry.response_code)
    .bind(audit.at.format("%Y-%m-%d").to_string())
    .bind(entry.target_type)
    .bind(entry.target_id)
    .bind(entry.request_id)
    .bind(store::timestamp(audit.at));
}

/// Adds `created_at >= from` and `created_at < until` (stored times), those given.
pub(super) fn time_range(
    sql: &mut Sql,
    conditions: &mut Conditions,
    from: Option<String>,
    until: Option<String>,
) {
    if let Some(from) = from {
        conditions.add(format!("created_at >= {}", sql.arg(from)));
    }
    if let Some(until) = until {
        conditions.add(format!("created_at < {}", sql.arg(until)));
    }
}

impl FromAnyRow for ActivityEntry {
    fn from_any(row: &AnyRow) -> Result<ActivityEntry, StoreError> {
        Ok(ActivityEntry {
            id: store::uuid(row, "id")?,
            endpoint: store::text(row, "endpoint")?,
            method: store::text(row, "method")?,
            response_code: row.try_get("response_code")?,
            status: store::text(row, "status")?,
            message: store::text(row, "message")?,
            ip_address: store::text(row, "ip_address")?,
            request_id: store::text(row, "request_id")?,
            created_at: store::time(row, "created_at")?,
        })
    }
}

/// The business's activity-log entries, newest first, after the cursor: at most
/// `page_size + 1` (the one more tells whether more follow).
pub async fn list_activity(
    store: &Store,
    filter: &ActivityFilter,
) -> Result<Vec<ActivityEntry>, StoreError> {
    let mut sql = Sql::new(
        "SELECT id, endpoint, method, response_code, status, message, ip_address, request_id, \
           created_at FROM activity_logs",
    );
    let mut conditions = Conditions::default();
    conditions.add(format!(
        "business_id = {}",
        sql.arg(filter.business_id.as_str())
    ));
    if let Some(status) = &filter.status {
        conditions.add(format!("status = {}", sql.arg(status.as_str())));
    }
    if let Some(method) = &filter.method {
        conditions.add(format!("method = {}", sql.arg(method.as_str())));
    }
    if let Some(endpoint) = &filter.endpoint {
        conditions.add(format!("endpoint = {}", sql.arg(endpoint.as_str())));
    }
    if let Some(code) = filter.response_code {
        conditions.add(format!("response_code = {}", sql.arg(code)));
    }
    time_range(
        &mut sql,
        &mut conditions,
        filter.from.clone(),
        filter.until.clone(),
    );
    if let Some(search) = &filter.search {
        let pattern = sql.arg(paging::contains_pattern(search));
        conditions.add(format!(
            "(LOWER(endpoint) LIKE {pattern} ESCAPE '\\' OR LOWER(message) LIKE {pattern} \
             ESCAPE '\\' OR LOWER(ip_address) LIKE {pattern} ESCAPE '\\')"
        ));
    }
    let rows = keyset_rows(
        sql,
        conditions,
        filter.cursor.as_ref(),
        filter.page_size,
        store,
    )
    .await?;
    rows.iter().map(ActivityEntry::from_any).collect()
}

impl FromAnyRow for AuditEntry {
    fn from_any(row: &AnyRow) -> Result<AuditEntry, StoreError> {
        Ok(AuditEntry {
            id: store::uuid(row, "id")?,
            action: store::text(row, "action")?,
            user_name: store::text(row, "user_name")?,
            user_id: store::optional_text(row, "user_id")?,
            ip_address: store::text(row, "ip_address")?,
            response_code: row.try_get("response_code")?,
            day: store::text(row, "day")?,
            target_type: store::optional_text(row, "target_type")?,
            target_id: store::optional_text(row, "target_id")?,
            request_id: store::text(row, "request_id")?,
            created_at: store::time(row, "created_at")?,
        })
    }
}

/// The business's audit-log entries, newest first, after the cursor: at most
/// `page_size + 1` (the one more tells whether more follow).
pub async fn list_audit(
    store: &Store,
    filter: &AuditFilter,
) -> Result<Vec<AuditEntry>, StoreError> {
    let mut sql = Sql::new(
        "SELECT id, action, user_name, user_id, ip_address, response_code, day, target_type, \
           target_id, request_id, created_at FROM audit_logs",
    );
    let mut conditions = Conditions::default();
    conditions.add(format!(
        "business_id = {}",
        sql.arg(filter.business_id.as_str())
    ));
    time_range(
        &mut sql,
        &mut conditions,
        filter.from.clone(),
        filter.until.clone(),
    );
    if let Some(action) = &filter.action {
        conditions.add(format!("action = {}", sql.arg(action.as_str())));
    }
    if let Some(user_id) = &filter.user_id {
        conditions.add(format!("user_id = {}", sql.arg(user_id.as_str())));
    }
    if let Some(search) = &filter.search {
        let pattern = sql.arg(paging::contains_pattern(search));
        conditions.add(format!(
            "(LOWER(action) LIKE {pattern} ESCAPE '\\' OR LOWER(user_name) LIKE {pattern} \
             ESCAPE '\\' OR LOWER(ip_address) LIKE {pattern} ESCAPE '\\')"
        ));
    }
    let rows = keyset_rows(
        sql,
        conditions,
        filter.cursor.as_ref(),
        filter.page_size,
        store,
    )
    .await?;
    rows.iter().map(AuditEntry::from_any).collect()
}

/// Runs a log query as one keyset page, newest first: the rows after `cursor`, at most
/// `page_size + 1`.
async fn keyset_rows(
    mut sql: Sql,
    mut conditions: Conditions,
    cursor: Option<&Cursor>,
    page_size: u64,
    store: &Store,
) -> Result<Vec<AnyRow>, StoreError> {
    if let Some(cursor) = cursor {
        let at = sql.arg(cursor.created_at.as_str());
        let id = sql.arg(cursor.id.as_str());
        conditions.add(format!(
            "(created_at < {at} OR (created_at = {at} AND id < {id}))"
        ));
    }
    sql.push(&conditions.where_clause());
    sql.push(" ORDER BY created_at DESC, id DESC")
        .limit(page_size + 1);
    sql.fetch_all(store.pool()).await
}
