//! The double-entry ledger: every movement of money is one journal entry of balanced postings.
//!
//! A posting's amount is signed kobo, credit positive; the postings of an entry sum to zero
//! ([`post`] refuses anything else before it writes), so the whole ledger sums to zero.
//! Customer-facing balances are `accounts.balance`: an entry changes them in one conditional
//! `UPDATE` whose returned ids are the check (never below zero, never above [`MAX_BALANCE`]),
//! so two processes on one PostgreSQL cannot overdraw an account. The
//! bank's internal accounts keep no stored balance (the sum of their postings is theirs).
//!
//! Lock order, the same in every path: the business's ledger head ([`advance_head`]) first,
//! then its daily total (a transfer that counts toward the limit), then the customer accounts
//! by id. (A run of bulk items moves its recipients' balances in item order and counts the day's
//! total after: every other path that takes those rows holds the heads of their businesses
//! first, and the run holds them all, so no other order meets its own.) The head hands out the business's next `sequence` and a
//! strictly increasing time: the order of a business's transactions is the order in which
//! they commit, so a reader paging newest-first by cursor never has a row appear behind it.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, DurationRound, Utc};

use crate::datastore::accounts::{self, BalanceChange};
use crate::datastore::batch::{self, Batch};
use crate::datastore::ledger::{self, AdvancedHead};
use crate::error::{Error, OrInternal};
use crate::kernel::config::Environment;
use crate::kernel::store::Tx;
use crate::money::amount::MAX_BALANCE;

/// The bank's own accounts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Internal {
    /// Money that arrived over NIP (the bank's settlement position at the central bank).
    NipSettlement,
    /// Outbound inter-bank transfers sent but not yet confirmed.
    NipInFlight,
    /// Fee income.
    Fees,
    /// Funds reserved by transfers awaiting approval.
    Held,
    /// Bulk transfers' totals, authorised and not yet paid out to their items.
    BulkReserved,
}

impl Internal {
    pub const ALL: [Internal; 5] = [
        Internal::NipSettlement,
        Internal::NipInFlight,
        Internal::Fees,
        Internal::Held,
        Internal::BulkReserved,
    ];

    /// Its id in `internal_accounts` (seeded by migration 0005).
    pub fn id(self, environment: Environment) -> &'static str {
        match (environment, self) {
            (Environment::Sandbox, Internal::NipSettlement) => {
                "00000000-0000-4000-8000-000000000001"
            }
            (Environment::Sandbox, Internal::NipInFlight) => "00000000-0000-4000-8000-000000000002",
            (Environment::Sandbox, Internal::Fees) => "00000000-0000-4000-8000-000000000003",
            (Environment::Sandbox, Internal::Held) => "00000000-0000-4000-8000-000000000004",
            (Environment::Production, Internal::Held) => "00000000-0000-4000-8000-000000000014",
            (Environment::Sandbox, Internal::BulkReserved) => {
                "00000000-0000-4000-8000-000000000005"
            }
            (Environment::Production, Internal::BulkReserved) => {
                "00000000-0000-4000-8000-000000000015"
            }
            (Environment::Production, Internal::NipSettlement) => {
                "00000000-0000-4000-8000-000000000011"
            }
            (Environment::Production, Internal::NipInFlight) => {
                "00000000-0000-4000-8000-000000000012"
            }
            (Environment::Production, Internal::Fees) => "00000000-0000-4000-8000-000000000013",
        }
    }
}

/// One side of a posting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LedgerAccount {
    /// An account of a business (`accounts.id`): its balance is checked and kept.
    Customer(String),
    /// One of the bank's internal accounts.
    Internal(Internal, Environment),
}

impl LedgerAccount {
    fn id(&self) -> &str {
        match self {
            LedgerAccount::Customer(id) => id,
            LedgerAccount::Internal(account, environment) => account.id(*environment),
        }
    }
}

/// A signed amount of kobo on one account: credit positive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Posting {
    pub account: LedgerAccount,
    pub amount: i64,
}

/// A journal entry before it is posted.
#[derive(Clone, Debug)]
pub struct Entry<'a> {
    pub business_id: &'a str,
    /// `inbound_credit`, `transfer`, `reversal`, ...
    pub kind: &'static str,
    pub postings: Vec<Posting>,
}

/// Why a balanced entry could not be posted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A debit would take this account below zero.
    InsufficientFunds { account_id: String },
    /// A credit would take this account over [`MAX_BALANCE`].
    BalanceLimit { account_id: String },
    /// A debit of an account, or a credit of a recipient ([`Changes::receiving`]), that is not
    /// `active` (blocked or closed since it was read).
    Inactive { account_id: String, status: String },
}

/// The business's place in its ledger, taken by [`advance_head`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    pub sequence: i64,
    /// When the entry is posted: after every earlier entry of the business, to the
    /// microsecond the store keeps.
    pub posted_at: DateTime<Utc>,
}

impl Head {
    /// The place after this one: the next sequence, one microsecond later.
    pub fn next(self) -> Head {
        Head {
            sequence: self.sequence + 1,
            posted_at: self.posted_at + Duration::microseconds(1),
        }
    }
}

/// Locks the business's ledger head until `tx` ends and takes its next sequence and time:
/// `now`, or one microsecond after the previous entry if the clock has not moved past it.
pub async fn advance_head(
    tx: &mut Tx,
    business_id: &str,
    now: DateTime<Utc>,
) -> Result<Head, Error> {
    advance_head_by(tx, business_id, 1, now).await
}

/// [`advance_head`] for `places` consecutive places (a payout's debit, fee and credit), in one
/// statement: returns the first, the others follow it by [`Head::next`].
pub async fn advance_head_by(
    tx: &mut Tx,
    business_id: &str,
    places: u32,
    now: DateTime<Utc>,
) -> Result<Head, Error> {
    let heads = advance_heads(tx, &[(business_id, places)], now).await?;
    Ok(heads[0])
}

/// [`advance_head_by`] for several businesses at once (a payout to another business of the
/// bank), in one statement: each `(business, places)` in the order given, which must be the
/// businesses' id order (the lock order) with none twice. Returns their first places, in the
/// same order.
///
/// The upsert computes each next time itself, in microseconds since the epoch
/// (`last_posted_micros`, migration 0010): a head last advanced before that migration has none
/// yet, and is advanced once more the old way, from `last_posted_at`, by a second statement.
pub async fn advance_heads(
    tx: &mut Tx,
    businesses: &[(&str, u32)],
    now: DateTime<Utc>,
) -> Result<Vec<Head>, Error> {
    let places = places_in_order(businesses)?;
    let now = to_the_microsecond(now)?;
    let advanced = ledger::advance_heads(tx, &places, now).await?;
    let mut heads = Vec::with_capacity(businesses.len());
    for (business_id, places) in places {
        let head = advanced_head(&advanced, business_id)?;
        if let Some(head) = first_place(head, places)? {
            heads.push(head);
            continue;
        }
        // A head from before migration 0010: its time is the text column's, once.
        let posted_at = now.max(head.last_posted_at + Duration::microseconds(1));
        let last_place = posted_at + Duration::microseconds(places - 1);
        ledger::set_head_time(tx, business_id, last_place).await?;
        heads.push(Head {
            sequence: head.last_sequence - places + 1,
            posted_at,
        });
    }
    Ok(heads)
}

/// `businesses` checked to be in id order, each once, with at least one place each.
pub(crate) fn places_in_order<'a>(
    businesses: &[(&'a str, u32)],
) -> Result<Vec<(&'a str, i64)>, Error> {
    if businesses.is_empty() || businesses.windows(2).any(|pair| pair[0].0 >= pair[1].0) {
        return Err(Error::internal(
            "ledger heads must be advanced in id order, each once",
        ));
    }
    Ok(businesses
        .iter()
        .map(|(business_id, places)| (*business_id, i64::from((*places).max(1))))
        .collect())
}

/// `now` to the microsecond the stores keep.
pub(crate) fn to_the_microsecond(now: DateTime<Utc>) -> Result<DateTime<Utc>, Error> {
    now.duration_trunc(Duration::microseconds(1)).or_internal()
}

/// The head of `business_id` among those advanced.
pub(crate) fn advanced_head<'a>(
    advanced: &'a [AdvancedHead],
    business_id: &str,
) -> Result<&'a AdvancedHead, Error> {
    advanced
        .iter()
        .find(|head| head.business_id == business_id)
        .ok_or_else(|| Error::internal("a ledger head was not advanced"))
}

/// The first of the `places` a head was advanced by; `None` for a head from before migration
/// 0010, which has no time in microseconds.
pub(crate) fn first_place(head: &AdvancedHead, places: i64) -> Result<Option<Head>, Error> {
    let Some(last_micros) = head.last_posted_micros else {
        return Ok(None);
    };
    let posted_at = DateTime::from_timestamp_micros(last_micros - places + 1)
        .ok_or_else(|| Error::internal("a ledger head's time is out of range"))?;
    Ok(Some(Head {
        sequence: head.last_sequence - places + 1,
        posted_at,
    }))
}

/// Checks that `postings` form a journal entry: at least two, none zero, summing to zero.
pub fn check_balanced(postings: &[Posting]) -> Result<(), Error> {
    if postings.len() < 2 {
        return Err(Error::internal(
            "a journal entry needs at least two postings",
        ));
    }
    if postings.iter().any(|posting| posting.amount == 0) {
        return Err(Error::internal("a journal entry has a zero posting"));
    }
    let sum: i128 = postings
        .iter()
        .map(|posting| i128::from(posting.amount))
        .sum();
    if sum != 0 {
        return Err(Error::internal(format!(
            "an unbalanced journal entry: its postings sum to {sum} kobo"
        )));
    }
    Ok(())
}

/// Posts `entry` at `head.posted_at` inside `tx`: checks that it balances, applies its
/// customer postings in one conditional update (`apply`), and writes the entry and its
/// postings. Returns the entry's id, or why an account refused (the caller rolls back).
pub async fn post(
    tx: &mut Tx,
    entry: &Entry<'_>,
    head: Head,
) -> Result<Result<String, Refusal>, Error> {
    let mut batch = Batch::new();
    let posted = post_into(tx, &mut batch, entry, head).await?;
    batch::run(tx, batch).await?;
    Ok(posted)
}

/// [`post`] with the entry and its postings written as statements of `batch`, which the
/// caller runs in `tx` (the balances are updated at once: their refusals decide the rest).
pub async fn post_into(
    tx: &mut Tx,
    batch: &mut Batch,
    entry: &Entry<'_>,
    head: Head,
) -> Result<Result<String, Refusal>, Error> {
    check_balanced(&entry.postings)?;
    let changes = Changes::of(entry);
    if let Err(refusal) = changes.apply(tx, head.posted_at).await? {
        return Ok(Err(refusal));
    }
    Ok(Ok(record_into(batch, entry, head.posted_at)))
}

/// Writes `entry` and its postings at `at` as a write of `batch`, once it was checked
/// ([`check_balanced`]) and its balances moved ([`Changes::apply`], or a store's statement
/// that moves them with the heads). Returns the entry's id.
pub fn record_into(batch: &mut Batch, entry: &Entry<'_>, at: DateTime<Utc>) -> String {
    let postings: Vec<(&str, i64)> = entry
        .postings
        .iter()
        .map(|posting| (posting.account.id(), posting.amount))
        .collect();
    ledger::record_entry_into(batch, entry.business_id, entry.kind, &postings, at)
}

/// What an entry does to the customer accounts it posts to, in id order.
pub struct Changes<'a>(BTreeMap<&'a str, Change>);

impl<'a> Changes<'a> {
    pub fn of(entry: &'a Entry<'_>) -> Changes<'a> {
        let mut changes: BTreeMap<&str, Change> = BTreeMap::new();
        for posting in &entry.postings {
            if let LedgerAccount::Customer(id) = &posting.account {
                let change = changes.entry(id).or_default();
                change.amount += posting.amount;
                change.must_be_active |= posting.amount < 0;
            }
        }
        Changes(changes)
    }

    /// Marks `account_id` as a recipient: credited, it must still be `active` when its balance
    /// moves (a close or a block committed after the caller read it refuses the entry:
    /// [`Refusal::Inactive`]). An account the entry does not post to is left alone.
    pub fn receiving(mut self, account_id: &str) -> Changes<'a> {
        if let Some(change) = self.0.get_mut(account_id) {
            change.must_be_active = true;
        }
        self
    }

    /// The balance changes, as the stores take them.
    pub fn balance_changes(&self) -> Vec<BalanceChange<'_>> {
        self.0
            .iter()
            .map(|(account_id, change)| BalanceChange {
                account_id,
                amount: change.amount,
                must_be_active: change.must_be_active,
            })
            .collect()
    }

    /// Moves the balances at `at`, in one conditional update; why the first account that did
    /// not move refused, if one did not.
    pub async fn apply(
        &self,
        tx: &mut Tx,
        at: DateTime<Utc>,
    ) -> Result<Result<(), Refusal>, Error> {
        if self.0.is_empty() {
            return Ok(Ok(()));
        }
        let moved =
            accounts::apply_balance_changes(tx, &self.balance_changes(), MAX_BALANCE, at).await?;
        self.refusal_unless_all_moved(tx, &moved).await
    }

    /// Whether the accounts `moved` are all of them, and if not, why the first that did not
    /// move (in id order) refused.
    pub async fn refusal_unless_all_moved(
        &self,
        tx: &mut Tx,
        moved: &[String],
    ) -> Result<Result<(), Refusal>, Error> {
        if moved.len() == self.0.len() {
            return Ok(Ok(()));
        }
        Ok(Err(refusal(tx, &self.0, moved).await?))
    }
}

/// What an entry does to one customer account.
#[derive(Clone, Copy, Debug, Default)]
struct Change {
    /// The sum of its postings.
    amount: i64,
    /// Whether the account must be `active` when its balance moves: any posting debits it, or
    /// it receives as a recipient ([`Changes::receiving`]).
    must_be_active: bool,
}

/// Why the first account (in id order) that [`apply`] did not change refused.
async fn refusal(
    tx: &mut Tx,
    changes: &BTreeMap<&str, Change>,
    moved: &[String],
) -> Result<Refusal, Error> {
    let (id, change) = changes
        .iter()
        .find(|(id, _)| !moved.iter().any(|moved| moved == *id))
        .ok_or_else(|| Error::internal("every account moved, yet not as many as changed"))?;
    let account_id = (*id).to_owned();
    let Some((balance, status)) = accounts::balance_and_status(tx, &account_id).await? else {
        return Err(Error::internal(format!(
            "a posting to account {account_id}, which does not exist"
        )));
    };
    Ok(if change.must_be_active && status != "active" {
        Refusal::Inactive { account_id, status }
    } else if i128::from(balance) + i128::from(change.amount) < 0 {
        Refusal::InsufficientFunds { account_id }
    } else {
        Refusal::BalanceLimit { account_id }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn posting(amount: i64) -> Posting {
        Posting {
            account: LedgerAccount::Internal(Internal::Fees, Environment::Sandbox),
            amount,
        }
    }

    #[test]
    fn only_balanced_entries_pass() {
        assert!(check_balanced(&[posting(5), posting(-5)]).is_ok());
        assert!(check_balanced(&[posting(5), posting(-3), posting(-2)]).is_ok());
        assert!(check_balanced(&[posting(5), posting(-4)]).is_err());
        assert!(check_balanced(&[posting(0), posting(0)]).is_err());
        assert!(check_balanced(&[posting(5)]).is_err());
        // Sums are exact beyond an i64.
        assert!(check_balanced(&[posting(i64::MAX), posting(i64::MAX), posting(1)]).is_err());
    }

    #[test]
    fn internal_account_ids_are_distinct() {
        let mut ids: Vec<&str> = [Environment::Sandbox, Environment::Production]
            .into_iter()
            .flat_map(|environment| Internal::ALL.map(|account| account.id(environment)))
            .collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 10);
    }
}
