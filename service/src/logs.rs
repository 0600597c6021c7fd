//! Activity logs (integration calls) and audit logs (Dashboard user actions).
use generated_server::{models, ApiError, CallRecord, Page, RequestContext};

use crate::bank::{not_yet, Bank, Principal};

pub async fn fetch_activity_logs(
    _bank: &Bank,
    ctx: RequestContext<Principal>,
    _body: models::FetchActivityLogsRequest,
) -> Result<Page<Vec<models::ActivityLogEntry>>, ApiError> {
    Err(not_yet(ctx.operation))
}

pub async fn fetch_audit_logs(
    _bank: &Bank,
    ctx: RequestContext<Principal>,
    _body: models::FetchAuditLogsRequest,
) -> Result<Page<Vec<models::AuditLogEntry>>, ApiError> {
    Err(not_yet(ctx.operation))
}

/// Records every call made with integration credentials in the activity log.
pub async fn on_response(_bank: &Bank, _record: &CallRecord<'_, Principal>) {}
