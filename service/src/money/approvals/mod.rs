//! Maker-checker approvals: the transfers the policy (`policy`) holds.
//!
//! A held transfer's amount, fee and VAT are reserved: debited from the source into the bank's
//! held account, with the transfer's debit and fee transactions `pending`. Approval moves the
//! reserve to its destination exactly as an unheld transfer would have gone (intra-bank at once;
//! inter-bank into NIP in flight for the worker). Rejection, cancellation by the initiator and
//! expiry release it back to the source, the transactions becoming `failed`. Each step is a
//! conditional update on the transfer's state, an audit entry and an event, in one transaction.

use chrono::{DateTime, Utc};
use generated_server::models::{self, AuditAction};
use generated_server::ResponseCode;

use crate::datastore::batch::{self, Batch};
use crate::datastore::{self, businesses, Conn};
use crate::error::{Error, OrInternal};
use crate::kernel::clock::Clock;
use crate::kernel::config::{Config, Environment};
use crate::kernel::paging::{self, Page};
use crate::kernel::store::{Store, Tx};
use crate::money::accounts::{self, AccountRow};
use crate::money::amount::Kobo;
use crate::money::approval_notices::{self, Decision};
use crate::money::bank::Bank;
use crate::money::banks;
use crate::money::fees::{self, TransferPolicy};
use crate::money::ledger::{self, Entry, Internal, LedgerAccount, Posting, Refusal};
use crate::money::transactions::{self, Originator};
use crate::money::transfers::{self, ApprovalState, Lookup, Move, TransferStatus};
use crate::outbox::events;
use crate::platform::caller::Caller;
use crate::platform::context::Platform;
use crate::platform::idempotency::{Completion, Keyed, Prepared};
use crate::platform::identity;
use crate::platform::logs::{self, AuditEntry};
use crate::platform::principal::{member_of, Principal};
use crate::provider::{CoreBanking, NipTransfer};

mod policy;

pub use policy::{create_policy, get_policy, update_policy};

/// A held transfer, as approval and release need it.
struct Held {
    id: String,
    business_id: String,
    source_account_id: String,
    beneficiary_account_id: Option<String>,
    beneficiary_account_number: String,
    beneficiary_account_name: String,
    bank_code: String,
    transfer_type: String,
    amount: i64,
    fee: i64,
    vat: i64,
    narration: String,
    reference_number: String,
    debit_transaction_id: Option<String>,
    fee_transaction_id: Option<String>,
    initiated_by: String,
    /// For a transfer made with integration credentials, the member who had issued them.
    credential_issued_by: Option<String>,
    transfer_status: TransferStatus,
    /// When the hold ends unreviewed.
    expires_at: Option<DateTime<Utc>>,
}

async fn load(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
    reference: &str,
) -> Result<Held, Error> {
    let row = datastore::transfers::held(conn, business_id, reference)
        .await?
        .ok_or_else(|| {
            Error::new(ResponseCode::NotFound).with_message(format!(
                "No transfer with reference {reference} in this business"
            ))
        })?;
    Ok(Held {
        transfer_status: transfers::stored_status(&row.transfer_status)?,
        id: row.id,
        business_id: row.business_id,
        source_account_id: row.source_account_id,
        beneficiary_account_id: row.beneficiary_account_id,
        beneficiary_account_number: row.beneficiary_account_number,
        beneficiary_account_name: row.beneficiary_account_name,
        bank_code: row.bank_code,
        transfer_type: row.transfer_type,
        amount: row.amount,
        fee: row.fee,
        vat: row.vat,
        narration: row.narration,
        reference_number: row.reference_number,
        debit_transaction_id: row.debit_transaction_id,
        fee_transaction_id: row.fee_transaction_id,
        initiated_by: row.initiated_by,
        credential_issued_by: row.credential_issued_by,
        expires_at: row.expires_at,
    })
}

fn not_awaiting(reference: &str) -> Error {
    Error::new(ResponseCode::InvalidState)
        .with_message(format!("Transfer {reference} is not awaiting approval"))
}

/// How a held transfer leaves the hold: the move, who reviewed it and why, and for an
/// approval the day its amount now counts on.
struct Review<'a> {
    requested: Move,
    reviewer: Option<&'a str>,
    reason: Option<&'a str>,
    day: Option<&'a str>,
}

impl Held {
    /// `48` unless the transfer awaits approval.
    fn check_awaiting(&self) -> Result<(), Error> {
        if self.transfer_status != TransferStatus::PendingApproval {
            return Err(not_awaiting(&self.reference_number));
        }
        Ok(())
    }

    /// `48` once the hold has ended unreviewed at `now` (its `expires_at`), whether or not
    /// the sweep has released it yet ([`expire_due`]).
    fn check_unexpired(&self, now: DateTime<Utc>) -> Result<(), Error> {
        match self.expires_at {
            Some(expires_at) if expires_at <= now => Err(Error::new(ResponseCode::InvalidState)
                .with_message(format!(
                    "Transfer {} expired unreviewed at {}: it can no longer be approved",
                    self.reference_number,
                    expires_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                ))),
            _ => Ok(()),
        }
    }
}

/// Moves the held transfer out of the hold as `review` says (a conditional update): `48` when
/// another request moved it first. A held transfer counts nothing toward the daily limit, so
/// leaving the hold takes nothing back; an approval counts it itself.
async fn transition(
    tx: &mut Tx,
    held: &Held,
    review: &Review<'_>,
    at: DateTime<Utc>,
) -> Result<TransferStatus, Error> {
    let from = TransferStatus::PendingApproval;
    let to = from
        .next(review.requested)
        .map_err(|_| not_awaiting(&held.reference_number))?;
    let change = datastore::transfers::Review {
        from: from.as_str(),
        to: to.as_str(),
        approval_status: ApprovalState::after(to).as_str(),
        reviewer: review.reviewer,
        reason: review.reason,
        day: review.day,
        at,
    };
    if !datastore::transfers::review(tx, &held.id, &change).await? {
        return Err(not_awaiting(&held.reference_number));
    }
    Ok(to)
}

/// Returns the reserve (amount, fee and VAT) to the source account with its `REV-` credit at
/// `head`, as a NIP reversal does: the hold's debit and fee become `failed`, and the credit is
/// what the account's statement shows giving the money back. Returns the credit's reference.
/// The hold must already be out of `pending_approval` in `tx` ([`transition`]): a hold is
/// released once.
async fn release(
    tx: &mut Tx,
    environment: Environment,
    held: &Held,
    head: ledger::Head,
    reason: &str,
) -> Result<String, Error> {
    let returned = held.amount + held.fee + held.vat;
    let entry = Entry {
        business_id: &held.business_id,
        kind: "transfer_release",
        postings: vec![
            Posting {
                account: LedgerAccount::Internal(Internal::Held, environment),
                amount: -returned,
            },
            Posting {
                account: LedgerAccount::Customer(held.source_account_id.clone()),
                amount: returned,
            },
        ],
    };
    let Ok(entry_id) = ledger::post(tx, &entry, head).await? else {
        return Err(Error::internal("a release of reserved funds was refused"));
    };
    for transaction in [&held.debit_transaction_id, &held.fee_transaction_id] {
        let failed = models::TransactionStatus::Failed;
        transactions::set_status(tx, transaction.as_deref(), failed).await?;
    }
    let source = accounts::find_by_id(tx, &held.source_account_id)
        .await?
        .ok_or_else(|| Error::internal("the source account of a transfer vanished"))?;
    let reference = format!("REV-{}", &held.reference_number[4..]);
    let credit = transactions::NewTransaction {
        business_id: &held.business_id,
        account: &source,
        entry_id: &entry_id,
        head,
        reference_number: reference.clone(),
        transaction_type: models::TransactionType::Credit,
        category: models::TransactionCategory::Reversal,
        status: models::TransactionStatus::Success,
        channel: models::Channel::Internal,
        amount: Kobo::from_stored(returned)
            .ok_or_else(|| Error::internal("a release of nothing"))?,
        narration: format!("Release of {}: {reason}", held.reference_number),
        session_id: None,
        originator: None,
    };
    transactions::record(tx, &credit).await?;
    Ok(reference)
}

pub async fn reject(
    bank: &Bank,
    caller: &Caller,
    body: models::RejectTransferRequest,
) -> Result<models::Transfer, Error> {
    let Platform {
        store,
        config,
        clock,
        ..
    } = &bank.platform;
    let member = member_of(&caller.principal)?.clone();
    let business_id = caller.principal.business_id.clone();
    let reference = body.reference_number.to_string();
    let now = clock.now();
    let mut tx = store.begin_posting(&[&business_id]).await?;
    let held = load(&mut tx, &business_id, &reference).await?;
    held.check_awaiting()?;
    let closing = Closing {
        requested: Move::Reject,
        reviewer: Some(&member.id),
        reason: body.reason.as_str(),
        audit: Some(AuditEntry::by(caller, AuditAction::RejectTransfer)),
    };
    let transfer = close(&mut tx, config.environment, &held, now, closing).await?;
    let reason = body.reason.as_str();
    let decision = Decision::Rejected { reason };
    tell_maker(&mut tx, config, caller, &held, decision, &transfer, now).await?;
    tx.commit().await.or_internal()?;
    Ok(transfer)
}

/// How a held transfer ends without executing.
struct Closing<'a> {
    /// Rejected, cancelled or expired.
    requested: Move,
    reviewer: Option<&'a str>,
    reason: &'a str,
    /// The member's action, when a member ended it (expiry has none).
    audit: Option<AuditEntry>,
}

/// Releases a held transfer's reserve and ends it as `closing` says, inside `tx`: the
/// conditional state change, the event and the audit entry.
async fn close(
    tx: &mut Tx,
    environment: Environment,
    held: &Held,
    now: DateTime<Utc>,
    closing: Closing<'_>,
) -> Result<models::Transfer, Error> {
    // The business's head first: it serializes the business's postings, so the conditional
    // move out of the hold sees any close committed since the hold was loaded (`48`), and only
    // then is the reserve released, once.
    let head = ledger::advance_head(tx, &held.business_id, now).await?;
    let review = Review {
        requested: closing.requested,
        reviewer: closing.reviewer,
        reason: Some(closing.reason),
        day: None,
    };
    let ended = transition(tx, held, &review, head.posted_at).await?;
    let credit = release(tx, environment, held, head, closing.reason).await?;
    datastore::transfers::set_reversal(tx, &held.id, closing.reason, &credit, None).await?;
    let event = ended
        .event()
        .ok_or_else(|| Error::internal(format!("a hold ended {ended} without an event")))?;
    let transfer = transfers::find(&mut *tx, &held.business_id, Lookup::Id(&held.id))
        .await?
        .ok_or_else(|| Error::internal("a transfer vanished"))?;
    events::record(tx, &held.business_id, event, &transfer, head.posted_at).await?;
    if let Some(entry) = closing.audit {
        logs::audit(tx, head.posted_at, entry.target("transfer", &held.id)).await?;
    }
    Ok(transfer)
}

pub async fn cancel(
    bank: &Bank,
    caller: &Caller,
    body: models::CancelTransferRequest,
) -> Result<models::Transfer, Error> {
    let Platform {
        store,
        config,
        clock,
        ..
    } = &bank.platform;
    let member = member_of(&caller.principal)?.clone();
    let business_id = caller.principal.business_id.clone();
    let reference = body.reference_number.to_string();
    let now = clock.now();
    let mut tx = store.begin_posting(&[&business_id]).await?;
    let held = load(&mut tx, &business_id, &reference).await?;
    if held.initiated_by != member.id {
        return Err(Error::new(ResponseCode::PermissionDenied)
            .with_message("Only the member who initiated a transfer may cancel it"));
    }
    held.check_awaiting()?;
    let closing = Closing {
        requested: Move::Cancel,
        reviewer: None,
        reason: "Cancelled by the initiator",
        audit: Some(AuditEntry::by(caller, AuditAction::CancelTransfer)),
    };
    let transfer = close(&mut tx, config.environment, &held, now, closing).await?;
    tx.commit().await.or_internal()?;
    Ok(transfer)
}

/// `approve_transfer`: a different member executes a held transfer, with an OTP of their own
/// (`45`; checked and spent as `funds_transfer` checks the initiator's). The maker may not
/// approve (`43`): the member who initiated it, or for a transfer made with integration
/// credentials, the member who issued them. The beneficiary is looked up again (the account
/// may have changed hands, `49`); the provider screens it again (`80`, `83`, nothing moves and
/// it stays held).
///
/// Approval is when the money moves, so what `funds_transfer` checked is checked again inside
/// the executing transaction ([`recheck`]): the source account is active (`48`), the business
/// is active (`60`), the transfer still holds its reserve (`48`), and the day's limit has room
/// for it (`83`, counted on the day of the approval). Refused, the transfer stays held.
pub async fn approve(
    bank: &Bank,
    caller: &Caller,
    body: models::ApproveTransferRequest,
) -> Result<models::Transfer, Error> {
    let policy = &bank.transfers;
    let provider = &*bank.provider;
    let Platform {
        store,
        config,
        clock,
        ..
    } = &bank.platform;
    let member = member_of(&caller.principal)?;
    let fingerprint = transfers::without_otp(&body)?;
    caller.principal.ensure_business_active()?;
    let prepare = async || {
        let approval =
            prepare_approval(store, config, provider, clock, caller, &member.id, &body).await?;
        let ledgers = approval.ledgers();
        Ok(Prepared::posting(approval, ledgers))
    };
    let write = async |tx: &mut Tx, approval: Approval, _: &mut Completion| {
        execute_approval(tx, config, policy, clock, caller, &member.id, approval).await
    };
    Keyed::new(store, clock, caller, &fingerprint)
        .run(prepare, write)
        .await
}

/// What an approval reads and asks before its transaction.
struct Approval {
    held: Held,
    /// The beneficiary, looked up again.
    beneficiary: banks::Beneficiary,
    source: AccountRow,
    /// The source as an intra-bank recipient reads it.
    payer: Originator,
}

impl Approval {
    /// The businesses whose ledgers the approval posts to: the approver's and, intra-bank,
    /// the recipient's.
    fn ledgers(&self) -> Vec<String> {
        let mut ledgers = vec![self.held.business_id.clone()];
        if let Some((_, recipient)) = &self.beneficiary.kobo_account {
            ledgers.push(recipient.clone());
        }
        ledgers
    }
}

/// The approval's checks before its transaction, in the documented order: the transfer
/// awaits approval (`47`, `48`), the approver is not its maker (`43`), their OTP (`45`,
/// spent), the beneficiary by its name (`06`, `49`), the provider's screening (`80`, `83`).
async fn prepare_approval(
    store: &Store,
    config: &Config,
    provider: &dyn CoreBanking,
    clock: &Clock,
    caller: &Caller,
    approver: &str,
    body: &models::ApproveTransferRequest,
) -> Result<Approval, Error> {
    let business_id = &caller.principal.business_id;
    let reference = body.reference_number.as_str();
    let held = load(store, business_id, reference).await?;
    held.check_awaiting()?;
    held.check_unexpired(clock.now())?;
    check_not_the_maker(&held, approver)?;
    // Boxed, as the payout's is (docs/decisions.md, "Cold paths boxed").
    Box::pin(identity::check_otp(
        store,
        config,
        clock,
        approver,
        body.otp.as_str(),
    ))
    .await?;
    let beneficiary = beneficiary_still_named(store, provider, &held).await?;
    let source = crate::datastore::accounts::find_by_id(store, &held.source_account_id)
        .await?
        .ok_or_else(|| Error::internal("the source account vanished"))?;
    let payer = transfers::payer(&source, &accounts::business_name(store, business_id).await?);
    provider
        .screen_transfer(&NipTransfer {
            reference_number: held.reference_number.clone(),
            source_account_number: source.account_number.clone(),
            originator_account_name: payer.account_name.clone(),
            beneficiary_account_number: held.beneficiary_account_number.clone(),
            beneficiary_account_name: held.beneficiary_account_name.clone(),
            bank_code: held.bank_code.clone(),
            amount_kobo: held.amount,
            narration: held.narration.clone(),
        })
        .await?;
    Ok(Approval {
        held,
        beneficiary,
        source,
        payer,
    })
}

/// The approval's transaction: the heads, the checks of execution ([`recheck`]), the
/// conditional move out of the hold, the reserve to its destination, the intra-bank credit,
/// the event and the audit entry.
#[allow(clippy::too_many_arguments)]
async fn execute_approval(
    tx: &mut Tx,
    config: &Config,
    policy: &TransferPolicy,
    clock: &Clock,
    caller: &Caller,
    approver: &str,
    approval: Approval,
) -> Result<models::Transfer, Error> {
    let Approval {
        held,
        beneficiary,
        source,
        payer,
    } = approval;
    let business_id = held.business_id.as_str();
    let recipient_business = beneficiary.kobo_account.as_ref().map(|(_, b)| b.as_str());
    let heads = transfers::lock_heads(tx, business_id, recipient_business, 1, clock.now()).await?;
    let head = heads.source;
    let day = fees::lagos_day(head.posted_at);
    // The time the money moves: the approval's preparation (an OTP, the provider's screening)
    // may have run past the hold's end.
    held.check_unexpired(head.posted_at)?;
    recheck(tx, policy, &held, &source, &day).await?;
    let intra = held.transfer_type == "intra";
    let review = Review {
        requested: Move::Approve { intra },
        reviewer: Some(approver),
        reason: None,
        day: Some(&day),
    };
    let approved = transition(tx, &held, &review, head.posted_at).await?;
    let entry_id = post_reserve(tx, config, &held, head).await?;
    transactions::set_status(
        tx,
        held.fee_transaction_id.as_deref(),
        models::TransactionStatus::Success,
    )
    .await?;
    if intra {
        transactions::set_status(
            tx,
            held.debit_transaction_id.as_deref(),
            models::TransactionStatus::Success,
        )
        .await?;
        if let Some((looked_up, recipient)) = beneficiary.kobo_account.as_ref() {
            let credited = Credited {
                account_id: &looked_up.id,
                business_id: recipient,
                head: heads.recipient.unwrap_or(head),
                entry_id: &entry_id,
            };
            credit_intra(tx, &held, head, &credited, &payer).await?;
        }
    }
    let transfer = transfers::find(&mut *tx, business_id, Lookup::Id(&held.id))
        .await?
        .ok_or_else(|| Error::internal("a transfer vanished"))?;
    // An inter-bank transfer is announced when NIP settles it.
    if let (true, Some(event)) = (intra, approved.event()) {
        let at = head.posted_at;
        events::record(tx, business_id, event, &transfer, at).await?;
    }
    let entry = AuditEntry::by(caller, AuditAction::ApproveTransfer).target("transfer", &held.id);
    logs::audit(tx, head.posted_at, entry).await?;
    tell_maker(
        tx,
        config,
        caller,
        &held,
        Decision::Approved,
        &transfer,
        head.posted_at,
    )
    .await?;
    Ok(transfer)
}

/// Tells the held transfer's maker how `caller` decided it ([`approval_notices::tell_maker`]).
async fn tell_maker(
    tx: &mut Tx,
    config: &Config,
    caller: &Caller,
    held: &Held,
    decision: Decision<'_>,
    transfer: &models::Transfer,
    at: DateTime<Utc>,
) -> Result<(), Error> {
    let reviewer = member_of(&caller.principal)?;
    let reviewer_name = approval_notices::full_name(&reviewer.first_name, &reviewer.last_name);
    let maker = held.credential_issued_by.as_deref();
    let maker = maker.unwrap_or(&held.initiated_by);
    let telling = approval_notices::Telling {
        config,
        now: at,
        business_id: &held.business_id,
    };
    approval_notices::tell_maker(tx, &telling, maker, &reviewer_name, decision, transfer).await
}

/// Posts the held transfer's reserve to its destination (the beneficiary's Kobo account or NIP
/// in flight, and the fees): `83` when the beneficiary's account cannot hold it.
async fn post_reserve(
    tx: &mut Tx,
    config: &Config,
    held: &Held,
    head: ledger::Head,
) -> Result<String, Error> {
    let charges = held.fee + held.vat;
    let mut postings = vec![Posting {
        account: LedgerAccount::Internal(Internal::Held, config.environment),
        amount: -(held.amount + charges),
    }];
    postings.extend(transfers::destination_postings(
        config.environment,
        held.beneficiary_account_id.as_deref(),
        held.amount,
        charges,
    ));
    let entry = Entry {
        business_id: &held.business_id,
        kind: "transfer_approval",
        postings,
    };
    match ledger::post(tx, &entry, head).await? {
        Ok(entry_id) => Ok(entry_id),
        Err(
            Refusal::BalanceLimit { .. }
            | Refusal::InsufficientFunds { .. }
            | Refusal::Inactive { .. },
        ) => Err(Error::new(ResponseCode::ProviderError)
            .with_message("The beneficiary account cannot hold this amount")),
    }
}

/// The Kobo account an approved intra-bank transfer credits, and where in its business's
/// ledger.
struct Credited<'a> {
    account_id: &'a str,
    business_id: &'a str,
    head: ledger::Head,
    entry_id: &'a str,
}

/// The beneficiary's side of an approved intra-bank transfer: its account read again (the
/// approval may come hours after the request), its collection and `collection.received`.
async fn credit_intra(
    tx: &mut Tx,
    held: &Held,
    head: ledger::Head,
    credited: &Credited<'_>,
    payer: &Originator,
) -> Result<(), Error> {
    let amount =
        Kobo::from_stored(held.amount).ok_or_else(|| Error::internal("a transfer of nothing"))?;
    let account = accounts::find_by_id(tx, credited.account_id)
        .await?
        .ok_or_else(|| Error::internal("the beneficiary account vanished"))?;
    transfers::check_recipient(&account)?;
    // The same business paying itself: the credit takes the business's next place.
    let credit_head = if credited.business_id == held.business_id {
        ledger::advance_head(tx, &held.business_id, head.posted_at).await?
    } else {
        credited.head
    };
    let mut credit = Batch::new();
    transfers::credit_recipient(
        &mut credit,
        credited.business_id,
        &account,
        credit_head,
        credited.entry_id,
        amount,
        &held.narration,
        payer,
    )?;
    Ok(batch::run(tx, credit).await?)
}

/// `43` when `member_id` is the transfer's maker: the member who initiated it or, for a
/// transfer made with integration credentials, the member who had issued them
/// (`regenerate_secret`), who could make it and approve it alone. Maker and checker are two
/// people.
fn check_not_the_maker(held: &Held, member_id: &str) -> Result<(), Error> {
    let refused =
        |why: &'static str| Err(Error::new(ResponseCode::PermissionDenied).with_message(why));
    if held.initiated_by == member_id {
        return refused("You cannot approve a transfer you initiated");
    }
    if held.credential_issued_by.as_deref() == Some(member_id) {
        return refused(
            "You cannot approve a transfer made with integration credentials you issued: \
             whoever controls the client secret is the transfer's maker",
        );
    }
    Ok(())
}

/// The beneficiary, looked up again: `06` when gone, `49` when the account no longer carries
/// the name the transfer was made to. (A Kobo account's name is its holder's since issue 28;
/// a transfer held before then carries the account's own name, which is accepted too.)
async fn beneficiary_still_named(
    store: &Store,
    provider: &dyn CoreBanking,
    held: &Held,
) -> Result<banks::Beneficiary, Error> {
    let beneficiary = banks::resolve(
        store,
        provider,
        &held.bank_code,
        &held.beneficiary_account_number,
    )
    .await?;
    let named = fees::same_name(&held.beneficiary_account_name, &beneficiary.account_name)
        || beneficiary
            .kobo_account
            .as_ref()
            .is_some_and(|(account, _)| {
                fees::same_name(&held.beneficiary_account_name, &account.account_name)
            });
    if !named {
        return Err(
            Error::new(ResponseCode::BeneficiaryNameMismatch).with_message(format!(
                "The beneficiary account is now held by {}",
                beneficiary.account_name
            )),
        );
    }
    Ok(beneficiary)
}

/// What `funds_transfer` checked, checked again in the transaction that executes a held
/// transfer, each under a lock that holds it until the commit (so a freeze or a deactivation
/// that commits first is seen, and one that comes later waits): the source account is
/// active (`48`), the business is active (`60`), and the day of `day` has room for the amount
/// under the business's limit (`83`), where it is counted. The reserve is checked by the
/// conditional state change that follows ([`transition`]).
async fn recheck(
    tx: &mut Tx,
    policy: &TransferPolicy,
    held: &Held,
    source: &AccountRow,
    day: &str,
) -> Result<(), Error> {
    let status = accounts::locked_status(tx, &held.source_account_id).await?;
    if status != "active" {
        return Err(Error::new(ResponseCode::InvalidState).with_message(format!(
            "Source account {} is {status}: the transfer stays held until it is rejected, \
                 cancelled or expires",
            source.account_number
        )));
    }
    let business = locked_business(tx, &held.business_id, policy).await?;
    if !business.active {
        return Err(Error::new(ResponseCode::BusinessInactive));
    }
    transfers::count_toward_daily_limit(
        tx,
        &held.business_id,
        day,
        held.amount,
        business.daily_limit,
    )
    .await
}

/// What an approval reads of its business, under lock.
struct BusinessAtExecution {
    active: bool,
    daily_limit: i64,
}

/// The business's status and daily limit, read under a share lock until `tx` ends on
/// PostgreSQL (the operator's deactivation waits for it, or it for the deactivation); SQLite's
/// write transaction holds the whole database already.
async fn locked_business(
    tx: &mut Tx,
    business_id: &str,
    policy: &TransferPolicy,
) -> Result<BusinessAtExecution, Error> {
    let (status, daily_limit) =
        businesses::locked_for_execution(tx, business_id, policy.default_daily_limit).await?;
    Ok(BusinessAtExecution {
        active: status == "active",
        daily_limit,
    })
}

/// Held transfers past their `expires_at`: released, `expired`, `transfer.expired`. Returns
/// how many.
pub async fn expire_due(
    store: &Store,
    environment: Environment,
    clock: &Clock,
) -> Result<usize, Error> {
    let now = clock.now();
    let due = datastore::transfers::due_expiries(store, now).await?;
    let mut expired = 0;
    for (business_id, reference) in due {
        let mut tx = store.begin_posting(&[&business_id]).await?;
        let held = load(&mut tx, &business_id, &reference).await?;
        if held.check_awaiting().is_err() {
            continue;
        }
        let closing = Closing {
            requested: Move::Expire,
            reviewer: None,
            reason: "Not reviewed in time",
            audit: None,
        };
        match close(&mut tx, environment, &held, now, closing).await {
            Ok(_) => {}
            // Reviewed meanwhile (an approval, a rejection or a cancellation committed after
            // it was loaded): nothing left to expire; the pass goes on with the others.
            Err(error) if error.code() == ResponseCode::InvalidState => continue,
            Err(error) => return Err(error),
        }
        tx.commit().await.or_internal()?;
        expired += 1;
    }
    Ok(expired)
}

/// `fetch_pending_transfers`: held transfers, oldest first (the cursor moves forward), each
/// with its maker's name and its source account's balance ([`transfers::details`]).
pub async fn fetch_pending(
    bank: &Bank,
    principal: &Principal,
    body: models::FetchPendingTransfersRequest,
) -> Result<Page<Vec<models::TransferDetail>>, Error> {
    let store = &bank.store;
    let business_id = principal.business_id.as_str();
    let cursor = paging::keyset_cursor(body.cursor_created_at, body.cursor_id)?;
    let limit = body.limit.get().min(paging::PAGE_SIZE_MAX);
    let number = body.source_account_number.as_ref().map(|n| n.to_string());
    let references = datastore::transfers::pending_references(
        store,
        business_id,
        number.as_deref(),
        cursor,
        limit,
    )
    .await?;
    let mut transfers_found = Vec::with_capacity(references.len());
    for reference in &references {
        if let Some(transfer) =
            transfers::find(store, business_id, Lookup::ReferenceNumber(reference)).await?
        {
            transfers_found.push(transfer);
        }
    }
    let has_more = paging::trim_to_page(&mut transfers_found, limit);
    let last = transfers_found.last().map(|t| (t.created_at, t.id));
    Ok(Page {
        data: transfers::details(store, principal, transfers_found).await?,
        pagination: paging::keyset_pagination(has_more, last, limit),
    })
}
