//! Activity logs (integration calls) and audit logs (Dashboard user actions). Both are
//! append-only: nothing here updates or deletes a row.
//!
//! - Activity: one entry per call made with an integration token. A call whose work is one
//!   transaction may write its success's entry in it ([`activity_into`]: a payout does), so
//!   that the entry commits with what it records and the answer waits for no other commit.
//!   [`on_response`] writes every other call's, after the answer is known, whatever it was:
//!   before the answer leaves for a call that can change something, after it for a listing
//!   ([`ActivityLog`], which states what a crash can lose). Those are committed in groups: one
//!   commit for all the calls that finished while the previous group was being written.
//! - Audit: each Dashboard operation writes its entry with [`audit`] inside its own
//!   transaction, so an action is logged if and only if it happened. A failed login has no
//!   transaction that commits; `identity::login` audits it in one of its own.

use std::sync::OnceLock;

use chrono::{DateTime, Utc};
use generated_server::models::{self, AuditAction};
use generated_server::{Operation, ResponseCode, TokenFamily};
use tokio::sync::{mpsc, oneshot};

use crate::datastore::batch::{self, Batch};
pub use crate::datastore::logs::Activity;
use crate::datastore::logs::{self as stored, ActivityFilter, AuditFilter, NewAuditEntry};
use crate::datastore::{Conn, StoreError};
use crate::error::{Error, OrInternal};
use crate::kernel::clock::Clock;
use crate::kernel::paging::{self, Page};
use crate::kernel::store::{Store, Tx};
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
    Ok(batch::run(tx, batch).await?)
}

/// [`audit`] as a statement of `batch`, written when the batch runs in the action's
/// transaction.
pub fn audit_into(batch: &mut Batch, now: DateTime<Utc>, entry: AuditEntry) {
    let entry = NewAuditEntry {
        business_id: entry.business_id,
        action: entry.action.to_string(),
        user_name: entry.user_name,
        user_id: entry.user_id,
        ip_address: entry.ip_address,
        response_code: i64::from(entry.response_code),
        target_type: entry.target_type,
        target_id: entry.target_id,
        request_id: entry.request_id,
    };
    stored::audit_into(batch, now, entry);
}

/// The activity-log entry of `caller`'s success, as a write of `batch`, when `caller` is an
/// integration call: the transaction that runs `batch` does the call's work, so the entry
/// commits if and only if that work does. `caller` is marked ([`Caller::mark_logged`]), and
/// [`on_response`] writes no second entry when the call is answered with that success. Its
/// time is `at`, the work's.
pub fn activity_into(batch: &mut Batch, caller: &Caller, at: DateTime<Utc>) {
    let principal = &caller.principal;
    let operation = caller.operation;
    if !integration_call(operation.family(), principal) {
        return;
    }
    let activity = Activity {
        business_id: principal.business_id.clone(),
        endpoint: operation.path(),
        http_status: 200,
        success: true,
        message: operation.success_message().to_owned(),
        ip_address: caller.client_ip.to_string(),
        request_id: caller.request_id.clone(),
    };
    stored::activity_into(batch, at, activity);
    caller.mark_logged();
}

/// Whether a call of an operation of `family` by `principal` is logged: one made with
/// integration credentials to an integration operation.
fn integration_call(family: Option<TokenFamily>, principal: &Principal) -> bool {
    family == Some(TokenFamily::Integration) && principal.family == TokenFamily::Integration
}

/// Records every call made with integration credentials in the activity log, but a success
/// whose entry the operation wrote with its work ([`activity_into`]). A failure to write is
/// logged, never turned into an error: the answer has been decided already.
pub async fn on_response(store: &Store, clock: &Clock, log: &ActivityLog, record: &Answered<'_>) {
    let Some(principal) = record.principal else {
        return;
    };
    if !integration_call(record.family, principal) {
        return;
    }
    // A replay is a call of its own, answered from the store: its entry is not the first
    // call's, whatever that call marked.
    if record.logged && !record.replayed && record.response_code == ResponseCode::Success {
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
    let durability = Durability::of(record.operation, record.response_code);
    log.record(store, clock.now(), activity, durability).await;
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
    /// Whether the answer is the replay of an earlier call's (`Idempotency-Key`).
    pub replayed: bool,
    /// Whether the operation wrote its success's entry with its work ([`activity_into`]).
    pub logged: bool,
}

/// The most entries one commit of [`ActivityLog`] writes (10 parameters each).
const GROUP_MAX: usize = 200;

/// How many entries may wait for the writer before a call waits for room: a bound on the
/// memory a stalled database can take, and on what a crash can lose.
const QUEUE_MAX: usize = 10_000;

/// The activity log's writer, a group commit. Every integration call writes one entry, and a
/// commit is a flush to disk: one commit per call made the log cost as much as the payout it
/// records, and on SQLite it queued for the same write turn. Instead, one task writes, in one
/// transaction, every entry that arrived while it was writing the previous group.
///
/// When a call is answered depends on what it did (docs/decisions.md, "The activity log stays
/// on the path of what changes something"):
/// - **A call that can change something** (every operation but the listings) waits until its
///   own entry is committed: no such call is answered and then missing from the log.
/// - **A listing** (`Operation::paginated`), which changes nothing, is answered first; its
///   entry commits with the next group. This process sees it at once: [`ActivityLog::flush`]
///   waits until everything queued before it is committed, and `fetch_activity_logs` calls it
///   first. Another process sees it once its group commits, within one commit's time behind
///   the queue. A crash loses the entries of listings answered and not yet committed: at most
///   the group being written and what queued behind it ([`QUEUE_MAX`]). A graceful stop
///   flushes (`kobo serve` calls [`ActivityLog::flush`] after its last request), and a failed
///   commit names each lost entry's `request_id` in the server's log.
/// - When [`QUEUE_MAX`] entries wait already, a call waits for room: a stalled database slows
///   calls instead of taking memory.
#[derive(Debug, Default)]
pub struct ActivityLog {
    queue: OnceLock<mpsc::Sender<Queued>>,
}

#[derive(Debug)]
enum Queued {
    Entry {
        at: DateTime<Utc>,
        activity: Activity,
        /// Answered once the entry is committed, for a call that waits for it.
        written: Option<oneshot::Sender<()>>,
    },
    /// Answered once every entry queued before it is committed (or its commit failed).
    Flush(oneshot::Sender<()>),
}

/// Whether a call waits for its entry's commit ([`ActivityLog`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Answered once the entry is committed.
    BeforeTheAnswer,
    /// Answered at once; committed with the next group.
    AfterTheAnswer,
}

impl Durability {
    /// What a call of `operation` answered `code` waits for: a listing changes nothing and
    /// waits for nothing; nor does a call answered `97` or `98`, the database out of reach
    /// (waiting for it to take the entry would hold the answer past the request's time), whose
    /// entry is committed once the database is back.
    pub fn of(operation: Operation, code: ResponseCode) -> Durability {
        let unreachable = matches!(
            code,
            ResponseCode::ServiceUnavailable | ResponseCode::OutcomeUnknown
        );
        if operation.paginated() || unreachable {
            Durability::AfterTheAnswer
        } else {
            Durability::BeforeTheAnswer
        }
    }
}

impl ActivityLog {
    /// Appends `activity`, as of `at`, and returns when `durability` says: once it is
    /// committed (or its commit failed, which is logged), or once it is queued. The writer
    /// task starts with the first entry, on the caller's runtime, and ends when this
    /// `ActivityLog` is dropped.
    pub async fn record(
        &self,
        store: &Store,
        at: DateTime<Utc>,
        activity: Activity,
        durability: Durability,
    ) {
        let queue = self.queue(store);
        let (written, done) = match durability {
            Durability::BeforeTheAnswer => {
                let (written, done) = oneshot::channel();
                (Some(written), Some(done))
            }
            Durability::AfterTheAnswer => (None, None),
        };
        let entry = Queued::Entry {
            at,
            activity,
            written,
        };
        match queue.send(entry).await {
            Ok(()) => {
                let Some(done) = done else { return };
                if done.await.is_err() {
                    tracing::error!("the activity-log writer stopped before writing an entry");
                }
            }
            // The writer's runtime has ended (a test's): this entry is written alone.
            Err(mpsc::error::SendError(queued)) => {
                if let Queued::Entry { at, activity, .. } = queued {
                    let entries = [(at, &activity)];
                    let _turn = store.write_turn().await;
                    // Boxed: only when the writer is gone (docs/decisions.md, "Cold paths
                    // boxed").
                    if let Err(error) = Box::pin(stored::record_activities(store, &entries)).await {
                        log_unwritten(&entries, &chain(&error));
                    }
                }
            }
        }
    }

    /// Returns once every entry recorded before this call is committed (or its commit failed,
    /// which is logged).
    pub async fn flush(&self) {
        let Some(queue) = self.queue.get() else {
            return;
        };
        let (flushed, done) = oneshot::channel();
        if queue.send(Queued::Flush(flushed)).await.is_ok() {
            let _ = done.await;
        }
    }

    fn queue(&self, store: &Store) -> &mpsc::Sender<Queued> {
        self.queue.get_or_init(|| {
            let (sender, receiver) = mpsc::channel(QUEUE_MAX);
            tokio::spawn(write_groups(store.clone(), receiver));
            sender
        })
    }
}

/// The writer: one transaction per group of whatever is queued, at most [`GROUP_MAX`]; the
/// calls and flushes waiting on a group are answered after its commit.
async fn write_groups(store: Store, mut queue: mpsc::Receiver<Queued>) {
    let mut group = Vec::with_capacity(GROUP_MAX);
    while queue.recv_many(&mut group, GROUP_MAX).await > 0 {
        let entries: Vec<_> = group
            .iter()
            .filter_map(|queued| match queued {
                Queued::Entry { at, activity, .. } => Some((*at, activity)),
                Queued::Flush(_) => None,
            })
            .collect();
        if !entries.is_empty() {
            if let Err(error) = commit(&store, &entries).await {
                log_unwritten(&entries, &error);
            }
        }
        drop(entries);
        for queued in group.drain(..) {
            let waiting = match queued {
                Queued::Entry { written, .. } => written,
                Queued::Flush(flushed) => Some(flushed),
            };
            if let Some(waiting) = waiting {
                let _ = waiting.send(());
            }
        }
    }
}

async fn commit(store: &Store, entries: &[(DateTime<Utc>, &Activity)]) -> Result<(), String> {
    let mut tx = store.begin().await.map_err(|error| error.to_string())?;
    stored::record_activities(&mut tx, entries)
        .await
        .map_err(|error| chain(&error))?;
    tx.commit().await.map_err(|error| error.to_string())
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

/// `error` and its source, for the log (the store's error names its class; its source, what
/// the database said).
fn chain(error: &StoreError) -> String {
    match std::error::Error::source(error) {
        Some(source) => source.to_string(),
        None => error.to_string(),
    }
}

/// Appends `activity`, as of `now`, to the activity log, on the pool or inside a transaction.
pub async fn record_activity(
    conn: impl Into<Conn<'_>>,
    now: DateTime<Utc>,
    activity: &Activity,
) -> Result<(), Error> {
    Ok(stored::record_activities(conn, &[(now, activity)]).await?)
}

pub async fn fetch_activity_logs(
    store: &Store,
    caller: &Caller,
    body: models::FetchActivityLogsRequest,
) -> Result<Page<Vec<models::ActivityLogEntry>>, Error> {
    let cursor = paging::keyset_cursor(body.cursor_created_at, body.cursor_id)?;
    let (from, until) = paging::day_range(body.start_date, body.end_date, "")?;
    let limit = body.limit.get().min(paging::PAGE_SIZE_MAX);
    let filters = body.filters.as_ref();
    let filter = ActivityFilter {
        business_id: caller.principal.business_id.clone(),
        status: filters
            .and_then(|f| f.status.as_ref())
            .map(ToString::to_string),
        method: filters
            .and_then(|f| f.method.as_ref())
            .map(|method| method.as_str().to_owned()),
        endpoint: filters
            .and_then(|f| f.endpoint.as_ref())
            .map(|endpoint| endpoint.as_str().to_owned()),
        response_code: filters.and_then(|f| f.response_code),
        from,
        until,
        search: body
            .search
            .as_ref()
            .map(|search| search.as_str().to_owned()),
        cursor,
        page_size: limit,
    };
    let rows = stored::list_activity(store, &filter).await?;
    let entries = rows
        .into_iter()
        .map(activity_entry)
        .collect::<Result<Vec<_>, _>>()?;
    paging::keyset_page(entries, limit, |entry| (entry.created_at, entry.id), Ok)
}

pub async fn fetch_audit_logs(
    store: &Store,
    caller: &Caller,
    body: models::FetchAuditLogsRequest,
) -> Result<Page<Vec<models::AuditLogEntry>>, Error> {
    let cursor = paging::keyset_cursor(body.cursor_created_at, body.cursor_id)?;
    let limit = body.limit.get().min(paging::PAGE_SIZE_MAX);
    let mut filter = AuditFilter {
        business_id: caller.principal.business_id.clone(),
        search: body
            .search
            .as_ref()
            .map(|search| search.as_str().to_owned()),
        cursor,
        page_size: limit,
        ..AuditFilter::default()
    };
    if let Some(filters) = &body.filters {
        let (from, until) = paging::day_range(filters.start_date, filters.end_date, "filters.")?;
        filter.from = from;
        filter.until = until;
        filter.action = filters.action.as_ref().map(ToString::to_string);
        filter.user_id = filters.user_id.as_ref().map(ToString::to_string);
    }
    let rows = stored::list_audit(store, &filter).await?;
    let mut entries = rows
        .into_iter()
        .map(audit_entry)
        .collect::<Result<Vec<_>, _>>()?;
    let business_id = &caller.principal.business_id;
    super::audit_targets::name_targets(store, business_id, &mut entries).await?;
    paging::keyset_page(entries, limit, |entry| (entry.created_at, entry.id), Ok)
}

fn activity_entry(entry: stored::ActivityEntry) -> Result<models::ActivityLogEntry, Error> {
    let status = match entry.status.as_str() {
        "success" => models::LogStatus::Success,
        _ => models::LogStatus::Error,
    };
    Ok(models::ActivityLogEntry {
        id: entry.id,
        endpoint: entry.endpoint,
        method: parse(entry.method)?,
        response_code: entry.response_code,
        status,
        message: entry.message,
        ip_address: entry.ip_address,
        request_id: entry.request_id,
        created_at: entry.created_at,
    })
}

fn audit_entry(entry: stored::AuditEntry) -> Result<models::AuditLogEntry, Error> {
    let day: chrono::NaiveDate = parse(entry.day)?;
    let user_id = entry
        .user_id
        .map(|id| id.parse::<uuid::Uuid>().or_internal())
        .transpose()?;
    Ok(models::AuditLogEntry {
        id: entry.id,
        action: parse(entry.action)?,
        user: entry.user_name,
        user_id,
        ip_address: entry.ip_address,
        response_code: entry.response_code,
        start_date: day,
        end_date: day,
        target_type: entry.target_type,
        target_id: entry.target_id,
        target_name: None,
        request_id: entry.request_id,
        created_at: entry.created_at,
    })
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
