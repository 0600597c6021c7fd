//! The rows of `ledger` (see the datastore module of the same name in `kobo`).

use crate::batch::Batch;
use crate::batch::NewEntry;
use crate::batch::Write;

use chrono::{DateTime, Utc};

/// A business's ledger head after an advance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdvancedHead {
    pub business_id: String,
    /// The last sequence taken, the advance's places included.
    pub last_sequence: i64,
    /// The time of the last place taken, in microseconds since the epoch; `None` for a head
    /// last advanced before migration 0010, whose time is `last_posted_at`'s.
    pub last_posted_micros: Option<i64>,
    pub last_posted_at: DateTime<Utc>,
}

/// What a payout's first statement moves beside the heads ([`HeadsAndMoney`]).
#[derive(Clone, Debug)]
pub struct Money<'a> {
    /// The business whose first place dates the movement (the payout's source).
    pub business_id: &'a str,
    /// The places that business takes: its first is `last_sequence - places + 1`.
    pub places: i64,
    /// The amount to count toward the business's total of the Lagos day of its first place,
    /// within its daily limit as it stands (read under a share lock in the statement); `None`
    /// when nothing counts (a held transfer, money coming in).
    pub daily: Option<i64>,
    /// The limit of a business that has none of its own.
    pub default_daily_limit: i64,
    /// Whether the business must be active (money leaving it): its status is read in the
    /// statement, under the business's standing lock, which the transaction holds since it
    /// began, so a deactivation waits for the posting's commit, or the posting sees it.
    pub business_must_be_active: bool,
    /// The balance changes, each kept within zero and `max_balance`, an account that must be
    /// active (`BalanceChange::must_be_active`) active.
    pub changes: &'a [crate::accounts::BalanceChange<'a>],
    pub max_balance: i64,
}

/// The heads as advanced, whether the daily total took the amount, and the accounts moved
/// (none when the business was inactive or the daily total refused it).
#[derive(Clone, Debug)]
pub struct HeadsAndMoney {
    pub heads: Vec<AdvancedHead>,
    /// The business as the statement read it, when it had to be active: `(active, daily
    /// limit)`.
    pub business: Option<(bool, i64)>,
    pub counted: bool,
    pub moved: Vec<String>,
}

impl HeadsAndMoney {
    /// Whether the movement did all it was asked (`money`'s): the business active where it had
    /// to be, the amount counted, every account moved. Otherwise nothing of the posting may be
    /// kept, and the refusal is read from what this says.
    pub fn all_done(&self, money: &Money<'_>) -> bool {
        !matches!(self.business, Some((false, _)))
            && self.counted
            && self.moved.len() == money.changes.len()
    }
}

/// What a payout written in one statement (a foreseen head, PostgreSQL's `batch::run_moving`)
/// came to. Every outcome but `Written` wrote nothing, and the store takes the two statements.
#[derive(Clone, Debug)]
pub enum InOne {
    /// Moved and written: the heads and the money, for the store to check.
    Written(HeadsAndMoney),
    /// The ledger head was not at the sequence foreseen (another payout moved it).
    HeadElsewhere,
    /// The transaction held the head, and the statement's gate found the payout would be
    /// refused (its refusal is answered by the two statements).
    Gated,
}

/// The calendar day in Lagos (UTC+1, no daylight saving) of `at`, as `YYYY-MM-DD`: the day a
/// payout's amount counts on.
pub fn lagos_day(at: DateTime<Utc>) -> String {
    let lagos = chrono::FixedOffset::east_opt(3600).expect("a valid offset");
    at.with_timezone(&lagos).format("%Y-%m-%d").to_string()
}

/// Writes a journal entry and its postings (`(account id, signed kobo)`, credit positive) as
/// a write of `batch`, all at `at`. Returns the entry's id.
pub fn record_entry_into(
    batch: &mut Batch,
    business_id: &str,
    kind: &str,
    postings: &[(&str, i64)],
    at: DateTime<Utc>,
) -> String {
    let entry_id = crate::new_id();
    batch.push(Write::Entry(NewEntry {
        id: entry_id.clone(),
        business_id: business_id.to_owned(),
        kind: kind.to_owned(),
        postings: postings
            .iter()
            .map(|(account_id, amount)| (crate::new_id(), (*account_id).to_owned(), *amount))
            .collect(),
        at,
    }));
    entry_id
}

crate::contract! {
    /// `ledger`, in each store.
    pub trait Ledger in ledger, functions ledger_functions {
        /// Advances each business's head by its places, in one statement that locks the heads until
        /// `tx` ends (in the order given, which must be the businesses' id order): a new head
        /// starts at its places, an existing one moves on by them, its time to `now` (`$2`,
        /// microseconds) or past its last. Returns the heads as advanced, in no particular order.
        tx fn advance_heads(businesses: &[(&str, i64)], now: DateTime<Utc>) -> Vec<AdvancedHead>;
        /// A posting's movement, in one step for the caller: advances the heads as
        /// [`Ledger::advance_heads`] does, then, at the time of `money.business_id`'s first place
        /// (and on its Lagos day, [`lagos_day`]), counts `money.daily` toward that business's
        /// daily total within its limit and moves the balances, within zero and
        /// `money.max_balance`, each account that must be active active. The business's status
        /// and limit are read when it must be active or the amount counts: `tx` must hold its
        /// standing (PostgreSQL's standing lock, SQLite's write transaction), so that they stand
        /// until it ends. When the business is inactive or the daily total refuses the amount,
        /// no balance moves. The caller rolls back on any refusal ([`HeadsAndMoney::all_done`]).
        /// One statement on PostgreSQL (`advance_and_move.sql`); SQLite takes its steps in
        /// process, and times a head from before its migration 0010 once, from
        /// `last_posted_at`.
        tx fn advance_and_move(businesses: &[(&str, i64)], now: DateTime<Utc>, money: &Money<'_>) -> HeadsAndMoney;
        /// Sets a head's time (both columns) to `last_place`: once, for a head from before
        /// migration 0010.
        tx fn set_head_time(business_id: &str, last_place: DateTime<Utc>) -> ();
    }
}
