//! A payout: `funds_transfer` and `funds_transfer_api`, from the request to the committed
//! transfer, in the two parts of the idempotency protocol (`idempotency::Keyed::run_peeking`):
//!
//! - [`prepare`]: no transaction. The body's rules, one read of the accounts, the business's
//!   settings and the Idempotency-Key (a retry is answered there), the source account, the member's OTP (spent), the beneficiary by name enquiry,
//!   the provider's screening, the hold and the client reference, each in the documented order.
//! - [`write`]: the transaction. The ledger heads, the daily limit, the balances (one
//!   conditional update), then every row in one batch: entry, postings, transactions, the
//!   transfer, its event, the audit entry, the activity entry of an integration call, and
//!   the key, claimed with its answer ([`Keyed::claiming_last`]).

use generated_server::models::{self, AuditAction};

use crate::datastore::batch::Batch;
use crate::datastore::ledger::AdvancedHead;
use crate::datastore::{self, Conn, StoreError};
use crate::error::Error;
use crate::kernel::clock::Clock;
use crate::kernel::config::Config;
use crate::kernel::store::{self, Paid, Payment, Store, Tx};
use crate::money::accounts::{AccountRow, KoboAccount};
use crate::money::amount::{amount_text, Kobo};
use crate::money::approval_notices;
use crate::money::bank::Bank;
use crate::money::banks::{self, Beneficiary};
use crate::money::beneficiaries;
use crate::money::fees::{self, Charges, TransferPolicy};
use crate::money::ledger::Entry;
use crate::money::nuban;
use crate::money::transactions::{self, Originator};
use crate::outbox::events;
use crate::platform::caller::Caller;
use crate::platform::idempotency::{
    Completion, Keyed, Peek, Peeked, Prepared, LASTING_PAYOUT_REFUSALS,
};
use crate::platform::identity;
use crate::platform::logs::{self, AuditEntry};
use crate::provider::{CoreBanking, NipTransfer};

use super::checks::{
    check_amount, check_recipient, check_source, duplicate, invalid, mismatch, refused,
};
use super::postings::{execute, payer, transfer_entry, Heads, Movement, Opening, Plan};
use super::status::{ApprovalState, TransferStatus};
use super::views::view;
use super::TransferRequest;
use crate::datastore::accounts::PayoutLookup;
use crate::datastore::idempotency_keys::StoredKey;
use crate::datastore::transfers::{NewTransfer, TransferRow};

/// A payout of `caller` through the whole protocol: `fingerprint` is the body as its key
/// knows it, `otp` the member's (none for an integration).
pub(super) async fn initiate<B: serde::Serialize>(
    bank: &Bank,
    caller: &Caller,
    fingerprint: &B,
    request: TransferRequest,
    otp: Option<String>,
) -> Result<models::Transfer, Error> {
    caller.principal.ensure_business_active()?;
    let context = Context {
        store: &bank.store,
        config: &bank.config,
        policy: &bank.transfers,
        clock: &bank.clock,
        caller,
    };
    let provider = &*bank.provider;
    let prepare =
        async |peek: &Peek<'_>| prepare(&context, provider, request, otp.as_deref(), peek).await;
    let write = async |tx: &mut Tx, payout: Payout, completion: &mut Completion| {
        let transfer = write(tx, &context, &payout, completion).await?;
        // Should the commit's answer be lost, the transfer tells whether it was kept.
        tx.witness(context.business_id(), &transfer.id.to_string());
        Ok(transfer)
    };
    Keyed::new(context.store, context.clock, caller, fingerprint)
        .storing(LASTING_PAYOUT_REFUSALS)
        .claiming_last()
        .run_peeking(prepare, write)
        .await
}

/// What every step of a payout reads.
struct Context<'a> {
    store: &'a Store,
    config: &'a Config,
    policy: &'a TransferPolicy,
    clock: &'a Clock,
    caller: &'a Caller,
}

impl Context<'_> {
    fn business_id(&self) -> &str {
        &self.caller.principal.business_id
    }
}

/// A payout checked and read before its transaction.
struct Payout {
    request: TransferRequest,
    source: AccountRow,
    settings: BusinessSettings,
    /// The source as an intra-bank recipient reads it.
    payer: Originator,
    beneficiary: Beneficiary,
    amount: Kobo,
    charges: Charges,
    /// Held by the approval policy: its funds are reserved, nothing further moves.
    held: bool,
    narration: String,
    reference_number: String,
    /// The transfer that held the client reference when the payout's reads were made.
    reference_owner: Option<String>,
    /// Held: the members to tell that it waits for their approval.
    approvers: Vec<approval_notices::Approver>,
}

impl Payout {
    fn intra(&self) -> bool {
        self.beneficiary.kobo_account.is_some()
    }

    /// The Kobo account the payout credits now, and its business: intra-bank, not held.
    fn recipient(&self) -> Option<(&AccountRow, &str)> {
        match (&self.beneficiary.kobo_account, self.held) {
            (Some((account, business)), false) => Some((account, business.as_str())),
            _ => None,
        }
    }

    /// The businesses whose ledgers it posts to: the source's and a Kobo beneficiary's.
    fn ledgers(&self) -> Vec<String> {
        let mut ledgers = vec![self.source_business().to_owned()];
        if let Some((_, business)) = &self.beneficiary.kobo_account {
            ledgers.push(business.clone());
        }
        ledgers
    }

    fn source_business(&self) -> &str {
        &self.settings.business_id
    }

    /// The source business's places in its ledger: the debit, the fee, its own account's
    /// credit (a business paying itself).
    fn places(&self) -> u32 {
        let credits_itself = self
            .recipient()
            .is_some_and(|(_, business)| business == self.source_business());
        1 + u32::from(self.charges.total() > 0) + u32::from(credits_itself)
    }

    fn status(&self) -> TransferStatus {
        TransferStatus::initial(self.held, self.intra())
    }
}

/// The payout's checks and reads, in the spec's order of checks: the body (`01`); the source
/// account (`42`, `48`, `01`); the OTP (`45`); the beneficiary (`06`, `80`, `49`); the
/// screening (`83`, `80`); a hold larger than the daily limit (`83`); the client reference
/// (`26`); an intra-bank recipient that cannot receive (`83`).
async fn prepare(
    context: &Context<'_>,
    provider: &dyn CoreBanking,
    request: TransferRequest,
    otp: Option<&str>,
    peek: &Peek<'_>,
) -> Result<Peeked<Payout>, Error> {
    let policy = context.policy;
    let amount = body_rules(policy, &request)?;
    let intra = request.bank_code == nuban::BANK_CODE;
    let lookup = PayoutLookup {
        default_daily_limit: policy.default_daily_limit,
        business_id: context.business_id(),
        source: &request.source_account_number,
        intra_beneficiary: intra.then_some(request.beneficiary_account_number.as_str()),
        reference: request.reference.as_deref(),
        key: peek.key(),
    };
    let reads = payout_reads(context.store, &lookup).await?;
    // A retry is answered before anything is spent or asked of the provider.
    if let Some(verdict) = peek.verdict(reads.stored_key.as_ref()) {
        return Ok(Peeked::Stored(verdict));
    }
    if let Some(id) = request.unknown_beneficiary {
        return Err(beneficiaries::not_found(&id));
    }
    let (source, settings) = source_of(reads.source, &request)?;
    if let (Some(code), Some(member)) = (otp, &context.caller.principal.member) {
        // Boxed: its throttle claim and checks, inline, made the payout's future too large for
        // a worker's stack in a debug build (docs/decisions.md, "Cold paths boxed").
        let (store, config, clock) = (context.store, context.config, context.clock);
        Box::pin(identity::check_otp(store, config, clock, &member.id, code)).await?;
    }
    let beneficiary = banks::resolve_found(
        provider,
        &request.bank_code,
        &request.beneficiary_account_number,
        reads.beneficiary,
    )
    .await?;
    if let Some(error) = mismatch(&request, &beneficiary) {
        return Err(error);
    }
    let payer = payer(&source, &settings.name);
    let narration = fees::narration(
        request.narration.as_deref(),
        &format!("Transfer from {}", payer.account_name),
    );
    let mut payout = Payout {
        reference_owner: reads.reference_owner,
        reference_number: transactions::new_reference("TRF", context.clock.now()),
        charges: fees::charges(policy, !intra, amount.get()),
        held: settings
            .policy_minimum
            .is_some_and(|minimum| amount.get() >= minimum),
        request,
        source,
        settings,
        payer,
        beneficiary,
        amount,
        narration,
        approvers: Vec::new(),
    };
    provider.screen_transfer(&nip_transfer(&payout)).await?;
    check_before_writing(&payout)?;
    if payout.held {
        let (store, business_id) = (context.store, context.business_id());
        let maker = maker_of(context.caller);
        payout.approvers = approval_notices::approvers_of(store, business_id, maker).await?;
    }
    let ledgers = payout.ledgers();
    let standing = Some(payout.source_business().to_owned());
    Ok(Peeked::Prepared(Prepared::payout(
        payout, ledgers, standing,
    )))
}

/// The amount, and the bank and the type: `01`.
fn body_rules(policy: &TransferPolicy, request: &TransferRequest) -> Result<Kobo, Error> {
    let amount = Kobo::parse(&request.amount)
        .ok_or_else(|| invalid("`amount`: must be positive, with at most two fraction digits"))?;
    check_amount(policy, amount.get())?;
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
    Ok(amount)
}

/// The source account: the business's (`42`), active (`48`), named as registered (`01`).
fn source_of(
    read: Option<(AccountRow, BusinessSettings)>,
    request: &TransferRequest,
) -> Result<(AccountRow, BusinessSettings), Error> {
    let Some((source, settings)) = read else {
        return Err(banks::source_not_found(&request.source_account_number));
    };
    check_source(&source)?;
    let named = request.source_account_name.as_deref();
    if named.is_some_and(|name| !fees::same_name(name, &source.account_name)) {
        return Err(invalid(format!(
            "`source_account_name`: account {} is named {}",
            source.account_number, source.account_name
        )));
    }
    Ok((source, settings))
}

/// The payout as NIP (and the provider's screening) sees it.
fn nip_transfer(payout: &Payout) -> NipTransfer {
    NipTransfer {
        reference_number: payout.reference_number.clone(),
        source_account_number: payout.source.account_number.clone(),
        originator_account_name: payout.payer.account_name.clone(),
        beneficiary_account_number: payout.beneficiary.account_number.clone(),
        beneficiary_account_name: payout.beneficiary.account_name.clone(),
        bank_code: payout.beneficiary.bank_code.clone(),
        amount_kobo: payout.amount.get(),
        narration: payout.narration.clone(),
    }
}

/// What needs no lock, read before the transaction (on SQLite, before the write turn): a
/// hold that could never be approved under the daily limit (`83`, refused now rather than in
/// 72 hours), the client reference (`26`, read with the accounts), the intra-bank recipient's
/// account (`83`). Whatever races them is decided inside the transaction: the unique index on
/// the reference, the conditional debit (an account frozen meanwhile refuses it).
fn check_before_writing(payout: &Payout) -> Result<(), Error> {
    if payout.held && payout.amount.get() > payout.settings.daily_limit {
        return Err(refused(format!(
            "The daily transfer limit of NGN {} is below this amount: no approval could \
             send it",
            amount_text(i128::from(payout.settings.daily_limit))
        )));
    }
    if let (Some(reference), Some(other)) = (&payout.request.reference, &payout.reference_owner) {
        return Err(duplicate(reference, other));
    }
    if let Some((account, _)) = payout.recipient() {
        check_recipient(account)?;
    }
    Ok(())
}

/// The payout's transaction: its movement (the heads, the daily limit, not for a hold: its
/// approval counts it, and the balances) and its rows, the key's answer with them, written by
/// the store in one call (`Tx::pay`), which makes the rows once it knows their places; then,
/// for a hold, the approvers told.
async fn write(
    tx: &mut Tx,
    context: &Context<'_>,
    payout: &Payout,
    completion: &mut Completion,
) -> Result<models::Transfer, Error> {
    let business_id = context.business_id();
    let kobo_beneficiary = payout.beneficiary.kobo_account.as_ref();
    let entry = transfer_entry(
        context.config.environment,
        business_id,
        &payout.source,
        kobo_beneficiary.map(|(account, _)| account),
        payout.amount,
        payout.charges,
        payout.held,
    );
    let opening = Opening {
        business_id,
        recipient_business: kobo_beneficiary.map(|(_, business)| business.as_str()),
        receiving: payout.recipient().map(|(account, _)| account),
        source_places: payout.places(),
        daily: (!payout.held).then_some(payout.amount.get()),
        default_daily_limit: context.policy.default_daily_limit,
        business_must_be_active: true,
        entry: &entry,
    };
    let now = context.clock.now();
    let movement = Movement::of(&opening, now)?;
    let balance_changes = movement.changes.balance_changes();
    let payment = Payment {
        places: &movement.places,
        now: movement.now,
        money: &movement.money(&opening, &balance_changes)?,
        // Only an intra-bank payout not held writes nothing but its own rows.
        rows_only: payout.recipient().is_some(),
    };
    let make = |advanced: &[AdvancedHead]| {
        let heads = movement.heads(advanced)?;
        rows(context, payout, &entry, &heads, completion)
    };
    let transfer = match tx.pay(&payment, make).await? {
        Paid::Written(transfer, _) => transfer,
        Paid::Refused(done) => {
            return Err(movement
                .refusal(tx, &opening, &payout.source, &done)
                .await?)
        }
        Paid::Conflict { error, reads_group } => {
            return Err(reference_taken(tx, context, payout, error, reads_group).await?)
        }
    };
    if payout.held {
        let maker_name = match &context.caller.principal.member {
            Some(member) => approval_notices::full_name(&member.first_name, &member.last_name),
            None => "Your business's integration".to_owned(),
        };
        let telling = approval_notices::Telling {
            config: context.config,
            now,
            business_id,
        };
        let (told, source_name) = (&payout.approvers, payout.source.account_name.as_str());
        approval_notices::tell_approvers(tx, &telling, told, &maker_name, source_name, &transfer)
            .await?;
    }
    Ok(transfer)
}

/// Who makes a payout, for maker-checker: the member, or whoever issued the integration's
/// credentials.
fn maker_of(caller: &Caller) -> Option<&str> {
    match &caller.principal.member {
        Some(member) => Some(member.id.as_str()),
        None => caller.principal.credential_issuer.as_deref(),
    }
}

/// Everything the payout writes after its movement, made with its `heads`, as one batch (the
/// key's answer in it), and its answer.
fn rows(
    context: &Context<'_>,
    payout: &Payout,
    entry: &Entry<'_>,
    heads: &Heads,
    completion: &mut Completion,
) -> Result<(models::Transfer, Batch), Error> {
    let business_id = context.business_id();
    let head = heads.source;
    let day = fees::lagos_day(head.posted_at);
    let plan = Plan {
        business_id,
        source: &payout.source,
        payer: &payout.payer,
        beneficiary: &payout.beneficiary,
        recipient: payout.recipient(),
        amount: payout.amount,
        charges: payout.charges,
        narration: &payout.narration,
        reference_number: &payout.reference_number,
        head,
        recipient_head: heads.recipient,
        held: payout.held,
    };
    let mut batch = Batch::new();
    let executed = execute(&mut batch, &plan, entry)?;
    let row = transfer_row(context, payout, head.posted_at);
    let transfer = view(&row)?;
    let written = Written {
        debit: executed.debit,
        fee_transaction: executed.fee_transaction,
        day,
    };
    insert_transfer(&mut batch, context, payout, &row, &written);
    record_announcements(&mut batch, context, payout, &transfer, head.posted_at)?;
    completion.into(&mut batch, &transfer)?;
    Ok((transfer, batch))
}

/// The new transfer's row, from which both what is written and its answer are made (times
/// as stored: to the microsecond).
fn transfer_row(
    context: &Context<'_>,
    payout: &Payout,
    at: chrono::DateTime<chrono::Utc>,
) -> TransferRow {
    let at = store::as_stored(at);
    let caller = context.caller;
    let (initiated_by, initiated_via) = match &caller.principal.member {
        Some(member) => (member.id.clone(), "dashboard"),
        None => (context.business_id().to_owned(), "integration"),
    };
    let hold_seconds = context.policy.approval_hold_seconds;
    TransferRow {
        id: store::new_id(),
        reference_number: payout.reference_number.clone(),
        reference: payout.request.reference.clone(),
        amount: payout.amount.get(),
        fee: payout.charges.fee,
        vat: payout.charges.vat,
        transfer_status: payout.status().as_str().to_owned(),
        approval_status: ApprovalState::initial(payout.held).as_str().to_owned(),
        transfer_type: if payout.intra() { "intra" } else { "inter" }.to_owned(),
        source_account_number: payout.source.account_number.clone(),
        beneficiary_account_number: payout.beneficiary.account_number.clone(),
        beneficiary_account_name: payout.beneficiary.account_name.clone(),
        bank_code: payout.beneficiary.bank_code.clone(),
        bank_name: payout.beneficiary.bank_name.clone(),
        narration: payout.narration.clone(),
        session_id: None,
        failure_reason: None,
        reversal_reference_number: None,
        initiated_by,
        initiated_via: initiated_via.to_owned(),
        reviewed_by: None,
        expires_at: payout
            .held
            .then(|| at + chrono::Duration::seconds(hold_seconds)),
        created_at: at,
        updated_at: at,
    }
}

/// What the payout's postings wrote that its row names.
struct Written {
    debit: String,
    fee_transaction: Option<String>,
    /// The Lagos day its amount counts on (for a hold, until its approval moves it).
    day: String,
}

/// The transfer's row, as a statement of `batch`. Its maker through integration credentials
/// is whoever issued them (`credential_issued_by`).
fn insert_transfer(
    batch: &mut Batch,
    context: &Context<'_>,
    payout: &Payout,
    row: &TransferRow,
    written: &Written,
) {
    let new = NewTransfer {
        row: row.clone(),
        business_id: context.business_id().to_owned(),
        source_account_id: payout.source.id.clone(),
        beneficiary_account_id: payout
            .beneficiary
            .kobo_account
            .as_ref()
            .map(|(account, _)| account.id.clone()),
        debit_transaction_id: Some(written.debit.clone()),
        fee_transaction_id: written.fee_transaction.clone(),
        day: written.day.clone(),
        credential_issued_by: context.caller.principal.credential_issuer.clone(),
    };
    datastore::transfers::insert_into(batch, new);
}

/// The payout's event (`transfer.pending_approval` for a hold, `transfer.success` intra-bank;
/// an inter-bank one is announced when NIP settles it), its audit entry and, for an
/// integration call, its activity entry (committed with it: `logs::activity_into`).
fn record_announcements(
    batch: &mut Batch,
    context: &Context<'_>,
    payout: &Payout,
    transfer: &models::Transfer,
    at: chrono::DateTime<chrono::Utc>,
) -> Result<(), Error> {
    let business_id = context.business_id();
    if let Some(event) = payout.status().event() {
        events::record_into(batch, business_id, event, transfer, at)?;
    }
    let entry = AuditEntry::by(context.caller, AuditAction::FundsTransfer)
        .target("transfer", transfer.id.to_string());
    logs::audit_into(batch, at, entry);
    logs::activity_into(batch, context.caller, at);
    Ok(())
}

/// The answer to a payout one of whose rows another holds (`Paid::Conflict`): another
/// transfer took the client reference after it was checked, and the unique index refused this
/// one (`26`, which the protocol stores as the check would have). The transfer that took it
/// committed first, and the pool reads it; or it came before this one in their group commit,
/// and the group's transaction reads it now that this payout's own work is undone
/// (`reads_group`).
async fn reference_taken(
    tx: &mut Tx,
    context: &Context<'_>,
    payout: &Payout,
    error: StoreError,
    reads_group: bool,
) -> Result<Error, Error> {
    let Some(reference) = payout.request.reference.as_deref() else {
        return Ok(Error::from(error));
    };
    let business_id = context.business_id();
    let mut owner = reference_owner(context.store, business_id, reference).await?;
    if owner.is_none() && reads_group {
        owner = reference_owner(&mut *tx, business_id, reference).await?;
    }
    Ok(match owner {
        Some(other) => duplicate(reference, &other),
        None => Error::from(error),
    })
}

/// What a transfer reads of its business: its registered name, its daily limit and, when it
/// has an active approval policy, the amount from which that policy holds a transfer.
struct BusinessSettings {
    business_id: String,
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
    /// The transfer that holds the client reference.
    reference_owner: Option<String>,
    /// The payout's Idempotency-Key, if it is stored (read only with an account found).
    stored_key: Option<StoredKey>,
}

/// The source account, the beneficiary's if it is in this bank, and the business's daily
/// limit and approval policy, in one statement (they were three round trips). By account
/// number only, which only its unique index leads with, so the kept plan cannot read a
/// business's accounts (see `accounts::find_by_number_anywhere`); the settings are by the
/// business's key, on every row. An inter-bank payout looks up the source's number twice.
async fn payout_reads(
    conn: impl Into<Conn<'_>>,
    lookup: &PayoutLookup<'_>,
) -> Result<PayoutReads, Error> {
    let (business_id, source) = (lookup.business_id, lookup.source);
    let intra_beneficiary = lookup.intra_beneficiary;
    let rows = datastore::accounts::payout_reads(conn, lookup).await?;
    let mut reads = PayoutReads {
        source: None,
        beneficiary: None,
        reference_owner: None,
        stored_key: None,
    };
    for row in rows {
        reads.reference_owner = row.reference_owner;
        reads.stored_key = row.stored_key;
        let found = row.account;
        if found.account.account_number == source && found.business_id == business_id {
            let settings = BusinessSettings {
                business_id: business_id.to_owned(),
                name: row.payer_name,
                daily_limit: row.daily_limit,
                policy_minimum: row.policy_minimum,
            };
            reads.source = Some((found.account.clone(), settings));
        }
        if Some(found.account.account_number.as_str()) == intra_beneficiary {
            reads.beneficiary = Some(found);
        }
    }
    Ok(reads)
}

/// The reference number of the business's transfer that holds the client `reference`.
async fn reference_owner(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
    reference: &str,
) -> Result<Option<String>, Error> {
    Ok(datastore::transfers::reference_owner(conn, business_id, reference).await?)
}
