//! `get_transfer_*` and `fetch_transfers_*`.

use generated_server::models;
use generated_server::ResponseCode;

use super::checks::*;
use super::views::*;
use crate::error::Error;
use crate::kernel::paging::{self, Conditions, Page, Sql};
use crate::kernel::store::Store;

/// `get_transfer_web` and `get_transfer_api`: by Kobo's reference or the client's.
pub async fn get_transfer(
    store: &Store,
    business_id: &str,
    body: models::GetTransferRequest,
) -> Result<models::Transfer, Error> {
    let (lookup, shown) = match (&body.reference_number, &body.reference) {
        (Some(number), None) => (Lookup::ReferenceNumber(number.as_str()), number.to_string()),
        (None, Some(reference)) => (Lookup::Reference(reference.as_str()), reference.to_string()),
        _ => {
            return Err(invalid(
                "`reference_number`: send exactly one of reference_number and reference",
            ))
        }
    };
    find(store.pool(), business_id, lookup)
        .await?
        .ok_or_else(|| {
            Error::new(ResponseCode::NotFound).with_message(format!(
                "No transfer with reference {shown} in this business"
            ))
        })
}

/// `fetch_transfers_web` and `fetch_transfers_api`.
pub async fn fetch_transfers(
    store: &Store,
    business_id: &str,
    body: models::FetchTransfersRequest,
) -> Result<Page<Vec<models::Transfer>>, Error> {
    let cursor = paging::keyset_cursor(body.cursor_created_at, body.cursor_id)?;
    let limit = body.limit.get().min(paging::PAGE_SIZE_MAX);
    let filters = body.filters.unwrap_or_default();
    let (from, until) = paging::day_range(filters.start_date, filters.end_date, "filters.")?;
    let mut sql = Sql::new(&format!("SELECT {TRANSFER_COLUMNS}{TRANSFER_FROM}"));
    let mut conditions = Conditions::default();
    conditions.add(format!("t.business_id = {}", sql.arg(business_id)));
    if let Some(status) = filters.transfer_status {
        conditions.add(format!(
            "t.transfer_status = {}",
            sql.arg(status.to_string())
        ));
    }
    if let Some(approval) = filters.approval_status {
        conditions.add(format!(
            "t.approval_status = {}",
            sql.arg(approval.to_string())
        ));
    }
    if let Some(from) = from {
        conditions.add(format!("t.created_at >= {}", sql.arg(from)));
    }
    if let Some(until) = until {
        conditions.add(format!("t.created_at < {}", sql.arg(until)));
    }
    if let Some(number) = &filters.source_account_number {
        conditions.add(format!(
            "a.account_number = {}",
            sql.arg(number.to_string())
        ));
    }
    if let Some(reference) = &filters.reference {
        conditions.add(format!("t.reference = {}", sql.arg(reference.to_string())));
    }
    if let Some(number) = &filters.reference_number {
        conditions.add(format!(
            "t.reference_number = {}",
            sql.arg(number.to_string())
        ));
    }
    if let Some(cursor) = cursor {
        let at = sql.arg(cursor.created_at);
        let id = sql.arg(cursor.id);
        conditions.add(format!(
            "(t.created_at < {at} OR (t.created_at = {at} AND t.id < {id}))"
        ));
    }
    sql.push(&conditions.where_clause());
    sql.push(" ORDER BY t.created_at DESC, t.id DESC")
        .limit(limit + 1);
    let rows = sql.fetch_all(store.pool()).await?;
    let mut transfers = rows.iter().map(view).collect::<Result<Vec<_>, _>>()?;
    let has_more = paging::trim_to_page(&mut transfers, limit);
    let last = transfers.last().map(|t| (t.created_at, t.id));
    Ok(Page {
        data: transfers,
        pagination: paging::keyset_pagination(has_more, last, limit),
    })
}
