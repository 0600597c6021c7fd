//! Transfers: money leaving an account of the business.
//!
//! Checks run in the order the spec documents (`funds_transfer`'s "Order of checks"); the
//! provider is called (name enquiry, screening) before any database transaction, so a slow
//! provider never holds a lock, and `80` is answered only when nothing was debited.
//!
//! - Intra-bank (`090823`): one database transaction debits the source and credits the
//!   beneficiary (any business of the environment, which gets its own collection and
//!   `collection.received`).
//! - Inter-bank: one transaction debits amount, fee and VAT (into NIP in flight and fees) and
//!   leaves the transfer `processing`; `nip::process_due` submits it and settles or reverses it.
//!
//! Locks: the ledger heads of the businesses involved, in business-id order, then accounts.

use std::ops::ControlFlow;

use chrono::{DateTime, Utc};
use generated_server::models::{self, AuditAction};
use generated_server::ResponseCode;
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::error::{Error, OrInternal};
use crate::kernel::batch::Batch;
use crate::kernel::clock::Clock;
use crate::kernel::config::Config;
use crate::kernel::paging::{self, Conditions, Page, Sql};
use crate::kernel::store::{self, Store, Tx};
use crate::money::accounts::{self, value, AccountRow, KoboAccount};
use crate::money::amount::{amount_text, Kobo};
use crate::money::banks::{self, Beneficiary};
use crate::money::fees::{self, Charges};
use crate::money::ledger::{self, Entry, Head, Internal, LedgerAccount, Posting, Refusal};
use crate::money::nuban;
use crate::money::transactions::{self, NewTransaction, Originator};
use crate::outbox::events;
use crate::platform::caller::Caller;
use crate::platform::idempotency::{self, Claim};
use crate::platform::identity;
use crate::platform::logs::{self, AuditEntry};
use crate::provider::{CoreBanking, NipTransfer};

/// A transfer request, from either family.
#[derive(Clone, Debug)]
pub struct TransferRequest {
    pub source_account_number: String,
    pub source_account_name: String,
    pub beneficiary_account_number: String,
    pub beneficiary_account_name: String,
    pub bank_code: String,
    pub amount: String,
    pub narration: Option<String>,
    pub transfer_type: models::TransferType,
    pub bvn: Option<String>,
    pub kyc: Option<u64>,
    pub reference: Option<String>,
}

/// A [`TransferRequest`] from a body of either family (the two share every field but `otp`).
macro_rules! transfer_request_from {
    ($($body:ty),+) => {$(
        impl From<&$body> for TransferRequest {
            fn from(body: &$body) -> TransferRequest {
                TransferRequest {
                    source_account_number: body.source_account_number.to_string(),
                    source_account_name: body.source_account_name.to_string(),
                    beneficiary_account_number: body.beneficiary_account_number.to_string(),
                    beneficiary_account_name: body.beneficiary_account_name.to_string(),
                    bank_code: body.bank_code.to_string(),
                    amount: body.amount.to_string(),
                    narration: body.narration.as_ref().map(|n| n.to_string()),
                    transfer_type: body.transfer_type,
                    bvn: body.bvn.as_ref().map(|b| b.to_string()),
                    kyc: body.kyc.map(|k| k.get()),
                    reference: body.reference.as_ref().map(|r| r.to_string()),
                }
            }
        }
    )+};
}

transfer_request_from!(
    models::FundsTransferRequest,
    models::FundsTransferApiRequest
);

/// The idempotency fingerprint of a body that carries an OTP (`funds_transfer`,
/// `approve_transfer`): the body without it. The OTP is single-use, so a retry carries a new one.
pub(crate) fn without_otp<B: serde::Serialize>(body: &B) -> Result<Value, Error> {
    let mut fingerprint = serde_json::to_value(body).or_internal()?;
    if let Value::Object(fields) = &mut fingerprint {
        fields.remove("otp");
    }
    Ok(fingerprint)
}

/// Checks the OTP `code` of the member acting (`45` when wrong, expired, used or another
/// member's), before any database transaction, and spends it: an OTP authorises one attempt,
/// whatever its outcome (a transfer refused afterwards does not leave it usable). Nothing to
/// check without a code or a member (an integration's transfer).
///
/// The operation runs under an idempotency key: a retry (or a retry racing its own first
/// send) finds the OTP spent by that send. It gets that send's stored answer (`Break`) rather
/// than `45`.
pub(crate) async fn check_member_otp_unless_replayed<B, T>(
    store: &Store,
    config: &Config,
    clock: &Clock,
    caller: &Caller,
    fingerprint: &B,
    code: Option<&str>,
) -> Result<ControlFlow<T, ()>, Error>
where
    B: serde::Serialize,
    T: serde::de::DeserializeOwned,
{
    let (Some(code), Some(member)) = (code, &caller.principal.member) else {
        return Ok(ControlFlow::Continue(()));
    };
    match identity::check_otp(store, config, clock, &member.id, code).await {
        Ok(()) => Ok(ControlFlow::Continue(())),
        Err(error) => {
            let business_id = &caller.principal.business_id;
            accounts::refused_unless_replayed(
                store,
                clock.now(),
                caller,
                business_id,
                fingerprint,
                error,
            )
            .await
            .map(ControlFlow::Break)
        }
    }
}

fn invalid(message: impl Into<std::borrow::Cow<'static, str>>) -> Error {
    Error::new(ResponseCode::InvalidRequest).with_message(message)
}

fn refused(message: impl Into<std::borrow::Cow<'static, str>>) -> Error {
    Error::new(ResponseCode::ProviderError).with_message(message)
}

/// `funds_transfer`: a member's transfer, with an OTP of theirs.
pub async fn funds_transfer(
    store: &Store,
    config: &Config,
    provider: &dyn CoreBanking,
    clock: &Clock,
    caller: &Caller,
    body: models::FundsTransferRequest,
) -> Result<models::Transfer, Error> {
    let fingerprint = without_otp(&body)?;
    let request = TransferRequest::from(&body);
    let otp = Some(body.otp.to_string());
    initiate(
        store,
        config,
        provider,
        clock,
        caller,
        &fingerprint,
        request,
        otp,
    )
    .await
}

/// `funds_transfer_api`: an integration's payout; the `Idempotency-Key` (which the spec makes
/// required, so the router refuses a call without one) stands for the OTP.
pub async fn funds_transfer_api(
    store: &Store,
    config: &Config,
    provider: &dyn CoreBanking,
    clock: &Clock,
    caller: &Caller,
    body: models::FundsTransferApiRequest,
) -> Result<models::Transfer, Error> {
    let request = TransferRequest::from(&body);
    initiate(store, config, provider, clock, caller, &body, request, None).await
}

/// Stores a lasting refusal under the request's key (so a retry meets it again) and answers
/// it; any other refusal is answered as is.
async fn refuse<B: serde::Serialize>(
    store: &Store,
    clock: &Clock,
    caller: &Caller,
    fingerprint: &B,
    error: Error,
) -> Result<models::Transfer, Error> {
    if caller.idempotency_key.is_some() && idempotency::stored_refusal(error.code()) {
        let mut tx = store.begin().await?;
        let claim = idempotency::claim(
            &mut tx,
            clock.now(),
            caller,
            &caller.principal.business_id,
            fingerprint,
        )
        .await?;
        if let Claim::Replay(data) = claim {
            return idempotency::replay(caller, data);
        }
        idempotency::complete_refusal(&mut tx, &claim, &error).await?;
        tx.commit().await.or_internal()?;
    }
    Err(error)
}

#[allow(clippy::too_many_arguments)]
async fn initiate<B: serde::Serialize>(
    store: &Store,
    config: &Config,
    provider: &dyn CoreBanking,
    clock: &Clock,
    caller: &Caller,
    fingerprint: &B,
    request: TransferRequest,
    otp: Option<String>,
) -> Result<models::Transfer, Error> {
    let business_id = caller.principal.business_id.clone();
    caller.principal.ensure_business_active()?;
    if let Some(transfer) =
        accounts::replayed(store, clock.now(), caller, &business_id, fingerprint).await?
    {
        return Ok(transfer);
    }

    // The body's own rules.
    let policy = &config.transfers;
    let amount = Kobo::parse(&request.amount)
        .ok_or_else(|| invalid("`amount`: must be positive, with at most two fraction digits"))?;
    if amount.get() < policy.min_amount || amount.get() > policy.max_amount {
        return Err(invalid(format!(
            "`amount`: must be between {} and {}",
            amount_text(i128::from(policy.min_amount)),
            amount_text(i128::from(policy.max_amount))
        )));
    }
    let intra = request.bank_code == nuban::BANK_CODE;
    if intra != (request.transfer_type == models::TransferType::Intra) {
        return Err(invalid(
            "`transfer_type`: `intra` goes with bank code 090823, `inter` with any other",
        ));
    }
    if intra && request.beneficiary_account_number == request.source_account_number {
        return Err(invalid(
            "`beneficiary_account_number`: must differ from the source account",
        ));
    }

    // One read for the accounts and the business's settings, judged in the order below.
    let reads = payout_reads(
        store.pool(),
        config.transfers.default_daily_limit,
        &business_id,
        &request.source_account_number,
        intra.then_some(request.beneficiary_account_number.as_str()),
    )
    .await?;

    // The source account: the business's (42), active (48), its name as registered.
    let Some((source, settings)) = reads.source else {
        let error = banks::source_not_found(&request.source_account_number);
        return refuse(store, clock, caller, fingerprint, error).await;
    };
    check_source(&source)?;
    if !fees::same_name(&request.source_account_name, &source.account_name) {
        return Err(invalid(format!(
            "`source_account_name`: account {} is named {}",
            source.account_number, source.account_name
        )));
    }

    // The OTP (a member's transfer): checked and spent now, whatever happens next.
    match check_member_otp_unless_replayed(
        store,
        config,
        clock,
        caller,
        fingerprint,
        otp.as_deref(),
    )
    .await?
    {
        ControlFlow::Continue(()) => {}
        ControlFlow::Break(transfer) => return Ok(transfer),
    }

    // The beneficiary, by name enquiry (06, 80), and the names (49).
    let beneficiary = match banks::resolve_found(
        provider,
        &request.bank_code,
        &request.beneficiary_account_number,
        reads.beneficiary,
    )
    .await
    {
        Ok(found) => found,
        Err(error) => return refuse(store, clock, caller, fingerprint, error).await,
    };
    if let Some(error) = mismatch(&request, &beneficiary) {
        return refuse(store, clock, caller, fingerprint, error).await;
    }

    // The provider's screening (83, 80), before anything moves.
    let reference_number = transactions::new_reference("TRF", clock.now());
    let payer = payer(&source, &settings.name);
    let narration = fees::narration(
        request.narration.as_deref(),
        &format!("Transfer from {}", payer.account_name),
    );
    let nip = NipTransfer {
        reference_number: reference_number.clone(),
        source_account_number: source.account_number.clone(),
        beneficiary_account_number: beneficiary.account_number.clone(),
        bank_code: beneficiary.bank_code.clone(),
        amount_kobo: amount.get(),
        narration: narration.clone(),
    };
    provider.screen_transfer(&nip).await?;

    // What needs no lock is read before the transaction (on SQLite, before the write turn):
    // the business's daily limit and approval policy and the beneficiary's own account (read
    // above), the client reference. Whatever races them is decided inside it: the unique index
    // on the reference, the conditional debit (an account frozen meanwhile refuses it).
    let held = settings
        .policy_minimum
        .is_some_and(|minimum| amount.get() >= minimum);
    if held && amount.get() > settings.daily_limit {
        // It could never be approved under today's limit: refused now, not in 72 hours.
        return Err(refused(format!(
            "The daily transfer limit of NGN {} is below this amount: no approval could \
             send it",
            amount_text(i128::from(settings.daily_limit))
        )));
    }
    if let Some(reference) = &request.reference {
        if let Some(other) = reference_owner(store, &business_id, reference).await? {
            let error = duplicate(reference, &other);
            return refuse(store, clock, caller, fingerprint, error).await;
        }
    }
    let recipient = match (&beneficiary.kobo_account, held) {
        (Some((account, business)), false) => {
            check_recipient(account)?;
            Some((account, business.as_str()))
        }
        _ => None,
    };

    let charges = fees::charges(policy, !intra, amount.get());
    // The business's places in its ledger: the debit, the fee, its own account's credit.
    let credits_itself = recipient.is_some_and(|(_, business)| business == business_id);
    let places = 1 + u32::from(charges.total() > 0) + u32::from(credits_itself);
    let now = clock.now();
    let recipient_business = beneficiary
        .kobo_account
        .as_ref()
        .map(|(_, business)| business.clone());
    let mut tx = begin_payout(store, &business_id, recipient_business.as_deref()).await?;
    let claim = idempotency::claim(&mut tx, now, caller, &business_id, fingerprint).await?;
    if let Claim::Replay(data) = claim {
        return idempotency::replay(caller, data);
    }
    let heads = lock_heads(
        &mut tx,
        &business_id,
        recipient_business.as_deref(),
        places,
        now,
    )
    .await?;
    let head = heads.source;
    // The daily limit (83), counted in the business's running total of the day the money
    // moves: today, unless the transfer is held (its approval counts it on its own day).
    let day = fees::lagos_day(head.posted_at);
    if !held {
        count_toward_daily_limit(
            &mut tx,
            &business_id,
            &day,
            amount.get(),
            settings.daily_limit,
        )
        .await?;
    }

    let (initiated_by, initiated_via) = match &caller.principal.member {
        Some(member) => (member.id.clone(), "dashboard"),
        None => (business_id.clone(), "integration"),
    };
    // Whoever controls the integration credentials is the maker of what they pay.
    let credential_issued_by = caller.principal.credential_issuer.clone();
    let plan = Plan {
        business_id: &business_id,
        source: &source,
        payer: &payer,
        beneficiary: &beneficiary,
        recipient,
        amount,
        charges,
        narration: &narration,
        reference_number: &reference_number,
        head,
        recipient_head: heads.recipient,
        held,
    };
    // Everything from here on is written in one statement, after the balances moved.
    let mut batch = Batch::new();
    let (debit, fee_transaction) = execute(&mut tx, &mut batch, config, &plan).await??;
    let stored = Columns {
        id: store::new_id(),
        reference_number,
        reference: request.reference.clone(),
        amount: amount.get(),
        fee: charges.fee,
        vat: charges.vat,
        transfer_status: if held {
            "pending_approval"
        } else if intra {
            "success"
        } else {
            "processing"
        }
        .to_owned(),
        approval_status: if held {
            "awaiting_approval"
        } else {
            "not_required"
        }
        .to_owned(),
        transfer_type: if intra { "intra" } else { "inter" }.to_owned(),
        source_account_number: source.account_number.clone(),
        beneficiary_account_number: beneficiary.account_number.clone(),
        beneficiary_account_name: beneficiary.account_name.clone(),
        bank_code: beneficiary.bank_code.clone(),
        bank_name: beneficiary.bank_name.clone(),
        narration,
        session_id: None,
        failure_reason: None,
        reversal_reference_number: None,
        initiated_by,
        initiated_via: initiated_via.to_owned(),
        reviewed_by: None,
        expires_at: held.then(|| {
            store::timestamp(
                head.posted_at + chrono::Duration::seconds(policy.approval_hold_seconds),
            )
        }),
        created_at: store::timestamp(head.posted_at),
        updated_at: store::timestamp(head.posted_at),
    };
    let transfer = stored.view()?;
    batch
        .push(
            "INSERT INTO transfers (id, business_id, reference_number, reference, \
               source_account_id, beneficiary_account_number, beneficiary_account_name, \
               beneficiary_account_id, bank_code, bank_name, transfer_type, amount, fee, vat, \
               narration, transfer_status, approval_status, session_id, failure_reason, \
               reversal_reference_number, debit_transaction_id, fee_transaction_id, initiated_by, \
               initiated_via, reviewed_by, expires_at, day, submitted, attempts, next_attempt_at, \
               lease_until, created_at, updated_at, credential_issued_by) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, \
               $17, NULL, NULL, NULL, $18, $19, $20, $21, NULL, $22, $23, 0, 0, NULL, NULL, \
               $24, $25, $26)",
        )
        .bind(stored.id.clone())
        .bind(business_id.clone())
        .bind(stored.reference_number.clone())
        .bind(stored.reference.clone())
        .bind(source.id.clone())
        .bind(stored.beneficiary_account_number.clone())
        .bind(stored.beneficiary_account_name.clone())
        .bind(
            beneficiary
                .kobo_account
                .as_ref()
                .map(|(account, _)| account.id.clone()),
        )
        .bind(stored.bank_code.clone())
        .bind(stored.bank_name.clone())
        .bind(stored.transfer_type.clone())
        .bind(stored.amount)
        .bind(stored.fee)
        .bind(stored.vat)
        .bind(stored.narration.clone())
        .bind(stored.transfer_status.clone())
        .bind(stored.approval_status.clone())
        .bind(debit)
        .bind(fee_transaction)
        .bind(stored.initiated_by.clone())
        .bind(stored.initiated_via.clone())
        .bind(stored.expires_at.clone())
        .bind(day)
        .bind(stored.created_at.clone())
        .bind(stored.updated_at.clone())
        .bind(credential_issued_by);
    let event = if held {
        Some("transfer.pending_approval")
    } else if intra {
        Some("transfer.success")
    } else {
        None
    };
    if let Some(event) = event {
        events::record_into(&mut batch, &business_id, event, &transfer, head.posted_at)?;
    }
    logs::audit_into(
        &mut batch,
        head.posted_at,
        AuditEntry::by(caller, AuditAction::FundsTransfer).target("transfer", &stored.id),
    );
    idempotency::complete_into(&mut batch, &claim, &transfer)?;
    match batch.execute(&mut tx).await {
        Ok(()) => {}
        // Another transfer took the client reference after it was checked: nothing of this
        // one is kept, and the refusal is stored as the check would have.
        Err(error) if store::is_unique_violation(&error) && request.reference.is_some() => {
            drop(tx);
            let reference = request.reference.as_deref().unwrap_or_default();
            let Some(other) = reference_owner(store, &business_id, reference).await? else {
                return Err(Error::from(error));
            };
            return refuse(
                store,
                clock,
                caller,
                fingerprint,
                duplicate(reference, &other),
            )
            .await;
        }
        Err(error) => return Err(Error::from(error)),
    }
    tx.commit().await.or_internal()?;
    Ok(transfer)
}

/// What a transfer reads of its business: its registered name, its daily limit and, when it
/// has an active approval policy, the amount from which that policy holds a transfer.
struct BusinessSettings {
    name: String,
    daily_limit: i64,
    policy_minimum: Option<i64>,
}

/// What a payout reads before its transaction.
struct PayoutReads {
    /// The source account, if the business's, with the business's settings.
    source: Option<(AccountRow, BusinessSettings)>,
    /// An intra-bank beneficiary's account, whoever's, with its business.
    beneficiary: Option<KoboAccount>,
}

/// The source account, the beneficiary's if it is in this bank, and the business's daily
/// limit and approval policy, in one statement (they were three round trips). By account
/// number only, which only its unique index leads with, so the kept plan cannot read a
/// business's accounts (see `accounts::find_by_number_anywhere`); the settings are by the
/// business's key, on every row. An inter-bank payout looks up the source's number twice.
async fn payout_reads<'e, E>(
    executor: E,
    default_daily_limit: i64,
    business_id: &str,
    source: &str,
    intra_beneficiary: Option<&str>,
) -> Result<PayoutReads, Error>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let sql = format!(
        "SELECT {}, a.business_id, o.name AS business_name, b.name AS payer_name, \
           COALESCE(b.daily_transfer_limit, $3) AS daily_limit, \
           (SELECT ap.min_amount FROM approval_policies ap \
             WHERE ap.business_id = b.id AND ap.is_active = 1) AS policy_minimum\
         {} JOIN businesses o ON o.id = a.business_id CROSS JOIN businesses b \
         WHERE a.account_number IN ($1, $2) AND b.id = $4",
        accounts::ACCOUNT_COLUMNS,
        accounts::ACCOUNT_FROM,
    );
    // Audited: the statement is built from constants only; every value is bound.
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(source)
        .bind(intra_beneficiary.unwrap_or(source))
        .bind(default_daily_limit)
        .bind(business_id)
        .fetch_all(executor)
        .await
        .or_internal()?;
    let mut reads = PayoutReads {
        source: None,
        beneficiary: None,
    };
    for row in &rows {
        let found = accounts::kobo_account(row)?;
        if found.account.account_number == source && found.business_id == business_id {
            let settings = BusinessSettings {
                name: store::text(row, "payer_name")?,
                daily_limit: row.try_get("daily_limit").or_internal()?,
                policy_minimum: row.try_get("policy_minimum").or_internal()?,
            };
            reads.source = Some((found.account.clone(), settings));
        }
        if Some(found.account.account_number.as_str()) == intra_beneficiary {
            reads.beneficiary = Some(found);
        }
    }
    Ok(reads)
}

/// The transfer of the business that holds a client reference.
const REFERENCE_OWNER: &str =
    "SELECT reference_number FROM transfers WHERE business_id = $1 AND reference = $2";

/// The reference number of the business's transfer that holds the client `reference`.
async fn reference_owner(
    store: &Store,
    business_id: &str,
    reference: &str,
) -> Result<Option<String>, Error> {
    reference_owner_in(store.pool(), business_id, reference).await
}

/// [`reference_owner`] on `executor`. Not a prepared statement: PostgreSQL keeps one plan for
/// a prepared statement (its generic plan), made once on each connection, and on a young
/// table every index that starts with `business_id` costs the same as the unique one. The kept
/// plan took `transfers_day`, then (that index dropped) `transfers_keyset`, and filtered every
/// transfer of the business on the reference, for each payout: quadratic, found by the soak
/// (515 million index entries read for 60,000 payouts). Planned each time, with the
/// parameters and the table's size, the unique index wins; planning costs far less.
async fn reference_owner_in<'e, E>(
    executor: E,
    business_id: &str,
    reference: &str,
) -> Result<Option<String>, Error>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    sqlx::query_scalar(REFERENCE_OWNER)
        .persistent(false)
        .bind(business_id)
        .bind(reference)
        .fetch_optional(executor)
        .await
        .or_internal()
}

/// `26`: the client reference belongs to another transfer.
fn duplicate(reference: &str, other: &str) -> Error {
    Error::new(ResponseCode::Duplicate)
        .with_message(format!("Reference {reference} belongs to transfer {other}"))
}

/// `83` when the intra-bank beneficiary's account cannot receive (it is not active).
pub(crate) fn check_recipient(account: &AccountRow) -> Result<(), Error> {
    if account.status != "active" {
        return Err(refused(format!(
            "Account {} cannot receive funds: it is {}",
            account.account_number, account.status
        )));
    }
    Ok(())
}

fn check_source(source: &AccountRow) -> Result<(), Error> {
    if source.status != "active" {
        return Err(Error::new(ResponseCode::InvalidState).with_message(format!(
            "Source account {} is {}",
            source.account_number, source.status
        )));
    }
    Ok(())
}

/// `49` when the request's name (or `bvn`, `kyc`) differs from the name enquiry.
fn mismatch(request: &TransferRequest, found: &Beneficiary) -> Option<Error> {
    let differs = |what: &str| {
        Error::new(ResponseCode::BeneficiaryNameMismatch).with_message(format!(
            "Beneficiary {what} does not match: the account is held by {}",
            found.account_name
        ))
    };
    if !fees::same_name(&request.beneficiary_account_name, &found.account_name) {
        return Some(differs("name"));
    }
    if request.bvn.is_some() && request.bvn != found.bvn {
        return Some(differs("BVN"));
    }
    if request.kyc.is_some_and(|kyc| kyc != u64::from(found.kyc)) {
        return Some(differs("KYC level"));
    }
    None
}

/// The ledger heads a transfer locks: the source business's and, for an intra-bank transfer
/// to another business, the recipient's, taken in business-id order.
pub(crate) struct Heads {
    pub(crate) source: Head,
    pub(crate) recipient: Option<Head>,
}

///
/// The source business takes `source_places` consecutive places (see
/// [`ledger::advance_head_by`]); [`Heads::source`] is the first.
pub(crate) async fn lock_heads(
    tx: &mut Tx,
    source: &str,
    recipient: Option<&str>,
    source_places: u32,
    now: DateTime<Utc>,
) -> Result<Heads, Error> {
    let places = |business: &str| if business == source { source_places } else { 1 };
    match recipient {
        Some(other) if other != source => {
            let (first, second) = if source < other {
                (source, other)
            } else {
                (other, source)
            };
            let heads =
                ledger::advance_heads(tx, &[(first, places(first)), (second, places(second))], now)
                    .await?;
            let (first_head, second_head) = (heads[0], heads[1]);
            Ok(if first == source {
                Heads {
                    source: first_head,
                    recipient: Some(second_head),
                }
            } else {
                Heads {
                    source: second_head,
                    recipient: Some(first_head),
                }
            })
        }
        _ => Ok(Heads {
            source: ledger::advance_head_by(tx, source, source_places, now).await?,
            recipient: None,
        }),
    }
}

/// Begins a payout's transaction: on PostgreSQL, after this process's turn at the ledgers of
/// the paying business and of the Kobo business credited (if another), so that a backlog of
/// payouts waits for it without holding the pool's connections ([`Store::begin_posting`]).
/// [`lock_heads`] then takes the same heads in the transaction.
pub(crate) async fn begin_payout(
    store: &Store,
    source: &str,
    recipient: Option<&str>,
) -> Result<Tx, Error> {
    Ok(store
        .begin_posting(&[source, recipient.unwrap_or(source)])
        .await?)
}

/// The statuses a transfer counts toward its business's daily limit in: once its money has
/// moved. A held transfer (`pending_approval`) counts from its approval, on the day of the
/// approval (`approvals::approve`); holding it counts nothing.
const COUNTED: [&str; 2] = ["processing", "success"];

/// Whether a transfer in `status` counts toward the daily limit.
pub(crate) fn counts_toward_limit(status: &str) -> bool {
    COUNTED.contains(&status)
}

/// Adds `amount` to the business's total of `day` (`daily_transfer_totals`), inside the
/// transaction that moves the money (a payout, or a held transfer's approval): `83` when the
/// total would pass `limit`. One conditional upsert, whose row lock makes concurrent payouts
/// of the business count one after another.
pub(crate) async fn count_toward_daily_limit(
    tx: &mut Tx,
    business_id: &str,
    day: &str,
    amount: i64,
    limit: i64,
) -> Result<(), Error> {
    let counted = amount <= limit
        && sqlx::query(
            "INSERT INTO daily_transfer_totals (business_id, day, amount) VALUES ($1, $2, $3) \
             ON CONFLICT (business_id, day) DO UPDATE \
               SET amount = daily_transfer_totals.amount + excluded.amount \
               WHERE daily_transfer_totals.amount + excluded.amount <= $4",
        )
        .bind(business_id)
        .bind(day)
        .bind(amount)
        .bind(limit)
        .execute(&mut **tx)
        .await
        .or_internal()?
        .rows_affected()
            == 1;
    if counted {
        return Ok(());
    }
    let spent: Option<i64> = sqlx::query_scalar(
        "SELECT amount FROM daily_transfer_totals WHERE business_id = $1 AND day = $2",
    )
    .bind(business_id)
    .bind(day)
    .fetch_optional(&mut **tx)
    .await
    .or_internal()?;
    Err(refused(format!(
        "The daily transfer limit of NGN {} would be exceeded (NGN {} sent today)",
        amount_text(i128::from(limit)),
        amount_text(i128::from(spent.unwrap_or(0)))
    )))
}

/// Takes transfer `id`'s amount back from its business's daily total of the day it counted
/// on, inside the transaction that moves it out of the counted statuses (failed, reversed).
pub(crate) async fn uncount(tx: &mut Tx, id: &str) -> Result<(), Error> {
    sqlx::query(
        "UPDATE daily_transfer_totals \
         SET amount = amount - (SELECT t.amount FROM transfers t WHERE t.id = $1) \
         WHERE business_id = (SELECT t.business_id FROM transfers t WHERE t.id = $1) \
           AND day = (SELECT t.day FROM transfers t WHERE t.id = $1)",
    )
    .bind(id)
    .execute(&mut **tx)
    .await
    .or_internal()?;
    Ok(())
}

/// What [`execute`] posts.
struct Plan<'a> {
    business_id: &'a str,
    source: &'a AccountRow,
    /// The source as the recipient reads it.
    payer: &'a Originator,
    beneficiary: &'a Beneficiary,
    /// The Kobo account credited now and its business: an intra-bank transfer not held.
    recipient: Option<(&'a AccountRow, &'a str)>,
    amount: Kobo,
    charges: Charges,
    narration: &'a str,
    reference_number: &'a str,
    /// The first of the source business's places: the debit's, then the fee's, then (paying
    /// itself) the credit's.
    head: Head,
    recipient_head: Option<Head>,
    /// Held by the approval policy: the funds go to the held account, nothing further.
    held: bool,
}

/// Posts the transfer's entry and its transactions; returns the ids of the debit and fee
/// transactions, or the refusal (`83`: insufficient funds, `48`: the source is no longer
/// active) with nothing written.
async fn execute(
    tx: &mut Tx,
    batch: &mut Batch,
    config: &Config,
    plan: &Plan<'_>,
) -> Result<Result<(String, Option<String>), Error>, Error> {
    let environment = config.environment;
    let amount = plan.amount.get();
    // The amount and the charges are postings of their own, so that each transaction the
    // business sees (the transfer, the fee) is backed by its own posting.
    let mut postings = vec![Posting {
        account: LedgerAccount::Customer(plan.source.id.clone()),
        amount: -amount,
    }];
    if plan.charges.total() > 0 {
        postings.push(Posting {
            account: LedgerAccount::Customer(plan.source.id.clone()),
            amount: -plan.charges.total(),
        });
    }
    if plan.held {
        postings.push(Posting {
            account: LedgerAccount::Internal(Internal::Held, environment),
            amount: amount + plan.charges.total(),
        });
    } else {
        postings.extend(destination_postings(
            environment,
            plan.beneficiary
                .kobo_account
                .as_ref()
                .map(|(account, _)| account.id.as_str()),
            amount,
            plan.charges.total(),
        ));
    }
    let entry = Entry {
        business_id: plan.business_id,
        kind: "transfer",
        postings,
    };
    let entry_id = match ledger::post_into(tx, batch, &entry, plan.head).await? {
        Ok(entry_id) => entry_id,
        Err(Refusal::InsufficientFunds { .. }) => {
            return Ok(Err(refused(format!(
                "Insufficient funds in account {}",
                plan.source.account_number
            ))))
        }
        Err(Refusal::BalanceLimit { .. }) => {
            return Ok(Err(refused(
                "The beneficiary account cannot hold this amount",
            )))
        }
        Err(Refusal::Inactive { status, .. }) => {
            return Ok(Err(Error::new(ResponseCode::InvalidState).with_message(
                format!("Source account {} is {status}", plan.source.account_number),
            )))
        }
    };
    let intra = plan.beneficiary.kobo_account.is_some();
    let settled_now = intra && !plan.held;
    let debit = transactions::record_into(
        batch,
        &NewTransaction {
            business_id: plan.business_id,
            account: plan.source,
            entry_id: &entry_id,
            head: plan.head,
            reference_number: plan.reference_number.to_owned(),
            transaction_type: models::TransactionType::Debit,
            category: models::TransactionCategory::Transfer,
            status: if settled_now {
                models::TransactionStatus::Success
            } else {
                models::TransactionStatus::Pending
            },
            channel: if intra {
                models::Channel::Intra
            } else {
                models::Channel::Nip
            },
            amount: plan.amount,
            narration: plan.narration.to_owned(),
            session_id: None,
            originator: None,
        },
    )?;
    let mut place = plan.head;
    let fee_transaction = match Kobo::from_stored(plan.charges.total()) {
        Some(charge) => {
            // A transaction of its own: the business's next place in its listing.
            place = place.next();
            let recorded = transactions::record_into(
                batch,
                &NewTransaction {
                    business_id: plan.business_id,
                    account: plan.source,
                    entry_id: &entry_id,
                    head: place,
                    reference_number: format!("FEE-{}", &plan.reference_number[4..]),
                    transaction_type: models::TransactionType::Debit,
                    category: models::TransactionCategory::Fee,
                    status: if plan.held {
                        models::TransactionStatus::Pending
                    } else {
                        models::TransactionStatus::Success
                    },
                    channel: models::Channel::Internal,
                    amount: charge,
                    narration: format!(
                        "NIP fee {} + VAT {} on {}",
                        amount_text(i128::from(plan.charges.fee)),
                        amount_text(i128::from(plan.charges.vat)),
                        plan.reference_number
                    ),
                    session_id: None,
                    originator: None,
                },
            )?;
            Some(recorded.id.to_string())
        }
        None => None,
    };
    if let Some((account, recipient_business)) = plan.recipient {
        // The same business paying itself: the credit takes the business's next place.
        let credit_head = match plan.recipient_head {
            Some(head) if recipient_business != plan.business_id => head,
            _ => place.next(),
        };
        credit_recipient(
            batch,
            recipient_business,
            account,
            credit_head,
            &entry_id,
            plan.amount,
            plan.narration,
            plan.payer,
        )?;
    }
    Ok(Ok((debit.id.to_string(), fee_transaction)))
}

/// The postings that take `amount` to its destination (a Kobo account, or NIP in flight) and
/// `charges` to the fee account.
pub(crate) fn destination_postings(
    environment: crate::kernel::config::Environment,
    recipient_account_id: Option<&str>,
    amount: i64,
    charges: i64,
) -> Vec<Posting> {
    let mut postings = vec![match recipient_account_id {
        Some(account_id) => Posting {
            account: LedgerAccount::Customer(account_id.to_owned()),
            amount,
        },
        None => Posting {
            account: LedgerAccount::Internal(Internal::NipInFlight, environment),
            amount,
        },
    }];
    if charges > 0 {
        postings.push(Posting {
            account: LedgerAccount::Internal(Internal::Fees, environment),
            amount: charges,
        });
    }
    postings
}

/// A Kobo account paying another, as the recipient reads it: its number and its holder's name
/// (its business first, `accounts::holder_name`), whatever the business named it.
pub(crate) fn payer(source: &AccountRow, business_name: &str) -> Originator {
    Originator {
        account_number: source.account_number.clone(),
        account_name: accounts::holder_name(business_name, &source.account_name),
        bank_code: nuban::BANK_CODE.to_owned(),
        bank_name: banks::KOBO_BANK_NAME.to_owned(),
    }
}

/// The intra-bank beneficiary's side, at `credit_head`: its collection (and settlement) and
/// `collection.received`, from `payer`. The caller has seen `account` active.
#[allow(clippy::too_many_arguments)]
pub(crate) fn credit_recipient(
    batch: &mut Batch,
    recipient_business: &str,
    account: &AccountRow,
    credit_head: Head,
    entry_id: &str,
    amount: Kobo,
    narration: &str,
    payer: &Originator,
) -> Result<(), Error> {
    let credit = transactions::record_into(
        batch,
        &NewTransaction {
            business_id: recipient_business,
            account,
            entry_id,
            head: credit_head,
            reference_number: transactions::new_reference("COL", credit_head.posted_at),
            transaction_type: models::TransactionType::Credit,
            category: models::TransactionCategory::Collection,
            status: models::TransactionStatus::Success,
            channel: models::Channel::Intra,
            amount,
            narration: narration.to_owned(),
            session_id: None,
            originator: Some(payer.clone()),
        },
    )?;
    events::record_into(
        batch,
        recipient_business,
        "collection.received",
        &credit,
        credit_head.posted_at,
    )?;
    Ok(())
}

/// How a transfer is looked up.
pub enum Lookup<'a> {
    Id(&'a str),
    ReferenceNumber(&'a str),
    Reference(&'a str),
}

const TRANSFER_COLUMNS: &str = "t.id, t.reference_number, t.reference, t.amount, t.fee, t.vat, \
    t.transfer_status, t.approval_status, t.transfer_type, a.account_number AS source_account_number, \
    t.beneficiary_account_number, t.beneficiary_account_name, t.bank_code, t.bank_name, \
    t.narration, t.session_id, t.failure_reason, t.reversal_reference_number, t.initiated_by, \
    t.initiated_via, t.reviewed_by, t.expires_at, t.created_at, t.updated_at";
const TRANSFER_FROM: &str = " FROM transfers t JOIN accounts a ON a.id = t.source_account_id";
/// The coarse status the source names, from the transfer's own.
fn coarse(status: &str) -> models::TransactionStatus {
    match status {
        "success" => models::TransactionStatus::Success,
        "pending_approval" | "processing" => models::TransactionStatus::Pending,
        "reversed" => models::TransactionStatus::Reversed,
        _ => models::TransactionStatus::Failed,
    }
}

/// A transfer's columns as [`TRANSFER_COLUMNS`] reads them, and as a new transfer inserts
/// them: [`Columns::view`] is the one mapping to what the API shows, so the answer to a payout
/// is what a later lookup finds.
struct Columns {
    id: String,
    reference_number: String,
    reference: Option<String>,
    amount: i64,
    fee: i64,
    vat: i64,
    transfer_status: String,
    approval_status: String,
    transfer_type: String,
    source_account_number: String,
    beneficiary_account_number: String,
    beneficiary_account_name: String,
    bank_code: String,
    bank_name: String,
    narration: String,
    session_id: Option<String>,
    failure_reason: Option<String>,
    reversal_reference_number: Option<String>,
    initiated_by: String,
    initiated_via: String,
    reviewed_by: Option<String>,
    expires_at: Option<String>,
    created_at: String,
    updated_at: String,
}

impl Columns {
    fn read(row: &AnyRow) -> Result<Columns, Error> {
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
            transfer_status: text("transfer_status")?,
            approval_status: text("approval_status")?,
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

    fn view(&self) -> Result<models::Transfer, Error> {
        let kobo = |amount: i64| value(amount_text(i128::from(amount)));
        Ok(models::Transfer {
            id: value(&self.id)?,
            reference_number: value(&self.reference_number)?,
            reference: self.reference.as_deref().map(value).transpose()?,
            amount: kobo(self.amount)?,
            fee: kobo(self.fee)?,
            vat: kobo(self.vat)?,
            status: coarse(&self.transfer_status),
            transfer_status: value(&self.transfer_status)?,
            approval_status: value(&self.approval_status)?,
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

fn view(row: &AnyRow) -> Result<models::Transfer, Error> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every payout with a client reference looks it up first. PostgreSQL's kept (generic)
    /// plan for that lookup, made while the table was young, read the business's transfers
    /// through another index and filtered them on the reference: every payout read all of its
    /// business's transfers (515 million index entries over a 5-minute soak of 60,000
    /// payouts), and the soak fell behind. The payout's lookups by a business and a key must
    /// never run from a kept plan. An account's lookup by number may: it is by the number
    /// alone, which only its unique index leads with (the business is compared after).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_payouts_lookups_never_run_from_a_kept_plan() {
        use crate::testkit::TestKit;
        let kit = TestKit::postgres().await;
        let business = kit.business.business_id.clone();
        let mut connection = kit.store.pool().acquire().await.unwrap();
        // PostgreSQL settles on a generic plan after five executions.
        for attempt in 0..8 {
            let owner = reference_owner_in(&mut *connection, &business, &format!("ref-{attempt}"))
                .await
                .unwrap();
            assert_eq!(owner, None);
        }
        // An account's lookup by number (each payout's source), and not another business's.
        for _ in 0..8 {
            accounts::find_by_number_in(&mut *connection, &business, "1000000014")
                .await
                .unwrap()
                .expect("the kit's main account");
        }
        let theirs = accounts::find_by_number_in(&mut *connection, "another", "1000000014");
        assert_eq!(theirs.await.unwrap(), None);
        // The payout's reads before its transaction: the source, an intra-bank beneficiary
        // (read from the same row here, then one this bank does not hold) and the business's
        // settings.
        for attempt in 0..8 {
            let beneficiary = if attempt % 2 == 0 {
                "1000000014"
            } else {
                "9999999999"
            };
            let found = (attempt % 2 == 0).then_some(beneficiary);
            let reads = payout_reads(
                &mut *connection,
                1,
                &business,
                "1000000014",
                Some(beneficiary),
            )
            .await
            .unwrap();
            let (source, settings) = reads.source.expect("the kit's main account");
            assert_eq!(source.account_number, "1000000014");
            assert_eq!(settings.daily_limit, 1);
            assert_eq!(settings.policy_minimum, None);
            let read = reads
                .beneficiary
                .map(|found| (found.account.account_number, found.business_id));
            assert_eq!(
                read,
                found.map(|number| (number.to_owned(), business.clone()))
            );
        }
        let reads = payout_reads(&mut *connection, 1, "another", "1000000014", None);
        assert!(reads.await.unwrap().source.is_none());
        let kept: Vec<String> = sqlx::query_scalar(
            "SELECT statement FROM pg_prepared_statements \
             WHERE statement LIKE '%FROM transfers%' OR statement LIKE '%FROM accounts%'",
        )
        .persistent(false)
        .fetch_all(&mut *connection)
        .await
        .unwrap();
        assert!(
            kept.iter()
                .all(|statement| !statement.contains("FROM transfers")
                    && (statement.ends_with("WHERE a.account_number = $1")
                        || statement
                            .ends_with("WHERE a.account_number IN ($1, $2) AND b.id = $4"))),
            "prepared lookups: {kept:?}"
        );
        assert_eq!(kept.len(), 2, "{kept:?}");
    }
}
