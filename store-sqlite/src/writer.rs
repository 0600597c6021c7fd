//! SQLite's one writer per process, and group commit.
//!
//! SQLite has one write lock per database. Writers in this process take turns in arrival order
//! ([`Writer::turn`]), so none polls the lock with the busy handler's sleeps. A commit is a
//! flush of the log to disk (`synchronous = FULL`): half a millisecond of every payout's turn
//! (`BENCHMARKS.md`), while every other writer waited. So the writers share a transaction: a
//! writer that finishes while others wait for the turn leaves the transaction open for them
//! and waits for its commit; the last of the group (no writer waiting, or [`GROUP_MAX`]
//! reached) commits for all. Each writer after the first works inside a savepoint of its own,
//! so that one which fails or is dropped undoes only its own work.
//!
//! What a writer is told is what is on disk: its `commit` returns only after the group's
//! `COMMIT` did, with the group's error if it failed. An acknowledged write is never lost, and
//! a failed group fails every member, none of which was acknowledged.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use kobo_store::error::StoreError;
use kobo_store::group_commit::Waiting;
use sqlx::{Sqlite, SqliteConnection, SqlitePool, Transaction};
use tokio::sync::{oneshot, Mutex, OwnedMutexGuard};

/// The most writers one commit makes durable. With a long queue, the first of a group waits
/// for the work of every other: this bounds that wait.
pub const GROUP_MAX: usize = 16;

/// This process's writers on one SQLite database.
#[derive(Debug)]
pub struct Writer {
    /// The writers' own connection (a pool of one, which reopens it if it breaks).
    connection: SqlitePool,
    turn: Arc<Mutex<Group>>,
    /// Writers waiting for the turn to begin a transaction ([`Writer::begin`]).
    waiting: AtomicUsize,
}

/// The turn's state: the transaction writers share, if one is open.
#[derive(Debug, Default)]
pub struct Group {
    open: Option<Open>,
    /// The number of the last group opened.
    serial: u64,
    /// Groups committed, and the writers whose work they committed.
    commits: u64,
    committed: u64,
}

#[derive(Debug)]
struct Open {
    tx: Transaction<'static, Sqlite>,
    serial: u64,
    /// The members done, waiting for the commit.
    done: Vec<oneshot::Sender<Result<(), StoreError>>>,
}

/// The turn, held for a write outside any transaction ([`Writer::turn`]).
pub struct Turn {
    _turn: OwnedMutexGuard<Group>,
}

/// A writer's share of the group's transaction: it holds the turn until it commits, rolls
/// back or is dropped.
pub struct Member {
    turn: OwnedMutexGuard<Group>,
    writer: Arc<Writer>,
}

impl Writer {
    pub fn new(connection: SqlitePool) -> Writer {
        Writer {
            connection,
            turn: Arc::default(),
            waiting: AtomicUsize::new(0),
        }
    }

    /// The turn for a lone write statement: the group's transaction, if open, is committed
    /// first (it holds SQLite's write lock).
    pub async fn turn(self: &Arc<Self>) -> Turn {
        let mut turn = Arc::clone(&self.turn).lock_owned().await;
        let _ = commit(&mut turn, false).await;
        Turn { _turn: turn }
    }

    /// Commits what is open and closes the writers' connection.
    pub async fn close(&self) {
        let mut turn = self.turn.lock().await;
        let _ = commit(&mut turn, false).await;
        self.connection.close().await;
    }

    /// How many groups were committed, and how many writers' work they committed.
    pub async fn commits(&self) -> (u64, u64) {
        let turn = self.turn.lock().await;
        (turn.commits, turn.committed)
    }

    /// Waits for the turn and joins the open transaction, or begins one (`BEGIN IMMEDIATE`).
    pub async fn begin(self: &Arc<Self>) -> Result<Member, StoreError> {
        let waiting = Waiting::new(&self.waiting);
        let mut turn = Arc::clone(&self.turn).lock_owned().await;
        drop(waiting);
        match &mut turn.open {
            Some(open) => {
                if let Err(error) = sqlx::query("SAVEPOINT member").execute(&mut *open.tx).await {
                    let error = StoreError::from(error);
                    fail(&mut turn, &error);
                    return Err(error);
                }
            }
            None => {
                let tx = self.connection.begin_with("BEGIN IMMEDIATE").await?;
                turn.serial += 1;
                turn.open = Some(Open {
                    tx,
                    serial: turn.serial,
                    done: Vec::new(),
                });
            }
        }
        Ok(Member {
            turn,
            writer: Arc::clone(self),
        })
    }
}

impl Member {
    pub fn connection(&self) -> &SqliteConnection {
        &self.open().tx
    }

    pub fn connection_mut(&mut self) -> &mut SqliteConnection {
        &mut self.open_mut().tx
    }

    fn open(&self) -> &Open {
        self.turn
            .open
            .as_ref()
            .expect("a member's transaction is open")
    }

    /// Whether the member began the group: then nobody else's work is in the transaction.
    /// Every later member works inside a savepoint of its own, set when it joined (members
    /// are added to `done` only by the turn's holder, so this holds for a member's whole
    /// turn).
    fn first(&self) -> bool {
        self.open().done.is_empty()
    }

    fn open_mut(&mut self) -> &mut Open {
        self.turn
            .open
            .as_mut()
            .expect("a member's transaction is open")
    }

    /// Returns once the member's work is committed: by this member, or, while other writers
    /// wait for the turn, by the last of the group.
    pub async fn commit(mut self) -> Result<(), StoreError> {
        let waiting = self.writer.waiting.load(Ordering::SeqCst);
        if waiting == 0 || self.open().done.len() + 1 >= GROUP_MAX {
            return commit(&mut self.turn, true).await;
        }
        let (done, committed) = oneshot::channel();
        let first = self.first();
        let open = self.open_mut();
        open.done.push(done);
        let serial = open.serial;
        // Whoever next has the turn works in this transaction. The group's first member to
        // leave it open also queues for the turn behind the writers waiting now, and commits
        // the group then if it is still open: the group is those writers, and it is committed
        // even if they give up waiting. Spawned, so that it runs even if the member's caller
        // goes away.
        if first {
            let turn = Arc::clone(&self.writer.turn);
            tokio::spawn(async move {
                let mut turn = turn.lock_owned().await;
                if turn.open.as_ref().is_some_and(|open| open.serial == serial) {
                    let _ = commit(&mut turn, false).await;
                }
            });
        }
        drop(self);
        committed
            .await
            .unwrap_or(Err(StoreError::Stopped("the group's commit task")))
    }

    /// Undoes the member's own work and goes on in the transaction, for a member after the
    /// group's first (its savepoint): what the members before it wrote can then be read in
    /// it. `false` for the group's first, whose work is not undone (nobody else's is in the
    /// transaction: what it conflicts with was committed, and the pool reads it).
    pub async fn undo_own_work(&mut self) -> Result<bool, StoreError> {
        if self.first() {
            return Ok(false);
        }
        if let Err(error) = sqlx::query("ROLLBACK TO member")
            .execute(&mut *self.open_mut().tx)
            .await
        {
            let error = StoreError::from(error);
            fail(&mut self.turn, &error);
            return Err(error);
        }
        Ok(true)
    }

    /// Undoes the member's work: the whole transaction for a group's first member, its own
    /// savepoint for another, after which the group's other members' work is committed unless
    /// writers wait to go on in it.
    pub async fn rollback(mut self) -> Result<(), StoreError> {
        if self.first() {
            let open = self
                .turn
                .open
                .take()
                .expect("a member's transaction is open");
            return Ok(open.tx.rollback().await?);
        }
        self.undo_own_work().await?;
        if self.writer.waiting.load(Ordering::SeqCst) == 0 {
            let _ = commit(&mut self.turn, false).await;
        }
        Ok(())
    }

    /// [`Member::rollback`] for a member dropped without a commit (an error, a caller gone).
    pub fn abandon(mut self) {
        if self.first() {
            // The group's first: nobody else's work is in the transaction, which is dropped
            // (the driver queues its rollback).
            drop(self.turn.open.take());
            return;
        }
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    let _ = self.rollback().await;
                });
            }
            // No runtime to undo the savepoint on: the whole group fails.
            Err(_) => fail(
                &mut self.turn,
                &StoreError::Stopped("no runtime to undo a writer's savepoint on"),
            ),
        }
    }
}

/// Commits the open transaction, if any, and tells its waiting members; `holder` is whether
/// the turn's holder is a member too. The `COMMIT` and the members' news run in a task of
/// their own: a holder whose caller goes away (a client gone, a request's time out) must not
/// drop the transaction mid-commit, which told the other members their writes had failed when
/// they may have been on disk.
async fn commit(turn: &mut Group, holder: bool) -> Result<(), StoreError> {
    let Some(open) = turn.open.take() else {
        return Ok(());
    };
    let members = u64::from(holder) + open.done.len() as u64;
    let result = tokio::spawn(async move {
        let result = open.tx.commit().await.map_err(StoreError::from);
        match &result {
            Ok(()) => {
                for member in open.done {
                    let _ = member.send(Ok(()));
                }
            }
            Err(error) => tell_failed(open.done, error),
        }
        result
    })
    .await
    .unwrap_or(Err(StoreError::Stopped("the group's commit task")));
    if result.is_ok() {
        turn.commits += 1;
        turn.committed += members;
    }
    result
}

/// Ends the open transaction after `error`: it rolls back, and every waiting member is told.
fn fail(turn: &mut Group, error: &StoreError) {
    if let Some(open) = turn.open.take() {
        tell_failed(open.done, error);
    }
}

/// Fails each of `members` with `error` as another member sees it: its work undone with the
/// group, to be sent again if the database was unavailable ([`StoreError::for_group_members`]).
fn tell_failed(members: Vec<oneshot::Sender<Result<(), StoreError>>>, error: &StoreError) {
    for member in members {
        let _ = member.send(Err(error.for_group_members()));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;
    use std::time::Duration;

    use crate::Store;

    async fn count(store: &Store, table: &str) -> i64 {
        sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}")))
            .fetch_one(store.pool())
            .await
            .unwrap()
    }

    /// A group whose `COMMIT` fails: no member is told its work is committed, none of it is
    /// kept, and the next writer commits as usual (the failed transaction did not stay open on
    /// the writers' connection, holding SQLite's write lock). The `COMMIT` is made to fail by a
    /// deferred foreign key, which SQLite checks only then; in the bank it would be the disk.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_group_commit_fails_every_member_and_keeps_nothing() {
        let (_dir, store) = Store::temporary_sqlite().await;
        for ddl in [
            "CREATE TABLE parents (id INTEGER PRIMARY KEY)",
            "CREATE TABLE children (id INTEGER PRIMARY KEY, parent INTEGER NOT NULL \
               REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED)",
        ] {
            sqlx::query(ddl).execute(store.pool()).await.unwrap();
        }
        let writer = store.writer().clone();
        let mut first = store.begin().await.unwrap();
        // A second writer queues for the turn, so the first leaves the group open for it.
        let second = tokio::spawn({
            let store = store.clone();
            async move {
                let mut tx = store.begin().await.unwrap();
                sqlx::query("INSERT INTO parents (id) VALUES (1)")
                    .execute(&mut *tx)
                    .await
                    .unwrap();
                tx.commit().await
            }
        });
        while writer.waiting.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // The first's work breaks a rule checked only when the group commits.
        sqlx::query("INSERT INTO children (id, parent) VALUES (1, 99)")
            .execute(&mut *first)
            .await
            .unwrap();
        let first = first.commit().await;
        let second = second.await.unwrap();
        assert!(first.is_err(), "the first member was told {first:?}");
        assert!(second.is_err(), "the second member was told {second:?}");
        assert_eq!(count(&store, "parents").await, 0);
        assert_eq!(count(&store, "children").await, 0);
        assert_eq!(store.group_commits().await, (0, 0));

        // The writer goes on: a lone writer, then a group of two.
        let mut tx = store.begin().await.unwrap();
        sqlx::query("INSERT INTO parents (id) VALUES (2)")
            .execute(&mut *tx)
            .await
            .unwrap();
        tx.commit().await.unwrap();
        let writers: Vec<_> = (3..5_i64)
            .map(|id| {
                let store = store.clone();
                tokio::spawn(async move {
                    let mut tx = store.begin().await.unwrap();
                    sqlx::query("INSERT INTO parents (id) VALUES ($1)")
                        .bind(id)
                        .execute(&mut *tx)
                        .await
                        .unwrap();
                    tx.commit().await.unwrap();
                })
            })
            .collect();
        for writer in writers {
            writer.await.unwrap();
        }
        assert_eq!(count(&store, "parents").await, 3);
        let (_, committed) = store.group_commits().await;
        assert_eq!(committed, 3);
    }

    /// The writer that commits a group goes away during the `COMMIT` (its client gone, its
    /// request timed out): the `COMMIT` goes on, and the other members are told their work is
    /// committed, as it is. Dropped with its caller, it told them the group had failed.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_group_committed_by_a_caller_gone_is_committed_for_all() {
        let (_dir, store) = Store::temporary_sqlite().await;
        sqlx::query("CREATE TABLE writes (id INTEGER PRIMARY KEY)")
            .execute(store.pool())
            .await
            .unwrap();
        let writer = store.writer().clone();
        let mut first = store.begin().await.unwrap();
        sqlx::query("INSERT INTO writes (id) VALUES (1)")
            .execute(&mut *first)
            .await
            .unwrap();
        // A second writer queues for the turn, so the first leaves the group open for it; it
        // commits the group, and is gone at the first wait of its `commit` (polled once, then
        // dropped).
        let second = tokio::spawn({
            let store = store.clone();
            async move {
                let mut tx = store.begin().await.unwrap();
                sqlx::query("INSERT INTO writes (id) VALUES (2)")
                    .execute(&mut *tx)
                    .await
                    .unwrap();
                let mut commit = Box::pin(tx.commit());
                std::future::poll_fn(|cx| {
                    std::task::Poll::Ready(
                        std::future::Future::poll(commit.as_mut(), cx).is_pending(),
                    )
                })
                .await
            }
        });
        while writer.waiting.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let first = first.commit().await;
        assert!(
            second.await.unwrap(),
            "the second's commit outlasted its caller"
        );
        assert!(first.is_ok(), "the first member was told {first:?}");
        store.write_turn().await;
        assert_eq!(count(&store, "writes").await, 2);
    }

    /// Writers at once: each one's work is kept if and only if it committed, whatever the
    /// others in its group did (rolled back, dropped, failed a statement), and commits were
    /// shared.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn writers_share_commits_and_undo_only_their_own_work() {
        let (_dir, store) = Store::temporary_sqlite().await;
        sqlx::query("CREATE TABLE writes (id INTEGER PRIMARY KEY, outcome TEXT NOT NULL)")
            .execute(store.pool())
            .await
            .unwrap();
        let outcomes = ["commit", "rollback", "dropped", "failed"];
        let writers: Vec<_> = (0..64_i64)
            .map(|id| {
                let store = store.clone();
                let outcome = outcomes[id as usize % outcomes.len()];
                tokio::spawn(async move {
                    let mut tx = store.begin().await.unwrap();
                    sqlx::query("INSERT INTO writes (id, outcome) VALUES ($1, $2)")
                        .bind(id)
                        .bind(outcome)
                        .execute(&mut *tx)
                        .await
                        .unwrap();
                    // Hold the turn a while, so that the others queue behind it.
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    match outcome {
                        "commit" => tx.commit().await.unwrap(),
                        "rollback" => tx.rollback().await.unwrap(),
                        "dropped" => drop(tx),
                        _ => {
                            let twice =
                                sqlx::query("INSERT INTO writes (id, outcome) VALUES ($1, 'x')")
                                    .bind(id)
                                    .execute(&mut *tx)
                                    .await;
                            assert!(twice.is_err());
                            drop(tx);
                        }
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.await.unwrap();
        }
        // A write after them all sees the last group committed.
        store.write_turn().await;
        let kept: Vec<(i64, String)> = sqlx::query_as("SELECT id, outcome FROM writes ORDER BY id")
            .fetch_all(store.pool())
            .await
            .unwrap();
        assert_eq!(kept.len(), 16, "{kept:?}");
        assert!(kept
            .iter()
            .all(|(id, outcome)| outcome == "commit" && id % 4 == 0));
        let (commits, committed) = store.group_commits().await;
        assert_eq!(committed, 16);
        assert!(
            commits < committed,
            "{commits} commits for {committed} writers"
        );
    }
}
