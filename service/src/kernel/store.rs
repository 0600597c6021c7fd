//! The database: one code path for the embedded SQLite store and for PostgreSQL.
//!
//! Queries go through `sqlx::Any` with `$1`-style placeholders, which both drivers accept.
//! Column conventions (see `migrations/0001_platform.sql`): ids are UUID text, timestamps are
//! fixed-width RFC 3339 text (so text order is time order, which keyset paging relies on),
//! flags are SMALLINT 0/1 (the Any driver cannot decode SQLite booleans), money is BIGINT kobo.

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use chrono::{DateTime, DurationRound, SecondsFormat, Utc};
use sha2::{Digest, Sha256};
use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::{Any, AnyConnection, AnyPool, Row, Transaction};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::kernel::writer::{Member, Turn, Writer};
pub use kobo_store::error::{
    is_unique_violation, note_storage_failure, opened_since_storage_failure, unavailable,
    StoreError,
};

/// A write transaction on either store ([`Store::begin`]). It derefs to its connection, so
/// `&mut *tx` runs a query in it; dropped without [`Tx::commit`], it rolls back. On SQLite it
/// is this process's writer's turn, a member of a group commit ([`crate::kernel::writer`]).
pub struct Tx {
    inner: Inner,
    /// PostgreSQL: this process's turns at the ledgers of the businesses it posts to
    /// ([`Store::begin_posting`]), held until the transaction ends.
    _ledgers: Vec<OwnedSemaphorePermit>,
    backend: Backend,
}

enum Inner {
    /// PostgreSQL: a transaction of its own.
    Own(Transaction<'static, Any>),
    /// SQLite: a share of the writers' transaction.
    Member(Member),
    /// Committed or rolled back.
    Ended,
}

impl Tx {
    /// Which database the transaction runs in.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Commits; on SQLite, returns once the group's commit made this transaction's work
    /// durable.
    pub async fn commit(mut self) -> Result<(), StoreError> {
        match std::mem::replace(&mut self.inner, Inner::Ended) {
            Inner::Own(tx) => tx.commit().await?,
            Inner::Member(member) => member.commit().await?,
            Inner::Ended => {}
        }
        Ok(())
    }

    pub async fn rollback(mut self) -> Result<(), StoreError> {
        match std::mem::replace(&mut self.inner, Inner::Ended) {
            Inner::Own(tx) => tx.rollback().await?,
            Inner::Member(member) => member.rollback().await?,
            Inner::Ended => {}
        }
        Ok(())
    }
}

impl Drop for Tx {
    fn drop(&mut self) {
        // A transaction of its own rolls back as it is dropped (the driver queues it).
        if let Inner::Member(member) = std::mem::replace(&mut self.inner, Inner::Ended) {
            member.abandon();
        }
    }
}

impl std::ops::Deref for Tx {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        match &self.inner {
            Inner::Own(tx) => tx,
            Inner::Member(member) => member.connection(),
            Inner::Ended => unreachable!("a transaction used after it ended"),
        }
    }
}

impl std::ops::DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        match &mut self.inner {
            Inner::Own(tx) => tx,
            Inner::Member(member) => member.connection_mut(),
            Inner::Ended => unreachable!("a transaction used after it ended"),
        }
    }
}

/// Seconds a client is told to wait (`Retry-After`) when the database is unavailable.
pub const UNAVAILABLE_RETRY_AFTER_SECONDS: u64 = 2;

/// The size of SQLite's log, in pages, at which the connection that commits copies the log
/// into the database itself (SQLite's default is 1,000 pages, about 4 MiB). That copy and its
/// flush run inside the commit, while every other write waits for its turn: a payout now and
/// then took several times the usual. `kobo serve` copies the log in the background every
/// [`crate::workers::CHECKPOINT_INTERVAL`] instead ([`Store::checkpoint`]); this bound only
/// keeps the log from growing without end where nothing does (a one-off command, tests, a
/// checkpointer that cannot keep up).
const WAL_AUTOCHECKPOINT_PAGES: u32 = 16_384;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// Which database server is behind the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The connection pool and what kind of database it talks to.
#[derive(Clone, Debug)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    /// SQLite: one writer at a time in this process, in arrival order. SQLite has one write
    /// lock per database; without this queue, waiting writers poll for it with the busy
    /// handler's sleeps (1 ms growing to 100 ms), so under load a write waits far longer than
    /// the writes ahead of it take, and the unlucky (webhook bookkeeping beside a stream of
    /// payouts) starve. `None` on PostgreSQL, whose row locks queue writers themselves.
    writer: Option<Arc<Writer>>,
    /// PostgreSQL: at most [`POSTERS_PER_BUSINESS`] postings per business at a time in this
    /// process, the others queued in arrival order ([`Store::begin_posting`]). A business's
    /// postings take its ledger head one at a time anyway (gapless sequences); without this
    /// queue every waiter waited for the head's row lock inside its transaction, holding one
    /// of the pool's few connections. Under a backlog the waiters of the busiest businesses
    /// then held every connection, and the other businesses' heads, and every other request,
    /// waited for one. `None` on SQLite, whose `writer` already queues every write.
    ledgers: Option<Arc<LedgerTurns>>,
}

/// Postings of one business in a transaction at once, per process (PostgreSQL): the one
/// holding the ledger head and the next, which has begun and waits on the head's row lock, so
/// that the head passes from one to the next without a connection checkout in between.
/// One alone (a mutex) left the head idle while the next poster waited for a connection: a
/// soak at 200 payouts/s went from p99 345 ms to 8 s.
pub const POSTERS_PER_BUSINESS: usize = 2;

/// The per-business queues of [`Store::begin_posting`]: a business's queue lives while a
/// poster holds or waits for it, and the map forgets it after.
#[derive(Debug, Default)]
struct LedgerTurns {
    queues: std::sync::Mutex<std::collections::HashMap<String, std::sync::Weak<Semaphore>>>,
}

impl LedgerTurns {
    fn queue(&self, business_id: &str) -> Arc<Semaphore> {
        let mut queues = self
            .queues
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        if let Some(queue) = queues.get(business_id).and_then(std::sync::Weak::upgrade) {
            return queue;
        }
        // Forget the businesses nobody posts to any more before the map would grow.
        if queues.len() == queues.capacity() {
            queues.retain(|_, queue| queue.strong_count() > 0);
        }
        let queue = Arc::new(Semaphore::new(POSTERS_PER_BUSINESS));
        queues.insert(business_id.to_owned(), Arc::downgrade(&queue));
        queue
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.queues
            .lock()
            .map(|queues| queues.len())
            .unwrap_or_default()
    }
}

/// The pool's options for `backend`: its size, no ping before a checkout, a connection that
/// comes back inside a transaction or from before a storage failure closed, and SQLite's
/// pragmas on each new connection.
fn pool_options(backend: Backend) -> AnyPoolOptions {
    let options = AnyPoolOptions::new()
        .max_connections(match backend {
            Backend::Sqlite => 8,
            Backend::Postgres => 16,
        })
        .acquire_timeout(Duration::from_secs(10))
        // No ping before each checkout: it was a round trip (a whole statement on
        // PostgreSQL) before every query run on the pool and every transaction. sqlx pings
        // every connection when it comes back to the pool, and closes it when that fails,
        // so only a connection broken while it sat idle (the database restarted) can be
        // handed out: its request fails as unavailable (`97`, retry) and the connection
        // is closed on its return.
        .test_before_acquire(false)
        // A connection that comes back still inside a transaction is closed, not reused:
        // when a COMMIT fails (SQLite's disk full), the database has rolled back but the
        // driver still counts the transaction, and every later BEGIN on that connection
        // would fail ("begin_with at non-zero transaction depth") long after the disk
        // has room again. Found by `kobo-load chaos --disk-faults`. On SQLite the queued
        // rollback of a dropped transaction is flushed first (a round trip to its thread),
        // only when the driver still counts a transaction: a queued rollback implies one
        // (the count rises when the `BEGIN` has run, before it is acknowledged, and falls
        // when the rollback has run), and a round trip on every release was a second one
        // for every query run on the pool. PostgreSQL's driver counts it as done when
        // queued.
        .after_release(move |connection, metadata| {
            Box::pin(async move {
                if backend == Backend::Sqlite && sqlx::Connection::is_in_transaction(&*connection) {
                    sqlx::Connection::ping(&mut *connection).await?;
                }
                Ok(!sqlx::Connection::is_in_transaction(&*connection)
                    && opened_since_storage_failure(metadata.age))
            })
        })
        .before_acquire(|_, metadata| {
            Box::pin(async move { Ok(opened_since_storage_failure(metadata.age)) })
        });
    match backend {
        Backend::Sqlite => options.after_connect(|connection, _| {
            Box::pin(async move {
                sqlx::query("PRAGMA journal_mode = WAL")
                    .execute(&mut *connection)
                    .await?;
                sqlx::query("PRAGMA busy_timeout = 10000")
                    .execute(&mut *connection)
                    .await?;
                sqlx::query("PRAGMA foreign_keys = ON")
                    .execute(&mut *connection)
                    .await?;
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT_PAGES}"
                )))
                .execute(&mut *connection)
                .await?;
                Ok(())
            })
        }),
        Backend::Postgres => options,
    }
}

impl Store {
    /// Opens `url` (`sqlite://path?mode=rwc` or `postgres://...`). SQLite runs in WAL mode with
    /// foreign keys on and a busy timeout, so concurrent readers never block the writer.
    pub async fn connect(url: &str) -> Result<Store> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Backend::Postgres
        } else {
            anyhow::bail!("unsupported database URL {url:?}: use sqlite://PATH or postgres://...");
        };
        let options = pool_options(backend);
        let pool = options
            .clone()
            .connect(url)
            .await
            .with_context(|| format!("cannot open the database at {}", redact_url(url)))?;
        // SQLite: the writers' transactions on a connection of their own, whose page cache
        // stays warm: on a connection of the shared pool, the cache was stale after every
        // other connection's commit, and each write read its pages from the file again.
        let writer = match backend {
            Backend::Sqlite => {
                let connection = options
                    .max_connections(1)
                    .connect(url)
                    .await
                    .with_context(|| format!("cannot open the database at {}", redact_url(url)))?;
                Some(Arc::new(Writer::new(connection, |error| {
                    note_storage_failure(error);
                    unavailable(error)
                })))
            }
            Backend::Postgres => None,
        };
        let ledgers = (backend == Backend::Postgres).then(Arc::default);
        Ok(Store {
            pool,
            backend,
            writer,
            ledgers,
        })
    }

    /// The URL of an SQLite store kept in `data_dir` (created if missing).
    pub fn sqlite_url_in(data_dir: &Path) -> Result<String> {
        std::fs::create_dir_all(data_dir)
            .with_context(|| format!("cannot create the data directory {}", data_dir.display()))?;
        Ok(format!(
            "sqlite://{}?mode=rwc",
            data_dir.join("kobo.db").display()
        ))
    }

    /// Applies the embedded migrations that have not run yet.
    pub async fn migrate(&self) -> Result<()> {
        MIGRATOR
            .run(&self.pool)
            .await
            .context("cannot apply the database migrations")
    }

    /// A short fingerprint of the embedded migrations (their versions and checksums): two
    /// databases migrated by builds with the same fingerprint have the same schema.
    pub fn schema_fingerprint() -> String {
        let mut digest = Sha256::new();
        for migration in MIGRATOR.iter() {
            digest.update(migration.version.to_le_bytes());
            digest.update(&migration.checksum);
        }
        hex::encode(&digest.finalize()[..6])
    }

    /// Closes every connection of the pool (waiting for those in use to be returned).
    pub async fn close(&self) {
        if let Some(writer) = &self.writer {
            writer.close().await;
        }
        self.pool.close().await;
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Copies what SQLite's log holds into the database file, without waiting for any reader
    /// or writer (a passive checkpoint), and returns how many of the log's pages are still
    /// to copy (those a reader still needs, or written meanwhile). Nothing to do on
    /// PostgreSQL: `Ok(0)`.
    pub async fn checkpoint(&self) -> Result<i64, sqlx::Error> {
        if self.backend != Backend::Sqlite {
            return Ok(0);
        }
        let row = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
            .fetch_one(&self.pool)
            .await?;
        let in_log: i64 = row.try_get(1)?;
        let copied: i64 = row.try_get(2)?;
        Ok((in_log - copied).max(0))
    }

    /// Starts a transaction for writes. On SQLite it takes the write lock at once
    /// (`BEGIN IMMEDIATE`): a deferred transaction that later needs to write can fail with
    /// "database is locked" instead of waiting its turn.
    ///
    /// On SQLite it first waits for this process's turn to write (see `writer`), then holds
    /// it until the transaction ends. Never begin a second one while holding a `Tx`.
    pub async fn begin(&self) -> Result<Tx, StoreError> {
        let inner = match &self.writer {
            Some(writer) => Inner::Member(writer.begin().await?),
            None => Inner::Own(self.pool.begin().await?),
        };
        Ok(Tx {
            inner,
            _ledgers: Vec::new(),
            backend: self.backend,
        })
    }

    /// [`Store::begin`] for a transaction that advances the ledger heads of `businesses`
    /// (a posting): on PostgreSQL it first waits, without a connection, for a place in this
    /// process's queue of each of those businesses (taken in id order, as the heads are; see
    /// [`POSTERS_PER_BUSINESS`]), and holds them until the transaction ends. The head's row
    /// lock still decides the order; the queue only keeps this process's waiters out of the
    /// pool.
    pub async fn begin_posting(&self, businesses: &[&str]) -> Result<Tx, StoreError> {
        let mut ledgers = Vec::new();
        if let Some(turns) = &self.ledgers {
            let mut ids = businesses.to_vec();
            ids.sort_unstable();
            ids.dedup();
            for id in ids {
                let permit = turns
                    .queue(id)
                    .acquire_owned()
                    .await
                    .map_err(|_| StoreError::Failed(sqlx::Error::PoolClosed))?;
                ledgers.push(permit);
            }
        }
        let mut tx = self.begin().await?;
        tx._ledgers = ledgers;
        Ok(tx)
    }

    /// This process's turn to write on SQLite (`None` on PostgreSQL), for a single write
    /// statement outside [`Store::begin`]: hold it across the statement.
    pub async fn write_turn(&self) -> Option<Turn> {
        match &self.writer {
            Some(writer) => Some(writer.turn().await),
            None => None,
        }
    }

    /// SQLite: the writers' turn and group commit, for tests that watch who waits for it.
    #[cfg(test)]
    pub(crate) fn writer(&self) -> Option<&Arc<Writer>> {
        self.writer.as_ref()
    }

    /// SQLite: how many group commits there were, and how many transactions they committed
    /// (`None` on PostgreSQL).
    pub async fn group_commits(&self) -> Option<(u64, u64)> {
        match &self.writer {
            Some(writer) => Some(writer.commits().await),
            None => None,
        }
    }

    /// Checks that the database answers (for `/readyz`).
    pub async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }
}

/// Hides the password of a database URL in messages.
fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let credentials = &url[scheme_end + 3..at];
            match credentials.split_once(':') {
                Some((user, _password)) => {
                    format!("{}{user}:***{}", &url[..scheme_end + 3], &url[at..])
                }
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

/// A new random id.
pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Formats a timestamp the way every column stores it: fixed-width, microseconds, `Z`.
pub fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// `at` as a column keeps it: to the microsecond.
pub fn as_stored(at: DateTime<Utc>) -> DateTime<Utc> {
    at.duration_trunc(chrono::Duration::microseconds(1))
        .unwrap_or(at)
}

/// Reads a timestamp column back.
pub fn parse_timestamp(text: &str) -> Result<DateTime<Utc>, StoreError> {
    DateTime::parse_from_rfc3339(text)
        .map(|at| at.with_timezone(&Utc))
        .map_err(|error| StoreError::Unreadable(format!("timestamp {text:?}: {error}")))
}

/// Reads a SMALLINT 0/1 flag column.
pub fn flag(row: &AnyRow, column: &str) -> Result<bool, StoreError> {
    let value: i64 = row.try_get(column)?;
    Ok(value != 0)
}

/// Reads a text column.
pub fn text(row: &AnyRow, column: &str) -> Result<String, StoreError> {
    Ok(row.try_get(column)?)
}

/// Reads a nullable text column.
pub fn optional_text(row: &AnyRow, column: &str) -> Result<Option<String>, StoreError> {
    Ok(row.try_get(column)?)
}

/// Reads a UUID text column.
pub fn uuid(row: &AnyRow, column: &str) -> Result<uuid::Uuid, StoreError> {
    let value = text(row, column)?;
    uuid::Uuid::from_str(&value).map_err(|error| {
        StoreError::Unreadable(format!("uuid {value:?} in column {column}: {error}"))
    })
}

/// Reads a timestamp text column.
pub fn time(row: &AnyRow, column: &str) -> Result<DateTime<Utc>, StoreError> {
    parse_timestamp(&text(row, column)?)
}

/// Reads a nullable timestamp text column.
pub fn optional_time(row: &AnyRow, column: &str) -> Result<Option<DateTime<Utc>>, StoreError> {
    optional_text(row, column)?
        .map(|value| parse_timestamp(&value))
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_classified_where_they_arise() {
        for error in [
            sqlx::Error::PoolTimedOut,
            sqlx::Error::PoolClosed,
            sqlx::Error::Io(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)),
        ] {
            let classified = StoreError::from(error);
            assert!(
                matches!(classified, StoreError::Unavailable(_)),
                "{classified:?}"
            );
        }
        // A mistake is no outage.
        let mistake = StoreError::from(sqlx::Error::RowNotFound);
        assert!(matches!(mistake, StoreError::Failed(_)), "{mistake:?}");
        assert!(!mistake.is_conflict());
    }

    impl Store {
        /// A fresh SQLite store in a directory of its own, which lives as long as the returned
        /// guard; not migrated.
        pub(crate) async fn temporary_sqlite() -> (tempfile::TempDir, Store) {
            let dir = tempfile::tempdir().unwrap();
            let store = Store::connect(&Store::sqlite_url_in(dir.path()).unwrap())
                .await
                .unwrap();
            (dir, store)
        }
    }

    #[test]
    fn a_business_queue_is_shared_while_in_use_and_forgotten_after() {
        let turns = LedgerTurns::default();
        let first = turns.queue("a");
        assert!(Arc::ptr_eq(&first, &turns.queue("a")));
        assert_eq!(first.available_permits(), POSTERS_PER_BUSINESS);
        drop(first);
        for business in 0..1_000 {
            drop(turns.queue(&format!("b{business}")));
        }
        assert!(turns.len() < 100, "{} queues kept", turns.len());
    }

    /// The pool does not ping a connection before handing it out (a round trip before every
    /// query). A connection PostgreSQL dropped while it sat idle (a restart, a failover) is
    /// then handed out once: that request fails as unavailable, which clients retry, the
    /// connection is closed on its return, and the pool heals without a restart.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn connections_dropped_while_idle_fail_once_as_unavailable_then_are_replaced() {
        let kit = crate::testkit::TestKit::postgres().await;
        let store = &kit.store;
        let mut survivor = store.pool().acquire().await.unwrap();
        let killed: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid()) AS terminated",
        )
        .fetch_one(&mut *survivor)
        .await
        .unwrap();
        drop(survivor);
        assert!(killed > 0, "the kit left idle connections in the pool");
        let mut failures = 0;
        for attempt in 0..(killed + 5) {
            match sqlx::query_scalar::<_, i64>("SELECT 1")
                .fetch_one(store.pool())
                .await
            {
                Ok(one) => assert_eq!(one, 1),
                Err(error) => {
                    assert!(unavailable(&error), "attempt {attempt}: {error}");
                    failures += 1;
                }
            }
        }
        assert!(
            failures <= killed,
            "{failures} failures for {killed} dropped connections"
        );
        for _ in 0..20 {
            sqlx::query("SELECT 1")
                .execute(store.pool())
                .await
                .expect("the pool has healed");
        }
    }

    /// Commits leave SQLite's log to the checkpointer (up to a bound), and a checkpoint copies
    /// all of it when no reader holds an older snapshot.
    #[tokio::test]
    async fn commits_leave_the_log_to_the_checkpointer() {
        let (_dir, store) = Store::temporary_sqlite().await;
        sqlx::query("CREATE TABLE logged (x BLOB)")
            .execute(store.pool())
            .await
            .unwrap();
        // About 1,500 pages, past SQLite's default bound of 1,000.
        for _ in 0..150 {
            sqlx::query("INSERT INTO logged (x) VALUES (zeroblob(40000))")
                .execute(store.pool())
                .await
                .unwrap();
        }
        let pages: i64 = sqlx::query("PRAGMA wal_checkpoint(NOOP)")
            .fetch_one(store.pool())
            .await
            .unwrap()
            .try_get(1)
            .unwrap();
        assert!(
            pages > 1_000,
            "the log was copied by a commit: {pages} pages in it"
        );
        assert_eq!(store.checkpoint().await.unwrap(), 0);
    }

    /// On SQLite a transaction dropped without a commit is rolled back by a command the
    /// driver queues; the next transaction, on the same connection, sees none of its writes
    /// (the release waits for that command only while the driver still counts a
    /// transaction).
    #[tokio::test]
    async fn a_dropped_transactions_connection_is_reused_only_rolled_back() {
        let (_dir, store) = Store::temporary_sqlite().await;
        sqlx::query("CREATE TABLE dropped (x INTEGER)")
            .execute(store.pool())
            .await
            .unwrap();
        for x in 0..100_i64 {
            let mut tx = store.begin().await.unwrap();
            sqlx::query("INSERT INTO dropped (x) VALUES ($1)")
                .bind(x)
                .execute(&mut *tx)
                .await
                .unwrap();
            drop(tx);
            let mut next = store.begin().await.unwrap();
            let seen: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM dropped")
                .fetch_one(&mut *next)
                .await
                .unwrap();
            assert_eq!(seen, 0, "after {x} dropped transactions");
            next.commit().await.unwrap();
        }
    }

    /// A statement that fills the disk makes SQLite roll the whole transaction back by itself
    /// while the driver still counts it open; the connection must not go back into use, or
    /// every later BEGIN on it fails ("begin_with at non-zero transaction depth"), long after
    /// the disk has room again. Found by `kobo-load chaos --disk-faults`.
    #[tokio::test]
    async fn a_transaction_rolled_back_by_a_full_disk_does_not_poison_the_pool() {
        let (_dir, store) = Store::temporary_sqlite().await;
        let mut tx = store.begin().await.unwrap();
        sqlx::query("CREATE TABLE filler (x BLOB)")
            .execute(&mut *tx)
            .await
            .unwrap();
        let pages: i64 = sqlx::query_scalar("PRAGMA page_count")
            .fetch_one(&mut *tx)
            .await
            .unwrap();
        // A "disk" exactly as large as the database is now.
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "PRAGMA max_page_count = {pages}"
        )))
        .execute(&mut *tx)
        .await
        .unwrap();
        let full = sqlx::query("INSERT INTO filler (x) VALUES (zeroblob(1000000))")
            .execute(&mut *tx)
            .await
            .unwrap_err();
        assert!(unavailable(&full), "SQLITE_FULL is unavailability: {full}");
        // The disk has room again (on this connection), and the transaction is dropped.
        sqlx::query("PRAGMA max_page_count = 1073741823")
            .execute(&mut *tx)
            .await
            .unwrap();
        drop(tx);
        // One request at a time reuses one connection: every BEGIN must work again.
        for _ in 0..5 {
            let tx = store
                .begin()
                .await
                .expect("a BEGIN after the disk was full");
            tx.commit().await.unwrap();
        }
    }

    /// SQLite files made unwritable (`chattr +i`, as on a volume remounted read-only) then
    /// writable again: the connections that saw the failure kept answering "attempt to write a
    /// readonly database" (2 minutes of `97` in a chaos run, until the process restarted).
    /// Found by `kobo-load chaos --read-only-faults`. Needs root and a file system with
    /// `chattr` (skipped otherwise).
    #[tokio::test]
    async fn the_store_writes_again_once_its_files_are_writable_again() {
        let (dir, store) = Store::temporary_sqlite().await;
        let write = |value: i64| {
            let store = store.clone();
            async move {
                sqlx::query("INSERT INTO t (x) VALUES ($1)")
                    .bind(value)
                    .execute(store.pool())
                    .await
                    .map(|_| ())
            }
        };
        let mut tx = store.begin().await.unwrap();
        sqlx::query("CREATE TABLE t (x BIGINT)")
            .execute(&mut *tx)
            .await
            .unwrap();
        tx.commit().await.unwrap();
        write(1).await.unwrap();
        let chattr = |flag: &str| {
            let files = ["kobo.db", "kobo.db-wal"].map(|name| dir.path().join(name));
            std::process::Command::new("chattr")
                .arg(flag)
                .args(files.iter().filter(|path| path.exists()))
                .status()
                .is_ok_and(|status| status.success())
        };
        if !chattr("+i") {
            eprintln!("skipped: chattr +i is not available here (root, ext4 or tmpfs)");
            return;
        }
        // Every connection of the pool meets the failure.
        let mut failures = Vec::new();
        for value in 0..8 {
            if let Err(error) = write(value).await {
                note_storage_failure(&error);
                failures.push(error);
            }
        }
        assert!(chattr("-i"));
        assert!(!failures.is_empty(), "writes to immutable files failed");
        assert!(failures.iter().all(unavailable), "{failures:?}");
        for value in 0..8 {
            write(value)
                .await
                .expect("a write once the files are writable again");
        }
    }

    #[test]
    fn timestamps_are_fixed_width_so_text_order_is_time_order() {
        let early = timestamp("2026-11-02T09:20:00Z".parse().unwrap());
        let late = timestamp("2026-11-02T09:20:00.5Z".parse().unwrap());
        assert_eq!(early, "2026-11-02T09:20:00.000000Z");
        assert_eq!(late, "2026-11-02T09:20:00.500000Z");
        assert!(early < late);
        assert_eq!(
            parse_timestamp(&late).unwrap(),
            "2026-11-02T09:20:00.5Z".parse::<DateTime<Utc>>().unwrap()
        );
    }

    #[test]
    fn passwords_in_database_urls_are_hidden() {
        assert_eq!(
            redact_url("postgres://kobo:s3cret@db:5432/kobo"),
            "postgres://kobo:***@db:5432/kobo"
        );
        assert_eq!(
            redact_url("postgres://postgres@127.0.0.1/test"),
            "postgres://postgres@127.0.0.1/test"
        );
        assert_eq!(
            redact_url("sqlite://data/kobo.db?mode=rwc"),
            "sqlite://data/kobo.db?mode=rwc"
        );
    }
}
