//! Inter-bank transfers after their debit: submitted to NIP, then settled or reversed.
//!
//! [`process_due`] leases the `processing` transfers that are due (`FOR UPDATE SKIP LOCKED`
//! on PostgreSQL, so several `kobo` processes share the work; SQLite has one writer), then for
//! each, outside any database transaction, submits it (idempotently, by its reference) or asks
//! its status:
//! - success: the amount leaves NIP in flight for the settlement account; `transfer.success`;
//! - a confirmed failure: amount, fee and VAT go back to the source account as a `REV-`
//!   reversal credit; `transfer.failed` and `transfer.reversed`;
//! - pending, a timeout or any unknown outcome: nothing moves; it is asked again later with a
//!   bounded backoff (5 s doubling to 5 min). A transfer is never reversed blindly.
//!
//! Each outcome is applied by a conditional update (`WHERE transfer_status = 'processing'`), so
//! however many workers race, a transfer settles or reverses once.

use chrono::{DateTime, Duration, Utc};
use generated_server::models;

use crate::datastore::{self, transfers as transfers_store};
use crate::error::{Error, OrInternal};
use crate::kernel::clock::Clock;
use crate::kernel::config::Environment;
use crate::kernel::store::{self, Store};
use crate::money::accounts;
use crate::money::amount::Kobo;
use crate::money::ledger::{self, Entry, Internal, LedgerAccount, Posting};
use crate::money::transactions::{self, NewTransaction};
use crate::money::transfers::{self, Lookup, Move, TransferStatus};
use crate::outbox::events;
use crate::provider::{CoreBanking, NipOutcome, NipTransfer};

/// How long a worker holds a transfer it leased.
const LEASE_SECONDS: i64 = 60;
/// The longest wait between two questions about one transfer.
const MAX_BACKOFF_SECONDS: i64 = 300;

/// One leased transfer, as the worker needs it.
struct Leased {
    id: String,
    business_id: String,
    source_account_id: String,
    submitted: bool,
    attempts: i64,
    fee: i64,
    vat: i64,
    debit_transaction_id: Option<String>,
    fee_transaction_id: Option<String>,
    nip: NipTransfer,
}

/// What one pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pass {
    pub settled: usize,
    pub reversed: usize,
    pub waiting: usize,
}

/// Works through at most `limit` due transfers; returns what it did.
pub async fn process_due(
    store: &Store,
    provider: &dyn CoreBanking,
    clock: &Clock,
    environment: Environment,
    limit: i64,
) -> Result<Pass, Error> {
    let mut pass = Pass::default();
    for leased in lease(store, clock.now(), limit).await? {
        let outcome = if leased.submitted {
            provider.transfer_status(&leased.nip).await
        } else {
            provider.submit_transfer(&leased.nip).await
        };
        match outcome {
            Ok(NipOutcome::Success { session_id }) => {
                settle(store, clock, environment, &leased, &session_id).await?;
                pass.settled += 1;
            }
            Ok(NipOutcome::Failed { session_id, reason }) => {
                reverse(store, clock, environment, &leased, session_id, &reason).await?;
                pass.reversed += 1;
            }
            Ok(NipOutcome::Pending { session_id }) => {
                wait(store, clock.now(), &leased, true, session_id).await?;
                pass.waiting += 1;
            }
            // Unknown: maybe submitted, maybe not. Submission is idempotent by reference, so
            // an unsubmitted transfer is submitted again; a submitted one is asked again.
            Err(_) => {
                wait(store, clock.now(), &leased, leased.submitted, None).await?;
                pass.waiting += 1;
            }
        }
    }
    Ok(pass)
}

async fn lease(store: &Store, now: DateTime<Utc>, limit: i64) -> Result<Vec<Leased>, Error> {
    let until = now + Duration::seconds(LEASE_SECONDS);
    let ids = transfers_store::lease_due(store, now, until, limit).await?;
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let rows = transfers_store::leased(store, &ids).await?;
    Ok(rows
        .into_iter()
        .map(|row| Leased {
            id: row.id,
            business_id: row.business_id,
            source_account_id: row.source_account_id,
            submitted: row.submitted,
            attempts: row.attempts,
            fee: row.fee,
            vat: row.vat,
            debit_transaction_id: row.debit_transaction_id,
            fee_transaction_id: row.fee_transaction_id,
            nip: NipTransfer {
                reference_number: row.reference_number,
                source_account_number: row.source_account_number,
                originator_account_name: accounts::holder_name(
                    &row.business_name,
                    &row.source_account_name,
                ),
                beneficiary_account_number: row.beneficiary_account_number,
                beneficiary_account_name: row.beneficiary_account_name,
                bank_code: row.bank_code,
                amount_kobo: row.amount,
                narration: row.narration,
            },
        })
        .collect())
}

/// Not decided yet: releases the lease and asks again after the backoff.
async fn wait(
    store: &Store,
    now: DateTime<Utc>,
    leased: &Leased,
    submitted: bool,
    session_id: Option<String>,
) -> Result<(), Error> {
    let exponent = u32::try_from(leased.attempts.clamp(0, 10)).unwrap_or(10);
    let backoff = (5_i64 << exponent).min(MAX_BACKOFF_SECONDS);
    let next_attempt_at = now + Duration::seconds(backoff);
    let session_id = session_id.as_deref();
    transfers_store::wait(
        store,
        &leased.id,
        submitted,
        next_attempt_at,
        session_id,
        now,
    )
    .await?;
    Ok(())
}

/// Claims the decision for `leased` inside `tx` (NIP settled it or failed it): false when
/// another worker made it first. A transfer that leaves the counted statuses gives its amount
/// back to its day's limit.
async fn decide(
    tx: &mut store::Tx,
    leased: &Leased,
    requested: Move,
    at: DateTime<Utc>,
) -> Result<bool, Error> {
    let from = TransferStatus::Processing;
    let to = from
        .next(requested)
        .map_err(|refused| Error::internal(format!("the NIP worker asked for {refused:?}")))?;
    let decided = transfers_store::decide(tx, &leased.id, from.as_str(), to.as_str(), at).await?;
    if decided && !to.counts_toward_limit() {
        transfers::uncount(tx, &leased.id).await?;
    }
    Ok(decided)
}

async fn settle(
    store: &Store,
    clock: &Clock,
    environment: Environment,
    leased: &Leased,
    session_id: &str,
) -> Result<(), Error> {
    let mut tx = store.begin_posting(&[&leased.business_id]).await?;
    let head = ledger::advance_head(&mut tx, &leased.business_id, clock.now()).await?;
    if !decide(&mut tx, leased, Move::Settle, head.posted_at).await? {
        return Ok(());
    }
    let entry = Entry {
        business_id: &leased.business_id,
        kind: "transfer_settlement",
        postings: vec![
            Posting {
                account: LedgerAccount::Internal(Internal::NipInFlight, environment),
                amount: -leased.nip.amount_kobo,
            },
            Posting {
                account: LedgerAccount::Internal(Internal::NipSettlement, environment),
                amount: leased.nip.amount_kobo,
            },
        ],
    };
    if ledger::post(&mut tx, &entry, head).await?.is_err() {
        return Err(Error::internal(
            "a settlement between internal accounts was refused",
        ));
    }
    transfers_store::set_session_id(&mut tx, &leased.id, session_id).await?;
    transactions::set_status(
        &mut tx,
        leased.debit_transaction_id.as_deref(),
        models::TransactionStatus::Success,
    )
    .await?;
    if let Some(id) = &leased.debit_transaction_id {
        datastore::transactions::set_session_id(&mut tx, id, session_id).await?;
    }
    let transfer = transfers::find(&mut tx, &leased.business_id, Lookup::Id(&leased.id))
        .await?
        .ok_or_else(|| Error::internal("a settled transfer vanished"))?;
    events::record(
        &mut tx,
        &leased.business_id,
        "transfer.success",
        &transfer,
        head.posted_at,
    )
    .await?;
    tx.commit().await.or_internal()
}

async fn reverse(
    store: &Store,
    clock: &Clock,
    environment: Environment,
    leased: &Leased,
    session_id: Option<String>,
    reason: &str,
) -> Result<(), Error> {
    let mut tx = store.begin_posting(&[&leased.business_id]).await?;
    let head = ledger::advance_head(&mut tx, &leased.business_id, clock.now()).await?;
    if !decide(&mut tx, leased, Move::Reverse, head.posted_at).await? {
        return Ok(());
    }
    let reversal_reference = credit_back(&mut tx, environment, leased, head, reason).await?;
    for transaction in [&leased.debit_transaction_id, &leased.fee_transaction_id] {
        let reversed = models::TransactionStatus::Reversed;
        transactions::set_status(&mut tx, transaction.as_deref(), reversed).await?;
    }
    let session_id = session_id.as_deref();
    transfers_store::set_reversal(&mut tx, &leased.id, reason, &reversal_reference, session_id)
        .await?;
    let transfer = transfers::find(&mut tx, &leased.business_id, Lookup::Id(&leased.id))
        .await?
        .ok_or_else(|| Error::internal("a reversed transfer vanished"))?;
    // Announced as failed at NIP, then as reversed.
    let failed = TransferStatus::Failed.event();
    for kind in [failed, TransferStatus::Reversed.event()]
        .into_iter()
        .flatten()
    {
        let at = head.posted_at;
        events::record(&mut tx, &leased.business_id, kind, &transfer, at).await?;
    }
    tx.commit().await.or_internal()
}

/// The reversal's entry, in `tx`: amount, fee and VAT back to the source account (out of NIP
/// in flight and the fees), with its `REV-` credit; returns the reversal's reference.
async fn credit_back(
    tx: &mut store::Tx,
    environment: Environment,
    leased: &Leased,
    head: ledger::Head,
    reason: &str,
) -> Result<String, Error> {
    let charges = leased.fee + leased.vat;
    let returned = leased.nip.amount_kobo + charges;
    let mut postings = vec![
        Posting {
            account: LedgerAccount::Internal(Internal::NipInFlight, environment),
            amount: -leased.nip.amount_kobo,
        },
        Posting {
            account: LedgerAccount::Customer(leased.source_account_id.clone()),
            amount: returned,
        },
    ];
    if charges > 0 {
        postings.push(Posting {
            account: LedgerAccount::Internal(Internal::Fees, environment),
            amount: -charges,
        });
    }
    let entry = Entry {
        business_id: &leased.business_id,
        kind: "transfer_reversal",
        postings,
    };
    let Ok(entry_id) = ledger::post(tx, &entry, head).await? else {
        return Err(Error::internal(
            "a reversal was refused: the source account cannot hold the returned amount",
        ));
    };
    let source = accounts::find_by_id(tx, &leased.source_account_id)
        .await?
        .ok_or_else(|| Error::internal("the source account of a transfer vanished"))?;
    let reversal_reference = format!("REV-{}", &leased.nip.reference_number[4..]);
    let credit = NewTransaction {
        business_id: &leased.business_id,
        account: &source,
        entry_id: &entry_id,
        head,
        reference_number: reversal_reference.clone(),
        transaction_type: models::TransactionType::Credit,
        category: models::TransactionCategory::Reversal,
        status: models::TransactionStatus::Success,
        channel: models::Channel::Internal,
        amount: Kobo::from_stored(returned)
            .ok_or_else(|| Error::internal("a reversal of nothing"))?,
        narration: format!("Reversal of {}: {reason}", leased.nip.reference_number),
        session_id: None,
        originator: None,
    };
    transactions::record(tx, &credit).await?;
    Ok(reversal_reference)
}
