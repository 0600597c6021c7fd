//! `activity_logs` (calls made with integration credentials) and `audit_logs` (the actions of
//! Dashboard members): both append-only, and listed newest first with keyset paging, with
//! the entries payouts' transfers carry (migration 0026, `batch::rows::Parts::carry_audit`).

use chrono::{DateTime, Utc};

use crate::Pool;
use crate::{id, StoreError};
pub use kobo_store::logs::{
    Activity, ActivityEntry, ActivityFilter, AuditEntry, AuditFilter, NewAuditEntry,
};

pub use kobo_store::batch::audit_into;

pub(crate) use kobo_store::paging::contains_pattern;

kobo_store::logs_functions!(backend crate::Backend);

impl kobo_store::logs::Logs for crate::Backend {
    async fn record_activities(
        conn: Self::Conn<'_>,
        entries: &[(DateTime<Utc>, &Activity)],
    ) -> Result<(), StoreError> {
        let mut ids = Vec::with_capacity(entries.len());
        let mut business_ids = Vec::with_capacity(entries.len());
        let mut endpoints = Vec::with_capacity(entries.len());
        let mut codes = Vec::with_capacity(entries.len());
        let mut statuses = Vec::with_capacity(entries.len());
        let mut messages = Vec::with_capacity(entries.len());
        let mut addresses = Vec::with_capacity(entries.len());
        let mut request_ids = Vec::with_capacity(entries.len());
        let mut times = Vec::with_capacity(entries.len());
        for (now, activity) in entries {
            ids.push(uuid::Uuid::new_v4());
            business_ids.push(crate::new_id(&activity.business_id)?);
            endpoints.push(activity.endpoint.to_owned());
            codes.push(i64::from(activity.http_status));
            statuses.push(if activity.success { "success" } else { "error" }.to_owned());
            messages.push(activity.message.clone());
            addresses.push(activity.ip_address.clone());
            request_ids.push(activity.request_id.clone());
            times.push(*now);
        }
        conn.run(async |conn| {
            sqlx::query!(
        "INSERT INTO activity_logs (id, business_id, endpoint, method, response_code, status, \
           message, ip_address, request_id, created_at) \
         SELECT id, business_id, endpoint, 'POST', response_code, status, message, ip_address, \
           request_id, created_at \
         FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::bigint[], $5::text[], $6::text[], \
           $7::text[], $8::text[], $9::timestamptz[]) \
           AS e (id, business_id, endpoint, response_code, status, message, ip_address, \
             request_id, created_at)",
        &ids,
        &business_ids,
        &endpoints,
        &codes,
        &statuses,
        &messages,
        &addresses,
        &request_ids,
        &times
    )
            .execute(&mut *conn)
            .await?;
            Ok(())
        })
        .await
    }

    async fn list_activity(
        pool: &Pool,
        filter: &ActivityFilter,
    ) -> Result<Vec<ActivityEntry>, StoreError> {
        pool.run(async |pool| {
            let pattern = filter.search.as_deref().map(contains_pattern);
            let (cursor_at, cursor_id) = match &filter.cursor {
                Some(cursor) => (Some(cursor.created_at), Some(cursor.id)),
                None => (None, None),
            };
            // Each place read by its business's key, newest first, at most a page from each (a
            // LIMIT in each branch keeps PostgreSQL reading each index in order rather than
            // sorting every row of the business: a `UNION ALL` view under one LIMIT did), then
            // the page of both.
            Ok(sqlx::query_as!(
                ActivityEntry,
                r#"SELECT id AS "id!", endpoint AS "endpoint!", method AS "method!",
           response_code AS "response_code!", status AS "status!", message AS "message!",
           ip_address AS "ip_address!", request_id AS "request_id!",
           created_at AS "created_at!"
         FROM (
           (SELECT id, endpoint, method, response_code, status, message, ip_address,
              request_id, created_at FROM activity_logs
            WHERE business_id = $1
              AND ($2::text IS NULL OR status = $2)
              AND ($3::text IS NULL OR method = $3)
              AND ($4::text IS NULL OR endpoint = $4)
              AND ($5::bigint IS NULL OR response_code = $5)
              AND created_at >= COALESCE($6::timestamptz, '-infinity')
              AND created_at < COALESCE($7::timestamptz, 'infinity')
              AND ($8::text IS NULL OR LOWER(endpoint) LIKE $8 ESCAPE '\'
                   OR LOWER(message) LIKE $8 ESCAPE '\' OR LOWER(ip_address) LIKE $8 ESCAPE '\')
              AND (created_at, id) < (COALESCE($9::timestamptz, 'infinity'),
                   COALESCE($10::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
            ORDER BY created_at DESC, id DESC
            LIMIT $11)
           UNION ALL
           (SELECT id, activity_endpoint, 'POST', 200, 'success', activity_message,
              call_ip_address, call_request_id, created_at FROM transfers
            WHERE business_id = $1 AND activity_endpoint IS NOT NULL
              AND ($2::text IS NULL OR $2 = 'success')
              AND ($3::text IS NULL OR $3 = 'POST')
              AND ($4::text IS NULL OR activity_endpoint = $4)
              AND ($5::bigint IS NULL OR $5 = 200)
              AND created_at >= COALESCE($6::timestamptz, '-infinity')
              AND created_at < COALESCE($7::timestamptz, 'infinity')
              AND ($8::text IS NULL OR LOWER(activity_endpoint) LIKE $8 ESCAPE '\'
                   OR LOWER(activity_message) LIKE $8 ESCAPE '\'
                   OR LOWER(call_ip_address) LIKE $8 ESCAPE '\')
              AND (created_at, id) < (COALESCE($9::timestamptz, 'infinity'),
                   COALESCE($10::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
            ORDER BY created_at DESC, id DESC
            LIMIT $11)
         ) entries
         ORDER BY created_at DESC, id DESC
         LIMIT $11"#,
                id(&filter.business_id),
                filter.status.as_deref(),
                filter.method.as_deref(),
                filter.endpoint.as_deref(),
                filter.response_code,
                filter.from,
                filter.until,
                pattern,
                cursor_at,
                cursor_id,
                (filter.page_size + 1) as i64
            )
            .fetch_all(&mut *pool)
            .await?)
        })
        .await
    }

    async fn list_audit(pool: &Pool, filter: &AuditFilter) -> Result<Vec<AuditEntry>, StoreError> {
        pool.run(async |pool| {
            let pattern = filter.search.as_deref().map(contains_pattern);
            let (cursor_at, cursor_id) = match &filter.cursor {
                Some(cursor) => (Some(cursor.created_at), Some(cursor.id)),
                None => (None, None),
            };
            // As `list_activity`: each place by its key, a page from each, then the page.
            Ok(sqlx::query_as!(
                AuditEntry,
                r#"SELECT id AS "id!", action AS "action!", user_name AS "user_name!", user_id,
           ip_address AS "ip_address!", response_code AS "response_code!",
           day::text AS "day!", target_type, target_id, request_id AS "request_id!",
           created_at AS "created_at!"
         FROM (
           (SELECT id, action, user_name, user_id, ip_address, response_code, day,
              target_type, target_id, request_id, created_at FROM audit_logs
            WHERE business_id = $1
              AND created_at >= COALESCE($2::timestamptz, '-infinity')
              AND created_at < COALESCE($3::timestamptz, 'infinity')
              AND ($4::text IS NULL OR action = $4)
              AND ($5::text IS NULL OR user_id = $5)
              AND ($6::text IS NULL OR LOWER(action) LIKE $6 ESCAPE '\'
                   OR LOWER(user_name) LIKE $6 ESCAPE '\' OR LOWER(ip_address) LIKE $6 ESCAPE '\')
              AND (created_at, id) < (COALESCE($7::timestamptz, 'infinity'),
                   COALESCE($8::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
            ORDER BY created_at DESC, id DESC
            LIMIT $9)
           UNION ALL
           (SELECT id, 'funds_transfer', audit_user_name,
              CASE initiated_via WHEN 'dashboard' THEN initiated_by END, call_ip_address, 200,
              (created_at AT TIME ZONE 'UTC')::date, 'transfer', id::text AS target_id,
              call_request_id, created_at FROM transfers
            WHERE business_id = $1 AND audit_user_name IS NOT NULL
              AND created_at >= COALESCE($2::timestamptz, '-infinity')
              AND created_at < COALESCE($3::timestamptz, 'infinity')
              AND ($4::text IS NULL OR $4 = 'funds_transfer')
              AND ($5::text IS NULL OR (initiated_via = 'dashboard' AND initiated_by = $5))
              AND ($6::text IS NULL OR 'funds_transfer' LIKE $6 ESCAPE '\'
                   OR LOWER(audit_user_name) LIKE $6 ESCAPE '\'
                   OR LOWER(call_ip_address) LIKE $6 ESCAPE '\')
              AND (created_at, id) < (COALESCE($7::timestamptz, 'infinity'),
                   COALESCE($8::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
            ORDER BY created_at DESC, id DESC
            LIMIT $9)
         ) entries
         ORDER BY created_at DESC, id DESC
         LIMIT $9"#,
                id(&filter.business_id),
                filter.from,
                filter.until,
                filter.action.as_deref(),
                filter.user_id.as_deref(),
                pattern,
                cursor_at,
                cursor_id,
                (filter.page_size + 1) as i64
            )
            .fetch_all(&mut *pool)
            .await?)
        })
        .await
    }
}
