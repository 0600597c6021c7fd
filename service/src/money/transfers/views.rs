//! A transfer as the API shows it, read back or built from what a payout writes, and its
//! lookups.

use generated_server::models;

use super::status::{ApprovalState, TransferStatus};
use crate::datastore::transfers::{self, TransferRow};
use crate::datastore::Conn;
use crate::error::Error;
use crate::money::accounts::value;
use crate::money::amount::amount_text;

pub use crate::datastore::transfers::Lookup;

/// What the API shows of a transfer's row: the one mapping, so the answer to a payout (made
/// from the row it writes) is what a later lookup finds.
pub(crate) fn view(row: &TransferRow) -> Result<models::Transfer, Error> {
    let kobo = |amount: i64| value(amount_text(i128::from(amount)));
    let transfer_status = status(&row.transfer_status)?;
    Ok(models::Transfer {
        id: value(&row.id)?,
        reference_number: value(&row.reference_number)?,
        reference: row.reference.as_deref().map(value).transpose()?,
        amount: kobo(row.amount)?,
        fee: kobo(row.fee)?,
        vat: kobo(row.vat)?,
        status: transfer_status.coarse(),
        transfer_status: transfer_status.view(),
        approval_status: approval(&row.approval_status)?.view(),
        transfer_type: value(&row.transfer_type)?,
        source_account_number: value(&row.source_account_number)?,
        beneficiary_account_number: value(&row.beneficiary_account_number)?,
        beneficiary_account_name: row.beneficiary_account_name.clone(),
        bank_code: value(&row.bank_code)?,
        bank_name: row.bank_name.clone(),
        narration: row.narration.clone(),
        session_id: row.session_id.as_deref().map(value).transpose()?,
        failure_reason: row.failure_reason.clone(),
        reversal_reference_number: row.reversal_reference_number.clone(),
        initiated_by: value(&row.initiated_by)?,
        initiated_via: value(&row.initiated_via)?,
        reviewed_by: row.reviewed_by.as_deref().map(value).transpose()?,
        expires_at: row.expires_at,
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}

/// A stored transfer status.
pub(crate) fn status(text: &str) -> Result<TransferStatus, Error> {
    TransferStatus::parse(text)
        .ok_or_else(|| Error::internal(format!("an unknown transfer status {text:?}")))
}

/// A stored approval status.
fn approval(text: &str) -> Result<ApprovalState, Error> {
    ApprovalState::parse(text)
        .ok_or_else(|| Error::internal(format!("an unknown approval status {text:?}")))
}

/// The business's transfer found by `lookup`.
pub async fn find(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
    lookup: Lookup<'_>,
) -> Result<Option<models::Transfer>, Error> {
    let row = transfers::find(conn, business_id, lookup).await?;
    row.as_ref().map(view).transpose()
}
