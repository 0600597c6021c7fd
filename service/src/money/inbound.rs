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

use crate::error::Error;
use crate::kernel::clock::Clock;
use crate::kernel::config::{Config, Environment};
use crate::kernel::store::{Store, Tx};
use crate::kernel::text;
use crate::money::accounts::find_by_number;
use crate::money::amount::Kobo;
use crate::money::ledger::{self, Changes, Entry, Internal, LedgerAccount, Posting, Refusal};
use crate::money::nuban;
use crate::money::transactions::{self, NewTransaction, Originator};
use crate::outbox::events;
use crate::platform::caller::Caller;
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
    store: &Store,
    config: &Config,
    clock: &Clock,
    caller: &Caller,
    body: models::SimulateInboundTransferRequest,
) -> Result<models::IntegrationTransaction, Error> {
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
    let prepare = async || Ok(Prepared::posting((), vec![business_id.to_owned()]));
    let write = async |tx: &mut Tx, (), _: &mut Completion| {
        let transaction = post_credit(tx, business_id, credit, clock.now()).await?;
        let entry = AuditEntry::by(caller, AuditAction::ReceiveInboundTransfer)
            .target("transaction", transaction.id.to_string());
        logs::audit(tx, transaction.created_at, entry).await?;
        Ok(transaction)
    };
    Keyed::new(store, clock, caller, body)
        .run(prepare, write)
        .await
}

/// Posts `credit` to the business's account inside `tx`: the ledger head, the entry, the
/// transaction and settlement, the `collection.received` event.
pub async fn post_credit(
    tx: &mut Tx,
    business_id: &str,
    credit: &InboundCredit,
    now: DateTime<Utc>,
) -> Result<models::IntegrationTransaction, Error> {
    // The head first (the lock order of every posting), then the account.
    let head = ledger::advance_head(tx, business_id, now).await?;
    let account = find_by_number(&mut *tx, business_id, &credit.account_number)
        .await?
        .ok_or_else(|| {
            Error::new(ResponseCode::AccountNotFound).with_message(format!(
                "No account {} in this business",
                credit.account_number
            ))
        })?;
    if account.status != "active" {
        return Err(cannot_receive(&account.account_number, &account.status));
    }
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
    // Read before its row was locked: it must still be active when its balance moves.
    let changes = Changes::of(&entry).receiving(&account.id);
    let entry_id = match ledger::post_with(tx, &entry, &changes, head).await? {
        Ok(entry_id) => entry_id,
        Err(Refusal::Inactive { status, .. }) => {
            return Err(cannot_receive(&account.account_number, &status));
        }
        Err(Refusal::BalanceLimit { .. } | Refusal::InsufficientFunds { .. }) => {
            return Err(Error::new(ResponseCode::InvalidState).with_message(format!(
                "Account {} cannot hold this amount: it would exceed the largest balance allowed",
                account.account_number
            )));
        }
    };
    let intra = credit.originator.bank_code == nuban::BANK_CODE;
    let transaction = transactions::record(
        tx,
        &NewTransaction {
            business_id,
            account: &account,
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
    )
    .await?;
    events::record(
        tx,
        business_id,
        "collection.received",
        &transaction,
        head.posted_at,
    )
    .await?;
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
/// booked before is [`Booked::Before`]. Two notifications of one session at once: the unique
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
        if let Some(id) = crate::datastore::transactions::credit_of_session(store, session).await? {
            return Ok(Booked::Before(id));
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

/// [`book_notified`]'s one attempt: the account, then the posting, in one transaction.
async fn book_once(store: &Store, clock: &Clock, credit: &InboundCredit) -> Result<String, Error> {
    let account = crate::money::accounts::find_by_number_anywhere(store, &credit.account_number)
        .await?
        .ok_or_else(|| {
            Error::new(ResponseCode::AccountNotFound)
                .with_message(format!("No account {}", credit.account_number))
        })?;
    let business_id = account.business_id.as_str();
    let mut tx = store.begin_posting(&[business_id]).await?;
    let transaction = post_credit(&mut tx, business_id, credit, clock.now()).await?;
    tx.commit().await?;
    Ok(transaction.id.to_string())
}
