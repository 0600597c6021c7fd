//! A transfer as the API shows it, read back or built from what a payout writes, and its
//! lookups.

use generated_server::models;
use sqlx::any::AnyRow;
use sqlx::Row;

use super::status::{ApprovalState, TransferStatus};
use crate::error::{Error, OrInternal};
use crate::kernel::store;
use crate::money::accounts::value;
use crate::money::amount::amount_text;

/// How a transfer is looked up.
pub enum Lookup<'a> {
    Id(&'a str),
    ReferenceNumber(&'a str),
    Reference(&'a str),
}

pub(super) const TRANSFER_COLUMNS: &str = "t.id, t.reference_number, t.reference, t.amount, t.fee, t.vat, \
    t.transfer_status, t.approval_status, t.transfer_type, a.account_number AS source_account_number, \
    t.beneficiary_account_number, t.beneficiary_account_name, t.bank_code, t.bank_name, \
    t.narration, t.session_id, t.failure_reason, t.reversal_reference_number, t.initiated_by, \
    t.initiated_via, t.reviewed_by, t.expires_at, t.created_at, t.updated_at";
pub(super) const TRANSFER_FROM: &str =
    " FROM transfers t JOIN accounts a ON a.id = t.source_account_id";

/// A transfer's columns as [`TRANSFER_COLUMNS`] reads them, and as a new transfer inserts
/// them: [`Columns::view`] is the one mapping to what the API shows, so the answer to a payout
/// is what a later lookup finds.
pub(super) struct Columns {
    pub(super) id: String,
    pub(super) reference_number: String,
    pub(super) reference: Option<String>,
    pub(super) amount: i64,
    pub(super) fee: i64,
    pub(super) vat: i64,
    pub(super) transfer_status: TransferStatus,
    pub(super) approval_status: ApprovalState,
    pub(super) transfer_type: String,
    pub(super) source_account_number: String,
    pub(super) beneficiary_account_number: String,
    pub(super) beneficiary_account_name: String,
    pub(super) bank_code: String,
    pub(super) bank_name: String,
    pub(super) narration: String,
    pub(super) session_id: Option<String>,
    pub(super) failure_reason: Option<String>,
    pub(super) reversal_reference_number: Option<String>,
    pub(super) initiated_by: String,
    pub(super) initiated_via: String,
    pub(super) reviewed_by: Option<String>,
    pub(super) expires_at: Option<String>,
    pub(super) created_at: String,
    pub(super) updated_at: String,
}

impl Columns {
    pub(super) fn read(row: &AnyRow) -> Result<Columns, Error> {
        let text = |column: &str| store::text(row, column);
        let optional = |column: &str| store::optional_text(row, column);
        let kobo = |column: &str| -> Result<i64, Error> { row.try_get(column).or_internal() };
        Ok(Columns {
            id: text("id")?,
            reference_number: text("reference_number")?,
            reference: optional("reference")?,
            amount: kobo("amount")?,
            fee: kobo("fee")?,
            vat: kobo("vat")?,
            transfer_status: status(&text("transfer_status")?)?,
            approval_status: approval(&text("approval_status")?)?,
            transfer_type: text("transfer_type")?,
            source_account_number: text("source_account_number")?,
            beneficiary_account_number: text("beneficiary_account_number")?,
            beneficiary_account_name: text("beneficiary_account_name")?,
            bank_code: text("bank_code")?,
            bank_name: text("bank_name")?,
            narration: text("narration")?,
            session_id: optional("session_id")?,
            failure_reason: optional("failure_reason")?,
            reversal_reference_number: optional("reversal_reference_number")?,
            initiated_by: text("initiated_by")?,
            initiated_via: text("initiated_via")?,
            reviewed_by: optional("reviewed_by")?,
            expires_at: optional("expires_at")?,
            created_at: text("created_at")?,
            updated_at: text("updated_at")?,
        })
    }

    pub(super) fn view(&self) -> Result<models::Transfer, Error> {
        let kobo = |amount: i64| value(amount_text(i128::from(amount)));
        Ok(models::Transfer {
            id: value(&self.id)?,
            reference_number: value(&self.reference_number)?,
            reference: self.reference.as_deref().map(value).transpose()?,
            amount: kobo(self.amount)?,
            fee: kobo(self.fee)?,
            vat: kobo(self.vat)?,
            status: self.transfer_status.coarse(),
            transfer_status: self.transfer_status.view(),
            approval_status: self.approval_status.view(),
            transfer_type: value(&self.transfer_type)?,
            source_account_number: value(&self.source_account_number)?,
            beneficiary_account_number: value(&self.beneficiary_account_number)?,
            beneficiary_account_name: self.beneficiary_account_name.clone(),
            bank_code: value(&self.bank_code)?,
            bank_name: self.bank_name.clone(),
            narration: self.narration.clone(),
            session_id: self.session_id.as_deref().map(value).transpose()?,
            failure_reason: self.failure_reason.clone(),
            reversal_reference_number: self.reversal_reference_number.clone(),
            initiated_by: value(&self.initiated_by)?,
            initiated_via: value(&self.initiated_via)?,
            reviewed_by: self.reviewed_by.as_deref().map(value).transpose()?,
            expires_at: self
                .expires_at
                .as_deref()
                .map(store::parse_timestamp)
                .transpose()?,
            created_at: store::parse_timestamp(&self.created_at)?,
            updated_at: store::parse_timestamp(&self.updated_at)?,
        })
    }
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

pub(super) fn view(row: &AnyRow) -> Result<models::Transfer, Error> {
    Columns::read(row)?.view()
}

/// The business's transfer found by `lookup`.
pub async fn find<'e, E>(
    executor: E,
    business_id: &str,
    lookup: Lookup<'_>,
) -> Result<Option<models::Transfer>, Error>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let (column, key) = match lookup {
        Lookup::Id(id) => ("t.id", id),
        Lookup::ReferenceNumber(reference) => ("t.reference_number", reference),
        Lookup::Reference(reference) => ("t.reference", reference),
    };
    let sql = format!(
        "SELECT {TRANSFER_COLUMNS}{TRANSFER_FROM} WHERE t.business_id = $1 AND {column} = $2"
    );
    // Planned each time, not kept: see [`reference_owner_in`].
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .bind(business_id)
        .bind(key)
        .fetch_optional(executor)
        .await
        .or_internal()?;
    row.as_ref().map(view).transpose()
}
