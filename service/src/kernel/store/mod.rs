//! The store: the embedded SQLite database or PostgreSQL, each with its own types and queries
//! (the crates `kobo-store-sqlite` and `kobo-store-postgres`), behind one [`Store`] and one
//! [`Tx`]. The datastore (`crate::datastore`) hands each statement to the store it runs on;
//! nothing above it knows which one that is.
//!
//! What each store keeps for itself: SQLite its single writer and group commit (a write waits
//! for this process's turn, [`Store::begin`]); PostgreSQL its per-business queue of postings
//! ([`Store::begin_posting`]) and its pool of connections.

mod payment;
mod postgres;

use std::path::Path;

use anyhow::Result;
use chrono::{DateTime, DurationRound, Utc};
use kobo_store::ledger::AdvancedHead;

pub use kobo_store::error::{
    is_unique_violation, note_storage_failure, opened_since_storage_failure, unavailable,
    StoreError,
};
pub use kobo_store_postgres::outcome::LostCommits;
pub use kobo_store_postgres::PoolMode;
pub use kobo_store_sqlite::writer::Turn;
pub use payment::{Paid, Payment};
pub use postgres::{Connection, POSTERS_PER_BUSINESS};

/// Seconds a client is told to wait (`Retry-After`) when the database is unavailable.
pub const UNAVAILABLE_RETRY_AFTER_SECONDS: u64 = 2;

/// Which database server is behind the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// The store's name in logs and metrics.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

/// The database: SQLite's file with its writer, or PostgreSQL's pool.
#[derive(Clone, Debug)]
pub enum Store {
    Sqlite(kobo_store_sqlite::Store),
    Postgres(postgres::Postgres),
}

/// A write transaction on either store ([`Store::begin`]); dropped without [`Tx::commit`], it
/// rolls back. On SQLite it is this process's writer's turn, a member of a group commit.
pub struct Tx {
    pub(crate) on: TxOn,
    /// The transaction changed what authentication reads ([`Tx::touch_auth`]).
    touched_auth: bool,
    /// A payment named its witness ([`Tx::witness`]).
    witnessed: bool,
}

/// The store a [`Tx`] runs on.
pub(crate) enum TxOn {
    Sqlite(kobo_store_sqlite::Tx),
    Postgres(postgres::PgTx),
}

impl Tx {
    fn new(on: TxOn) -> Tx {
        Tx {
            on,
            touched_auth: false,
            witnessed: false,
        }
    }

    /// Which database the transaction runs in.
    pub fn backend(&self) -> Backend {
        match self.on {
            TxOn::Sqlite(_) => Backend::Sqlite,
            TxOn::Postgres(_) => Backend::Postgres,
        }
    }

    /// Whether business `business_id`'s status and daily limit stand until the transaction
    /// ends: on SQLite always (its write transaction holds the database); on PostgreSQL when
    /// it began holding the business's standing lock ([`Store::begin_payout`]).
    pub fn holds_standing(&self, business_id: &str) -> bool {
        match &self.on {
            TxOn::Sqlite(_) => true,
            TxOn::Postgres(tx) => tx.standing.as_deref() == Some(business_id),
        }
    }

    /// Whether the transaction may move `money`: a movement that reads its business's standing
    /// (its status, its daily limit) must hold it ([`Tx::holds_standing`]), or what it read
    /// could change before it commits.
    pub fn check_standing(&self, money: &kobo_store::ledger::Money<'_>) -> Result<(), StoreError> {
        let reads_standing = money.business_must_be_active || money.daily.is_some();
        if reads_standing && !self.holds_standing(money.business_id) {
            return Err(StoreError::Misuse(
                "a posting reads its business's standing without holding it (Store::begin_payout)"
                    .into(),
            ));
        }
        Ok(())
    }

    /// Where business `business_id`'s ledger head should be for this transaction's next
    /// advance: on PostgreSQL, for a payout in its business's group commit, as the members
    /// before it left it (the group holds its lock), or, for the group's first, as the group
    /// before it left it (`kobo_store_postgres::groups::Member::known_head`). A statement that
    /// relies on it checks it ([`Tx::missed`]). `None` otherwise.
    fn known_head(&self, business_id: &str) -> Option<&AdvancedHead> {
        match &self.on {
            TxOn::Sqlite(_) => None,
            TxOn::Postgres(tx) => tx.known_head(business_id),
        }
    }

    /// Records business `business_id`'s head as this transaction's work left it (`in_one`:
    /// written in one statement from [`Tx::known_head`]), for the payouts after it in its
    /// group commit; nothing for a transaction of its own.
    fn advanced(&mut self, head: &AdvancedHead, in_one: bool) {
        if let TxOn::Postgres(tx) = &mut self.on {
            tx.advanced(head, in_one);
        }
    }

    /// The head was not where [`Tx::known_head`] said (nothing was written): it is forgotten.
    fn missed(&mut self) {
        if let TxOn::Postgres(tx) = &mut self.on {
            tx.missed();
        }
    }

    /// Whether the transaction holds business `business_id`'s ledger head from before its own
    /// work: on PostgreSQL, a payout in its business's group commit after one that advanced
    /// the head (`kobo_store_postgres::groups::Member::holds_head`). Its one statement then
    /// checks first that it will write everything or nothing, and runs without a savepoint.
    fn holds_head(&self, business_id: &str) -> bool {
        match &self.on {
            TxOn::Sqlite(_) => false,
            TxOn::Postgres(tx) => tx.holds_head(business_id),
        }
    }

    /// Makes this transaction's work from now on undoable alone: on PostgreSQL, a payout in
    /// its business's group commit after the group's first sets its savepoint, which it
    /// joined without. Needed before any statement that may write and then be refused; a
    /// payout whose one statement writes everything or nothing ([`Tx::holds_head`]) runs
    /// that statement before it, and calls it only if it wrote nothing
    /// ([`Tx::wrote_nothing`]). Without it, a member that does not commit fails its group.
    async fn guard(&mut self) -> Result<(), StoreError> {
        match &mut self.on {
            TxOn::Sqlite(_) => Ok(()),
            TxOn::Postgres(tx) => tx.guard().await,
        }
    }

    /// The statements this transaction ran since it began wrote nothing (a statement whose
    /// gate refused, [`Tx::holds_head`]): it can still be guarded ([`Tx::guard`]).
    fn wrote_nothing(&mut self) {
        if let TxOn::Postgres(tx) = &mut self.on {
            tx.wrote_nothing();
        }
    }

    /// Undoes this transaction's own work and goes on in it, when it shares a group commit
    /// with transactions before it (SQLite's writers, a business's payouts on PostgreSQL):
    /// after a statement of it failed, what those wrote can then be read in it (the pool
    /// cannot see it yet). `false` for a transaction of its own, or a group's first, which is
    /// then left as it is: what it conflicts with was committed. Dropped after, it undoes
    /// nothing more.
    async fn undo_own_work(&mut self) -> Result<bool, StoreError> {
        match &mut self.on {
            TxOn::Sqlite(tx) => tx.undo_own_work().await,
            TxOn::Postgres(tx) => tx.undo_own_work().await,
        }
    }

    /// Marks the transaction as one that changes what authentication reads (a session revoked,
    /// a member or role changed, a business's status or secret): once it commits, this
    /// process's cached sessions are read again ([`auth_epoch`]).
    pub(crate) fn touch_auth(&mut self) {
        self.touched_auth = true;
    }

    /// Names the row that tells whether this transaction committed, should its `COMMIT`'s
    /// answer be lost: the transfer it wrote, under business `business_id`'s ledger head, which
    /// it advanced. [`Tx::commit`] then finds out before it returns, and answers
    /// [`StoreError::OutcomeUnknown`] only if the database cannot tell in time, never
    /// "unavailable" for work that may have been kept. Nothing on SQLite, whose commit's
    /// answer cannot be lost on the way.
    pub fn witness(&mut self, business_id: &str, transfer_id: &str) {
        self.witnessed = true;
        if let TxOn::Postgres(tx) = &mut self.on {
            tx.witness(kobo_store_postgres::outcome::Witness {
                business_id: business_id.to_owned(),
                transfer_id: transfer_id.to_owned(),
            });
        }
    }

    /// Whether the transaction named its witness ([`Tx::witness`]): a payment, whose commit's
    /// outcome its caller must not guess (on either store, a caller that gives up waiting
    /// for the commit does not stop it).
    pub fn witnessed(&self) -> bool {
        self.witnessed
    }

    /// Commits; on SQLite, returns once the group's commit made this transaction's work
    /// durable.
    pub async fn commit(self) -> Result<(), StoreError> {
        match self.on {
            TxOn::Sqlite(tx) => tx.commit().await?,
            TxOn::Postgres(tx) => tx.commit().await?,
        }
        if self.touched_auth {
            auth_changed_here();
        }
        Ok(())
    }

    pub async fn rollback(self) -> Result<(), StoreError> {
        match self.on {
            TxOn::Sqlite(tx) => tx.rollback().await,
            TxOn::Postgres(tx) => tx.rollback().await,
        }
    }
}

/// This process's changes to what authentication reads, counted as they commit: a session
/// cached before the count moved is read again, so a revocation made here takes effect at once
/// here (other processes see the database's `auth_generation` move).
static AUTH_EPOCH: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// [`AUTH_EPOCH`] now: read it before reading a session, and keep the session only while it
/// has not moved.
pub fn auth_epoch() -> u64 {
    AUTH_EPOCH.load(std::sync::atomic::Ordering::SeqCst)
}

/// Records that a change to what authentication reads committed in this process.
pub fn auth_changed_here() {
    AUTH_EPOCH.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

impl Store {
    /// Opens `url` (`sqlite://path?mode=rwc` or `postgres://...`, directly).
    pub async fn connect(url: &str) -> Result<Store> {
        Store::connect_with(url, &Connection::default()).await
    }

    /// Opens `url`; a PostgreSQL `url` is reached as `connection` says (through a
    /// transaction pooler, say).
    pub async fn connect_with(url: &str, connection: &Connection) -> Result<Store> {
        if url.starts_with("sqlite:") {
            if connection.pool_mode != PoolMode::Session || connection.direct_url.is_some() {
                anyhow::bail!(
                    "--database-pool-mode and --database-direct-url are for PostgreSQL: the \
                     embedded SQLite database has no pooler"
                );
            }
            Ok(Store::Sqlite(kobo_store_sqlite::Store::connect(url).await?))
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Ok(Store::Postgres(
                postgres::Postgres::connect(url, connection).await?,
            ))
        } else {
            anyhow::bail!("unsupported database URL {url:?}: use sqlite://PATH or postgres://...");
        }
    }

    /// The URL of an SQLite store kept in `data_dir` (created if missing).
    pub fn sqlite_url_in(data_dir: &Path) -> Result<String> {
        kobo_store_sqlite::Store::sqlite_url_in(data_dir)
    }

    /// Applies the embedded migrations of this store that have not run yet.
    pub async fn migrate(&self) -> Result<()> {
        match self {
            Store::Sqlite(store) => store.migrate().await,
            Store::Postgres(store) => store.migrate().await,
        }
    }

    /// A short fingerprint of `backend`'s embedded migrations: two databases migrated by
    /// builds with the same fingerprint have the same schema.
    pub fn schema_fingerprint(backend: Backend) -> String {
        match backend {
            Backend::Sqlite => kobo_store_sqlite::schema_fingerprint(),
            Backend::Postgres => kobo_store_postgres::schema_fingerprint(),
        }
    }

    /// Closes every connection (waiting for those in use to be returned).
    pub async fn close(&self) {
        match self {
            Store::Sqlite(store) => store.close().await,
            Store::Postgres(store) => store.sqlx_pool().close().await,
        }
    }

    pub fn backend(&self) -> Backend {
        match self {
            Store::Sqlite(_) => Backend::Sqlite,
            Store::Postgres(_) => Backend::Postgres,
        }
    }

    /// The pool's connections: how many are open, and how many of those are idle.
    pub fn pool_size(&self) -> (u32, usize) {
        match self {
            Store::Sqlite(store) => (store.pool().size(), store.pool().num_idle()),
            Store::Postgres(store) => (store.sqlx_pool().size(), store.sqlx_pool().num_idle()),
        }
    }

    /// PostgreSQL's pool, for tests that hold a connection or a lock of their own.
    pub fn postgres_pool(&self) -> Option<&sqlx::PgPool> {
        match self {
            Store::Postgres(store) => Some(store.sqlx_pool()),
            Store::Sqlite(_) => None,
        }
    }

    /// SQLite's read pool, for tests that look at the file's state.
    pub fn sqlite_pool(&self) -> Option<&sqlx::SqlitePool> {
        match self {
            Store::Sqlite(store) => Some(store.pool()),
            Store::Postgres(_) => None,
        }
    }

    /// Copies what SQLite's log holds into the database file without waiting for anyone (a
    /// passive checkpoint), returning how many of the log's pages are still to copy. Nothing
    /// to do on PostgreSQL: `Ok(0)`.
    pub async fn checkpoint(&self) -> Result<i64, StoreError> {
        match self {
            Store::Sqlite(store) => Ok(store.checkpoint().await?),
            Store::Postgres(_) => Ok(0),
        }
    }

    /// Starts a transaction for writes. On SQLite it waits for this process's turn to write,
    /// then holds it until the transaction ends: never begin a second one while holding a
    /// `Tx`.
    pub async fn begin(&self) -> Result<Tx, StoreError> {
        Ok(match self {
            Store::Sqlite(store) => Tx::new(TxOn::Sqlite(store.begin().await?)),
            Store::Postgres(store) => Tx::new(TxOn::Postgres(store.begin(&[]).await?)),
        })
    }

    /// [`Store::begin`] for a transaction that advances the ledger heads of `businesses` (a
    /// posting): on PostgreSQL it first waits, without a connection, for a place in this
    /// process's queue of each of those businesses ([`POSTERS_PER_BUSINESS`]).
    pub async fn begin_posting(&self, businesses: &[&str]) -> Result<Tx, StoreError> {
        Ok(match self {
            Store::Sqlite(store) => Tx::new(TxOn::Sqlite(store.begin_posting(businesses).await?)),
            Store::Postgres(store) => Tx::new(TxOn::Postgres(store.begin(businesses).await?)),
        })
    }

    /// [`Store::begin_posting`] for a payout: on PostgreSQL its statements run on the plans
    /// each connection keeps for them, reading only indexes (`kobo_store_postgres::PAYOUT_PLANS`:
    /// they are not planned for every payout), and when money leaves business `standing` the
    /// transaction holds its standing lock from its start (its status and daily limit stand
    /// until it ends: [`Tx::holds_standing`]). SQLite's write transaction holds the database.
    pub async fn begin_payout(
        &self,
        businesses: &[&str],
        standing: Option<&str>,
    ) -> Result<Tx, StoreError> {
        Ok(match self {
            Store::Sqlite(store) => Tx::new(TxOn::Sqlite(store.begin_posting(businesses).await?)),
            Store::Postgres(store) => Tx::new(TxOn::Postgres(
                store.begin_payout(businesses, standing).await?,
            )),
        })
    }

    /// This process's turn to write on SQLite (`None` on PostgreSQL), for a single write
    /// statement outside [`Store::begin`]: hold it across the statement.
    pub async fn write_turn(&self) -> Option<Turn> {
        match self {
            Store::Sqlite(store) => Some(store.write_turn().await),
            Store::Postgres(_) => None,
        }
    }

    /// Whether the store keeps a log that a checkpointer copies into the database (SQLite's
    /// write-ahead log, [`Store::checkpoint`]).
    pub fn keeps_a_log(&self) -> bool {
        matches!(self, Store::Sqlite(_))
    }

    /// How many group commits there were, and how many transactions they committed: on
    /// SQLite every write's, on PostgreSQL the payouts' (`kobo_store_postgres::groups`).
    pub async fn group_commits(&self) -> (u64, u64) {
        match self {
            Store::Sqlite(store) => store.group_commits().await,
            Store::Postgres(store) => store.group_commits(),
        }
    }

    /// How many payouts of a group commit were written in one statement, their ledger head
    /// foreseen ([`Tx::known_head`]), and how many found it elsewhere and took two: always none
    /// on SQLite.
    pub fn payouts_foreseen(&self) -> (u64, u64) {
        match self {
            Store::Sqlite(_) => (0, 0),
            Store::Postgres(store) => store.payouts_foreseen(),
        }
    }

    /// How many savepoints payouts in a group commit set ([`Tx::guard`]): none on SQLite,
    /// whose writer keeps its own.
    pub fn payout_savepoints(&self) -> u64 {
        match self {
            Store::Sqlite(_) => 0,
            Store::Postgres(store) => store.payout_savepoints(),
        }
    }

    /// The commits whose answer was lost since the store opened, by what was found out
    /// ([`Tx::witness`]); none on SQLite.
    pub fn lost_commits(&self) -> LostCommits {
        match self {
            Store::Sqlite(_) => LostCommits::default(),
            Store::Postgres(store) => store.pool().lost_commits(),
        }
    }

    /// PostgreSQL: a connection of its own listening for the generation of what authentication
    /// reads (the channel `kobo_auth`, announced at commit by the triggers of migration 0015).
    /// `None` on SQLite, whose processes read the counter instead.
    pub async fn listen_auth(&self) -> Result<Option<AuthListener>, StoreError> {
        match self {
            Store::Sqlite(_) => Ok(None),
            Store::Postgres(store) => Ok(Some(AuthListener(store.listen("kobo_auth").await?))),
        }
    }

    /// Checks that the database answers (for `/readyz`).
    pub async fn ping(&self) -> Result<(), StoreError> {
        match self {
            Store::Sqlite(store) => store.ping().await,
            Store::Postgres(store) => store.ping().await,
        }
    }
}

/// Generations of what authentication reads, as PostgreSQL announces them ([`Store::listen_auth`]).
pub struct AuthListener(sqlx::postgres::PgListener);

impl AuthListener {
    /// The next generation announced; an error when the connection is lost (announcements
    /// made meanwhile are lost with it: read the counter instead).
    pub async fn next(&mut self) -> Result<i64, StoreError> {
        loop {
            let notification = self.0.recv().await?;
            if let Ok(generation) = notification.payload().parse() {
                return Ok(generation);
            }
        }
    }
}

/// A new random id.
pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Formats a timestamp the way SQLite's columns store it: fixed-width, microseconds, `Z`
/// (SQLite's store's own formatting, so the two can never differ).
pub use kobo_store_sqlite::timestamp;

/// `at` as a column keeps it: to the microsecond.
pub fn as_stored(at: DateTime<Utc>) -> DateTime<Utc> {
    at.duration_trunc(chrono::Duration::microseconds(1))
        .unwrap_or(at)
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

    #[tokio::test]
    async fn a_pooler_setting_is_refused_where_it_cannot_apply() {
        let through_pooler = Connection {
            pool_mode: PoolMode::Transaction,
            direct_url: None,
        };
        let dir = tempfile::tempdir().unwrap();
        let sqlite = Store::sqlite_url_in(dir.path()).unwrap();
        let refused = Store::connect_with(&sqlite, &through_pooler)
            .await
            .unwrap_err();
        assert!(
            refused.to_string().contains("are for PostgreSQL"),
            "{refused:#}"
        );
        // Through a transaction pooler, PostgreSQL's own address is needed for LISTEN and the
        // migrations: refused before any connection is tried.
        let refused = Store::connect_with("postgres://postgres@127.0.0.1:9/x", &through_pooler)
            .await
            .unwrap_err();
        assert!(
            refused.to_string().contains("--database-direct-url"),
            "{refused:#}"
        );
    }

    #[test]
    fn timestamps_are_fixed_width_so_text_order_is_time_order() {
        let early = timestamp("2026-11-02T09:20:00Z".parse().unwrap());
        let late = timestamp("2026-11-02T09:20:00.5Z".parse().unwrap());
        assert_eq!(early, "2026-11-02T09:20:00.000000Z");
        assert_eq!(late, "2026-11-02T09:20:00.500000Z");
        assert!(early < late);
    }
}
