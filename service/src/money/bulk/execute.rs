//! Paying an authorised bulk transfer, by the worker of every process ([`work`]): a scheduled
//! batch from its `execute_at`, any other at once; one batch at a time under a lease, its valid items in order, each in a transaction of its own that moves
//! the batch's cursor past it. An item is paid from the batch's reservation as a transfer of
//! its own, whose id is the item's (drawn when the batch was written), with every rule a
//! payout has checked again as it moves: the source account active (`48`), the business active
//! (`60`), the Lagos day's limit (`83`: each item counts on the day it is paid), the recipient
//! able to receive it (`83`), an inter-bank item screened by the provider. An item refused is
//! `failed` with its code, its money left in the reservation. Once every item has been taken,
//! what the items did not spend goes back to the source account in one credit; the batch is
//! `completed` with `bulk_transfer.completed` when no item is still processing over NIP.
//!
//! Exactly once: the cursor moves in the commit that writes the item's transfer, under the
//! business's head and only if the cursor has not passed the item (`pass_item`), so a crash
//! before the commit leaves the item to be paid again and one after it leaves it paid; a
//! second worker whose lease ran out finds the cursor moved and stops.
//!
//! Items go [`ITEMS_PER_COMMIT`] at a time in one transaction and one commit, each written as
//! it would be alone; when one of them is refused, none of that run is written and each of its
//! items is paid (or failed) in a transaction of its own.

use std::time::Duration;

use generated_server::ResponseCode;

use crate::datastore::batch::{self, Batch};
use crate::datastore::bulk_transfers::{self, BulkItemRow, BulkTransferRow};
use crate::datastore::transfers::{NewTransfer, TransferRow};
use crate::datastore::{self, Tx};
use crate::error::{Error, OrInternal};
use crate::kernel::store;
use crate::kernel::store::StoreError;
use crate::money::accounts::{self, AccountRow, HolderName, KoboAccount};
use crate::money::amount::Kobo;
use crate::money::bank::Bank;
use crate::money::ledger::{self, Entry, Internal, LedgerAccount, Posting};
use crate::money::transfers::{self, ApprovalState, TransferStatus};
use crate::money::{banks, fees, transactions};
use crate::outbox::events;
use crate::provider::NipTransfer;

use super::authorise::release;
use super::status::EXECUTING;
use super::{banks_narration, view_with_outcomes};

/// How long a worker holds a batch between two commits: renewed by every commit of an item or
/// a run, so a process that stopped leaves its batch to another within this. (A worker slower
/// than this loses the batch at its next commit, which then writes nothing: never twice.)
pub const LEASE: Duration = Duration::from_secs(15);

/// Items read at a time.
const ITEMS_PER_READ: u64 = 200;

/// The longest a run spends on its items before its transaction (an inter-bank item is screened
/// by the provider, which may take seconds to answer): past it, the run is the items prepared so
/// far, so the lease never runs out while a run is being prepared.
const PREPARING_MAX: Duration = Duration::from_secs(3);

/// Items paid in one transaction at most: one commit for all of them, the business's head held
/// for as long (about 20 ms on PostgreSQL, during which its other payouts wait).
pub const ITEMS_PER_COMMIT: usize = 32;

/// How often a batch whose items are all taken is looked at again while some are still
/// processing over NIP.
pub const SETTLING_RECHECK: Duration = Duration::from_secs(2);

/// Codes that say the provider or the database cannot answer now: the item is tried again.
const TRANSIENT: &[ResponseCode] = &[
    ResponseCode::ProviderUnavailable,
    ResponseCode::ServiceUnavailable,
];

/// When a batch paused by a [`TRANSIENT`] answer is taken up again.
const RETRY_AFTER: Duration = Duration::from_secs(5);

/// Codes an item can be refused with when it is to be paid: the item fails, the run goes on.
const ITEM_REFUSALS: &[ResponseCode] = &[
    ResponseCode::Duplicate,
    ResponseCode::InvalidState,
    ResponseCode::BusinessInactive,
    ResponseCode::ProviderError,
    ResponseCode::BeneficiaryAccountNotFound,
    ResponseCode::BeneficiaryNameMismatch,
];

fn lease_until(now: chrono::DateTime<chrono::Utc>) -> chrono::DateTime<chrono::Utc> {
    store::as_stored(now + chrono::Duration::from_std(LEASE).unwrap_or_default())
}

/// Pays the batch longest due, if one is: `true` when one was taken up, `false` when none was
/// due.
pub async fn work(bank: &Bank, owner: &str) -> Result<bool, Error> {
    let (store, clock) = (&bank.platform.store, &bank.platform.clock);
    let now = clock.now();
    let mut tx = store.begin().await?;
    let until = lease_until(now);
    // Scheduled batches whose time came execute from now: a cancel committed first leaves them
    // cancelled, one that comes after finds them executing (`48`).
    let started = bulk_transfers::start_scheduled(&mut tx, now).await?;
    let claimed = bulk_transfers::claim(&mut tx, EXECUTING, owner, now, until).await?;
    let Some(batch) = claimed else {
        if started > 0 {
            tx.commit().await.or_internal()?;
        } else {
            tx.rollback().await?;
        }
        return Ok(false);
    };
    tx.commit().await.or_internal()?;
    if batch.executed_at.is_none() {
        match pay_items(bank, &batch, owner).await {
            Ok(true) => {}
            Ok(false) => return Ok(true),
            // The provider or the database cannot be asked now: the batch is taken up again
            // soon, from its cursor, rather than when its lease ends.
            Err(error) if TRANSIENT.contains(&error.code()) => {
                tracing::warn!(bulk_transfer = %batch.id, error = %error.chain(), "bulk item paused");
                let due = clock.now() + chrono::Duration::from_std(RETRY_AFTER).or_internal()?;
                let mut tx = store.begin().await?;
                bulk_transfers::later(&mut tx, &batch.id, owner, store::as_stored(due)).await?;
                tx.commit().await.or_internal()?;
                return Ok(true);
            }
            Err(error) => return Err(error),
        }
        if !release_rest(bank, &batch, owner).await? {
            return Ok(true);
        }
    }
    settle(bank, &batch, owner).await?;
    Ok(true)
}

/// Pays the valid items from the cursor on: `false` when the lease was lost (cancelled, or
/// another worker took the batch over).
async fn pay_items(bank: &Bank, batch: &BulkTransferRow, owner: &str) -> Result<bool, Error> {
    let store = &bank.platform.store;
    let mut from = batch.next_index;
    let payer_name = accounts::business_name(store, &batch.business_id).await?;
    loop {
        let items =
            bulk_transfers::items(store, &batch.id, Some("valid"), from, ITEMS_PER_READ).await?;
        let Some(last) = items.last() else {
            return Ok(true);
        };
        from = last.idx + 1;
        let mut at = 0;
        while at < items.len() {
            let run = &items[at..(at + ITEMS_PER_COMMIT).min(items.len())];
            let (outcome, taken) = pay_run(bank, batch, owner, run, &payer_name).await?;
            let run = &run[..taken];
            at += taken;
            match outcome {
                Run::Paid => {}
                Run::LeaseLost => return Ok(false),
                Run::OneByOne => {
                    for item in run {
                        if !pay_item(bank, batch, owner, item, &payer_name).await? {
                            return Ok(false);
                        }
                    }
                }
            }
        }
    }
}

/// What became of a run of items tried in one transaction.
enum Run {
    /// Every item paid, in one commit.
    Paid,
    /// The lease was lost: nothing written.
    LeaseLost,
    /// An item was refused: nothing written, each item to be tried alone.
    OneByOne,
}

/// The first items of `run` in one transaction: all paid, or none written when any is refused.
/// Returns what became of them and how many were taken: all of `run`, or fewer when preparing
/// them took [`PREPARING_MAX`] (the rest make the next run) or one was refused before the
/// transaction (it and those before it go one by one).
async fn pay_run(
    bank: &Bank,
    batch: &BulkTransferRow,
    owner: &str,
    run: &[BulkItemRow],
    payer_name: &str,
) -> Result<(Run, usize), Error> {
    if run.len() < 2 {
        return Ok((Run::OneByOne, run.len()));
    }
    let started = std::time::Instant::now();
    let mut prepared = Vec::with_capacity(run.len());
    for item in run {
        if !prepared.is_empty() && started.elapsed() >= PREPARING_MAX {
            break;
        }
        match prepare_item(bank, batch, item).await {
            Ok(recipient) => prepared.push((item, recipient)),
            Err(refusal) if ITEM_REFUSALS.contains(&refusal.code()) => {
                return Ok((Run::OneByOne, prepared.len() + 1))
            }
            Err(error) => return Err(error),
        }
    }
    let taken = prepared.len();
    let outcome = match write_items(bank, batch, owner, prepared, payer_name).await {
        Ok(true) => Run::Paid,
        Ok(false) => Run::LeaseLost,
        Err(refusal) if ITEM_REFUSALS.contains(&refusal.code()) => Run::OneByOne,
        Err(error) => return Err(error),
    };
    Ok((outcome, taken))
}

/// One item: paid, or refused and failed. `false` when the lease was lost.
async fn pay_item(
    bank: &Bank,
    batch: &BulkTransferRow,
    owner: &str,
    item: &BulkItemRow,
    payer_name: &str,
) -> Result<bool, Error> {
    let store = &bank.platform.store;
    let refusal = match prepare_item(bank, batch, item).await {
        Ok(recipient) => {
            match write_items(bank, batch, owner, vec![(item, recipient)], payer_name).await {
                Ok(passed) => return Ok(passed),
                Err(error) => error,
            }
        }
        Err(error) => error,
    };
    if !ITEM_REFUSALS.contains(&refusal.code()) {
        return Err(refusal);
    }
    let code = refusal.code().as_str();
    let message = refusal.message().to_string();
    let until = lease_until(bank.platform.clock.now());
    let mut tx = store.begin().await?;
    let failure = Some((code, &*message));
    let passed =
        bulk_transfers::pass_item(&mut tx, &batch.id, owner, item.idx, 0, failure, until).await?;
    tx.commit().await.or_internal()?;
    tracing::info!(bulk_transfer = %batch.id, item = item.idx, code, %message, "bulk item refused");
    Ok(passed)
}

/// How old a name enquired at another bank may be when its item is paid: older (a batch held
/// for approval, or paused), the name is enquired again. Within Kobo the holder is read at
/// every payment.
pub const NAME_FRESH_FOR: chrono::Duration = chrono::Duration::hours(24);

/// Before the item's transaction: an intra-bank recipient read again (`06` when gone, `49` when
/// its holder's name is no longer the one confirmed at validation); an inter-bank item's name
/// enquired again when older than [`NAME_FRESH_FOR`] (`49` when it changed), then screened by the
/// provider.
async fn prepare_item(
    bank: &Bank,
    batch: &BulkTransferRow,
    item: &BulkItemRow,
) -> Result<Option<KoboAccount>, Error> {
    let store = &bank.platform.store;
    if item.transfer_type.as_deref() == Some("intra") {
        let found = accounts::find_by_number_anywhere(store, &item.account_number)
            .await?
            .ok_or_else(|| {
                Error::new(ResponseCode::BeneficiaryAccountNotFound)
                    .with_message(format!("Account {} no longer exists", item.account_number))
            })?;
        still_the_holder(item, &found.holder_name())?;
        return Ok(Some(found));
    }
    let enquired = item.enquired_at.unwrap_or(batch.created_at);
    if bank.platform.clock.now() - enquired > NAME_FRESH_FOR {
        let found = banks::resolve(
            store,
            &*bank.provider,
            &item.bank_code,
            &item.account_number,
        )
        .await?;
        still_the_holder(item, &found.account_name)?;
    }
    bank.provider
        .screen_transfer(&NipTransfer {
            reference_number: format!("BLK-{}-{}", batch.id, item.idx),
            source_account_number: batch.source_account_number.clone(),
            originator_account_name: batch.source_account_number.clone(),
            beneficiary_account_number: item.account_number.clone(),
            beneficiary_account_name: holder(item).to_owned(),
            bank_code: item.bank_code.clone(),
            amount_kobo: item.amount,
            narration: banks_narration(batch, item),
        })
        .await?;
    Ok(None)
}

/// `49` when the account's holder is now `name`, not the one confirmed when the item was
/// validated: the payer confirmed a name, and its money goes to that holder or to no one.
fn still_the_holder(item: &BulkItemRow, name: &str) -> Result<(), Error> {
    if fees::same_name(holder(item), name) {
        return Ok(());
    }
    Err(
        Error::new(ResponseCode::BeneficiaryNameMismatch).with_message(format!(
            "Beneficiary name does not match: account {} is now held by {name}, not {}",
            item.account_number,
            holder(item)
        )),
    )
}

/// The holder's name as the bank gave it at validation.
fn holder(item: &BulkItemRow) -> &str {
    item.confirmed_name.as_deref().unwrap_or(&item.account_name)
}

/// The items' transaction (one item's, or a run's): the heads; the cursor moved past them
/// ([`pass_run`]: `false`, nothing written, when the lease was lost or the first was passed
/// already); the source account and the business under lock; each item's reservation to its
/// destination; its transfer, and intra-bank the recipient's credit and `transfer.success`; the
/// day's limit. An item refused is an error, and nothing is written.
async fn write_items(
    bank: &Bank,
    batch: &BulkTransferRow,
    owner: &str,
    items: Vec<(&BulkItemRow, Option<KoboAccount>)>,
    payer_name: &str,
) -> Result<bool, Error> {
    let (store, clock) = (&bank.platform.store, &bank.platform.clock);
    let business_id = batch.business_id.as_str();
    let recipients: Vec<Option<String>> = items
        .iter()
        .map(|(_, recipient)| recipient.as_ref().map(|r| r.business_id.clone()))
        .collect();
    let mut places = Places::of(business_id, &recipients);
    let order: Vec<(&str, u32)> = places.order.iter().map(|(b, n)| (b.as_str(), *n)).collect();
    let ledgers: Vec<&str> = order.iter().map(|(business, _)| *business).collect();
    let mut tx = store.begin_posting(&ledgers).await?;
    let now = clock.now();
    places.next = ledger::advance_heads(&mut tx, &order, now).await?;
    let until = lease_until(now);
    if !pass_run(&mut tx, batch, owner, &items, until).await? {
        tx.rollback().await?;
        return Ok(false);
    }
    let reference = match items.as_slice() {
        [(only, _)] => only.reference.clone().unwrap_or_default(),
        _ => "of one of these items".to_owned(),
    };
    let (source, daily_limit) = standing(&mut tx, bank, batch).await?;
    let payer = transfers::payer(&source, payer_name);
    let mut rows = Batch::new();
    // The run's amounts by Lagos day, counted toward the limit once per day before the rows
    // are written (over it, the items go one by one and the one over fails alone).
    let mut days: Vec<(String, i64)> = Vec::new();
    for (item, recipient) in items {
        let head = places.take(business_id);
        let day = fees::lagos_day(head.posted_at);
        match days.iter_mut().find(|(d, _)| *d == day) {
            Some((_, total)) => *total += item.amount,
            None => days.push((day.clone(), item.amount)),
        }
        let recipient = match recipient {
            Some(found) => Some(reread(&mut tx, found).await?),
            None => None,
        };
        let posted = post(
            &mut tx,
            &mut rows,
            bank,
            batch,
            item,
            recipient.as_ref(),
            head,
        );
        let entry_id = posted.await?;
        let row = transfer_row(batch, item, recipient.is_some(), head.posted_at)?;
        datastore::transfers::insert_into(
            &mut rows,
            NewTransfer {
                row: row.clone(),
                business_id: business_id.to_owned(),
                source_account_id: batch.source_account_id.clone(),
                beneficiary_account_id: recipient.as_ref().map(|r| r.account.id.clone()),
                debit_transaction_id: None,
                fee_transaction_id: None,
                day,
                credential_issued_by: batch.credential_issued_by.clone(),
            },
        );
        if let Some(found) = &recipient {
            let credit_head = places.take(&found.business_id);
            let amount = Kobo::from_stored(item.amount)
                .ok_or_else(|| Error::internal("an item of nothing"))?;
            transfers::credit_recipient(
                &mut rows,
                &found.business_id,
                &found.account,
                credit_head,
                &entry_id,
                amount,
                &row.narration,
                &payer,
            )?;
            let view = transfers::view_of_row(&row)?;
            events::record_into(
                &mut rows,
                business_id,
                "transfer.success",
                &view,
                head.posted_at,
            )?;
        }
    }
    for (day, total) in days {
        transfers::count_toward_daily_limit(&mut tx, business_id, &day, total, daily_limit).await?;
    }
    write_rows(&mut tx, rows, &reference).await?;
    tx.commit().await.or_internal()?;
    Ok(true)
}

/// The batch's cursor moved past the run's items: past the first only if it had not passed it
/// (the batch's row then locked until the commit), then past the last, with what they spend:
/// two statements a run. `false` when the lease was lost or the first item was passed already.
async fn pass_run(
    tx: &mut Tx,
    batch: &BulkTransferRow,
    owner: &str,
    items: &[(&BulkItemRow, Option<KoboAccount>)],
    until: chrono::DateTime<chrono::Utc>,
) -> Result<bool, Error> {
    let spent = |item: &BulkItemRow| item.amount + item.fee.unwrap_or(0) + item.vat.unwrap_or(0);
    let (first, rest) = match items {
        [(first, _), rest @ ..] => (*first, rest),
        [] => return Ok(true),
    };
    let mut passes = vec![(first.idx, spent(first))];
    if let Some((last, _)) = rest.last() {
        passes.push((last.idx, rest.iter().map(|(item, _)| spent(item)).sum()));
    }
    for (idx, paid) in passes {
        if !bulk_transfers::pass_item(tx, &batch.id, owner, idx, paid, None, until).await? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// An intra-bank recipient's account as it stands now, under the heads (it may have been
/// blocked or closed since it was read before the transaction): `83` when it cannot receive.
async fn reread(tx: &mut Tx, mut found: KoboAccount) -> Result<KoboAccount, Error> {
    found.account = accounts::find_by_id(tx, &found.account.id)
        .await?
        .ok_or_else(|| Error::internal("a bulk item's recipient account vanished"))?;
    transfers::check_recipient(&found.account)?;
    Ok(found)
}

/// The items' entries, transfers, credits and events written, in one round trip. `26` when an
/// item's client reference was taken by another transfer since it was validated (the unique
/// index of references is the judge).
async fn write_rows(tx: &mut Tx, rows: Batch, reference: &str) -> Result<(), Error> {
    match batch::run(tx, rows).await {
        Ok(()) => Ok(()),
        Err(StoreError::Conflict(_)) => {
            Err(Error::new(ResponseCode::Duplicate).with_message(format!(
                "Reference {reference} was taken by another transfer after the item was validated"
            )))
        }
        Err(error) => Err(error.into()),
    }
}

/// The places a transaction of items takes in the ledgers it posts to: the source business's
/// one per item, and one per intra-bank credit in the recipient's business (the source's own
/// when it is the same), handed out in the order the items are written.
struct Places {
    /// `(business, places)` in business-id order, the lock order ([`ledger::advance_heads`]).
    order: Vec<(String, u32)>,
    /// Each business's next place, once the heads are taken.
    next: Vec<ledger::Head>,
}

impl Places {
    fn of(source: &str, recipients: &[Option<String>]) -> Places {
        let mut order: Vec<(String, u32)> = vec![(source.to_owned(), 0)];
        let mut count = |business: &str| match order.iter_mut().find(|(b, _)| b == business) {
            Some((_, places)) => *places += 1,
            None => order.push((business.to_owned(), 1)),
        };
        for recipient in recipients {
            count(source);
            if let Some(business) = recipient {
                count(business);
            }
        }
        order.sort();
        Places {
            order,
            next: Vec::new(),
        }
    }

    /// `business`'s next place.
    fn take(&mut self, business: &str) -> ledger::Head {
        let at = self
            .order
            .iter()
            .position(|(b, _)| b == business)
            .expect("a business whose places were taken");
        let head = self.next[at];
        self.next[at] = head.next();
        head
    }
}

/// The rules of a payout that hold for every item, under lock until the commit: the source
/// account active (`48`), the business active (`60`). Returns the source account and the
/// business's daily limit (each item counts toward it on the day it is paid, `83`).
async fn standing(
    tx: &mut Tx,
    bank: &Bank,
    batch: &BulkTransferRow,
) -> Result<(AccountRow, i64), Error> {
    let status = datastore::accounts::locked_status(tx, &batch.source_account_id)
        .await?
        .unwrap_or_default();
    if status != "active" {
        return Err(Error::new(ResponseCode::InvalidState).with_message(format!(
            "Source account {} is {status}",
            batch.source_account_number
        )));
    }
    let (business_status, daily_limit) = datastore::businesses::locked_for_execution(
        tx,
        &batch.business_id,
        bank.transfers.default_daily_limit,
    )
    .await?;
    if business_status != "active" {
        return Err(Error::new(ResponseCode::BusinessInactive));
    }
    let source = accounts::find_by_id(tx, &batch.source_account_id)
        .await?
        .ok_or_else(|| Error::internal("the source account of a bulk transfer vanished"))?;
    Ok((source, daily_limit))
}

/// The item's entry at `head`: its amount and charges out of the reservation, to the
/// recipient's account (or NIP in flight) and the fees (`83` when the recipient cannot hold
/// it).
async fn post(
    tx: &mut Tx,
    rows: &mut Batch,
    bank: &Bank,
    batch: &BulkTransferRow,
    item: &BulkItemRow,
    recipient: Option<&KoboAccount>,
    head: ledger::Head,
) -> Result<String, Error> {
    let environment = bank.platform.config.environment;
    let charges = item.fee.unwrap_or(0) + item.vat.unwrap_or(0);
    let mut postings = vec![Posting {
        account: LedgerAccount::Internal(Internal::BulkReserved, environment),
        amount: -(item.amount + charges),
    }];
    postings.extend(transfers::destination_postings(
        environment,
        recipient.map(|r| r.account.id.as_str()),
        item.amount,
        charges,
    ));
    let entry = Entry {
        business_id: &batch.business_id,
        kind: "bulk_transfer_item",
        postings,
    };
    ledger::post_into(tx, rows, &entry, head)
        .await?
        .map_err(|_| {
            Error::new(ResponseCode::ProviderError)
                .with_message("The beneficiary account cannot receive this amount")
        })
}

/// The item's transfer as it is written: the item's id, its batch's maker and checker.
fn transfer_row(
    batch: &BulkTransferRow,
    item: &BulkItemRow,
    intra: bool,
    at: chrono::DateTime<chrono::Utc>,
) -> Result<TransferRow, Error> {
    let at = store::as_stored(at);
    let by_integration = batch.authorised_by.as_deref() == Some("integration");
    let (initiated_by, initiated_via) = if by_integration {
        (batch.business_id.clone(), "integration")
    } else {
        (batch.authorised_by.clone().unwrap_or_default(), "dashboard")
    };
    let approval = if batch.reviewed_by.is_some() {
        ApprovalState::Approved
    } else {
        ApprovalState::initial(false)
    };
    Ok(TransferRow {
        id: item.transfer_id.to_string(),
        reference_number: transactions::new_reference("TRF", at),
        reference: item.reference.clone(),
        amount: item.amount,
        fee: item.fee.unwrap_or(0),
        vat: item.vat.unwrap_or(0),
        transfer_status: TransferStatus::initial(false, intra).as_str().to_owned(),
        approval_status: approval.as_str().to_owned(),
        transfer_type: if intra { "intra" } else { "inter" }.to_owned(),
        source_account_number: batch.source_account_number.clone(),
        beneficiary_account_number: item.account_number.clone(),
        beneficiary_account_name: holder(item).to_owned(),
        bank_code: item.bank_code.clone(),
        bank_name: item.bank_name.clone().unwrap_or_default(),
        narration: banks_narration(batch, item),
        session_id: None,
        failure_reason: None,
        reversal_reference_number: None,
        initiated_by,
        initiated_via: initiated_via.to_owned(),
        // As stored: a transfer is written unreviewed, and its event is made from this row (the
        // batch's checker is the batch's `reviewed_by`).
        reviewed_by: None,
        expires_at: None,
        created_at: at,
        updated_at: at,
    })
}

/// Every item taken: what the items did not spend back to the source account, in one credit.
/// `false` when the lease was lost.
async fn release_rest(bank: &Bank, batch: &BulkTransferRow, owner: &str) -> Result<bool, Error> {
    let (store, clock) = (&bank.platform.store, &bank.platform.clock);
    let business_id = batch.business_id.as_str();
    let mut tx = store.begin_posting(&[business_id]).await?;
    let head = ledger::advance_head(&mut tx, business_id, clock.now()).await?;
    let now = bulk_transfers::get(&mut tx, business_id, &batch.id)
        .await?
        .ok_or_else(|| Error::internal("a bulk transfer vanished"))?;
    let rest = now.reserved - now.paid - now.released;
    let at = store::as_stored(head.posted_at);
    if !bulk_transfers::release_rest(&mut tx, &batch.id, owner, rest, at).await? {
        tx.rollback().await?;
        return Ok(false);
    }
    if rest > 0 {
        let environment = bank.platform.config.environment;
        release(&mut tx, environment, &now, rest, head, "not paid").await?;
    }
    tx.commit().await.or_internal()?;
    Ok(true)
}

/// A batch whose items are all taken: `completed`, with `bulk_transfer.completed`, when none
/// is processing over NIP; otherwise looked at again after [`SETTLING_RECHECK`].
async fn settle(bank: &Bank, batch: &BulkTransferRow, owner: &str) -> Result<(), Error> {
    let (store, clock) = (&bank.platform.store, &bank.platform.clock);
    let outcomes = bulk_transfers::outcomes(store, &[batch.id]).await?;
    let processing = outcomes.first().map_or(0, |o| o.processing);
    let mut tx = store.begin().await?;
    if processing > 0 {
        let due = clock.now() + chrono::Duration::from_std(SETTLING_RECHECK).or_internal()?;
        bulk_transfers::later(&mut tx, &batch.id, owner, store::as_stored(due)).await?;
        tx.commit().await.or_internal()?;
        return Ok(());
    }
    let now = store::as_stored(clock.now());
    if let Some(done) = bulk_transfers::complete(&mut tx, &batch.id, owner, now).await? {
        let business_id = done.business_id.clone();
        let view = view_with_outcomes(&mut tx, done).await?;
        events::record(&mut tx, &business_id, "bulk_transfer.completed", &view, now).await?;
        tracing::info!(bulk_transfer = %batch.id, "bulk transfer completed");
    }
    tx.commit().await.or_internal()?;
    Ok(())
}
