//! Bulk transfers (issue 60): a business pays many beneficiaries from one account in one run.
//!
//! A batch is written as it was sent, `validating` ([`create_bulk_transfer`]); the validation
//! worker ([`validate::work`]) then judges each item as a transfer would be judged (the account
//! looked up, the holder's name compared, the amount's bounds, the reference unused, the fee and
//! VAT) and the batch becomes `validated` or `invalid`, with its counts and totals. Nothing
//! moves before then. A validated batch is authorised once ([`authorise`]: its whole total
//! reserved, held for a checker when the approval policy covers it) and its items are then paid
//! by the executor ([`execute`]). A batch can be cancelled until it executes (a held one's
//! reservation released).
//!
//! Each item's `transfer_id` is drawn when the batch is written: the transfer that pays it will
//! have that id, so an item is paid at most once whatever crashes or retries.

pub mod authorise;
pub mod execute;
pub mod results;
pub mod status;
pub mod validate;

use std::collections::HashSet;

use generated_server::models::{self, AuditAction};
use generated_server::ResponseCode;

use crate::datastore::bulk_transfers::{
    self, BulkItemRow, BulkTransferRow, NewBulkItem, NewBulkTransfer, Outcomes,
};
use crate::datastore::{Conn, Tx};
use crate::error::{Error, OrInternal};
use crate::kernel::paging::{self, Page};
use crate::kernel::store;
use crate::money::accounts::{self, value};
use crate::money::amount::{amount_text, Kobo};
use crate::money::bank::Bank;
use crate::money::{banks, beneficiaries, transfers};
use crate::platform::caller::Caller;
use crate::platform::idempotency::{Completion, Keyed, Prepared};
use crate::platform::logs::{self, AuditEntry};

/// The most items a batch holds (the spec's `maxItems`).
pub const ITEMS_MAX: usize = 5_000;

pub(super) fn invalid(message: impl Into<std::borrow::Cow<'static, str>>) -> Error {
    Error::new(ResponseCode::InvalidRequest).with_message(message)
}

/// `47`: the business has no bulk transfer `id`.
fn not_found(id: &uuid::Uuid) -> Error {
    Error::new(ResponseCode::NotFound)
        .with_message(format!("No bulk transfer {id} in this business"))
}

/// An item as the request gave it: a saved beneficiary's id, or the account's fields.
enum Payee {
    Saved(uuid::Uuid),
    Account {
        account_number: String,
        bank_code: String,
        account_name: String,
    },
}

/// The request's rules JSON Schema cannot state (`01`): each item names a saved beneficiary or
/// the account's three fields, never both; the items' references are unique in the batch.
fn payees(body: &models::CreateBulkTransferRequest) -> Result<Vec<Payee>, Error> {
    if body.items.len() > ITEMS_MAX {
        return Err(invalid(format!("`items`: at most {ITEMS_MAX}")));
    }
    let mut references = HashSet::new();
    let mut payees = Vec::with_capacity(body.items.len());
    for (index, item) in body.items.iter().enumerate() {
        if let Some(reference) = &item.reference {
            if !references.insert(reference.as_str()) {
                return Err(invalid(format!(
                    "`items[{index}].reference`: {} is also another item's",
                    reference.as_str()
                )));
            }
        }
        let fields = (&item.account_number, &item.bank_code, &item.account_name);
        let payee = match (item.beneficiary_id, fields) {
            (Some(id), (None, None, None)) => Payee::Saved(id),
            (Some(_), _) => {
                return Err(invalid(format!(
                    "`items[{index}]`: name either `beneficiary_id` or the account's fields, not both"
                )));
            }
            (None, (Some(number), Some(code), Some(name))) => Payee::Account {
                account_number: number.to_string(),
                bank_code: code.to_string(),
                account_name: name.to_string(),
            },
            (None, _) => {
                return Err(invalid(format!(
                    "`items[{index}]`: `account_number`, `bank_code` and `account_name` are \
                     required without `beneficiary_id`"
                )));
            }
        };
        payees.push(payee);
    }
    Ok(payees)
}

/// How soon a scheduled batch may be paid, at the earliest: a time closer than this is no
/// schedule (and would pass while the batch is validated and authorised).
const SCHEDULE_AHEAD_MIN: chrono::TimeDelta = chrono::TimeDelta::minutes(1);
/// How far ahead a batch may be scheduled: its reservation holds the money until then.
const SCHEDULE_AHEAD_MAX: chrono::TimeDelta = chrono::TimeDelta::days(90);

/// The request's `execute_at`, as stored: between [`SCHEDULE_AHEAD_MIN`] and
/// [`SCHEDULE_AHEAD_MAX`] after `now` (`01`).
fn execute_at(
    asked: Option<chrono::DateTime<chrono::Utc>>,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Option<chrono::DateTime<chrono::Utc>>, Error> {
    let Some(at) = asked else {
        return Ok(None);
    };
    if at < now + SCHEDULE_AHEAD_MIN || at > now + SCHEDULE_AHEAD_MAX {
        return Err(invalid(
            "`execute_at`: at least a minute and at most 90 days after now",
        ));
    }
    Ok(Some(store::as_stored(at)))
}

/// The items to write, in order: each saved beneficiary named read (`47`), each item given the
/// id its transfer will have.
async fn items_of(
    store: &crate::kernel::store::Store,
    business_id: &str,
    body: &models::CreateBulkTransferRequest,
    payees: &[Payee],
) -> Result<Vec<NewBulkItem>, Error> {
    let mut items = Vec::with_capacity(payees.len());
    for ((index, item), payee) in body.items.iter().enumerate().zip(payees) {
        let (account_number, bank_code, account_name) = match payee {
            Payee::Account {
                account_number,
                bank_code,
                account_name,
            } => (
                account_number.clone(),
                bank_code.clone(),
                account_name.clone(),
            ),
            Payee::Saved(id) => {
                let saved = beneficiaries::find(store, business_id, id)
                    .await?
                    .ok_or_else(|| {
                        Error::new(ResponseCode::NotFound).with_message(format!(
                            "`items[{index}]`: no saved beneficiary {id} in this business"
                        ))
                    })?;
                (saved.account_number, saved.bank_code, saved.account_name)
            }
        };
        items.push(NewBulkItem {
            idx: i64::try_from(index).or_internal()?,
            transfer_id: uuid::Uuid::new_v4(),
            beneficiary_id: match payee {
                Payee::Saved(id) => Some(*id),
                Payee::Account { .. } => None,
            },
            account_number,
            bank_code,
            account_name,
            // An amount the schema accepts but no transfer may carry (`0`) is kept as 0
            // and refused with the item's other checks (under the policy's minimum).
            amount: Kobo::parse(item.amount.as_str()).map_or(0, Kobo::get),
            narration: item
                .narration
                .as_ref()
                .map(|narration| narration.to_string()),
            reference: item
                .reference
                .as_ref()
                .map(|reference| reference.to_string()),
        });
    }
    Ok(items)
}

/// `create_bulk_transfer` and `create_bulk_transfer_api`: the body's rules (`01`), the source
/// account (`42`, `48`), each saved beneficiary named (`47`) and the batch's reference (`26`),
/// then the batch and its items written, `validating`, with an audit entry. Keyed: a retry
/// with the same `Idempotency-Key` answers the batch the first request wrote.
pub async fn create_bulk_transfer(
    bank: &Bank,
    caller: &Caller,
    body: models::CreateBulkTransferRequest,
) -> Result<models::BulkTransfer, Error> {
    let (store, clock) = (&bank.platform.store, &bank.platform.clock);
    let business_id = caller.principal.business_id.as_str();
    let payees = payees(&body)?;
    let execute_at = execute_at(body.execute_at, clock.now())?;
    let prepare = async || {
        let number = body.source_account_number.as_str();
        let source = accounts::find_by_number(store, business_id, number)
            .await?
            .ok_or_else(|| banks::source_not_found(number))?;
        transfers::check_source(&source)?;
        let items = items_of(store, business_id, &body, &payees).await?;
        Ok(Prepared::plain((source, items)))
    };
    let write = async |tx: &mut Tx,
                       (source, items): (accounts::AccountRow, Vec<NewBulkItem>),
                       _: &mut Completion| {
        let reference = body
            .reference
            .as_ref()
            .map(|reference| reference.to_string());
        if let Some(reference) = &reference {
            if let Some(other) =
                bulk_transfers::by_reference(&mut *tx, business_id, reference).await?
            {
                return Err(Error::new(ResponseCode::Duplicate).with_message(format!(
                    "Reference {reference} belongs to bulk transfer {}",
                    other.id
                )));
            }
        }
        let new = NewBulkTransfer {
            id: uuid::Uuid::new_v4(),
            business_id: business_id.to_owned(),
            reference,
            source_account_id: source.id.clone(),
            source_account_number: source.account_number.clone(),
            on_invalid: body.on_invalid.to_string(),
            narration: body
                .narration
                .as_ref()
                .map(|narration| narration.to_string()),
            created_by: caller.principal.actor_id(),
            created_by_name: member_name(caller),
            created_via: if caller.principal.member.is_some() {
                "dashboard"
            } else {
                "integration"
            }
            .to_owned(),
            execute_at,
            now: store::as_stored(clock.now()),
        };
        bulk_transfers::create(tx, &new, &items).await?;
        let entry = AuditEntry::by(caller, AuditAction::CreateBulkTransfer)
            .target("bulk_transfer", new.id.to_string());
        logs::audit(tx, new.now, entry).await?;
        let written = bulk_transfers::get(&mut *tx, business_id, &new.id)
            .await?
            .ok_or_else(|| {
                Error::internal("a bulk transfer not found where it was just written")
            })?;
        view(written, None)
    };
    let created = Keyed::new(store, clock, caller, &body)
        .run(prepare, write)
        .await?;
    bank.bulk_work.notify_one();
    Ok(created)
}

/// The business's batch `id`: `47` when it has none.
pub(super) async fn find(
    bank: &Bank,
    business_id: &str,
    id: &uuid::Uuid,
) -> Result<BulkTransferRow, Error> {
    bulk_transfers::get(&bank.platform.store, business_id, id)
        .await?
        .ok_or_else(|| not_found(id))
}

/// `get_bulk_transfer` and `get_bulk_transfer_api`.
pub async fn get_bulk_transfer(
    bank: &Bank,
    business_id: &str,
    body: models::BulkTransferIdRequest,
) -> Result<models::BulkTransfer, Error> {
    let batch = find(bank, business_id, &body.bulk_transfer_id).await?;
    view_with_outcomes(&bank.platform.store, batch).await
}

/// `fetch_bulk_transfers` and `fetch_bulk_transfers_api`: newest first, keyset paging.
pub async fn fetch_bulk_transfers(
    bank: &Bank,
    business_id: &str,
    body: models::FetchBulkTransfersRequest,
) -> Result<Page<Vec<models::BulkTransfer>>, Error> {
    let limit = body.limit.get().min(paging::PAGE_SIZE_MAX);
    let cursor = paging::keyset_cursor(body.cursor_created_at, body.cursor_id)?;
    let status = body.status.map(|status| status.to_string());
    let rows = bulk_transfers::list(
        &bank.platform.store,
        business_id,
        status.as_deref(),
        cursor.as_ref(),
        limit + 1,
    )
    .await?;
    let ids: Vec<uuid::Uuid> = rows.iter().map(|row| row.id).collect();
    let outcomes = bulk_transfers::outcomes(&bank.platform.store, &ids).await?;
    paging::keyset_page(
        rows,
        limit,
        |row| (row.created_at, row.id),
        |row| {
            let of = outcomes.iter().find(|o| o.bulk_transfer_id == row.id);
            view(row, of)
        },
    )
}

/// `fetch_bulk_transfer_items` and `fetch_bulk_transfer_items_api`: in order, numbered pages.
/// A page of one validation is found by counting from the first item: a batch holds at most
/// [`ITEMS_MAX`].
pub async fn fetch_bulk_transfer_items(
    bank: &Bank,
    business_id: &str,
    body: models::FetchBulkTransferItemsRequest,
) -> Result<Page<Vec<models::BulkTransferItem>>, Error> {
    let batch = find(bank, business_id, &body.bulk_transfer_id).await?;
    let size = body.page_size.get().min(paging::PAGE_SIZE_MAX);
    let page = body.page.get();
    let skip = (page - 1).saturating_mul(size);
    let validation = body.validation.map(|validation| validation.to_string());
    let store = &bank.platform.store;
    let mut rows = match &validation {
        // Every item: the page starts at its index.
        None => {
            let from = i64::try_from(skip).unwrap_or(i64::MAX);
            bulk_transfers::items(store, &batch.id, None, from, size + 1).await?
        }
        Some(validation) => {
            let wanted = skip.saturating_add(size + 1);
            let mut rows =
                bulk_transfers::items(store, &batch.id, Some(validation), 0, wanted).await?;
            rows.drain(..usize::try_from(skip).unwrap_or(usize::MAX).min(rows.len()));
            rows
        }
    };
    let has_more = paging::trim_to_page(&mut rows, size);
    Ok(Page {
        data: rows
            .into_iter()
            .map(|row| item_view(&batch, row))
            .collect::<Result<_, _>>()?,
        pagination: paging::numbered_pagination(has_more, page, size),
    })
}

/// `cancel_bulk_transfer` and `cancel_bulk_transfer_api`: a batch not yet authorised is
/// `cancelled`, a held or scheduled one too with its reservation released (`48` otherwise),
/// with an audit entry.
pub async fn cancel_bulk_transfer(
    bank: &Bank,
    caller: &Caller,
    body: models::BulkTransferIdRequest,
) -> Result<models::BulkTransfer, Error> {
    let business_id = caller.principal.business_id.as_str();
    let id = body.bulk_transfer_id;
    let batch = find(bank, business_id, &id).await?;
    if status::HOLDING.contains(&batch.status.as_str()) {
        let end = (status::CANCELLED, None, None);
        let by = Some((caller, AuditAction::CancelBulkTransfer));
        return authorise::end_unpaid(bank, by, &batch, end).await;
    }
    let now = store::as_stored(bank.platform.clock.now());
    let mut tx = bank.platform.store.begin().await?;
    let Some(cancelled) =
        bulk_transfers::cancel(&mut tx, business_id, &id, status::CANCELLABLE, now).await?
    else {
        tx.rollback().await?;
        return Err(Error::new(ResponseCode::InvalidState).with_message(format!(
            "The bulk transfer is {}: it cannot be cancelled",
            batch.status
        )));
    };
    let entry = AuditEntry::by(caller, AuditAction::CancelBulkTransfer)
        .target("bulk_transfer", id.to_string());
    logs::audit(&mut tx, now, entry).await?;
    tx.commit().await.or_internal()?;
    view(cancelled, None)
}

/// `First Last` of the member behind `caller`; `None` for integration credentials.
pub(super) fn member_name(caller: &Caller) -> Option<String> {
    let member = caller.principal.member.as_ref()?;
    Some(crate::money::approval_notices::full_name(
        &member.first_name,
        &member.last_name,
    ))
}

/// Kobo as an amount string, for the API.
fn money(kobo: i64) -> Result<models::Amount, Error> {
    value(amount_text(i128::from(kobo)))
}

/// What the API shows of `row`, with what became of its paid items read in `conn`.
pub async fn view_with_outcomes(
    conn: impl Into<Conn<'_>>,
    row: BulkTransferRow,
) -> Result<models::BulkTransfer, Error> {
    let outcomes = if row.authorised_at.is_some() {
        bulk_transfers::outcomes(conn, &[row.id]).await?
    } else {
        Vec::new()
    };
    view(row, outcomes.first())
}

/// What the API shows of a batch, with what became of its paid items (`None`: none was paid).
pub fn view(
    row: BulkTransferRow,
    outcomes: Option<&Outcomes>,
) -> Result<models::BulkTransfer, Error> {
    let count = |n: i64| u64::try_from(n).or_internal();
    let outcomes = outcomes.cloned().unwrap_or_default();
    Ok(models::BulkTransfer {
        bulk_transfer_id: row.id,
        reference: row.reference,
        source_account_number: value(&row.source_account_number)?,
        status: value(&row.status)?,
        on_invalid: value(&row.on_invalid)?,
        narration: row.narration,
        counts: models::BulkTransferCounts {
            items: std::num::NonZeroU64::new(count(row.item_count)?)
                .ok_or_else(|| Error::internal("a bulk transfer without items"))?,
            valid: count(row.valid_count)?,
            invalid: count(row.invalid_count)?,
            // The counts are written when validation ends: until then every item is pending.
            pending: count(row.item_count - row.valid_count - row.invalid_count)?,
            succeeded: count(outcomes.succeeded)?,
            processing: count(outcomes.processing)?,
            failed: count(outcomes.failed)?,
            reversed: count(outcomes.reversed)?,
        },
        totals: models::BulkTransferTotals {
            amount: money(row.total_amount)?,
            fees: money(row.total_fee)?,
            vat: money(row.total_vat)?,
            total: money(row.total_amount + row.total_fee + row.total_vat)?,
            reserved: money(row.reserved)?,
            released: money(row.released)?,
        },
        created_by: row.created_by,
        created_by_name: row.created_by_name,
        authorised_by_name: row.authorised_by_name,
        reviewed_by_name: row.reviewed_by_name,
        created_via: value(&row.created_via)?,
        created_at: row.created_at,
        validated_at: row.validated_at,
        cancelled_at: row.cancelled_at,
        authorised_by: row.authorised_by,
        authorised_at: row.authorised_at,
        reviewed_by: row.reviewed_by,
        reviewed_at: row.reviewed_at,
        expires_at: row.expires_at,
        execute_at: row.execute_at,
        review_reason: row.review_reason,
        completed_at: row.completed_at,
        updated_at: row.updated_at,
    })
}

/// What the API shows of an item of `batch`.
fn item_view(batch: &BulkTransferRow, row: BulkItemRow) -> Result<models::BulkTransferItem, Error> {
    let narration = banks_narration(batch, &row);
    let outcome = value(outcome_of(&row))?;
    Ok(models::BulkTransferItem {
        index: u64::try_from(row.idx).or_internal()?,
        transfer_id: row.transfer_id,
        beneficiary_id: row.beneficiary_id,
        account_number: row.account_number,
        bank_code: row.bank_code,
        bank_name: row.bank_name,
        transfer_type: row.transfer_type,
        account_name: row.account_name,
        confirmed_name: row.confirmed_name,
        enquired_at: row.enquired_at,
        amount: money(row.amount)?,
        fee: row
            .fee
            .map(|fee| value(amount_text(i128::from(fee))))
            .transpose()?,
        vat: row
            .vat
            .map(|vat| value(amount_text(i128::from(vat))))
            .transpose()?,
        narration,
        reference: row.reference,
        validation: value(&row.validation)?,
        outcome,
        reference_number: row.reference_number,
        refusal_code: row.refusal_code,
        refusal_message: row.refusal_message,
        failure_code: row.failure_code,
        failure_message: row.failure_message,
    })
}

/// An item's outcome: its transfer's status once paid, `failed` when it was refused then,
/// `unpaid` otherwise.
pub(super) fn outcome_of(row: &BulkItemRow) -> &str {
    match (row.transfer_status.as_deref(), &row.failure_code) {
        (Some(status), _) => status,
        (None, Some(_)) => status::ITEM_FAILED,
        (None, None) => status::ITEM_UNPAID,
    }
}

/// The narration an item's transfer carries: its own, else the batch's, else the one every
/// transfer gets, as NIP carries it.
pub(super) fn banks_narration(batch: &BulkTransferRow, item: &BulkItemRow) -> String {
    let default = batch.narration.as_deref().unwrap_or("Bulk transfer");
    crate::money::fees::narration(item.narration.as_deref(), default)
}
