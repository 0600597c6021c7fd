//! Activity logs (integration calls) and audit logs (Dashboard user actions). Both are
//! append-only: nothing here updates or deletes a row.
//!
//! - Activity: [`on_response`] writes one entry per call made with an integration token, after
//!   the answer is known, whatever it was, before the answer leaves. Entries are committed in
//!   groups ([`ActivityLog`]): one commit for all the calls that finished while the previous
//!   group was being written.
//! - Audit: each Dashboard operation writes its entry with [`audit`] inside its own
//!   transaction, so an action is logged if and only if it happened. A failed login has no
//!   transaction that commits; `identity::login` audits it in one of its own.

use std::fmt::Write as _;
use std::sync::OnceLock;

use chrono::{DateTime, Utc};
use generated_server::models::{self, AuditAction};
use generated_server::{Operation, ResponseCode, TokenFamily};
use sqlx::any::AnyRow;
use tokio::sync::{mpsc, oneshot};

use crate::error::{Error, OrInternal};
use crate::kernel::batch::Batch;
use crate::kernel::clock::Clock;
use crate::kernel::paging::{self, Conditions, Page, Sql};
use crate::kernel::store::{self, Store, Tx};
use crate::platform::caller::Caller;
use crate::platform::principal::Principal;

/// One audit-log entry, before it is written.
#[derive(Clone, Debug)]
pub struct AuditEntry {
    pub business_id: String,
    pub action: AuditAction,
    /// `First Last <email>`.
    pub user_name: String,
    pub user_id: Option<String>,
    pub ip_address: String,
    /// The HTTP status of the action (200 for what succeeded).
    pub response_code: u16,
    /// `member`, `role`, `transfer`, ...
    pub target_type: Option<&'static str>,
    pub target_id: Option<String>,
    pub request_id: String,
}

impl AuditEntry {
    /// A successful action of the Dashboard member behind `caller`.
    pub fn by(caller: &Caller, action: AuditAction) -> AuditEntry {
        let principal = &caller.principal;
        let (user_name, user_id) = match &principal.member {
            Some(member) => (member.display_name(), Some(member.id.clone())),
            None => ("Integration credentials".to_owned(), None),
        };
        AuditEntry {
            business_id: principal.business_id.clone(),
            action,
            user_name,
            user_id,
            ip_address: caller.client_ip.to_string(),
            response_code: 200,
            target_type: None,
            target_id: None,
            request_id: caller.request_id.clone(),
        }
    }

    pub fn target(mut self, target_type: &'static str, target_id: impl Into<String>) -> Self {
        self.target_type = Some(target_type);
        self.target_id = Some(target_id.into());
        self
    }
}

/// Writes `entry`, as of `now`, as part of `tx`.
pub async fn audit(tx: &mut Tx, now: DateTime<Utc>, entry: AuditEntry) -> Result<(), Error> {
    let mut batch = Batch::new();
    audit_into(&mut batch, now, entry);
    Ok(batch.run(tx).await?)
}

/// [`audit`] as a statement of `batch`, written when the batch runs in the action's
/// transaction.
pub fn audit_into(batch: &mut Batch, now: DateTime<Utc>, entry: AuditEntry) {
    batch
        .push(
            "INSERT INTO audit_logs (id, business_id, action, user_name, user_id, ip_address, \
               response_code, day, target_type, target_id, request_id, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        )
        .bind(store::new_id())
        .bind(entry.business_id)
        .bind(entry.action.to_string())
        .bind(entry.user_name)
        .bind(entry.user_id)
        .bind(entry.ip_address)
        .bind(i64::from(entry.response_code))
        .bind(now.format("%Y-%m-%d").to_string())
        .bind(entry.target_type)
        .bind(entry.target_id)
        .bind(entry.request_id)
        .bind(store::timestamp(now));
}

/// Records every call made with integration credentials in the activity log. A failure to
/// write is logged, never turned into an error: the answer has been decided already.
pub async fn on_response(store: &Store, clock: &Clock, log: &ActivityLog, record: &Answered<'_>) {
    let Some(principal) = record.principal else {
        return;
    };
    if record.family != Some(TokenFamily::Integration)
        || principal.family != TokenFamily::Integration
    {
        return;
    }
    let activity = Activity {
        business_id: principal.business_id.clone(),
        endpoint: record.operation.path(),
        http_status: record.http_status,
        success: record.response_code == ResponseCode::Success,
        message: record.message.to_owned(),
        ip_address: record.client_ip.to_string(),
        request_id: record.request_id.to_owned(),
    };
    log.record(store, clock.now(), activity).await;
}

/// What was answered to one call, as the logs read it.
#[derive(Debug)]
pub struct Answered<'a> {
    pub operation: Operation,
    /// The operation's token family; `None` for public operations.
    pub family: Option<TokenFamily>,
    /// The principal, when authentication got that far.
    pub principal: Option<&'a Principal>,
    pub http_status: u16,
    pub response_code: ResponseCode,
    /// The envelope's `message`.
    pub message: &'a str,
    pub client_ip: std::net::IpAddr,
    pub request_id: &'a str,
}

/// One call made with integration credentials, as the activity log keeps it.
#[derive(Debug)]
pub struct Activity {
    pub business_id: String,
    pub endpoint: &'static str,
    pub http_status: u16,
    pub success: bool,
    pub message: String,
    pub ip_address: String,
    pub request_id: String,
}

/// The most entries one commit of [`ActivityLog`] writes (10 parameters each).
const GROUP_MAX: usize = 200;

/// The activity log's writer, a group commit. Every integration call writes one entry, and a
/// commit is a flush to disk: one commit per call made the log cost as much as the payout it
/// records, and on SQLite it queued for the same write turn. Instead, one task writes, in one
/// transaction, every entry that arrived while it was writing the previous group; each call
/// still waits until its own entry is committed, so what an answered call leaves in the log is
/// unchanged. Alone, an entry is written at once, as before.
#[derive(Debug, Default)]
pub struct ActivityLog {
    queue: OnceLock<mpsc::UnboundedSender<Queued>>,
}

#[derive(Debug)]
struct Queued {
    at: DateTime<Utc>,
    activity: Activity,
    written: oneshot::Sender<()>,
}

impl ActivityLog {
    /// Appends `activity`, as of `at`, and returns once it is committed (or its commit failed,
    /// which is logged). The writer task starts with the first entry, on the caller's runtime,
    /// and ends when this `ActivityLog` is dropped.
    pub async fn record(&self, store: &Store, at: DateTime<Utc>, activity: Activity) {
        let queue = self.queue.get_or_init(|| {
            let (sender, receiver) = mpsc::unbounded_channel();
            tokio::spawn(write_groups(store.clone(), receiver));
            sender
        });
        let (written, done) = oneshot::channel();
        match queue.send(Queued {
            at,
            activity,
            written,
        }) {
            Ok(()) => {
                if done.await.is_err() {
                    tracing::error!("the activity-log writer stopped before writing an entry");
                }
            }
            // The writer's runtime has ended (a test's): this entry is written alone.
            Err(mpsc::error::SendError(queued)) => {
                let entries = [(queued.at, &queued.activity)];
                let _turn = store.write_turn().await;
                if let Err(error) = record_activities(store.pool(), &entries).await {
                    log_unwritten(&entries, &error);
                }
            }
        }
    }
}

/// The writer: one transaction per group of whatever is queued, at most [`GROUP_MAX`].
async fn write_groups(store: Store, mut queue: mpsc::UnboundedReceiver<Queued>) {
    let mut group = Vec::with_capacity(GROUP_MAX);
    while queue.recv_many(&mut group, GROUP_MAX).await > 0 {
        let entries: Vec<_> = group.iter().map(|q| (q.at, &q.activity)).collect();
        let committed = async {
            let mut tx = store.begin().await.map_err(|error| error.to_string())?;
            record_activities(&mut *tx, &entries)
                .await
                .map_err(|error| error.to_string())?;
            tx.commit().await.map_err(|error| error.to_string())
        }
        .await;
        if let Err(error) = committed {
            log_unwritten(&entries, &error);
        }
        drop(entries);
        for queued in group.drain(..) {
            let _ = queued.written.send(());
        }
    }
}

fn log_unwritten(entries: &[(DateTime<Utc>, &Activity)], error: &dyn std::fmt::Display) {
    for (_, activity) in entries {
        tracing::error!(
            request_id = activity.request_id,
            %error,
            "cannot write the activity-log entry"
        );
    }
}

/// Appends `activity`, as of `now`, to the activity log, on the pool or inside a transaction.
pub async fn record_activity<'e, E>(
    executor: E,
    now: DateTime<Utc>,
    activity: &Activity,
) -> Result<(), sqlx::Error>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    record_activities(executor, &[(now, activity)]).await
}

/// Appends `entries`, each as of its time, to the activity log in one statement.
async fn record_activities<'e, E>(
    executor: E,
    entries: &[(DateTime<Utc>, &Activity)],
) -> Result<(), sqlx::Error>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
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
    query.execute(executor).await.map(|_| ())
}

pub async fn fetch_activity_logs(
    store: &Store,
    caller: &Caller,
    body: models::FetchActivityLogsRequest,
) -> Result<Page<Vec<models::ActivityLogEntry>>, Error> {
    let cursor = paging::keyset_cursor(body.cursor_created_at, body.cursor_id)?;
    let (from, until) = paging::day_range(body.start_date, body.end_date, "")?;
    let limit = body.limit.get().min(paging::PAGE_SIZE_MAX);

    let mut sql = Sql::new(
        "SELECT id, endpoint, method, response_code, status, message, ip_address, request_id, \
           created_at FROM activity_logs",
    );
    let mut conditions = Conditions::default();
    conditions.add(format!(
        "business_id = {}",
        sql.arg(caller.principal.business_id.as_str())
    ));
    if let Some(filters) = &body.filters {
        if let Some(status) = &filters.status {
            conditions.add(format!("status = {}", sql.arg(status.to_string())));
        }
        if let Some(method) = &filters.method {
            conditions.add(format!("method = {}", sql.arg(method.as_str())));
        }
        if let Some(endpoint) = &filters.endpoint {
            conditions.add(format!("endpoint = {}", sql.arg(endpoint.as_str())));
        }
        if let Some(code) = filters.response_code {
            conditions.add(format!("response_code = {}", sql.arg(code)));
        }
    }
    add_time_range(&mut sql, &mut conditions, from, until);
    if let Some(search) = &body.search {
        let pattern = sql.arg(paging::contains_pattern(search));
        conditions.add(format!(
            "(LOWER(endpoint) LIKE {pattern} ESCAPE '\\' OR LOWER(message) LIKE {pattern} \
             ESCAPE '\\' OR LOWER(ip_address) LIKE {pattern} ESCAPE '\\')"
        ));
    }
    keyset_page(
        sql,
        conditions,
        cursor,
        limit,
        store,
        activity_entry,
        |entry| (entry.created_at, entry.id),
    )
    .await
}

pub async fn fetch_audit_logs(
    store: &Store,
    caller: &Caller,
    body: models::FetchAuditLogsRequest,
) -> Result<Page<Vec<models::AuditLogEntry>>, Error> {
    let cursor = paging::keyset_cursor(body.cursor_created_at, body.cursor_id)?;
    let limit = body.limit.get().min(paging::PAGE_SIZE_MAX);

    let mut sql = Sql::new(
        "SELECT id, action, user_name, user_id, ip_address, response_code, day, target_type, \
           target_id, request_id, created_at FROM audit_logs",
    );
    let mut conditions = Conditions::default();
    conditions.add(format!(
        "business_id = {}",
        sql.arg(caller.principal.business_id.as_str())
    ));
    if let Some(filters) = &body.filters {
        let (from, until) = paging::day_range(filters.start_date, filters.end_date, "filters.")?;
        add_time_range(&mut sql, &mut conditions, from, until);
        if let Some(action) = &filters.action {
            conditions.add(format!("action = {}", sql.arg(action.to_string())));
        }
        if let Some(user_id) = &filters.user_id {
            conditions.add(format!("user_id = {}", sql.arg(user_id.to_string())));
        }
    }
    if let Some(search) = &body.search {
        let pattern = sql.arg(paging::contains_pattern(search));
        conditions.add(format!(
            "(LOWER(action) LIKE {pattern} ESCAPE '\\' OR LOWER(user_name) LIKE {pattern} \
             ESCAPE '\\' OR LOWER(ip_address) LIKE {pattern} ESCAPE '\\')"
        ));
    }
    keyset_page(
        sql,
        conditions,
        cursor,
        limit,
        store,
        audit_entry,
        |entry| (entry.created_at, entry.id),
    )
    .await
}

pub(crate) fn add_time_range(
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

/// Newest first, after the cursor, one row more than `limit` to learn whether more follow.
/// Runs a log query as one keyset page, newest first: the rows after `cursor`, at most `limit`,
/// each read with `entry`, with the pagination whose cursor is `key` of the last one.
async fn keyset_page<T>(
    mut sql: Sql,
    mut conditions: Conditions,
    cursor: Option<paging::Cursor>,
    limit: u64,
    store: &Store,
    entry: fn(&AnyRow) -> Result<T, Error>,
    key: fn(&T) -> (DateTime<Utc>, uuid::Uuid),
) -> Result<Page<Vec<T>>, Error> {
    if let Some(cursor) = cursor {
        let at = sql.arg(cursor.created_at);
        let id = sql.arg(cursor.id);
        conditions.add(format!(
            "(created_at < {at} OR (created_at = {at} AND id < {id}))"
        ));
    }
    sql.push(&conditions.where_clause());
    sql.push(" ORDER BY created_at DESC, id DESC")
        .limit(limit + 1);
    let rows = sql.fetch_all(store.pool()).await?;
    let mut entries = rows.iter().map(entry).collect::<Result<Vec<_>, _>>()?;
    let has_more = paging::trim_to_page(&mut entries, limit);
    let last = entries.last().map(key);
    Ok(Page {
        data: entries,
        pagination: paging::keyset_pagination(has_more, last, limit),
    })
}

fn activity_entry(row: &AnyRow) -> Result<models::ActivityLogEntry, Error> {
    let status = match store::text(row, "status")?.as_str() {
        "success" => models::LogStatus::Success,
        _ => models::LogStatus::Error,
    };
    Ok(models::ActivityLogEntry {
        id: store::uuid(row, "id")?,
        endpoint: store::text(row, "endpoint")?,
        method: parse(store::text(row, "method")?)?,
        response_code: integer(row, "response_code")?,
        status,
        message: store::text(row, "message")?,
        ip_address: store::text(row, "ip_address")?,
        request_id: store::text(row, "request_id")?,
        created_at: store::time(row, "created_at")?,
    })
}

fn audit_entry(row: &AnyRow) -> Result<models::AuditLogEntry, Error> {
    let day: chrono::NaiveDate = parse(store::text(row, "day")?)?;
    let user_id = store::optional_text(row, "user_id")?
        .map(|id| id.parse::<uuid::Uuid>().or_internal())
        .transpose()?;
    Ok(models::AuditLogEntry {
        id: store::uuid(row, "id")?,
        action: parse(store::text(row, "action")?)?,
        user: store::text(row, "user_name")?,
        user_id,
        ip_address: store::text(row, "ip_address")?,
        response_code: integer(row, "response_code")?,
        start_date: day,
        end_date: day,
        target_type: store::optional_text(row, "target_type")?,
        target_id: store::optional_text(row, "target_id")?,
        request_id: store::text(row, "request_id")?,
        created_at: store::time(row, "created_at")?,
    })
}

fn integer(row: &AnyRow, column: &str) -> Result<i64, Error> {
    sqlx::Row::try_get(row, column).or_internal()
}

fn parse<T>(value: String) -> Result<T, Error>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    value
        .parse()
        .map_err(|error| Error::internal(format!("bad value {value:?} in the database: {error}")))
}
