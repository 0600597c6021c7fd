//! Writes whose results nobody reads back, sent to the database together: a payout writes
//! about ten rows (its journal entry and postings, its transactions, its transfer, events,
//! audit and activity entries, stored answer), and each store sends a [`Batch`] of them in one round trip.
//! The writes are typed: each store decides how they become statements.

use chrono::{DateTime, Utc};

use crate::logs::{Activity, NewAuditEntry};
use crate::transactions::NewTransaction;
use crate::transfers::NewTransfer;

/// Writes to run as one, in the order they were pushed.
#[must_use = "a batch writes nothing until it is run"]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Batch {
    writes: Vec<Write>,
}

impl Batch {
    pub fn new() -> Batch {
        Batch::default()
    }

    pub fn push(&mut self, write: Write) {
        self.writes.push(write);
    }

    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    pub fn len(&self) -> usize {
        self.writes.len()
    }

    /// The writes, in order.
    pub fn into_writes(self) -> Vec<Write> {
        self.writes
    }
}

/// For each write of `writes`, in order: for a transaction, the signed kobo (credit positive)
/// of the batch's other transactions on the same account at later places (a larger
/// sequence); 0 for any other write.
///
/// A transaction's `balance_after` (its account's balance right after it) is its account's
/// balance once the batch's movement is done, less this: a batch is written after the balance
/// changes its transactions describe and before any later change of their accounts (the
/// ledger's rule, `money::ledger` in `kobo`). An inter-bank payout's debit (at place s) and
/// fee (at s+1) on one account, after one change of −(amount + fee): the fee's balance is
/// the account's, the debit's is the account's + fee.
pub fn later_on_account(writes: &[Write]) -> Vec<i64> {
    let transactions: Vec<Option<&NewTransaction>> = writes
        .iter()
        .map(|write| match write {
            Write::Transaction(new) => Some(&**new),
            _ => None,
        })
        .collect();
    transactions
        .iter()
        .map(|this| {
            let Some(this) = this else { return 0 };
            transactions
                .iter()
                .flatten()
                .filter(|other| {
                    other.account_id == this.account_id && other.sequence > this.sequence
                })
                .map(|other| other.signed_amount())
                .sum()
        })
        .collect()
}

/// One write of a [`Batch`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Write {
    /// A journal entry and its postings.
    Entry(NewEntry),
    /// One account's side of an entry (and its settlement, when it is one).
    Transaction(Box<NewTransaction>),
    /// A payout's transfer.
    Transfer(Box<NewTransfer>),
    /// A domain event in the outbox: due at once if the business has an active webhook
    /// endpoint, recorded `skipped` otherwise.
    Event(NewEvent),
    /// An audit-log entry.
    Audit(NewAudit),
    /// An activity-log entry: the call whose work the batch writes.
    Activity(NewActivity),
    /// The answer stored under an `Idempotency-Key` the request claimed.
    Answer(Answer),
}

/// A journal entry to write, at `at`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewEntry {
    pub id: String,
    pub business_id: String,
    /// `inbound_credit`, `transfer`, `reversal`, ...
    pub kind: String,
    /// Each posting's id, account and signed kobo (credit positive); they sum to zero.
    pub postings: Vec<(String, String, i64)>,
    pub at: DateTime<Utc>,
}

/// A domain event to record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewEvent {
    pub id: String,
    pub business_id: String,
    /// Its type (`transfer.success`, ...).
    pub kind: String,
    /// Its payload, as JSON.
    pub payload: String,
    pub at: DateTime<Utc>,
}

/// An audit-log entry to record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewAudit {
    pub id: String,
    pub entry: NewAuditEntry,
    pub at: DateTime<Utc>,
}

/// An activity-log entry to record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewActivity {
    pub id: String,
    pub activity: Activity,
    pub at: DateTime<Utc>,
}

/// An answer to store under a key: one claimed earlier in the transaction, or one the batch
/// claims itself ([`Answer::claim`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub business_id: String,
    /// The operation's id.
    pub operation: String,
    pub key: String,
    /// The answer, as JSON.
    pub data: String,
    /// `None`: the key's row was claimed earlier in the transaction, and the answer is set on
    /// it. `Some`: the batch claims the key with its answer, as the claim would have at the
    /// transaction's start; when an unexpired key is stored (a transaction that committed
    /// meanwhile claimed it) the batch fails with `StoreError::KeyTaken`, and the caller
    /// rolls back. At most one claim of a key per batch.
    pub claim: Option<KeyClaim>,
}

/// How a batch claims a key with its answer ([`Answer::claim`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyClaim {
    /// The fingerprint of the request's body.
    pub request_hash: String,
    /// When the key was claimed: its row's time.
    pub at: DateTime<Utc>,
    /// A key stored before this has expired, and is replaced as if it had been deleted.
    pub expired_before: DateTime<Utc>,
}

// What each resource writes as a statement of a batch: here, beside the batch, so that the
// resources need not know it.

/// Writes `new` (and its settlement when it is one) as a write of `batch`.
pub fn transaction_into(batch: &mut Batch, new: NewTransaction) {
    batch.push(Write::Transaction(Box::new(new)));
}

/// Writes `new` as a write of `batch`: not yet submitted to NIP, no attempt made.
pub fn transfer_into(batch: &mut Batch, new: NewTransfer) {
    batch.push(Write::Transfer(Box::new(new)));
}

/// Writes `activity`, as of `at`, as a statement of `batch`.
pub fn activity_into(batch: &mut Batch, at: DateTime<Utc>, activity: Activity) {
    batch.push(Write::Activity(NewActivity {
        id: crate::new_id(),
        activity,
        at,
    }));
}

/// Writes `entry`, as of `now` (and its UTC day), as a statement of `batch`.
pub fn audit_into(batch: &mut Batch, now: DateTime<Utc>, entry: NewAuditEntry) {
    batch.push(Write::Audit(NewAudit {
        id: crate::new_id(),
        entry,
        at: now,
    }));
}

/// Writes the event `kind` of `business_id` with its `payload` (JSON text) at `at`, as a
/// statement of `batch`: due at once if the business has an active endpoint, otherwise
/// recorded `skipped`. Returns the event's id.
pub fn event_into(
    batch: &mut Batch,
    business_id: &str,
    kind: &str,
    payload: String,
    at: DateTime<Utc>,
) -> String {
    let id = crate::new_id();
    batch.push(Write::Event(NewEvent {
        id: id.clone(),
        business_id: business_id.to_owned(),
        kind: kind.to_owned(),
        payload,
        at,
    }));
    id
}

crate::contract! {
    /// `batch`, in each store.
    pub trait Batches in batch, functions batch_functions {
        /// Runs every write of `batch` in `tx`, in the order pushed, in one round trip.
        tx fn run(batch: Batch) -> ();
    }
}
