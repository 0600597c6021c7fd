//! `activity_logs` (calls made with integration credentials) and `audit_logs` (the actions of
//! Dashboard members): both append-only, and listed newest first with keyset paging.

use chrono::{DateTime, Utc};

use crate::{contains_pattern, first_rows, json_string, new_id, on, timestamp, uuid};
use crate::{Conn, Store, StoreError, Tx, NO_TIME_BOUND};
use kobo_store::batch::{NewActivity, NewAudit};
pub use kobo_store::logs::{
    Activity, ActivityEntry, ActivityFilter, AuditEntry, AuditFilter, NewAuditEntry,
};

/// [`Write::Activity`], run in `tx` ([`crate::batch::run`]).
pub(crate) async fn write_activity(tx: &mut Tx, new: NewActivity) -> Result<(), StoreError> {
    insert_activities(&mut *tx, &[(new.id, new.at, &new.activity)]).await
}

/// Inserts `entries` (each with its id and time) into the activity log in one statement.
async fn insert_activities(
    conn: impl Into<Conn<'_>>,
    entries: &[(String, DateTime<Utc>, &Activity)],
) -> Result<(), StoreError> {
    if entries.is_empty() {
        return Ok(());
    }
    let mut rows = String::from("[");
    for (index, (id, now, activity)) in entries.iter().enumerate() {
        if index > 0 {
            rows.push(',');
        }
        rows.push('[');
        for text in [
            id.as_str(),
            activity.business_id.as_str(),
            activity.endpoint,
            "POST",
        ] {
            json_string(&mut rows, text);
            rows.push(',');
        }
        rows.push_str(&activity.http_status.to_string());
        for text in [
            if activity.success { "success" } else { "error" },
            activity.message.as_str(),
            activity.ip_address.as_str(),
            activity.request_id.as_str(),
            timestamp(*now).as_str(),
        ] {
            rows.push(',');
            json_string(&mut rows, text);
        }
        rows.push(']');
    }
    rows.push(']');
    let query = sqlx::query!(
        "INSERT INTO activity_logs (id, business_id, endpoint, method, response_code, status, \
           message, ip_address, request_id, created_at) \
         SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, \
           value ->> 6, value ->> 7, value ->> 8, value ->> 9 \
         FROM json_each(?1) ORDER BY key",
        rows
    );
    on!(conn, query, execute)?;
    Ok(())
}

pub use kobo_store::batch::audit_into;

/// [`Write::Audit`], run in `tx` ([`crate::batch::run`]).
pub(crate) async fn write_audit(tx: &mut Tx, audit: NewAudit) -> Result<(), StoreError> {
    let entry = audit.entry;
    let day = audit.at.format("%Y-%m-%d").to_string();
    let at = timestamp(audit.at);
    sqlx::query!(
        "INSERT INTO audit_logs (id, business_id, action, user_name, user_id, ip_address, \
           response_code, day, target_type, target_id, request_id, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        audit.id,
        entry.business_id,
        entry.action,
        entry.user_name,
        entry.user_id,
        entry.ip_address,
        entry.response_code,
        day,
        entry.target_type,
        entry.target_id,
        entry.request_id,
        at
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// An activity-log row as read, its id still text.
struct ActivityRecord {
    id: String,
    endpoint: String,
    method: String,
    response_code: i64,
    status: String,
    message: String,
    ip_address: String,
    request_id: String,
    created_at: DateTime<Utc>,
}

/// An audit-log row as read, its id still text.
struct AuditRecord {
    id: String,
    action: String,
    user_name: String,
    user_id: Option<String>,
    ip_address: String,
    response_code: i64,
    day: String,
    target_type: Option<String>,
    target_id: Option<String>,
    request_id: String,
    created_at: DateTime<Utc>,
}

kobo_store::logs_functions!(backend crate::Backend);

impl kobo_store::logs::Logs for crate::Backend {
    async fn record_activities(
        conn: Self::Conn<'_>,
        entries: &[(DateTime<Utc>, &Activity)],
    ) -> Result<(), StoreError> {
        let rows: Vec<_> = entries
            .iter()
            .map(|(at, activity)| (new_id(), *at, *activity))
            .collect();
        insert_activities(conn, &rows).await
    }

    async fn list_activity(
        store: &Store,
        filter: &ActivityFilter,
    ) -> Result<Vec<ActivityEntry>, StoreError> {
        let from = filter.from.map(timestamp);
        let until = filter.until.map(timestamp);
        let search = filter.search.as_deref().map(contains_pattern);
        let cursor_at = filter.cursor.as_ref().map(|c| timestamp(c.created_at));
        let cursor_id = filter.cursor.as_ref().map(|c| c.id.to_string());
        let query = sqlx::query_as!(
            ActivityRecord,
            r#"SELECT id AS "id!", endpoint, method, response_code, status, message, ip_address,
             request_id, created_at AS "created_at: DateTime<Utc>"
           FROM activity_logs
           WHERE business_id = ?1
             AND (created_at, id) < (COALESCE(?9, ?11), COALESCE(?10, ''))
             AND (?2 IS NULL OR status = ?2)
             AND (?3 IS NULL OR method = ?3)
             AND (?4 IS NULL OR endpoint = ?4)
             AND (?5 IS NULL OR response_code = ?5)
             AND created_at >= COALESCE(?6, '') AND created_at < COALESCE(?7, ?11)
             AND (?8 IS NULL OR LOWER(endpoint) LIKE ?8 ESCAPE '\'
               OR LOWER(message) LIKE ?8 ESCAPE '\' OR LOWER(ip_address) LIKE ?8 ESCAPE '\')
           ORDER BY created_at DESC, id DESC"#,
            filter.business_id,
            filter.status,
            filter.method,
            filter.endpoint,
            filter.response_code,
            from,
            until,
            search,
            cursor_at,
            cursor_id,
            NO_TIME_BOUND
        );
        let rows = first_rows(query.fetch(store.pool()), filter.page_size + 1).await?;
        rows.into_iter()
            .map(|r| {
                Ok(ActivityEntry {
                    id: uuid(&r.id)?,
                    endpoint: r.endpoint,
                    method: r.method,
                    response_code: r.response_code,
                    status: r.status,
                    message: r.message,
                    ip_address: r.ip_address,
                    request_id: r.request_id,
                    created_at: r.created_at,
                })
            })
            .collect()
    }

    async fn list_audit(
        store: &Store,
        filter: &AuditFilter,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        let from = filter.from.map(timestamp);
        let until = filter.until.map(timestamp);
        let search = filter.search.as_deref().map(contains_pattern);
        let cursor_at = filter.cursor.as_ref().map(|c| timestamp(c.created_at));
        let cursor_id = filter.cursor.as_ref().map(|c| c.id.to_string());
        let query = sqlx::query_as!(
            AuditRecord,
            r#"SELECT id AS "id!", action, user_name, user_id, ip_address, response_code, day,
             target_type, target_id, request_id, created_at AS "created_at: DateTime<Utc>"
           FROM audit_logs
           WHERE business_id = ?1
             AND (created_at, id) < (COALESCE(?7, ?9), COALESCE(?8, ''))
             AND created_at >= COALESCE(?2, '') AND created_at < COALESCE(?3, ?9)
             AND (?4 IS NULL OR action = ?4)
             AND (?5 IS NULL OR user_id = ?5)
             AND (?6 IS NULL OR LOWER(action) LIKE ?6 ESCAPE '\'
               OR LOWER(user_name) LIKE ?6 ESCAPE '\' OR LOWER(ip_address) LIKE ?6 ESCAPE '\')
           ORDER BY created_at DESC, id DESC"#,
            filter.business_id,
            from,
            until,
            filter.action,
            filter.user_id,
            search,
            cursor_at,
            cursor_id,
            NO_TIME_BOUND
        );
        let rows = first_rows(query.fetch(store.pool()), filter.page_size + 1).await?;
        rows.into_iter()
            .map(|r| {
                Ok(AuditEntry {
                    id: uuid(&r.id)?,
                    action: r.action,
                    user_name: r.user_name,
                    user_id: r.user_id,
                    ip_address: r.ip_address,
                    response_code: r.response_code,
                    day: r.day,
                    target_type: r.target_type,
                    target_id: r.target_id,
                    request_id: r.request_id,
                    created_at: r.created_at,
                })
            })
            .collect()
    }
}
