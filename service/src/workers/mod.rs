//! The background work of `kobo serve`, under one supervisor: [`Workers::start`] spawns every
//! task, [`Workers::stop`] tells them all to stop and waits, bounded, for each to finish its
//! pass. Each task is safe with several processes on one database.
//!
//! - housekeeping: [`housekeeping::purge_expired`] every [`HOUSEKEEPING_INTERVAL`], so the
//!   credentials tables stay bounded;
//! - the outbox dispatcher (with an SMTP channel): sends notifications;
//! - the NIP worker: every [`NIP_INTERVAL`], [`nip::process_due`] submits inter-bank transfers
//!   and settles or reverses them (leased, so several processes share the work);
//! - the webhook dispatcher ([`WebhookDispatcher::run`]): delivers domain events to each
//!   business's endpoint (leased likewise);
//! - the export writer: writes the exports waiting, one at a time ([`exports::writer::work`],
//!   leased likewise), and every [`EXPORT_EXPIRY_INTERVAL`] deletes the files past their time;
//! - on SQLite, checkpoints: every [`CHECKPOINT_INTERVAL`], [`Store::checkpoint`] copies the
//!   log into the database, so no commit does it while holding the write turn;
//! - the heap's trim: every [`TRIM_INTERVAL`], [`memory::trim`] returns the memory a burst of
//!   requests freed, which the allocator would otherwise keep.

use std::future::Future;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use std::sync::Arc;

use crate::kernel::clock::Clock;
use crate::kernel::config::Environment;
use crate::kernel::memory;
use crate::kernel::store::Store;
use crate::money::bank::Bank;
use crate::money::{approvals, bulk, exports, nip};
use crate::outbox::dispatcher::{Dispatcher, DispatcherConfig, SmtpChannel};
use crate::outbox::webhooks::WebhookDispatcher;
use crate::platform::housekeeping;
use crate::provider::CoreBanking;

/// How often expired credentials rows are purged.
pub const HOUSEKEEPING_INTERVAL: Duration = Duration::from_secs(5 * 60);

/// How often the NIP worker looks for due transfers.
pub const NIP_INTERVAL: Duration = Duration::from_secs(1);

/// How often, on SQLite, the log is copied into the database ([`Store::checkpoint`]).
pub const CHECKPOINT_INTERVAL: Duration = Duration::from_millis(250);

/// How often the heap's free pages are returned to the system ([`memory::trim`]).
pub const TRIM_INTERVAL: Duration = Duration::from_secs(10);

/// How often the export writer looks for waiting exports when none was waiting.
pub const EXPORT_INTERVAL: Duration = Duration::from_secs(1);

/// How often the export writer deletes the files of expired exports.
pub const EXPORT_EXPIRY_INTERVAL: Duration = Duration::from_secs(60);

/// What the NIP worker needs.
pub struct NipWork {
    pub provider: Arc<dyn CoreBanking>,
    pub environment: Environment,
}

/// The running background tasks.
pub struct Workers {
    stop: watch::Sender<bool>,
    tasks: Vec<(&'static str, JoinHandle<()>)>,
}

impl Workers {
    /// Spawns housekeeping and, when given, the notification dispatcher (`smtp`), the NIP
    /// worker, the webhook dispatcher and the export writer (`exports`, the bank it writes).
    pub fn start(
        store: &Store,
        clock: &Clock,
        smtp: Option<SmtpChannel>,
        nip_work: Option<NipWork>,
        webhooks: Option<Arc<WebhookDispatcher>>,
        exports: Option<Arc<Bank>>,
    ) -> Workers {
        let (stop, _) = watch::channel(false);
        let mut workers = Workers {
            stop,
            tasks: Vec::new(),
        };
        workers.spawn(
            "housekeeping",
            housekeeping_loop(store.clone(), clock.clone(), workers.stopped()),
        );
        if store.keeps_a_log() {
            workers.spawn(
                "checkpoints",
                checkpoint_loop(store.clone(), workers.stopped()),
            );
        }
        workers.spawn("memory trim", trim_loop(workers.stopped()));
        if let Some(channel) = smtp {
            let dispatcher = Dispatcher::new(store.clone(), channel, DispatcherConfig::default())
                .with_clock(clock.clone());
            let stopped = workers.stopped();
            workers.spawn("notification dispatcher", dispatcher.run(stopped));
        }
        if let Some(work) = nip_work {
            let stopped = workers.stopped();
            workers.spawn(
                "nip transfers",
                nip_loop(store.clone(), clock.clone(), work, stopped),
            );
        }
        if let Some(dispatcher) = webhooks {
            let stopped = workers.stopped();
            workers.spawn("webhook dispatcher", dispatcher.run(stopped));
        }
        if let Some(bank) = exports {
            let stopped = workers.stopped();
            workers.spawn("export writer", export_loop(bank.clone(), stopped));
            let stopped = workers.stopped();
            workers.spawn("bulk transfer validator", bulk_loop(bank, stopped));
        }
        workers
    }

    /// The names of the running tasks, in start order.
    pub fn names(&self) -> Vec<&'static str> {
        self.tasks.iter().map(|(name, _)| *name).collect()
    }

    /// Tells every task to stop and waits up to `timeout` for all of them together. A task
    /// still running then is left to the runtime's end and named in the log.
    pub async fn stop(self, timeout: Duration) {
        let _ = self.stop.send(true);
        let deadline = tokio::time::Instant::now() + timeout;
        for (name, task) in self.tasks {
            if tokio::time::timeout_at(deadline, task).await.is_err() {
                tracing::warn!(task = name, "a background task did not stop in time");
            }
        }
    }

    fn spawn(&mut self, name: &'static str, task: impl Future<Output = ()> + Send + 'static) {
        self.tasks.push((name, tokio::spawn(task)));
    }

    /// A future that resolves once [`Workers::stop`] is called.
    fn stopped(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut receiver = self.stop.subscribe();
        async move {
            let _ = receiver.wait_for(|stop| *stop).await;
        }
    }
}

/// Works through due inter-bank transfers every [`NIP_INTERVAL`] until `shutdown`.
async fn nip_loop(store: Store, clock: Clock, work: NipWork, shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
    loop {
        if let Err(error) = approvals::expire_due(&store, work.environment, &clock).await {
            tracing::warn!(error = %error.chain(), "expiring held transfers failed");
        }
        match nip::process_due(&store, &*work.provider, &clock, work.environment, 50).await {
            Ok(pass) if pass != nip::Pass::default() => tracing::info!(?pass, "nip transfers"),
            Ok(_) => {}
            Err(error) => tracing::warn!(error = %error.chain(), "nip transfers failed"),
        }
        tokio::select! {
            () = &mut shutdown => return,
            () = tokio::time::sleep(NIP_INTERVAL) => {}
        }
    }
}

/// Writes waiting exports, one at a time, until `shutdown`: at once after one, every
/// [`EXPORT_INTERVAL`] when none waits; expired files are deleted every
/// [`EXPORT_EXPIRY_INTERVAL`]. A shutdown stops it between two parts; the export is resumed
/// once its lease ends, by this process or another.
async fn export_loop(bank: Arc<Bank>, shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
    let owner = format!("{}-{}", std::process::id(), uuid::Uuid::new_v4());
    let mut expired_at: Option<tokio::time::Instant> = None;
    loop {
        if expired_at.is_none_or(|at| at.elapsed() >= EXPORT_EXPIRY_INTERVAL) {
            match exports::writer::expire_due(&bank).await {
                Ok(0) => {}
                Ok(expired) => tracing::info!(expired, "export files deleted"),
                Err(error) => tracing::warn!(error = %error.chain(), "expiring exports failed"),
            }
            expired_at = Some(tokio::time::Instant::now());
        }
        let pause = pause_after(
            exports::writer::work(&bank, &owner).await,
            "writing an export failed",
        );
        tokio::select! {
            () = &mut shutdown => return,
            () = tokio::time::sleep(pause) => {}
        }
    }
}

/// How long a worker that takes up one piece of work at a time waits after `done`: not at all
/// after a piece (another may wait), [`EXPORT_INTERVAL`] when none waited or it failed
/// (`failed` says what, in the log).
fn pause_after(done: Result<bool, crate::error::Error>, failed: &str) -> Duration {
    match done {
        Ok(true) => Duration::ZERO,
        Ok(false) => EXPORT_INTERVAL,
        Err(error) => {
            tracing::warn!(error = %error.chain(), "{failed}");
            EXPORT_INTERVAL
        }
    }
}

/// Validates and pays bulk transfers, one batch of each at a time, until `shutdown`: at once
/// after one, every [`EXPORT_INTERVAL`] when none is due. A shutdown stops it between two passes; the batch is
/// taken up again once its lease ends, by this process or another.
async fn bulk_loop(bank: Arc<Bank>, shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
    let owner = format!("{}-{}", std::process::id(), uuid::Uuid::new_v4());
    loop {
        let validated = pause_after(
            bulk::validate::work(&bank, &owner).await,
            "validating a bulk transfer failed",
        );
        let executed = pause_after(
            bulk::execute::work(&bank, &owner).await,
            "paying a bulk transfer failed",
        );
        if let Err(error) = bulk::authorise::expire_due(&bank).await {
            tracing::warn!(error = %error.chain(), "expiring held bulk transfers failed");
        }
        let pause = validated.min(executed);
        tokio::select! {
            () = &mut shutdown => return,
            () = tokio::time::sleep(pause) => {}
            () = bank.bulk_work.notified() => {}
        }
    }
}

/// Copies SQLite's log into the database every [`CHECKPOINT_INTERVAL`] until `shutdown`.
async fn checkpoint_loop(store: Store, shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
    loop {
        if let Err(error) = store.checkpoint().await {
            tracing::warn!(%error, "copying the log into the database failed");
        }
        tokio::select! {
            () = &mut shutdown => return,
            () = tokio::time::sleep(CHECKPOINT_INTERVAL) => {}
        }
    }
}

/// Returns freed heap pages every [`TRIM_INTERVAL`] until `shutdown`, off the async workers
/// (a trim after a burst madvises megabytes: milliseconds).
async fn trim_loop(shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => return,
            () = tokio::time::sleep(TRIM_INTERVAL) => {}
        }
        if tokio::task::spawn_blocking(memory::trim).await.is_err() {
            tracing::warn!("returning freed memory to the system failed");
        }
    }
}

/// Purges expired rows every [`HOUSEKEEPING_INTERVAL`] until `shutdown`.
async fn housekeeping_loop(store: Store, clock: Clock, shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
    loop {
        match housekeeping::purge_expired(&store, clock.now()).await {
            Ok(purged) => tracing::debug!(?purged, "housekeeping"),
            Err(error) => tracing::warn!(error = %error.chain(), "housekeeping failed"),
        }
        tokio::select! {
            () = &mut shutdown => return,
            () = tokio::time::sleep(HOUSEKEEPING_INTERVAL) => {}
        }
    }
}
