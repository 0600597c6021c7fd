//! Saved beneficiaries (issue 60): accounts a business pays again and again, saved once after a
//! name enquiry, then named by their id in a payment (`pay_beneficiary`, in
//! [`transfers`](crate::money::transfers)) instead of their details.
//!
//! A beneficiary holds the holder's name as the bank gave it when it was saved (or saved
//! again): a payment to it enquires the name again, as every transfer does, and refuses a
//! holder now named otherwise (`49`). Saving an account the business already saved refreshes
//! that beneficiary and keeps its id, so a retry never makes a second one. A business keeps at
//! most [`KEPT_MAX`].

use generated_server::models::{self, AuditAction};
use generated_server::ResponseCode;

use crate::datastore::beneficiaries::{self, BeneficiaryRow, NewBeneficiary};
use crate::datastore::Conn;
use crate::error::{Error, OrInternal};
use crate::kernel::paging::{self, Page};
use crate::kernel::store;
use crate::money::bank::Bank;
use crate::money::{banks, fees, nuban};
use crate::platform::caller::Caller;
use crate::platform::logs::{self, AuditEntry};

/// The most beneficiaries a business keeps: more than the largest bulk transfer's items.
pub const KEPT_MAX: i64 = 10_000;

/// `47`: the business has no saved beneficiary `id`.
pub fn not_found(id: &uuid::Uuid) -> Error {
    Error::new(ResponseCode::NotFound)
        .with_message(format!("No saved beneficiary {id} in this business"))
}

/// The business's beneficiary `id`, if it has one.
pub async fn find(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
    id: &uuid::Uuid,
) -> Result<Option<BeneficiaryRow>, Error> {
    Ok(beneficiaries::get(conn, business_id, id).await?)
}

/// `create_beneficiary` and `create_beneficiary_api`: the account looked up (`06`, `80`), its
/// holder's name checked (`49`), then saved or refreshed with an audit entry.
pub async fn create_beneficiary(
    bank: &Bank,
    caller: &Caller,
    body: models::CreateBeneficiaryRequest,
) -> Result<models::SavedBeneficiary, Error> {
    let store = &bank.store;
    let provider = &*bank.provider;
    let found = banks::resolve(store, provider, &body.bank_code, &body.account_number).await?;
    if !fees::same_name(&body.account_name, &found.account_name) {
        return Err(found.not_the_holders("name"));
    }
    let new = NewBeneficiary {
        id: uuid::Uuid::new_v4(),
        business_id: caller.principal.business_id.clone(),
        bank_code: found.bank_code,
        bank_name: found.bank_name,
        account_number: found.account_number,
        account_name: found.account_name,
        nickname: body.nickname.map(|nickname| nickname.to_string()),
        created_by: caller.principal.actor_id(),
        now: store::as_stored(bank.clock.now()),
    };
    let mut tx = store.begin().await?;
    let saved = beneficiaries::save(&mut tx, &new, KEPT_MAX)
        .await?
        .ok_or_else(|| {
            Error::new(ResponseCode::InvalidState).with_message(format!(
                "The business already keeps {KEPT_MAX} beneficiaries; delete some first"
            ))
        })?;
    let entry = AuditEntry::by(caller, AuditAction::CreateBeneficiary)
        .target("beneficiary", saved.id.to_string());
    logs::audit(&mut tx, new.now, entry).await?;
    tx.commit().await.or_internal()?;
    view(saved)
}

/// `fetch_beneficiaries` and `fetch_beneficiaries_api`.
pub async fn fetch_beneficiaries(
    bank: &Bank,
    business_id: &str,
    body: models::FetchBeneficiariesRequest,
) -> Result<Page<Vec<models::SavedBeneficiary>>, Error> {
    let limit = body.limit.get().min(paging::PAGE_SIZE_MAX);
    let cursor = paging::keyset_cursor(body.cursor_created_at, body.cursor_id)?;
    let pattern = body
        .search
        .as_ref()
        .map(|search| kobo_store::paging::contains_pattern(search.trim()));
    let bank_code = body.bank_code.as_ref().map(|code| code.to_string());
    let rows = beneficiaries::list(
        &bank.store,
        business_id,
        pattern.as_deref(),
        bank_code.as_deref(),
        cursor.as_ref(),
        limit + 1,
    )
    .await?;
    paging::keyset_page(rows, limit, |row| (row.created_at, row.id), view)
}

/// `delete_beneficiary` and `delete_beneficiary_api`: `47` unless the business saved it.
pub async fn delete_beneficiary(
    bank: &Bank,
    caller: &Caller,
    body: models::BeneficiaryIdRequest,
) -> Result<models::SavedBeneficiary, Error> {
    let business_id = &caller.principal.business_id;
    let mut tx = bank.store.begin().await?;
    let deleted = beneficiaries::delete(&mut tx, business_id, &body.beneficiary_id)
        .await?
        .ok_or_else(|| not_found(&body.beneficiary_id))?;
    let entry = AuditEntry::by(caller, AuditAction::DeleteBeneficiary)
        .target("beneficiary", deleted.id.to_string());
    logs::audit(&mut tx, bank.clock.now(), entry).await?;
    tx.commit().await.or_internal()?;
    view(deleted)
}

/// What the API shows of a saved beneficiary.
fn view(row: BeneficiaryRow) -> Result<models::SavedBeneficiary, Error> {
    let transfer_type = if row.bank_code == nuban::BANK_CODE {
        models::TransferType::Intra
    } else {
        models::TransferType::Inter
    };
    Ok(models::SavedBeneficiary {
        beneficiary_id: row.id,
        account_number: row.account_number,
        account_name: row.account_name,
        bank_code: row.bank_code,
        bank_name: row.bank_name,
        transfer_type,
        nickname: row.nickname,
        enquired_at: row.enquired_at,
        created_by: row.created_by,
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}
