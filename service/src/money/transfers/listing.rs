//! `get_transfer_*` and `fetch_transfers_*`.

use generated_server::models;
use generated_server::ResponseCode;

use super::checks::*;
use super::views::*;
use crate::datastore::transfers::{self, Filters};
use crate::error::Error;
use crate::kernel::paging::{self, Page};
use crate::money::bank::Bank;

/// `get_transfer_web` and `get_transfer_api`: by Kobo's reference or the client's.
pub async fn get_transfer(
    bank: &Bank,
    business_id: &str,
    body: models::GetTransferRequest,
) -> Result<models::Transfer, Error> {
    let store = &bank.store;
    let (lookup, shown) = match (&body.reference_number, &body.reference) {
        (Some(number), None) => (Lookup::ReferenceNumber(number.as_str()), number.to_string()),
        (None, Some(reference)) => (Lookup::Reference(reference.as_str()), reference.to_string()),
        _ => {
            return Err(invalid(
                "`reference_number`: send exactly one of reference_number and reference",
            ))
        }
    };
    find(store, business_id, lookup).await?.ok_or_else(|| {
        Error::new(ResponseCode::NotFound).with_message(format!(
            "No transfer with reference {shown} in this business"
        ))
    })
}

/// `fetch_transfers_web` and `fetch_transfers_api`.
pub async fn fetch_transfers(
    bank: &Bank,
    business_id: &str,
    body: models::FetchTransfersRequest,
) -> Result<Page<Vec<models::Transfer>>, Error> {
    let store = &bank.store;
    let cursor = paging::keyset_cursor(body.cursor_created_at, body.cursor_id)?;
    let limit = body.limit.get().min(paging::PAGE_SIZE_MAX);
    let filters = body.filters.unwrap_or_default();
    let (from, until) = paging::day_range(filters.start_date, filters.end_date, "filters.")?;
    let chosen = Filters {
        transfer_status: filters.transfer_status.map(|status| status.to_string()),
        approval_status: filters.approval_status.map(|approval| approval.to_string()),
        from,
        until,
        source_account_number: filters.source_account_number.map(|n| n.to_string()),
        reference: filters.reference.map(|r| r.to_string()),
        reference_number: filters.reference_number.map(|n| n.to_string()),
    };
    let rows = transfers::list(store, business_id, &chosen, cursor, limit).await?;
    let mut transfers = rows.iter().map(view).collect::<Result<Vec<_>, _>>()?;
    let has_more = paging::trim_to_page(&mut transfers, limit);
    let last = transfers.last().map(|t| (t.created_at, t.id));
    Ok(Page {
        data: transfers,
        pagination: paging::keyset_pagination(has_more, last, limit),
    })
}
