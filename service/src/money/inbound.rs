//! Money coming in: an inbound credit from outside (over NIP) or from another Kobo account,
//! posted exactly as a real one: one journal entry (debit the bank's NIP settlement account,
//! credit the business's account), the collection transaction and its settlement, the audit
//! entry and the `collection.received` event, in one database transaction.
//!
//! `simulate_inbound_transfer` is the sandbox's way in; a real NIP inbound notification would
//! call [`credit`] the same way.

use chrono::{DateTime, Utc};
use generated_server::models::{self, AuditAction};
use generated_server::ResponseCode;

use crate::datastore::batch::{self, Batch};
use crate::datastore::transactions::SessionCredit;
use crate::datastore::Conn;
use crate::error::Error;
use crate::kernel::clock::Clock;
use crate::kernel::config::Environment;
use crate::kernel::store::{Store, Tx};
use crate::kernel::text;
use crate::money::accounts::{find_by_number, AccountRow};
use crate::money::amount::{amount_text, Kobo};
use crate::money::bank::Bank;
use crate::money::ledger::{self, Entry, Internal, LedgerAccount, Posting, Refusal};
use crate::money::nuban;
use crate::money::transactions::{self, NewTransaction, Originator};
use crate::money::transfers::{self, Opening};
use crate::outbox::events;
use crate::platform::caller::Caller;
use crate::platform::context::Platform;
use crate::platform::idempotency::{Completion, Keyed, Prepared};
use crate::platform::logs::{self, AuditEntry};
use crate::provider::new_session_id;

/// The sandbox's default sender: a test customer at Guaranty Trust Bank.
const DEFAULT_SENDER: (&str, &str, &str) = ("0123456788", "Emeka Nwosu", "000013");

/// The banks the sandbox knows by code (the transfers issue brings the full list).
pub fn bank_name(code: &str) -> String {
    match code {
        nuban::BANK_CODE => "Kobo".to_owned(),
        "000013" => "Guaranty Trust Bank".to_owned(),
        "000014" => "Access Bank".to_owned(),
        "000016" => "First Bank of Nigeria".to_owned(),
        "000015" => "Zenith Bank".to_owned(),
        "000004" => "United Bank for Africa".to_owned(),
        other => format!("Bank {other}"),
    }
}

pub async fn simulate_inbound_transfer(
    bank: &Bank,
    caller: &Caller,
    body: models::SimulateInboundTransferRequest,
) -> Result<models::IntegrationTransaction, Error> {
    let Platform {
        store,
        config,
        clock,
        ..
    } = &bank.platform;
    if config.environment != Environment::Sandbox {
        return Err(Error::new(ResponseCode::UnknownOperation)
            .with_message("simulate_inbound_transfer exists only in the sandbox"));
    }
    let amount = Kobo::parse(body.amount.as_str()).ok_or_else(|| {
        Error::new(ResponseCode::InvalidRequest)
            .with_message("`amount`: must be positive, with at most two fraction digits")
    })?;
    let originator = simulated_sender(&body)?;
    let narration = match body.narration.as_deref().map(|n| n.as_str()) {
        Some(narration) => {
            text::check_name("narration", narration)?;
            Some(narration.trim().to_owned())
        }
        None => None,
    }
    .filter(|narration| !narration.is_empty())
    .unwrap_or_else(|| format!("Transfer from {}", originator.account_name));
    let credit = InboundCredit {
        session_id: None,
        account_number: body.account_number.to_string(),
        amount,
        narration,
        originator,
        environment: config.environment,
    };
    credit_with(store, clock, caller, &body, &credit).await
}

/// The sender a simulated credit names, another bank's customer (Emeka Nwosu at Guaranty
/// Trust Bank unless the body says otherwise). Not a Kobo account: money between Kobo
/// accounts comes from real transfers, and a simulated one could name any business as its
/// payer. Its name, like the narration, follows the rules of every name people read (`01`:
/// no control, line-break or bidirectional characters).
fn simulated_sender(body: &models::SimulateInboundTransferRequest) -> Result<Originator, Error> {
    let (default_number, default_name, default_bank) = DEFAULT_SENDER;
    let bank_code = body
        .sender_bank_code
        .as_ref()
        .map_or(default_bank.to_owned(), |code| code.to_string());
    if bank_code == nuban::BANK_CODE {
        return Err(invalid(
            "`sender_bank_code`: 090823 is Kobo's own: a simulated credit comes from another \
             bank (money between Kobo accounts moves by funds_transfer)",
        ));
    }
    let account_name = match body.sender_account_name.as_deref() {
        None => default_name.to_owned(),
        Some(name) => {
            text::check_name("sender_account_name", name)?;
            let name = name.trim();
            if name.is_empty() {
                return Err(invalid("`sender_account_name`: must not be blank"));
            }
            name.to_owned()
        }
    };
    Ok(Originator {
        account_number: body
            .sender_account_number
            .as_ref()
            .map_or(default_number.to_owned(), |n| n.to_string()),
        account_name,
        bank_name: bank_name(&bank_code),
        bank_code,
    })
}

fn invalid(message: &'static str) -> Error {
    Error::new(ResponseCode::InvalidRequest).with_message(message)
}

/// An inbound credit to post.
#[derive(Clone, Debug)]
pub struct InboundCredit {
    /// NIP's session id when the provider notified it (one credit per session); a new one is
    /// made for a simulated credit.
    pub session_id: Option<String>,
    pub account_number: String,
    pub amount: Kobo,
    pub narration: String,
    pub originator: Originator,
    pub environment: Environment,
}

async fn credit_with(
    store: &Store,
    clock: &Clock,
    caller: &Caller,
    body: &models::SimulateInboundTransferRequest,
    credit: &InboundCredit,
) -> Result<models::IntegrationTransaction, Error> {
    let business_id = caller.principal.business_id.as_str();
    // The account is read before the transaction: it still has to be active when its balance
    // moves (`Opening::receiving`), so a close committed meanwhile refuses the credit.
    let prepare = async || {
        let account = receiving_account(store, business_id, &credit.account_number).await?;
        // The lean posting's transaction, as a payout's: kept plans, two statements.
        Ok(Prepared::payout(
            account,
            vec![business_id.to_owned()],
            None,
        ))
    };
    let write = async |tx: &mut Tx, account: AccountRow, completion: &mut Completion| {
        let mut batch = Batch::new();
        let transaction =
            post_credit_into(tx, &mut batch, business_id, &account, credit, clock.now()).await?;
        let entry = AuditEntry::by(caller, AuditAction::ReceiveInboundTransfer)
            .target("transaction", transaction.id.to_string());
        logs::audit_into(&mut batch, transaction.created_at, entry);
        completion.into(&mut batch, &transaction)?;
        batch::run(tx, batch).await?;
        Ok(transaction)
    };
    Keyed::new(store, clock, caller, body)
        .claiming_last()
        .run(prepare, write)
        .await
}

/// The business's account `number`, which must be active to receive: `44` when the business
/// has no such account, `48` when it is blocked or closed.
async fn receiving_account(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
    number: &str,
) -> Result<AccountRow, Error> {
    let account = find_by_number(conn, business_id, number)
        .await?
        .ok_or_else(|| {
            Error::new(ResponseCode::AccountNotFound)
                .with_message(format!("No account {number} in this business"))
        })?;
    ensure_receives(&account)?;
    Ok(account)
}

/// `48` unless `account`, as read, is active (its balance's `UPDATE` checks it again).
fn ensure_receives(account: &AccountRow) -> Result<(), Error> {
    if account.status != "active" {
        return Err(cannot_receive(&account.account_number, &account.status));
    }
    Ok(())
}

/// Posts `credit` to the business's account inside `tx`: the ledger head, the entry, the
/// transaction and settlement, the `collection.received` event.
pub async fn post_credit(
    tx: &mut Tx,
    business_id: &str,
    credit: &InboundCredit,
    now: DateTime<Utc>,
) -> Result<models::IntegrationTransaction, Error> {
    let account = receiving_account(&mut *tx, business_id, &credit.account_number).await?;
    let mut batch = Batch::new();
    let transaction = post_credit_into(tx, &mut batch, business_id, &account, credit, now).await?;
    batch::run(tx, batch).await?;
    Ok(transaction)
}

/// [`post_credit`] to `account` (read, and seen active, before), its rows written as
/// statements of `batch`, which the caller runs in `tx` with its own: one statement moves the
/// head and the balance ([`transfers::move_money`], which refuses an account no longer
/// active), the batch writes the entry, the transaction and settlement and the event.
pub async fn post_credit_into(
    tx: &mut Tx,
    batch: &mut Batch,
    business_id: &str,
    account: &AccountRow,
    credit: &InboundCredit,
    now: DateTime<Utc>,
) -> Result<models::IntegrationTransaction, Error> {
    let entry = Entry {
        business_id,
        kind: "inbound_credit",
        postings: vec![
            Posting {
                account: LedgerAccount::Internal(Internal::NipSettlement, credit.environment),
                amount: -credit.amount.get(),
            },
            Posting {
                account: LedgerAccount::Customer(account.id.clone()),
                amount: credit.amount.get(),
            },
        ],
    };
    let opening = Opening {
        business_id,
        recipient_business: None,
        receiving: Some(account),
        source_places: 1,
        daily: None,
        default_daily_limit: 0,
        business_must_be_active: false,
        entry: &entry,
    };
    let (heads, moved) = transfers::move_money(tx, &opening, now).await?;
    match moved {
        Ok(()) => {}
        Err(Refusal::Inactive { status, .. }) => {
            return Err(cannot_receive(&account.account_number, &status));
        }
        Err(Refusal::BalanceLimit { .. } | Refusal::InsufficientFunds { .. }) => {
            return Err(Error::new(ResponseCode::InvalidState).with_message(format!(
                "Account {} cannot hold this amount: it would exceed the largest balance allowed",
                account.account_number
            )));
        }
    }
    let head = heads.source;
    let entry_id = ledger::record_into(batch, &entry, head.posted_at);
    let intra = credit.originator.bank_code == nuban::BANK_CODE;
    let transaction = transactions::record_into(
        batch,
        &NewTransaction {
            business_id,
            account,
            entry_id: &entry_id,
            head,
            reference_number: transactions::new_reference("COL", head.posted_at),
            transaction_type: models::TransactionType::Credit,
            category: models::TransactionCategory::Collection,
            status: models::TransactionStatus::Success,
            channel: if intra {
                models::Channel::Intra
            } else {
                models::Channel::Nip
            },
            amount: credit.amount,
            narration: credit.narration.clone(),
            session_id: match &credit.session_id {
                Some(notified) => Some(notified.clone()),
                None => {
                    (!intra).then(|| new_session_id(&credit.originator.bank_code, head.posted_at))
                }
            },
            originator: Some(credit.originator.clone()),
        },
    )?;
    events::record_into(
        batch,
        business_id,
        "collection.received",
        &transaction,
        head.posted_at,
    )?;
    Ok(transaction)
}

/// `48`: the account is `status` (blocked or closed) and takes no money.
fn cannot_receive(account_number: &str, status: &str) -> Error {
    Error::new(ResponseCode::InvalidState).with_message(format!(
        "Account {account_number} is {status} and cannot receive funds"
    ))
}

/// What [`book_notified`] did with a notified credit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Booked {
    /// Booked now: the collection's transaction id.
    Now(String),
    /// Its NIP session was booked before (a notification sent again): nothing more.
    Before(String),
}

/// Books an inbound NIP credit the provider notified, into whichever business holds
/// `credit.account_number`, once per NIP session (`credit.session_id`, required): a session
/// booked before with the same account and amount is [`Booked::Before`], with another `48`
/// (nothing written). Two notifications of one session at once: the unique
/// index refuses the second, which looks again once the first has committed (on SQLite both may
/// be in one group commit, so it waits for it, a few times at most). Refused with nothing
/// written: `44` no such account, `48` an account that cannot receive.
pub async fn book_notified(
    store: &Store,
    clock: &Clock,
    credit: &InboundCredit,
) -> Result<Booked, Error> {
    const ATTEMPTS: u64 = 5;
    let session = credit
        .session_id
        .as_deref()
        .ok_or_else(|| Error::internal("a notified credit without its NIP session"))?;
    let mut attempt = 0;
    loop {
        attempt += 1;
        if let Some(booked) =
            crate::datastore::transactions::credit_of_session(store, session).await?
        {
            return same_credit(session, &booked, credit).map(|()| Booked::Before(booked.id));
        }
        match book_once(store, clock, credit).await {
            Ok(id) => return Ok(Booked::Now(id)),
            Err(error) if error.is_conflict() && attempt < ATTEMPTS => {
                tokio::time::sleep(std::time::Duration::from_millis(20 * attempt)).await;
            }
            Err(error) => return Err(error),
        }
    }
}

/// A notification of a session booked before must name the same account and amount: another
/// is not a repeat but a discrepancy (a session id reused, or a credit altered), answered `48`
/// with both sides for an operator, and never acknowledged as booked.
fn same_credit(session: &str, booked: &SessionCredit, credit: &InboundCredit) -> Result<(), Error> {
    if booked.account_number == credit.account_number && booked.amount == credit.amount.get() {
        return Ok(());
    }
    Err(Error::new(ResponseCode::InvalidState).with_message(format!(
        "NIP session {session} was booked as {} ({} to account {}); this notification says {} \
         to account {}",
        booked.id,
        amount_text(i128::from(booked.amount)),
        booked.account_number,
        amount_text(i128::from(credit.amount.get())),
        credit.account_number
    )))
}

/// [`book_notified`]'s one attempt: the account (read, and seen active, before the
/// transaction), then the posting, in one transaction.
async fn book_once(store: &Store, clock: &Clock, credit: &InboundCredit) -> Result<String, Error> {
    let found = crate::money::accounts::find_by_number_anywhere(store, &credit.account_number)
        .await?
        .ok_or_else(|| {
            Error::new(ResponseCode::AccountNotFound)
                .with_message(format!("No account {}", credit.account_number))
        })?;
    let business_id = found.business_id.as_str();
    let account = &found.account;
    ensure_receives(account)?;
    let mut tx = store.begin_payout(&[business_id], None).await?;
    let mut batch = Batch::new();
    let transaction = post_credit_into(
        &mut tx,
        &mut batch,
        business_id,
        account,
        credit,
        clock.now(),
    )
    .await?;
    batch::run(&mut tx, batch).await?;
    tx.commit().await?;
    Ok(transaction.id.to_string())
}
