//! What a transfer posts: the ledger heads it takes, the balanced entry of its money, the
//! transactions each side sees, and the intra-bank recipient's credit.

use chrono::{DateTime, Utc};
use generated_server::models;
use generated_server::ResponseCode;

use super::checks::*;
use super::limits::over_daily_limit;
use crate::datastore;
use crate::datastore::accounts::BalanceChange;
use crate::datastore::batch::Batch;
use crate::datastore::ledger::{AdvancedHead, HeadsAndMoney, Money};
use crate::error::Error;
use crate::kernel::config::Environment;
use crate::kernel::store::Tx;
use crate::money::accounts::{self, AccountRow};
use crate::money::amount::MAX_BALANCE;
use crate::money::amount::{amount_text, Kobo};
use crate::money::banks::{self, Beneficiary};
use crate::money::fees;
use crate::money::fees::Charges;
use crate::money::ledger::{self, Changes, Entry, Head, Internal, LedgerAccount, Posting, Refusal};
use crate::money::nuban;
use crate::money::transactions::{self, NewTransaction, Originator};
use crate::outbox::events;

/// The ledger heads a transfer locks: the source business's and, for an intra-bank transfer
/// to another business, the recipient's, taken in business-id order.
pub(crate) struct Heads {
    pub(crate) source: Head,
    pub(crate) recipient: Option<Head>,
}

/// Takes the ledger heads of the source business and of an intra-bank recipient's (when it is
/// another), in business-id order: the payout's transaction holds them until its commit.
/// The source business takes `source_places` consecutive places (see
/// [`ledger::advance_head_by`]); [`Heads::source`] is the first.
pub(crate) async fn lock_heads(
    tx: &mut Tx,
    source: &str,
    recipient: Option<&str>,
    source_places: u32,
    now: DateTime<Utc>,
) -> Result<Heads, Error> {
    let order = head_order(source, recipient, source_places);
    let heads = ledger::advance_heads(tx, &order, now).await?;
    Ok(Heads::of(source, &order, &heads))
}

/// The heads to take, in business-id order (the lock order): the source business's with its
/// places, and another business's it credits with one.
fn head_order<'a>(
    source: &'a str,
    recipient: Option<&'a str>,
    source_places: u32,
) -> Vec<(&'a str, u32)> {
    match recipient {
        Some(other) if other != source => {
            let mut order = vec![(source, source_places), (other, 1)];
            order.sort_by_key(|(business, _)| *business);
            order
        }
        _ => vec![(source, source_places)],
    }
}

impl Heads {
    /// The heads taken in `order` ([`head_order`]), `source`'s apart.
    fn of(source: &str, order: &[(&str, u32)], heads: &[Head]) -> Heads {
        let mut taken = Heads {
            source: heads[0],
            recipient: None,
        };
        for ((business, _), head) in order.iter().zip(heads) {
            if *business == source {
                taken.source = *head;
            } else {
                taken.recipient = Some(*head);
            }
        }
        taken
    }
}

/// What a posting moves before its rows are written ([`move_money`]): a payout's, or an
/// inbound credit's.
pub(crate) struct Opening<'a> {
    /// The business that posts the entry (a payout's source).
    pub(crate) business_id: &'a str,
    /// The business of an intra-bank beneficiary, whose head is taken too.
    pub(crate) recipient_business: Option<&'a str>,
    /// The Kobo account credited now (an intra-bank payout not held, an inbound credit): read
    /// before its row was locked, it must still be active when its balance moves.
    pub(crate) receiving: Option<&'a AccountRow>,
    /// The places the posting business takes in its ledger (one per transaction it lists).
    pub(crate) source_places: u32,
    /// The amount counted toward the business's daily total, within its limit as it stands
    /// when the money moves; `None` for a hold (its approval counts it) and for money coming
    /// in.
    pub(crate) daily: Option<i64>,
    /// The limit of a business that has none of its own (`TransferPolicy`).
    pub(crate) default_daily_limit: i64,
    /// Money leaves the business: it must be active when the money moves (`60` otherwise),
    /// however it was when the request was read.
    pub(crate) business_must_be_active: bool,
    pub(crate) entry: &'a Entry<'a>,
}

/// A posting's first writes, in one step ([`Ledger::advance_and_move`], one statement on
/// PostgreSQL): its heads taken ([`lock_heads`]'s order), a payout's amount counted toward the
/// daily limit on the Lagos day of its first place, its balances moved at that place's time.
/// `83` over the daily limit, `60` when money would leave a business no longer active
/// ([`Opening::business_must_be_active`]); an account that refused its change as [`Refusal`]
/// (nothing moved: the caller rolls back). A payout's is the store's to write with its rows
/// ([`Movement`], `Tx::pay`).
///
/// [`Ledger::advance_and_move`]: kobo_store::ledger::Ledger::advance_and_move
pub(crate) async fn move_money(
    tx: &mut Tx,
    opening: &Opening<'_>,
    now: DateTime<Utc>,
) -> Result<Opened, Error> {
    let movement = Movement::of(opening, now)?;
    let balance_changes = movement.changes.balance_changes();
    let money = movement.money(opening, &balance_changes)?;
    tx.check_standing(&money)?;
    let done =
        datastore::ledger::advance_and_move(tx, &movement.places, movement.now, &money).await?;
    movement.decision(tx, opening, &done).await
}

/// A posting's movement as the store takes it: its heads in their lock order with their places,
/// its balance changes, its time to the microsecond.
pub(crate) struct Movement<'a> {
    /// The business that posts (a payout's source).
    source: &'a str,
    order: Vec<(&'a str, u32)>,
    pub(crate) places: Vec<(&'a str, i64)>,
    pub(crate) changes: Changes<'a>,
    pub(crate) now: DateTime<Utc>,
}

impl<'a> Movement<'a> {
    /// `opening`'s, at `now`, once its entry is seen to balance.
    pub(crate) fn of(opening: &Opening<'a>, now: DateTime<Utc>) -> Result<Movement<'a>, Error> {
        let order = head_order(
            opening.business_id,
            opening.recipient_business,
            opening.source_places,
        );
        Ok(Movement {
            source: opening.business_id,
            places: ledger::places_in_order(&order)?,
            order,
            changes: changes_of(opening)?,
            now: ledger::to_the_microsecond(now)?,
        })
    }

    /// What the movement asks of the store, its balance changes `changes`
    /// ([`Changes::balance_changes`]).
    pub(crate) fn money<'c>(
        &self,
        opening: &Opening<'c>,
        changes: &'c [BalanceChange<'c>],
    ) -> Result<Money<'c>, Error> {
        let business_id = opening.business_id;
        let source_places = self
            .places
            .iter()
            .find(|(business, _)| *business == business_id)
            .map(|(_, places)| *places)
            .ok_or_else(|| Error::internal("a payout's heads leave out its own business"))?;
        Ok(Money {
            business_id,
            places: source_places,
            daily: opening.daily,
            default_daily_limit: opening.default_daily_limit,
            business_must_be_active: opening.business_must_be_active,
            changes,
            max_balance: MAX_BALANCE,
        })
    }

    /// The first places of the heads as `advanced`: the source business's and a recipient's.
    pub(crate) fn heads(&self, advanced: &[AdvancedHead]) -> Result<Heads, Error> {
        let mut firsts = Vec::with_capacity(self.places.len());
        for (business, places) in &self.places {
            let head = ledger::advanced_head(advanced, business)?;
            firsts.push(ledger::first_place(head, *places)?.ok_or_else(|| {
                Error::internal("a ledger head without its time in microseconds (0017)")
            })?);
        }
        Ok(Heads::of(self.source, &self.order, &firsts))
    }

    /// What the store's movement decided (`done`), as the posting answers it: the heads' first
    /// places, `60` for a business no longer active, `83` over the daily limit, or an account's
    /// refusal.
    pub(crate) async fn decision(
        &self,
        tx: &mut Tx,
        opening: &Opening<'_>,
        done: &HeadsAndMoney,
    ) -> Result<Opened, Error> {
        let business_id = opening.business_id;
        let heads = self.heads(&done.heads)?;
        if let Some((false, _)) = done.business {
            return Err(Error::new(ResponseCode::BusinessInactive));
        }
        if !done.counted {
            let limit = done
                .business
                .map_or(opening.default_daily_limit, |(_, limit)| limit);
            let day = fees::lagos_day(heads.source.posted_at);
            return Err(over_daily_limit(tx, business_id, &day, limit).await?);
        }
        let moved = self
            .changes
            .refusal_unless_all_moved(tx, &done.moved)
            .await?;
        Ok((heads, moved))
    }

    /// The refusal of a payout from `source` whose movement did not do all it was asked
    /// (`done`: `Paid::Refused`).
    pub(crate) async fn refusal(
        &self,
        tx: &mut Tx,
        opening: &Opening<'_>,
        source: &AccountRow,
        done: &HeadsAndMoney,
    ) -> Result<Error, Error> {
        match self.decision(tx, opening, done).await {
            Ok((_, Err(refusal))) => Ok(refusal_of(refusal, source, opening.receiving)),
            Ok((_, Ok(()))) => Err(Error::internal(
                "the store refused a payout whose every account moved",
            )),
            Err(error) => Ok(error),
        }
    }
}

/// The balances `opening`'s entry changes, once it is seen to balance: an account it credits now
/// must be active ([`Opening::receiving`]), as one it debits must.
fn changes_of<'a>(opening: &Opening<'a>) -> Result<Changes<'a>, Error> {
    ledger::check_balanced(&opening.entry.postings)?;
    let changes = Changes::of(opening.entry);
    Ok(match opening.receiving {
        Some(recipient) => changes.receiving(&recipient.id),
        None => changes,
    })
}

/// The heads taken and the balances moved, or why an account refused.
pub(crate) type Opened = (Heads, Result<(), Refusal>);

/// What [`execute`] posts.
pub(super) struct Plan<'a> {
    pub(super) business_id: &'a str,
    pub(super) source: &'a AccountRow,
    /// The source as the recipient reads it.
    pub(super) payer: &'a Originator,
    pub(super) beneficiary: &'a Beneficiary,
    /// The Kobo account credited now and its business: an intra-bank transfer not held.
    pub(super) recipient: Option<(&'a AccountRow, &'a str)>,
    pub(super) amount: Kobo,
    pub(super) charges: Charges,
    pub(super) narration: &'a str,
    pub(super) reference_number: &'a str,
    /// The first of the source business's places: the debit's, then the fee's, then (paying
    /// itself) the credit's.
    pub(super) head: Head,
    pub(super) recipient_head: Option<Head>,
    /// Held by the approval policy: the funds go to the held account, nothing further.
    pub(super) held: bool,
}

impl Plan<'_> {
    fn intra(&self) -> bool {
        self.beneficiary.kobo_account.is_some()
    }
}

/// A transfer's balanced entry, posted by the source business: the amount and the charges
/// leave `source` as postings of their own (so each transaction the business sees, the
/// transfer and the fee, is backed by its own posting) for the held account when `held`, or
/// for their destination (an intra-bank `recipient`, or NIP) and the fees.
pub(super) fn transfer_entry<'a>(
    environment: Environment,
    business_id: &'a str,
    source: &AccountRow,
    recipient: Option<&AccountRow>,
    amount: Kobo,
    charges: Charges,
    held: bool,
) -> Entry<'a> {
    let amount = amount.get();
    let charges = charges.total();
    let mut postings = vec![Posting {
        account: LedgerAccount::Customer(source.id.clone()),
        amount: -amount,
    }];
    if charges > 0 {
        postings.push(Posting {
            account: LedgerAccount::Customer(source.id.clone()),
            amount: -charges,
        });
    }
    if held {
        postings.push(Posting {
            account: LedgerAccount::Internal(Internal::Held, environment),
            amount: amount + charges,
        });
    } else {
        let recipient = recipient.map(|account| account.id.as_str());
        postings.extend(destination_postings(
            environment,
            recipient,
            amount,
            charges,
        ));
    }
    Entry {
        business_id,
        kind: "transfer",
        postings,
    }
}

/// What [`execute`] wrote: the ids of the debit's transaction and the fee's.
pub(super) struct Executed {
    pub(super) debit: String,
    pub(super) fee_transaction: Option<String>,
}

/// Puts the transfer's `entry` (checked and its balances moved by [`open`]) and its transactions
/// in `batch`: the debit, the fee, an intra-bank recipient's credit.
pub(super) fn execute(
    batch: &mut Batch,
    plan: &Plan<'_>,
    entry: &Entry<'_>,
) -> Result<Executed, Error> {
    let entry_id = ledger::record_into(batch, entry, plan.head.posted_at);
    let debit = transactions::record_into(batch, &debit_transaction(plan, &entry_id))?;
    let mut place = plan.head;
    let fee_transaction = match fee_transaction(plan, &entry_id, place.next()) {
        Some(fee) => {
            // A transaction of its own: the business's next place in its listing.
            place = place.next();
            Some(transactions::record_into(batch, &fee)?.id.to_string())
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
    Ok(Executed {
        debit: debit.id.to_string(),
        fee_transaction,
    })
}

/// How the ledger's refusal of a transfer's entry is answered: a recipient that is no longer
/// active as [`check_recipient`] answers it before the transfer.
fn refusal_of(refusal: Refusal, source: &AccountRow, receiving: Option<&AccountRow>) -> Error {
    let source_account_number = &source.account_number;
    match refusal {
        Refusal::InsufficientFunds { .. } => refused(format!(
            "Insufficient funds in account {source_account_number}"
        )),
        Refusal::BalanceLimit { .. } => refused("The beneficiary account cannot hold this amount"),
        Refusal::Inactive { account_id, status } => match receiving {
            Some(recipient) if recipient.id == account_id => refused(format!(
                "Account {} cannot receive funds: it is {status}",
                recipient.account_number
            )),
            _ => Error::new(ResponseCode::InvalidState).with_message(format!(
                "Source account {source_account_number} is {status}"
            )),
        },
    }
}

/// The transfer's debit, as the source business lists it: settled at once intra-bank,
/// pending while held or on its way over NIP.
fn debit_transaction<'a>(plan: &'a Plan<'a>, entry_id: &'a str) -> NewTransaction<'a> {
    let intra = plan.intra();
    NewTransaction {
        business_id: plan.business_id,
        account: plan.source,
        entry_id,
        head: plan.head,
        reference_number: plan.reference_number.to_owned(),
        transaction_type: models::TransactionType::Debit,
        category: models::TransactionCategory::Transfer,
        status: if intra && !plan.held {
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
    }
}

/// The fee and its VAT as a debit of their own, at `place`; none intra-bank.
fn fee_transaction<'a>(
    plan: &'a Plan<'a>,
    entry_id: &'a str,
    place: Head,
) -> Option<NewTransaction<'a>> {
    let charge = Kobo::from_stored(plan.charges.total())?;
    Some(NewTransaction {
        business_id: plan.business_id,
        account: plan.source,
        entry_id,
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
    })
}

/// The postings that take `amount` to its destination (a Kobo account, or NIP in flight) and
/// `charges` to the fee account.
pub(crate) fn destination_postings(
    environment: Environment,
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
