//! PostgreSQL's pool and its per-business queue of postings.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use kobo_store::ledger::AdvancedHead;
use kobo_store_postgres::groups::{Groups, Member};
use kobo_store_postgres::outcome::{self, Witness};
use kobo_store_postgres::{Pool, PoolMode};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::PgPool;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::{opened_since_storage_failure, StoreError};

/// Postings of one business in a transaction at once, per process: the one holding the
/// ledger head and the next, which has begun and waits on the head's row lock, so that the
/// head passes from one to the next without a connection checkout in between. One alone (a
/// mutex) left the head idle while the next poster waited for a connection: a soak at 200
/// payouts/s went from p99 345 ms to 8 s.
pub const POSTERS_PER_BUSINESS: usize = 2;

/// The pool, and at most [`POSTERS_PER_BUSINESS`] postings per business at a time in this
/// process, the others queued in arrival order. A business's postings take its ledger head
/// one at a time anyway (gapless sequences); without this queue every waiter waited for the
/// head's row lock inside its transaction, holding one of the pool's few connections. Under a
/// backlog the waiters of the busiest businesses then held every connection, and every other
/// request waited for one.
#[derive(Clone, Debug)]
pub struct Postgres {
    pool: Pool,
    /// Where what needs a session of its own goes (`LISTEN`, the migrations): the server
    /// itself when the pool goes through a transaction pooler ([`Connection::direct_url`]).
    direct: Arc<PgConnectOptions>,
    ledgers: Arc<LedgerTurns>,
    /// The businesses' payouts' group commits.
    groups: Arc<Groups>,
}

/// How `kobo` reaches PostgreSQL: `--database-url`, and when that is a transaction pooler
/// (PgBouncer's `pool_mode = transaction`), the server's own address for what needs a session.
#[derive(Clone, Debug, Default)]
pub struct Connection {
    pub pool_mode: PoolMode,
    /// `--database-direct-url`: required with [`PoolMode::Transaction`].
    pub direct_url: Option<String>,
}

/// A transaction: of its own, with this process's turns at the ledgers of the businesses it
/// posts to, held until it ends; or a payout's share of its business's group commit
/// ([`Postgres::begin_payout`]). With the business whose standing lock it holds, if any.
pub struct PgTx {
    slot: Slot,
    pub(super) standing: Option<String>,
    /// What tells whether the transaction committed if its `COMMIT`'s answer is lost
    /// ([`super::Tx::witness`]).
    witness: Option<Witness>,
}

enum Slot {
    Own {
        tx: kobo_store_postgres::Tx,
        /// Where a lost commit's outcome is found out.
        pool: Pool,
        _ledgers: Vec<OwnedSemaphorePermit>,
    },
    Member(Member),
    /// Committed or rolled back.
    Ended,
}

impl PgTx {
    /// Commits; a member of a group returns once the group's commit made its work durable.
    /// When the `COMMIT`'s answer is lost, a transaction with a witness finds out whether it
    /// committed before it returns (`kobo_store_postgres::outcome`).
    pub(super) async fn commit(mut self) -> Result<(), StoreError> {
        let witness = self.witness.take();
        match std::mem::replace(&mut self.slot, Slot::Ended) {
            Slot::Own { tx, pool, .. } => match (tx.commit().await, witness) {
                (Ok(()), _) => Ok(()),
                (Err(error), Some(witness)) if outcome::may_have_committed(&error) => {
                    outcome::find_out(&pool, &witness, error, outcome::FIND_OUT_MAX).await
                }
                (Err(error), _) => Err(error.into()),
            },
            Slot::Member(member) => member.commit(witness).await,
            Slot::Ended => Ok(()),
        }
    }

    /// [`super::Tx::witness`].
    pub(super) fn witness(&mut self, witness: Witness) {
        self.witness = Some(witness);
    }

    pub(super) async fn rollback(mut self) -> Result<(), StoreError> {
        match std::mem::replace(&mut self.slot, Slot::Ended) {
            Slot::Own { tx, .. } => Ok(tx.rollback().await?),
            Slot::Member(member) => member.rollback().await,
            Slot::Ended => Ok(()),
        }
    }

    /// [`super::Tx::undo_own_work`].
    pub(super) async fn undo_own_work(&mut self) -> Result<bool, StoreError> {
        match &mut self.slot {
            Slot::Member(member) => member.undo_own_work().await,
            Slot::Own { .. } | Slot::Ended => Ok(false),
        }
    }

    /// [`super::Tx::guard`]: a group member's savepoint.
    pub(super) async fn guard(&mut self) -> Result<(), StoreError> {
        match &mut self.slot {
            Slot::Member(member) => member.guard().await,
            Slot::Own { .. } | Slot::Ended => Ok(()),
        }
    }

    /// [`super::Tx::wrote_nothing`].
    pub(super) fn wrote_nothing(&mut self) {
        if let Slot::Member(member) = &mut self.slot {
            member.wrote_nothing();
        }
    }

    /// [`super::Tx::holds_head`]: a group member's, for its own business.
    pub(super) fn holds_head(&self, business_id: &str) -> bool {
        match &self.slot {
            Slot::Member(member) => {
                self.standing.as_deref() == Some(business_id) && member.holds_head()
            }
            Slot::Own { .. } | Slot::Ended => false,
        }
    }

    /// [`super::Tx::known_head`]: a group member's, for its own business.
    pub(super) fn known_head(&self, business_id: &str) -> Option<&AdvancedHead> {
        match &self.slot {
            Slot::Member(member) if self.standing.as_deref() == Some(business_id) => {
                member.known_head()
            }
            _ => None,
        }
    }

    /// [`super::Tx::missed`].
    pub(super) fn missed(&mut self) {
        if let Slot::Member(member) = &mut self.slot {
            member.missed();
        }
    }

    /// [`super::Tx::advanced`].
    pub(super) fn advanced(&mut self, head: &AdvancedHead, in_one: bool) {
        if let Slot::Member(member) = &mut self.slot {
            if self.standing.as_deref() == Some(head.business_id.as_str()) {
                member.advanced(head.clone(), in_one);
            }
        }
    }

    pub(crate) fn inner(&mut self) -> &mut kobo_store_postgres::Tx {
        match &mut self.slot {
            Slot::Own { tx, .. } => tx,
            Slot::Member(member) => member.tx(),
            Slot::Ended => unreachable!("a transaction used after it ended"),
        }
    }
}

impl Drop for PgTx {
    /// A member dropped without a commit undoes its own work only (the driver rolls back a
    /// transaction of its own when it is dropped).
    fn drop(&mut self) {
        if let Slot::Member(member) = std::mem::replace(&mut self.slot, Slot::Ended) {
            member.abandon();
        }
    }
}

impl Postgres {
    /// Opens the pool: 16 connections, no ping before a checkout, and a connection that comes
    /// back inside a transaction closed rather than reused.
    pub async fn connect(url: &str, connection: &Connection) -> Result<Postgres> {
        let parse = |url: &str| {
            url.parse::<PgConnectOptions>()
                .with_context(|| format!("cannot read the database URL {}", redact_url(url)))
        };
        let options = parse(url)?;
        let direct = match (&connection.direct_url, connection.pool_mode) {
            (Some(direct), _) => Arc::new(parse(direct)?),
            (None, PoolMode::Session) => Arc::new(options.clone()),
            (None, PoolMode::Transaction) => anyhow::bail!(
                "--database-pool-mode transaction needs --database-direct-url \
                 (KOBO_DATABASE_DIRECT_URL): PostgreSQL's own address, for the migrations and \
                 for listening to revocations, which need a session of their own"
            ),
        };
        let options = Pool::connect_options(options, connection.pool_mode);
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(Duration::from_secs(10))
            // No ping before each checkout: it was a whole statement before every query.
            // sqlx pings a connection when it comes back to the pool and closes it when that
            // fails, so only a connection broken while idle (the server restarted) is handed
            // out: its request fails as unavailable (`97`, retry) and it is closed on return.
            .test_before_acquire(false)
            // A connection that comes back still inside a transaction is closed, not reused.
            .after_release(|connection, metadata| {
                Box::pin(async move {
                    Ok(!sqlx::Connection::is_in_transaction(&*connection)
                        && opened_since_storage_failure(metadata.age))
                })
            })
            .connect_with(options)
            .await
            .with_context(|| format!("cannot open the database at {}", redact_url(url)))?;
        Ok(Postgres {
            pool: Pool::new(pool, connection.pool_mode),
            direct,
            ledgers: Arc::default(),
            groups: Arc::default(),
        })
    }

    /// The pool every statement outside a transaction runs on.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// sqlx's pool under [`Postgres::pool`].
    pub fn sqlx_pool(&self) -> &PgPool {
        self.pool.inner()
    }

    /// A connection to the server itself, never through a transaction pooler: for what needs
    /// a session of its own.
    pub async fn direct(&self) -> Result<sqlx::PgConnection, StoreError> {
        Ok(<sqlx::PgConnection as sqlx::Connection>::connect_with(&self.direct).await?)
    }

    /// Applies the migrations that have not run yet, on a direct connection (sqlx's migrator
    /// holds a session's advisory lock while it works).
    pub async fn migrate(&self) -> Result<()> {
        let mut connection = self
            .direct()
            .await
            .context("cannot connect to the database to migrate it")?;
        kobo_store_postgres::MIGRATOR
            .run(&mut connection)
            .await
            .context("cannot apply the database migrations")?;
        let _ = sqlx::Connection::close(connection).await;
        Ok(())
    }

    /// A listener on `channel`, on a connection of its own to the server itself (kept out of
    /// the pool, and never through a transaction pooler: `LISTEN` belongs to a session).
    pub async fn listen(&self, channel: &str) -> Result<sqlx::postgres::PgListener, StoreError> {
        let reconnects = PgPoolOptions::new()
            .max_connections(1)
            .max_lifetime(None)
            .idle_timeout(None)
            .connect_with((*self.direct).clone())
            .await?;
        let mut listener = sqlx::postgres::PgListener::connect_with(&reconnects).await?;
        listener.listen(channel).await?;
        Ok(listener)
    }

    /// A transaction, after a place in this process's queue of each of `businesses` (taken in
    /// id order, as the heads are). The head's row lock still decides the order; the queue
    /// only keeps this process's waiters out of the pool.
    pub async fn begin(&self, businesses: &[&str]) -> Result<PgTx, StoreError> {
        let ledgers = self.queue_for(businesses).await?;
        Ok(PgTx {
            slot: Slot::Own {
                tx: self.pool.begin().await?,
                pool: self.pool.clone(),
                _ledgers: ledgers,
            },
            standing: None,
            witness: None,
        })
    }

    /// [`Postgres::begin`] for a payout, whose statements run on their kept plans
    /// (`kobo_store_postgres::PAYOUT_PLANS`), holding the standing lock of business
    /// `standing` when money leaves it (`Pool::begin_payout`). A payout that posts to that
    /// business's ledger alone joins the business's group commit instead
    /// (`kobo_store_postgres::groups`): its payouts queued in this process share a
    /// transaction and one `COMMIT`.
    pub async fn begin_payout(
        &self,
        businesses: &[&str],
        standing: Option<&str>,
    ) -> Result<PgTx, StoreError> {
        if let Some(business_id) = standing.filter(|id| businesses.iter().all(|b| b == id)) {
            return Ok(PgTx {
                slot: Slot::Member(self.groups.begin(&self.pool, business_id).await?),
                standing: Some(business_id.to_owned()),
                witness: None,
            });
        }
        let ledgers = self.queue_for(businesses).await?;
        Ok(PgTx {
            slot: Slot::Own {
                tx: self.pool.begin_payout(standing).await?,
                pool: self.pool.clone(),
                _ledgers: ledgers,
            },
            standing: standing.map(str::to_owned),
            witness: None,
        })
    }

    /// How many of the payouts' groups were committed, and how many payouts they committed.
    pub fn group_commits(&self) -> (u64, u64) {
        self.groups.commits()
    }

    /// How many payouts of a group commit were written in one statement, their head foreseen,
    /// and how many found it elsewhere (and took two).
    pub fn payouts_foreseen(&self) -> (u64, u64) {
        self.groups.foreseen()
    }

    /// How many savepoints the payouts of group commits set.
    pub fn payout_savepoints(&self) -> u64 {
        self.groups.savepoints()
    }

    /// A place in this process's queue of each of `businesses`, taken in id order.
    async fn queue_for(
        &self,
        businesses: &[&str],
    ) -> Result<Vec<OwnedSemaphorePermit>, StoreError> {
        let mut ids = businesses.to_vec();
        ids.sort_unstable();
        ids.dedup();
        let mut ledgers = Vec::with_capacity(ids.len());
        for id in ids {
            let permit = self
                .ledgers
                .queue(id)
                .acquire_owned()
                .await
                .map_err(|_| StoreError::Stopped("the business's ledger queue"))?;
            ledgers.push(permit);
        }
        Ok(ledgers)
    }

    /// One statement, in the simple protocol (nothing prepared, so through any pooler).
    pub async fn ping(&self) -> Result<(), StoreError> {
        sqlx::raw_sql("SELECT 1").execute(self.sqlx_pool()).await?;
        Ok(())
    }
}

/// The per-business queues of [`Postgres::begin`]: a business's queue lives while a poster
/// holds or waits for it, and the map forgets it after.
#[derive(Debug, Default)]
struct LedgerTurns {
    queues: std::sync::Mutex<std::collections::HashMap<String, std::sync::Weak<Semaphore>>>,
}

impl LedgerTurns {
    #[cfg(test)]
    fn len(&self) -> usize {
        self.queues
            .lock()
            .map(|queues| queues.len())
            .unwrap_or_default()
    }

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
}

/// Hides the password of a database URL in messages.
pub(super) fn redact_url(url: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::store::unavailable;

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
        let pool = kit.store.postgres_pool().expect("a PostgreSQL kit");
        let mut survivor = pool.acquire().await.unwrap();
        // The simple protocol throughout (nothing prepared), so that the test also runs
        // through a transaction pooler (`KOBO_TEST_POSTGRES_POOLER_URL`).
        let killed: i64 = sqlx::Row::get(
            &sqlx::raw_sql(
                "SELECT COUNT(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE datname = current_database() AND pid <> pg_backend_pid()) AS terminated",
            )
            .fetch_one(&mut *survivor)
            .await
            .unwrap(),
            0,
        );
        drop(survivor);
        assert!(killed > 0, "the kit left idle connections in the pool");
        let mut failures = 0;
        for attempt in 0..(killed + 5) {
            match sqlx::raw_sql("SELECT 1").execute(pool).await {
                Ok(_) => {}
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
            sqlx::raw_sql("SELECT 1")
                .execute(pool)
                .await
                .expect("the pool has healed");
        }
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
    }
}
