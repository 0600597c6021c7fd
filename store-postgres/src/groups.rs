//! A business's payouts in one transaction when they queue: group commit, per business.
//!
//! A business's payouts take its ledger head one at a time (gapless sequences), and each held
//! it through its own `COMMIT`, a flush of the log to disk: a salary run from one account was
//! bounded by one flush per payout, whatever the machine (BENCHMARKS.md). So a process's
//! payouts of one business take turns ([`Groups::begin`]) and share a transaction: a payout
//! that finishes while others of its business wait for the turn leaves the transaction open
//! for them and waits for its commit; the last of the group (no payout waiting, or
//! [`GROUP_MAX`] reached) commits for all. A payout after the group's first undoes only its
//! own work when it is refused, fails or is dropped: it sets a savepoint of its own before its
//! statements ([`Member::guard`]), unless its one statement writes everything or nothing
//! (a payout whose places are foreseen: `payout_in_one.sql`'s gate), which then needs none
//! ([`Undo`]). SQLite's writer does the same for the whole database (`kobo-store-sqlite`'s
//! `writer`).
//!
//! What a payout is told is what is on disk: its `commit` returns only after the group's
//! `COMMIT` did, with the group's error if it failed. An acknowledged payout is never lost,
//! and a failed group fails every member, none of which was acknowledged.
//!
//! The group's transaction begins as a lone payout's does (`Pool::begin_payout`: the kept
//! plans, and the business's standing lock shared, so that every member's statements read the
//! business's status and limit as they stand until the group commits). Only payouts that post
//! to their own business's ledger alone are grouped (the caller's rule): every lock a group
//! takes is then its business's (the head, the day's total, its accounts), in the ledger's
//! order within each member, so no two groups can wait for each other.
//!
//! The turn is let go before the group's `COMMIT` is sent: the next group begins meanwhile and
//! waits for the head's lock, which passes to it as the commit ends.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

use tokio::sync::{oneshot, Mutex, OwnedMutexGuard};

use kobo_store::group_commit::Waiting;
use kobo_store::ledger::AdvancedHead;

use crate::outcome::{self, Witness};
use crate::{Pool, StoreError, Tx};

/// The most payouts one commit makes durable. A member after the first may be a
/// subtransaction (its savepoint), and PostgreSQL keeps 64 of a transaction's in shared memory
/// before every other snapshot must look them up on disk; with a long queue, a group's first
/// member also waits for the work of every other: this bounds both.
pub const GROUP_MAX: usize = 32;

/// This process's turns at its businesses' payouts.
#[derive(Debug, Default)]
pub struct Groups {
    /// A business's turn lives while a payout holds or waits for it.
    turns: std::sync::Mutex<HashMap<String, Weak<Turn>>>,
    counts: Arc<Counts>,
    heads: Arc<RememberedHeads>,
}

/// The most misses in a row after which a business's head is no longer foreseen for a group's
/// first member (its head is moved by others too: another process, inbound credits).
const MAX_MISSES: u32 = 3;

/// The most businesses whose heads are remembered; past it, all are forgotten.
const HEADS_KEPT: usize = 4096;

/// Each business's ledger head as this process's last group of its payouts left it, where its
/// next group's first member foresees it ([`Member::known_head`]): a guess, which the member's
/// statement checks.
#[derive(Debug, Default)]
struct RememberedHeads(std::sync::Mutex<HashMap<String, Remembered>>);

#[derive(Debug, Default)]
struct Remembered {
    head: Option<AdvancedHead>,
    /// A first member's foreseen head found elsewhere, in a row.
    misses: u32,
}

impl RememberedHeads {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Remembered>> {
        self.0.lock().unwrap_or_else(|poison| poison.into_inner())
    }

    /// Where business `business_id`'s next group foresees its head, unless it missed too often.
    fn guess(&self, business_id: &str) -> Option<AdvancedHead> {
        self.map()
            .get(business_id)
            .filter(|remembered| remembered.misses < MAX_MISSES)
            .and_then(|remembered| remembered.head.clone())
    }

    /// The head as a group, about to commit, left it.
    fn remember(&self, business_id: &str, head: Option<AdvancedHead>) {
        let mut map = self.map();
        if !map.contains_key(business_id) && map.len() >= HEADS_KEPT {
            map.clear();
        }
        map.entry(business_id.to_owned()).or_default().head = head;
    }

    /// A first member's foreseen head was where it foresaw it (`true`), or elsewhere.
    fn foreseen(&self, business_id: &str, right: bool) {
        let mut map = self.map();
        let remembered = map.entry(business_id.to_owned()).or_default();
        if right {
            remembered.misses = 0;
        } else {
            remembered.misses += 1;
            remembered.head = None;
        }
    }
}

/// Groups committed, and the payouts whose work they committed; the members that wrote in
/// one statement, their head foreseen ([`Member::known_head`]), and those that found it
/// elsewhere.
#[derive(Debug, Default)]
struct Counts {
    commits: AtomicU64,
    committed: AtomicU64,
    in_one: AtomicU64,
    missed: AtomicU64,
    /// Savepoints set by members ([`Member::guard`]).
    savepoints: AtomicU64,
}

/// One business's turn.
#[derive(Debug)]
struct Turn {
    group: Arc<Mutex<Group>>,
    /// Payouts waiting for the turn ([`Groups::begin`]).
    waiting: AtomicUsize,
    counts: Arc<Counts>,
    heads: Arc<RememberedHeads>,
    business_id: String,
}

/// The turn's state: the transaction the business's payouts share, if one is open.
#[derive(Debug, Default)]
struct Group {
    open: Option<Open>,
    /// The number of the last group opened.
    serial: u64,
}

#[derive(Debug)]
struct Open {
    tx: Tx,
    /// Where the outcome of a commit whose answer was lost is found out.
    pool: Pool,
    /// A member's transfer, to find out whether the group committed when its `COMMIT`'s answer
    /// is lost ([`outcome::find_out`]): given by each member as it hands its work over.
    witness: Option<Witness>,
    serial: u64,
    /// The members done, waiting for the commit.
    done: Vec<oneshot::Sender<Result<(), StoreError>>>,
    /// The business's ledger head as the members' work so far left it, once a member has
    /// advanced it ([`Member::advanced`]): the transaction holds its row lock, so nobody else
    /// moves it before the group ends. Before that, the head as the group before it left it
    /// ([`RememberedHeads`]), which the first member's statement checks.
    head: Option<AdvancedHead>,
}

/// A payout's share of its group's transaction: it holds the business's turn until it
/// commits, rolls back or is abandoned.
#[derive(Debug)]
pub struct Member {
    group: OwnedMutexGuard<Group>,
    turn: Arc<Turn>,
    /// The group's head when the member joined, for its work undone.
    head_before: Option<AdvancedHead>,
    undo: Undo,
}

/// How a member's own work is undone if it does not commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Undo {
    /// The group's first: its work is the whole transaction, rolled back.
    Whole,
    /// By its savepoint ([`Member::guard`]).
    Savepoint,
    /// Nothing to undo: a member after the first, without a savepoint, that has written
    /// nothing (none of its statements yet, or only ones that wrote nothing:
    /// [`Member::wrote_nothing`]).
    Nothing,
    /// Only with the whole group: a member after the first that ran a statement without a
    /// savepoint ([`Member::tx`] before [`Member::guard`]), which may have written. If it
    /// does not commit, the group fails: every member is told so, none of it is kept.
    Group,
}

impl Groups {
    /// Waits for business `business_id`'s turn and joins its open transaction (nothing is
    /// sent: the member sets its savepoint when it needs one, [`Member::guard`]), or begins
    /// one (`Pool::begin_payout`, holding the business's standing lock).
    pub async fn begin(&self, pool: &Pool, business_id: &str) -> Result<Member, StoreError> {
        let turn = self.turn(business_id);
        let waiting = Waiting::new(&turn.waiting);
        let mut group = Arc::clone(&turn.group).lock_owned().await;
        drop(waiting);
        let undo = match &group.open {
            Some(_) => Undo::Nothing,
            None => {
                let tx = pool.begin_payout(Some(business_id)).await?;
                group.serial += 1;
                let guess = turn.heads.guess(business_id);
                group.open = Some(Open {
                    tx,
                    pool: pool.clone(),
                    witness: None,
                    serial: group.serial,
                    done: Vec::new(),
                    head: guess,
                });
                Undo::Whole
            }
        };
        let head_before = group.open.as_ref().and_then(|open| open.head.clone());
        Ok(Member {
            group,
            turn,
            head_before,
            undo,
        })
    }

    /// How many groups were committed, and how many payouts' work they committed.
    pub fn commits(&self) -> (u64, u64) {
        (
            self.counts.commits.load(Ordering::SeqCst),
            self.counts.committed.load(Ordering::SeqCst),
        )
    }

    /// How many members wrote their payout in one statement, their head foreseen
    /// ([`Member::advanced`]), and how many found it elsewhere ([`Member::missed`]).
    pub fn foreseen(&self) -> (u64, u64) {
        (
            self.counts.in_one.load(Ordering::SeqCst),
            self.counts.missed.load(Ordering::SeqCst),
        )
    }

    /// How many savepoints members set ([`Member::guard`]).
    pub fn savepoints(&self) -> u64 {
        self.counts.savepoints.load(Ordering::SeqCst)
    }

    /// The turn of `business_id`, shared while in use.
    fn turn(&self, business_id: &str) -> Arc<Turn> {
        let mut turns = self
            .turns
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        if let Some(turn) = turns.get(business_id).and_then(Weak::upgrade) {
            return turn;
        }
        // Forget the businesses nobody pays from any more before the map would grow.
        if turns.len() == turns.capacity() {
            turns.retain(|_, turn| turn.strong_count() > 0);
        }
        let turn = Arc::new(Turn {
            group: Arc::default(),
            waiting: AtomicUsize::new(0),
            counts: Arc::clone(&self.counts),
            heads: Arc::clone(&self.heads),
            business_id: business_id.to_owned(),
        });
        turns.insert(business_id.to_owned(), Arc::downgrade(&turn));
        turn
    }

    /// Payouts of `business_id` waiting for its turn now.
    pub fn waiting(&self, business_id: &str) -> usize {
        self.turns
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .get(business_id)
            .and_then(Weak::upgrade)
            .map_or(0, |turn| turn.waiting.load(Ordering::SeqCst))
    }
}

impl Member {
    /// The group's transaction, for the member's statements. Before [`Member::guard`], a
    /// member after the group's first has no savepoint: what it runs then can be undone only
    /// with the group ([`Undo::Group`]) unless it wrote nothing ([`Member::wrote_nothing`]).
    pub fn tx(&mut self) -> &mut Tx {
        if self.undo == Undo::Nothing {
            self.undo = Undo::Group;
        }
        &mut self.open_mut().tx
    }

    /// Sets the member's savepoint, if it is after the group's first and has none, so that its
    /// statements from now on can be undone alone. A member that already ran a statement
    /// without one cannot ([`Undo::Group`]): that is an error, and the group fails.
    pub async fn guard(&mut self) -> Result<(), StoreError> {
        match self.undo {
            Undo::Whole | Undo::Savepoint => Ok(()),
            Undo::Group => {
                let error = unguarded();
                fail(&mut self.group, &error);
                Err(error)
            }
            Undo::Nothing => {
                let set = sqlx::raw_sql("SAVEPOINT member")
                    .execute(&mut *self.open_mut().tx)
                    .await;
                if let Err(error) = set {
                    let error = StoreError::from(error);
                    fail(&mut self.group, &error);
                    return Err(error);
                }
                self.turn.counts.savepoints.fetch_add(1, Ordering::SeqCst);
                self.undo = Undo::Savepoint;
                Ok(())
            }
        }
    }

    /// The member's statements since it joined, run without a savepoint, wrote nothing (each
    /// answered so: `payout_in_one.sql` when its gate or its head refuses): it has nothing to
    /// undo, and can still set a savepoint.
    pub fn wrote_nothing(&mut self) {
        if self.undo == Undo::Group {
            self.undo = Undo::Nothing;
        }
    }

    /// Whether the group's transaction held the business's ledger head before this member
    /// joined: a member after the group's first, after one that advanced the head. Nobody
    /// else can then move what every writer moves under the head (its daily total, its
    /// transfers' client references, its accounts' balances), so the member's statement can
    /// check beforehand that it will write everything or nothing (`payout_in_one.sql`'s
    /// gate), and needs no savepoint.
    pub fn holds_head(&self) -> bool {
        !self.first() && self.head_before.is_some()
    }

    fn open(&self) -> &Open {
        self.group
            .open
            .as_ref()
            .expect("a member's transaction is open")
    }

    fn open_mut(&mut self) -> &mut Open {
        self.group
            .open
            .as_mut()
            .expect("a member's transaction is open")
    }

    /// The business's ledger head where this member's advance should start: as the members
    /// before it left it, if one of them advanced it (the group's transaction holds its row
    /// lock); for the group's first, as the group before it left it. A payout then foresees its
    /// places before its first statement and writes everything in one, which checks the head
    /// is there ([`Member::missed`] when it was not).
    pub fn known_head(&self) -> Option<&AdvancedHead> {
        self.open().head.as_ref()
    }

    /// The head was not where [`Member::known_head`] said: forgotten, and, after
    /// [`MAX_MISSES`] misses in a row of groups' first members, no longer foreseen for them
    /// (another process or inbound credits move the business's head).
    pub fn missed(&mut self) {
        self.turn.counts.missed.fetch_add(1, Ordering::SeqCst);
        if self.first() {
            self.turn.heads.foreseen(&self.turn.business_id, false);
        }
        self.open_mut().head = None;
    }

    /// Records the head as this member's work left it (`in_one`: written in one statement,
    /// from [`Member::known_head`]). Forgotten again if the member's work is undone.
    pub fn advanced(&mut self, head: AdvancedHead, in_one: bool) {
        if in_one {
            self.turn.counts.in_one.fetch_add(1, Ordering::SeqCst);
            if self.first() {
                self.turn.heads.foreseen(&self.turn.business_id, true);
            }
        }
        self.open_mut().head = Some(head);
    }

    /// Whether the member began the group: then nobody else's work is in the transaction.
    fn first(&self) -> bool {
        self.undo == Undo::Whole
    }

    /// Returns once the member's work is committed: by this member, or, while other payouts
    /// of its business wait for the turn, by the last of the group. `witness`, a row the
    /// member's work wrote, tells whether the group committed if its `COMMIT`'s answer is lost.
    pub async fn commit(mut self, witness: Option<Witness>) -> Result<(), StoreError> {
        if let Some(witness) = witness {
            self.open_mut().witness.get_or_insert(witness);
        }
        let waiting = self.turn.waiting.load(Ordering::SeqCst);
        if waiting == 0 || self.open().done.len() + 1 >= GROUP_MAX {
            let turn = Arc::clone(&self.turn);
            return commit(self.group, true, turn).await;
        }
        let (done, committed) = oneshot::channel();
        let first = self.first();
        let open = self.open_mut();
        open.done.push(done);
        let serial = open.serial;
        // Whoever next has the turn works in this transaction. The group's first member to
        // leave it open also queues for the turn behind the payouts waiting now, and commits
        // the group then if it is still open: the group is those payouts, and it is committed
        // even if they give up waiting. Spawned, so that it runs even if the member's caller
        // goes away.
        if first {
            let turn = Arc::clone(&self.turn);
            tokio::spawn(async move {
                let group = Arc::clone(&turn.group).lock_owned().await;
                if group
                    .open
                    .as_ref()
                    .is_some_and(|open| open.serial == serial)
                {
                    let _ = commit(group, false, Arc::clone(&turn)).await;
                }
            });
        }
        drop(self);
        committed
            .await
            .unwrap_or(Err(StoreError::Stopped("the group commit's task")))
    }

    /// Undoes the member's own work and goes on in the transaction, for a member after the
    /// group's first (its savepoint, or nothing if it wrote nothing): what the members before
    /// it wrote can then be read in it. `false` for the group's first, whose work is not undone
    /// (nobody else's is in the transaction: what it conflicts with was committed, and the
    /// pool reads it), and for a member whose work only the group's can undo ([`Undo::Group`]:
    /// it is left as it is, and fails the group unless it commits).
    pub async fn undo_own_work(&mut self) -> Result<bool, StoreError> {
        match self.undo {
            Undo::Whole | Undo::Group => return Ok(false),
            // Nothing was written, but the head may have been forgotten meanwhile.
            Undo::Nothing => {}
            Undo::Savepoint => {
                let undone = sqlx::raw_sql("ROLLBACK TO SAVEPOINT member")
                    .execute(&mut *self.open_mut().tx)
                    .await;
                if let Err(error) = undone {
                    let error = StoreError::from(error);
                    fail(&mut self.group, &error);
                    return Err(error);
                }
            }
        }
        // The head is back where the members before this one left it.
        let before = self.head_before.clone();
        self.open_mut().head = before;
        Ok(true)
    }

    /// Undoes the member's work: the whole transaction for a group's first member, its own
    /// for another (its savepoint, or nothing), after which the group's other members' work
    /// is committed unless payouts wait to go on in it. A member whose work only the group's
    /// can undo fails the group ([`Undo::Group`]).
    pub async fn rollback(mut self) -> Result<(), StoreError> {
        match self.undo {
            Undo::Whole => {
                let open = self
                    .group
                    .open
                    .take()
                    .expect("a member's transaction is open");
                return Ok(open.tx.rollback().await?);
            }
            Undo::Group => {
                fail(&mut self.group, &unguarded());
                return Ok(());
            }
            Undo::Savepoint | Undo::Nothing => {}
        }
        self.undo_own_work().await?;
        if self.turn.waiting.load(Ordering::SeqCst) == 0 {
            let turn = Arc::clone(&self.turn);
            let _ = commit(self.group, false, turn).await;
        }
        Ok(())
    }

    /// [`Member::rollback`] for a member dropped without a commit (a refusal, an error, a
    /// caller gone).
    pub fn abandon(mut self) {
        match self.undo {
            // The group's first: nobody else's work is in the transaction, which is dropped
            // (the driver queues its rollback).
            Undo::Whole => {
                drop(self.group.open.take());
                return;
            }
            // A statement may be in flight, or have written: only the group's rollback undoes
            // it.
            Undo::Group => {
                fail(&mut self.group, &unguarded());
                return;
            }
            Undo::Savepoint | Undo::Nothing => {}
        }
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    let _ = self.rollback().await;
                });
            }
            // No runtime to undo the savepoint on: the whole group fails.
            Err(_) => fail(
                &mut self.group,
                &StoreError::Stopped("the runtime, before a savepoint was undone"),
            ),
        }
    }
}

/// Commits the group's open transaction, if any, after letting the turn go (the next group
/// begins meanwhile), and tells its waiting members; `holder` is whether the turn's holder is
/// a member too. The `COMMIT` runs in a task of its own: a holder whose caller goes away
/// (a client gone, a request's time out) must not drop the transaction mid-commit, which
/// would tell the other members their payouts failed when they may have been committed.
async fn commit(
    mut group: OwnedMutexGuard<Group>,
    holder: bool,
    turn: Arc<Turn>,
) -> Result<(), StoreError> {
    let Some(open) = group.open.take() else {
        return Ok(());
    };
    // If this commit fails, the next group's first member finds the head elsewhere (its
    // statement waits for this transaction's lock, then sees the head as it was).
    turn.heads.remember(&turn.business_id, open.head.clone());
    drop(group);
    let counts = Arc::clone(&turn.counts);
    tokio::spawn(async move {
        let result = match (open.tx.commit().await, &open.witness) {
            (Ok(()), _) => Ok(()),
            (Err(error), Some(witness)) if outcome::may_have_committed(&error) => {
                outcome::find_out(&open.pool, witness, error, outcome::FIND_OUT_MAX).await
            }
            (Err(error), _) => Err(StoreError::from(error)),
        };
        match &result {
            Ok(()) => {
                counts.commits.fetch_add(1, Ordering::SeqCst);
                counts
                    .committed
                    .fetch_add(u64::from(holder) + open.done.len() as u64, Ordering::SeqCst);
                for member in open.done {
                    let _ = member.send(Ok(()));
                }
            }
            Err(error) => tell_failed(open.done, error),
        }
        result
    })
    .await
    .unwrap_or(Err(StoreError::Stopped("the group's COMMIT task")))
}

/// Ends the open transaction after `error`: it rolls back, and every waiting member is told.
fn fail(group: &mut Group, error: &StoreError) {
    if let Some(open) = group.open.take() {
        tell_failed(open.done, error);
    }
}

/// Why a group failed when a member that wrote without a savepoint did not commit. Its
/// members' work was not kept, and each may be sent again (`97`, retry).
fn unguarded() -> StoreError {
    StoreError::GroupUndone {
        reason: "a payout of the group, written without a savepoint, was not committed: the \
                 group was rolled back"
            .into(),
        retry: true,
    }
}

/// Fails each of `members` with `error` as another member sees it
/// ([`StoreError::for_group_members`]): the outcome unknown if it is, otherwise undone, with
/// a retry if the database was unavailable.
fn tell_failed(members: Vec<oneshot::Sender<Result<(), StoreError>>>, error: &StoreError) {
    for member in members {
        let _ = member.send(Err(error.for_group_members()));
    }
}
