//! Authorising a validated bulk transfer once, for all its valid items: its whole total
//! (amounts, fees and VAT) reserved from the source account into `bulk_reserved` in one entry,
//! then `executing` (the executor pays its items: [`super::execute`]) or, when the approval
//! policy covers the total, held `pending_approval` as a whole for a checker. A member's OTP
//! for it is bound to the batch, its total and its count ([`binding`]): it authorises nothing
//! else. Rejection and cancellation of a held batch release its reservation in one credit.

use generated_server::models::{self, AuditAction};
use generated_server::ResponseCode;

use crate::datastore::bulk_transfers::{self, Authorisation, BulkTransferRow, HoldEnd};
use crate::datastore::{self, Tx};
use crate::error::{Error, OrInternal};
use crate::kernel::config::Environment;
use crate::kernel::store;
use crate::money::accounts;
use crate::money::amount::{amount_text, Kobo};
use crate::money::bank::Bank;
use crate::money::ledger::{self, Entry, Internal, LedgerAccount, Posting, Refusal};
use crate::money::transactions::{self, NewTransaction};
use crate::money::transfers;
use crate::platform::caller::Caller;
use crate::platform::idempotency::{Completion, Keyed, Prepared};
use crate::platform::identity::{self, OtpBinding};
use crate::platform::logs::{self, AuditEntry};
use crate::platform::principal::member_of;

use super::status::{
    CANCELLED, EXECUTING, EXPIRED, PENDING_APPROVAL, REJECTED, SCHEDULED, VALIDATED,
};
use super::{find, invalid, member_name, view_with_outcomes};

/// The batch's total: what authorisation reserves.
pub(super) fn total_of(batch: &BulkTransferRow) -> i64 {
    batch.total_amount + batch.total_fee + batch.total_vat
}

/// What an OTP for `batch` is bound to: the batch, its total and its count of valid items, so
/// that a code issued for it authorises no other batch, nor this one once it would pay
/// something else.
fn binding(batch: &BulkTransferRow) -> OtpBinding {
    let total = amount_text(i128::from(total_of(batch)));
    let name = batch
        .reference
        .clone()
        .unwrap_or_else(|| batch.id.to_string());
    OtpBinding {
        key: format!(
            "bulk:{}:{}:{}",
            batch.id,
            total_of(batch),
            batch.valid_count
        ),
        purpose: format!(
            "authorise or approve bulk transfer {name}: {} payments, NGN {total} in all",
            batch.valid_count
        ),
    }
}

/// Where a batch let go at `now` (authorised unheld, or approved) goes: `scheduled` until its
/// `execute_at` when that is still ahead, else `executing` at once; with when the executor takes
/// it up.
fn released_to(
    batch: &BulkTransferRow,
    now: chrono::DateTime<chrono::Utc>,
) -> (&'static str, chrono::DateTime<chrono::Utc>) {
    match batch.execute_at {
        Some(at) if at > now => (SCHEDULED, at),
        _ => (EXECUTING, now),
    }
}

/// `48`: the batch is not in a status `what` needs.
fn wrong_status(batch: &BulkTransferRow, what: &str) -> Error {
    Error::new(ResponseCode::InvalidState)
        .with_message(format!("The bulk transfer is {}: {what}", batch.status))
}

/// `generate_bulk_transfer_otp`: an OTP bound to the batch, which must be `validated` (to be
/// authorised) or `pending_approval` (to be approved).
pub async fn generate_bulk_transfer_otp(
    bank: &Bank,
    caller: &Caller,
    body: models::BulkTransferIdRequest,
) -> Result<models::OtpDelivery, Error> {
    let business_id = caller.principal.business_id.as_str();
    let batch = find(bank, business_id, &body.bulk_transfer_id).await?;
    if ![VALIDATED, PENDING_APPROVAL].contains(&batch.status.as_str()) {
        return Err(wrong_status(
            &batch,
            "only a validated or held bulk transfer takes an OTP",
        ));
    }
    identity::issue_otp(&bank.platform, caller, Some(&binding(&batch))).await
}

/// What `authorize_bulk_transfer` and its integration twin ask.
pub struct Authorising {
    pub bulk_transfer_id: uuid::Uuid,
    pub total: String,
    pub item_count: u64,
    /// The member's OTP (the Dashboard's operation); none through integration credentials.
    pub otp: Option<String>,
}

impl From<models::AuthorizeBulkTransferRequest> for Authorising {
    fn from(body: models::AuthorizeBulkTransferRequest) -> Self {
        Authorising {
            bulk_transfer_id: body.bulk_transfer_id,
            total: body.total.to_string(),
            item_count: body.item_count.get(),
            otp: Some(body.otp.to_string()),
        }
    }
}

impl From<models::AuthorizeBulkTransferApiRequest> for Authorising {
    fn from(body: models::AuthorizeBulkTransferApiRequest) -> Self {
        Authorising {
            bulk_transfer_id: body.bulk_transfer_id,
            total: body.total.to_string(),
            item_count: body.item_count.get(),
            otp: None,
        }
    }
}

/// `01` unless `asked` repeats the batch's total and count of valid items.
fn check_echo(batch: &BulkTransferRow, asked: &Authorising) -> Result<(), Error> {
    let total = Kobo::parse(&asked.total).map_or(-1, Kobo::get);
    if total != total_of(batch) || i64::try_from(asked.item_count).ok() != Some(batch.valid_count) {
        return Err(invalid(format!(
            "`total` and `item_count` must be the bulk transfer's: NGN {} for {} item(s)",
            amount_text(i128::from(total_of(batch))),
            batch.valid_count
        )));
    }
    Ok(())
}

/// `authorize_bulk_transfer` and `authorize_bulk_transfer_api`: the batch (`47`, `48` unless
/// `validated`), the echoed total and count (`01`), the member's bound OTP (`45`); then, in one
/// transaction, the source account (`48`) and the business (`60`) under lock, the total within
/// the daily limit (`83`), the reservation (`83` when the account cannot cover it) and the
/// conditional move out of `validated`, with its audit entry. Keyed.
pub async fn authorize_bulk_transfer(
    bank: &Bank,
    caller: &Caller,
    asked: impl Into<Authorising>,
) -> Result<models::BulkTransfer, Error> {
    let asked: Authorising = asked.into();
    let (store, clock, config) = (
        &bank.platform.store,
        &bank.platform.clock,
        &bank.platform.config,
    );
    let business_id = caller.principal.business_id.as_str();
    caller.principal.ensure_business_active()?;
    let fingerprint = serde_json::json!({
        "bulk_transfer_id": asked.bulk_transfer_id,
        "total": asked.total,
        "item_count": asked.item_count,
    });
    let prepare = async || {
        let batch = find(bank, business_id, &asked.bulk_transfer_id).await?;
        if batch.status != VALIDATED {
            return Err(wrong_status(
                &batch,
                "only a validated bulk transfer can be authorised",
            ));
        }
        check_echo(&batch, &asked)?;
        if let (Some(code), Some(member)) = (&asked.otp, &caller.principal.member) {
            let key = binding(&batch).key;
            identity::check_bound_otp(store, config, clock, &member.id, code, Some(&key)).await?;
        }
        let policy = datastore::approval_policies::find(store, business_id).await?;
        let held = policy.is_some_and(|p| p.is_active && p.min_amount <= batch.total_amount);
        Ok(Prepared::posting(
            (batch, held),
            vec![business_id.to_owned()],
        ))
    };
    let write = async |tx: &mut Tx, (batch, held): (BulkTransferRow, bool), _: &mut Completion| {
        let now = clock.now();
        let (status, daily_limit) = datastore::businesses::locked_for_execution(
            tx,
            business_id,
            bank.transfers.default_daily_limit,
        )
        .await?;
        if status != "active" {
            return Err(Error::new(ResponseCode::BusinessInactive));
        }
        if batch.total_amount > daily_limit {
            return Err(
                Error::new(ResponseCode::ProviderError).with_message(format!(
                    "The bulk transfer's NGN {} is over the daily transfer limit of NGN {}",
                    amount_text(i128::from(batch.total_amount)),
                    amount_text(i128::from(daily_limit))
                )),
            );
        }
        let head = ledger::advance_head(tx, business_id, now).await?;
        let by_name = member_name(caller);
        let at = store::as_stored(head.posted_at);
        let (to, due) = if held {
            (PENDING_APPROVAL, None)
        } else {
            let (to, due) = released_to(&batch, at);
            (to, Some(due))
        };
        let authorisation = Authorisation {
            to,
            due,
            by: &caller.principal.actor_id(),
            by_name: by_name.as_deref(),
            credential_issued_by: caller.principal.credential_issuer.as_deref(),
            reserved: total_of(&batch),
            at,
            expires_at: held.then(|| {
                let hold = chrono::Duration::seconds(bank.transfers.approval_hold_seconds);
                store::as_stored(head.posted_at + hold)
            }),
        };
        let Some(authorised) =
            bulk_transfers::authorise(tx, business_id, &batch.id, &authorisation).await?
        else {
            return Err(wrong_status(
                &batch,
                "another request authorised or cancelled it first",
            ));
        };
        reserve(tx, config.environment, &authorised, head).await?;
        let entry = AuditEntry::by(caller, AuditAction::AuthorizeBulkTransfer)
            .target("bulk_transfer", batch.id.to_string());
        logs::audit(tx, head.posted_at, entry).await?;
        view_with_outcomes(&mut *tx, authorised).await
    };
    let authorised = Keyed::new(store, clock, caller, &fingerprint)
        .run(prepare, write)
        .await?;
    bank.bulk_work.notify_one();
    Ok(authorised)
}

/// The reservation's entry at `head`: the batch's total from the source account into
/// `bulk_reserved`, with the source's debit (`83` when it cannot cover it, `48` when it is not
/// active).
async fn reserve(
    tx: &mut Tx,
    environment: Environment,
    batch: &BulkTransferRow,
    head: ledger::Head,
) -> Result<(), Error> {
    let source = accounts::find_by_id(tx, &batch.source_account_id)
        .await?
        .ok_or_else(|| Error::internal("the source account of a bulk transfer vanished"))?;
    transfers::check_source(&source)?;
    let total = batch.reserved;
    let entry = Entry {
        business_id: &batch.business_id,
        kind: "bulk_transfer_reserve",
        postings: vec![
            Posting {
                account: LedgerAccount::Customer(source.id.clone()),
                amount: -total,
            },
            Posting {
                account: LedgerAccount::Internal(Internal::BulkReserved, environment),
                amount: total,
            },
        ],
    };
    let entry_id = match ledger::post(tx, &entry, head).await? {
        Ok(entry_id) => entry_id,
        Err(Refusal::Inactive { status, .. }) => {
            return Err(Error::new(ResponseCode::InvalidState).with_message(format!(
                "Source account {} is {status}",
                source.account_number
            )))
        }
        Err(_) => {
            return Err(
                Error::new(ResponseCode::ProviderError).with_message(format!(
                    "Insufficient funds in account {}: the batch needs NGN {}",
                    source.account_number,
                    amount_text(i128::from(total))
                )),
            )
        }
    };
    let debit = NewTransaction {
        business_id: &batch.business_id,
        account: &source,
        entry_id: &entry_id,
        head,
        reference_number: transactions::new_reference("BLK", head.posted_at),
        transaction_type: models::TransactionType::Debit,
        category: models::TransactionCategory::Transfer,
        status: models::TransactionStatus::Success,
        channel: models::Channel::Internal,
        amount: Kobo::from_stored(total).ok_or_else(|| Error::internal("a reserve of nothing"))?,
        narration: format!(
            "Bulk transfer {}: {} payments, fees and VAT",
            batch.reference.as_deref().unwrap_or("(no reference)"),
            batch.valid_count
        ),
        session_id: None,
        originator: None,
    };
    transactions::record(tx, &debit).await?;
    Ok(())
}

/// Returns `amount` of `batch`'s reservation to its source account at `head`, with its credit
/// (`why` in its narration).
pub(super) async fn release(
    tx: &mut Tx,
    environment: Environment,
    batch: &BulkTransferRow,
    amount: i64,
    head: ledger::Head,
    why: &str,
) -> Result<(), Error> {
    let Some(returned) = Kobo::from_stored(amount) else {
        return Ok(());
    };
    let entry = Entry {
        business_id: &batch.business_id,
        kind: "bulk_transfer_release",
        postings: vec![
            Posting {
                account: LedgerAccount::Internal(Internal::BulkReserved, environment),
                amount: -amount,
            },
            Posting {
                account: LedgerAccount::Customer(batch.source_account_id.clone()),
                amount,
            },
        ],
    };
    let Ok(entry_id) = ledger::post(tx, &entry, head).await? else {
        return Err(Error::internal(
            "a bulk transfer's release was refused: the source account cannot hold it",
        ));
    };
    let source = accounts::find_by_id(tx, &batch.source_account_id)
        .await?
        .ok_or_else(|| Error::internal("the source account of a bulk transfer vanished"))?;
    let credit = NewTransaction {
        business_id: &batch.business_id,
        account: &source,
        entry_id: &entry_id,
        head,
        reference_number: transactions::new_reference("REL", head.posted_at),
        transaction_type: models::TransactionType::Credit,
        category: models::TransactionCategory::Reversal,
        status: models::TransactionStatus::Success,
        channel: models::Channel::Internal,
        amount: returned,
        narration: format!(
            "Release of bulk transfer {}: {why}",
            batch.reference.as_deref().unwrap_or("(no reference)")
        ),
        session_id: None,
        originator: None,
    };
    transactions::record(tx, &credit).await?;
    Ok(())
}

/// `43` when `member_id` is the batch's maker: the member who authorised it, or who issued the
/// integration credentials it was authorised with.
fn check_not_the_maker(batch: &BulkTransferRow, member_id: &str) -> Result<(), Error> {
    let maker = batch
        .credential_issued_by
        .as_deref()
        .or(batch.authorised_by.as_deref());
    if maker == Some(member_id) {
        return Err(Error::new(ResponseCode::PermissionDenied)
            .with_message("You cannot approve a bulk transfer you authorised"));
    }
    Ok(())
}

/// `approve_bulk_transfer`: a held batch (`48` otherwise), not by its maker (`43`), with the
/// approver's OTP bound to it (`45`), becomes `executing` (`scheduled` when its `execute_at` is
/// still ahead); its money is already reserved.
pub async fn approve_bulk_transfer(
    bank: &Bank,
    caller: &Caller,
    body: models::ApproveBulkTransferRequest,
) -> Result<models::BulkTransfer, Error> {
    let (store, clock, config) = (
        &bank.platform.store,
        &bank.platform.clock,
        &bank.platform.config,
    );
    let member = member_of(&caller.principal)?;
    let business_id = caller.principal.business_id.as_str();
    let batch = find(bank, business_id, &body.bulk_transfer_id).await?;
    if batch.status != PENDING_APPROVAL {
        return Err(wrong_status(&batch, "it is not awaiting approval"));
    }
    check_not_the_maker(&batch, &member.id)?;
    if let Some(expires_at) = batch.expires_at.filter(|at| *at <= clock.now()) {
        return Err(wrong_status(
            &batch,
            &format!(
                "it expired unreviewed at {}",
                expires_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            ),
        ));
    }
    let key = binding(&batch).key;
    identity::check_bound_otp(store, config, clock, &member.id, &body.otp, Some(&key)).await?;
    let now = store::as_stored(clock.now());
    let name = member_name(caller);
    let (to, due) = released_to(&batch, now);
    let end = HoldEnd {
        from: PENDING_APPROVAL,
        to,
        due: Some(due),
        reviewer: Some(&member.id),
        reviewer_name: name.as_deref(),
        reason: None,
        released: 0,
        at: now,
    };
    let mut tx = store.begin().await?;
    let Some(approved) = bulk_transfers::end_hold(&mut tx, business_id, &batch.id, &end).await?
    else {
        tx.rollback().await?;
        return Err(wrong_status(&batch, "it is no longer awaiting approval"));
    };
    let entry = AuditEntry::by(caller, AuditAction::ApproveBulkTransfer)
        .target("bulk_transfer", batch.id.to_string());
    logs::audit(&mut tx, now, entry).await?;
    let answer = view_with_outcomes(&mut tx, approved).await?;
    tx.commit().await.or_internal()?;
    bank.bulk_work.notify_one();
    Ok(answer)
}

/// A held or scheduled batch ends without paying (`rejected` by a checker, `cancelled`,
/// `expired`): its whole reservation released in the same transaction, after the business's
/// head (so a concurrent end, or the start of a scheduled batch, is seen by the conditional
/// move: `48`), with an audit entry.
pub(super) async fn end_unpaid(
    bank: &Bank,
    by: Option<(&Caller, AuditAction)>,
    batch: &BulkTransferRow,
    end: (&str, Option<&str>, Option<&str>),
) -> Result<models::BulkTransfer, Error> {
    let (to, reviewer, reason) = end;
    let store = &bank.platform.store;
    let business_id = batch.business_id.as_str();
    let mut tx = store.begin_posting(&[business_id]).await?;
    let head = ledger::advance_head(&mut tx, business_id, bank.platform.clock.now()).await?;
    let name = reviewer.and(by.and_then(|(caller, _)| member_name(caller)));
    let end = HoldEnd {
        from: &batch.status,
        to,
        due: None,
        reviewer,
        reviewer_name: name.as_deref(),
        reason,
        released: batch.reserved,
        at: store::as_stored(head.posted_at),
    };
    let Some(ended) = bulk_transfers::end_hold(&mut tx, business_id, &batch.id, &end).await? else {
        tx.rollback().await?;
        let now = find(bank, business_id, &batch.id).await?;
        return Err(wrong_status(
            &now,
            "another request or the executor moved it first",
        ));
    };
    let why = match to {
        REJECTED => format!("rejected: {}", reason.unwrap_or_default()),
        EXPIRED => "not reviewed in time".to_owned(),
        _ => CANCELLED.to_owned(),
    };
    let environment = bank.platform.config.environment;
    release(&mut tx, environment, &ended, ended.reserved, head, &why).await?;
    if let Some((caller, action)) = by {
        let entry = AuditEntry::by(caller, action).target("bulk_transfer", batch.id.to_string());
        logs::audit(&mut tx, head.posted_at, entry).await?;
    }
    let answer = view_with_outcomes(&mut tx, ended).await?;
    tx.commit().await.or_internal()?;
    Ok(answer)
}

/// `reject_bulk_transfer`: a held batch (`48` otherwise) is `rejected` with the reason, its
/// reservation released.
pub async fn reject_bulk_transfer(
    bank: &Bank,
    caller: &Caller,
    body: models::RejectBulkTransferRequest,
) -> Result<models::BulkTransfer, Error> {
    let member = member_of(&caller.principal)?;
    let business_id = caller.principal.business_id.as_str();
    let batch = find(bank, business_id, &body.bulk_transfer_id).await?;
    if batch.status != PENDING_APPROVAL {
        return Err(wrong_status(&batch, "it is not awaiting approval"));
    }
    let end = (
        REJECTED,
        Some(member.id.as_str()),
        Some(body.reason.as_str()),
    );
    let by = Some((caller, AuditAction::RejectBulkTransfer));
    end_unpaid(bank, by, &batch, end).await
}

/// Held batches past their `expires_at`: `expired`, their reservation released. Returns how
/// many.
pub async fn expire_due(bank: &Bank) -> Result<usize, Error> {
    let store = &bank.platform.store;
    let due = bulk_transfers::due_holds(store, bank.platform.clock.now()).await?;
    let mut expired = 0;
    for (business_id, id) in due {
        let Some(batch) = bulk_transfers::get(store, &business_id, &id).await? else {
            continue;
        };
        match end_unpaid(bank, None, &batch, (EXPIRED, None, None)).await {
            Ok(_) => expired += 1,
            // Reviewed or cancelled meanwhile: nothing left to expire.
            Err(error) if error.code() == ResponseCode::InvalidState => {}
            Err(error) => return Err(error),
        }
    }
    Ok(expired)
}
