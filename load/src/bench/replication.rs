//! `kobo-load replication`: what synchronous replication costs the payouts. One `kobo serve` on
//! a Patroni cluster of three machines ([`crate::patroni`], `deploy/patroni.yml`), the same
//! closed-loop payouts as `kobo-load bench`'s (a), measured in turn, in one run, with:
//!
//! - a synchronous standby (the configuration shipped: a commit is acknowledged once the
//!   standby has it on disk);
//! - asynchronous standbys (`synchronous_mode: false`: the standbys still receive and replay
//!   everything, nobody waits for them);
//! - no standby (the two standbys shut down, `synchronous_mode: false`).
//!
//! The modes alternate round after round, so that a drift of the machine over the run (its
//! caches, the database's growth) falls on each alike. On one machine the standbys' replay
//! takes CPU from the primary, which separate machines would not: the asynchronous mode shows
//! that share apart from the wait for the standby's flush.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::driver::{Load, Measurement};
use super::scenarios::{self, Target};
use crate::api::Api;
use crate::cluster::{Cluster, StoreKind};
use crate::history::History;
use crate::patroni::{psql_at, Patroni};
use crate::provision::{self, Plan};

/// `kobo-load replication`.
#[derive(clap::Args, Clone, Debug)]
pub struct ReplicationArgs {
    /// Concurrent clients.
    #[arg(long, default_value_t = 16)]
    pub clients: usize,
    /// Seconds each mode is measured, each round.
    #[arg(long, default_value_t = 30)]
    pub duration: u64,
    /// Seconds each mode runs before it is measured.
    #[arg(long, default_value_t = 5)]
    pub warmup: u64,
    /// Rounds of the three modes.
    #[arg(long, default_value_t = 2)]
    pub rounds: u32,
    /// Businesses, and current accounts per business.
    #[arg(long, default_value_t = 4)]
    pub businesses: usize,
    #[arg(long, default_value_t = 16)]
    pub accounts: usize,
    /// The seed of every random choice (random when absent; printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Where the cluster and the logs go (default: a new directory under `target/bench/`).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// The `kobo` binary (default: the one beside this program).
    #[arg(long)]
    pub kobo: Option<PathBuf>,
    /// Write every figure as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Synchronous,
    Asynchronous,
    Alone,
}

impl Mode {
    const ALL: [Mode; 3] = [Mode::Synchronous, Mode::Asynchronous, Mode::Alone];

    fn label(self) -> &'static str {
        match self {
            Mode::Synchronous => "synchronous standby",
            Mode::Asynchronous => "asynchronous standbys",
            Mode::Alone => "no standby",
        }
    }
}

pub async fn run(args: ReplicationArgs) -> Result<bool> {
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    let kobo = crate::cluster::kobo_binary(args.kobo.clone())?;
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => PathBuf::from("target/bench").join(format!(
            "{}-replication-{seed}",
            chrono::Utc::now().format("%Y%m%dT%H%M%S")
        )),
    };
    std::fs::create_dir_all(&dir)?;
    let dir = dir.canonicalize()?;
    println!(
        "replication: {} clients, {} s warm-up + {} s per mode, {} round(s), seed {seed}; in {}",
        args.clients,
        args.warmup,
        args.duration,
        args.rounds,
        dir.display()
    );
    let mut patroni = Patroni::start(&dir, 3)
        .await
        .context("starting the Patroni cluster")?;
    let measured = measure(&args, &kobo, &dir, &mut patroni, seed).await;
    patroni.stop(true).await;
    let report = measured?;
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_vec_pretty(&report)?)?;
    }
    Ok(true)
}

async fn measure(
    args: &ReplicationArgs,
    kobo: &std::path::Path,
    dir: &std::path::Path,
    patroni: &mut Patroni,
    seed: u64,
) -> Result<Value> {
    let mut cluster = Cluster::start_at(
        kobo,
        &dir.join("data"),
        StoreKind::Postgres,
        1,
        super::serve_args(args.clients),
        None,
        &patroni.address(),
    )
    .await
    .context("starting kobo")?;
    let api = Api::new(cluster.bases(), Duration::from_secs(330));
    let history = History::create(&dir.join("provision.jsonl"))?;
    let plan = Plan {
        businesses: args.businesses,
        accounts_per_business: args.accounts,
        funding: super::FUNDING,
        approval_from: None,
        webhooks: None,
    };
    let businesses = provision::provision(&cluster, &api, &history, &plan).await?;
    history.flush()?;
    let target = Arc::new(Target {
        api,
        businesses,
        run: format!("r{:x}", chrono::Utc::now().timestamp_millis()),
        seed,
    });
    let load = Load {
        clients: args.clients,
        warmup: Duration::from_secs(args.warmup),
        duration: Duration::from_secs(args.duration),
    };
    let mut results: Vec<(u32, Mode, Measurement)> = Vec::new();
    let mut lags: Vec<(u32, Mode, Lag)> = Vec::new();
    for round in 1..=args.rounds {
        for mode in Mode::ALL {
            let switching = Instant::now();
            switch(patroni, mode)
                .await
                .with_context(|| format!("to {}", mode.label()))?;
            psql_at(&patroni.address(), "CHECKPOINT").await?;
            let samples = Arc::new(std::sync::Mutex::new(Vec::new()));
            let sampling = tokio::spawn(sample_lag(
                patroni.address(),
                Duration::from_secs(args.warmup),
                samples.clone(),
            ));
            let m = super::measured(load, target.clone(), cluster.pid(0), scenarios::payout).await;
            sampling.abort();
            let lag = Lag {
                samples: std::mem::take(&mut *samples.lock().unwrap()),
            };
            println!(
                "  round {round}, {:<22} {:>8.1} payouts/s  p50 {:>7.2} ms  p99 {:>7.2} ms  \
                 {} failed  (switched in {:.1} s){}",
                mode.label(),
                m.throughput(),
                m.ms(0.5),
                m.ms(0.99),
                m.failed(),
                switching.elapsed().as_secs_f64(),
                lag.describe()
            );
            if m.failed() > 0 {
                println!("    failures: {:?}", m.errors);
            }
            lags.push((round, mode, lag));
            results.push((round, mode, m));
        }
    }
    cluster.stop().await;

    let mean = |mode: Mode| {
        let figures: Vec<f64> = results
            .iter()
            .filter(|(_, m, _)| *m == mode)
            .map(|(_, _, m)| m.throughput())
            .collect();
        figures.iter().sum::<f64>() / figures.len().max(1) as f64
    };
    let (sync, asynchronous, alone) = (
        mean(Mode::Synchronous),
        mean(Mode::Asynchronous),
        mean(Mode::Alone),
    );
    let per_round: Vec<f64> = (1..=args.rounds)
        .map(|round| {
            let of = |mode: Mode| {
                results
                    .iter()
                    .find(|(r, m, _)| *r == round && *m == mode)
                    .map_or(f64::NAN, |(_, _, m)| m.throughput())
            };
            of(Mode::Synchronous) / of(Mode::Alone)
        })
        .collect();
    println!(
        "replication: payouts/s, the mean of {} round(s): synchronous standby {sync:.1}, \
         asynchronous standbys {asynchronous:.1}, no standby {alone:.1}\n  synchronous ÷ no \
         standby: {:.2} (by round: {}); asynchronous ÷ no standby: {:.2}",
        args.rounds,
        sync / alone,
        per_round
            .iter()
            .map(|ratio| format!("{ratio:.2}"))
            .collect::<Vec<_>>()
            .join(", "),
        asynchronous / alone
    );
    Ok(json!({
        "clients": args.clients,
        "warmup_seconds": args.warmup,
        "duration_seconds": args.duration,
        "rounds": results.iter().zip(&lags).map(|((round, mode, m), (_, _, lag))| json!({
            "round": round, "mode": mode.label(), "measurement": m.to_json(),
            "standby_lag": lag.to_json(),
        })).collect::<Vec<_>>(),
        "payouts_per_second": {
            "synchronous_standby": sync,
            "asynchronous_standbys": asynchronous,
            "no_standby": alone,
        },
        "synchronous_over_none": sync / alone,
        "synchronous_over_none_by_round": per_round,
        "asynchronous_over_none": asynchronous / alone,
    }))
}

/// How far the most lagging standby was behind the primary while payouts ran, sampled from
/// the primary's `pg_stat_replication` every 200 ms: `flush_lag` (until the standby had the
/// WAL on disk, which a commit waits for with a synchronous standby) and `replay_lag` (until
/// a read on the standby would see it). What a read sent to a standby could miss of a payout
/// just acknowledged is about their difference (docs/decisions.md, "Reads stay on the
/// primary").
#[derive(Clone, Debug, Default)]
struct Lag {
    /// (flush, replay) in ms, one pair a sample.
    samples: Vec<(f64, f64)>,
}

impl Lag {
    fn of(&self, pick: impl Fn(&(f64, f64)) -> f64) -> (f64, f64) {
        let values: Vec<f64> = self.samples.iter().map(pick).collect();
        let mean = values.iter().sum::<f64>() / values.len().max(1) as f64;
        (mean, values.iter().copied().fold(0.0, f64::max))
    }

    fn describe(&self) -> String {
        if self.samples.is_empty() {
            return String::new();
        }
        let (flush, flush_max) = self.of(|s| s.0);
        let (replay, replay_max) = self.of(|s| s.1);
        let (behind, behind_max) = self.of(|s| (s.1 - s.0).max(0.0));
        format!(
            "\n    standby lag (ms, mean/max): flush {flush:.2}/{flush_max:.2}, replay \
             {replay:.2}/{replay_max:.2}, replay after flush {behind:.2}/{behind_max:.2} \
             ({} samples)",
            self.samples.len()
        )
    }

    fn to_json(&self) -> Value {
        if self.samples.is_empty() {
            return Value::Null;
        }
        let pair = |(mean, max): (f64, f64)| json!({"mean_ms": mean, "max_ms": max});
        json!({
            "samples": self.samples.len(),
            "flush": pair(self.of(|s| s.0)),
            "replay": pair(self.of(|s| s.1)),
            "replay_after_flush": pair(self.of(|s| (s.1 - s.0).max(0.0))),
        })
    }
}

/// Samples [`Lag`] into `samples`, after `warmup`, until aborted.
async fn sample_lag(
    address: String,
    warmup: Duration,
    samples: Arc<std::sync::Mutex<Vec<(f64, f64)>>>,
) {
    tokio::time::sleep(warmup).await;
    loop {
        let row = psql_at(
            &address,
            "SELECT coalesce(extract(epoch FROM flush_lag) * 1000, 0), \
             coalesce(extract(epoch FROM replay_lag) * 1000, 0) FROM pg_stat_replication \
             ORDER BY replay_lag DESC NULLS LAST LIMIT 1",
        )
        .await
        .unwrap_or_default();
        if let Some((flush, replay)) = row.trim().split_once('|') {
            if let (Ok(flush), Ok(replay)) = (flush.parse(), replay.parse()) {
                samples.lock().unwrap().push((flush, replay));
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Puts the cluster in `mode`, and returns once the primary's `synchronous_standby_names`
/// says so.
async fn switch(patroni: &mut Patroni, mode: Mode) -> Result<()> {
    let synchronous = mode == Mode::Synchronous;
    let leader = patroni.leader().await.context("no primary")?;
    if mode == Mode::Alone {
        patroni
            .configure(&json!({"synchronous_mode": false, "synchronous_mode_strict": false}))
            .await?;
        wait_for_standby_names(patroni, false).await?;
        for index in 0..patroni.nodes.len() {
            if index != leader {
                patroni.shut_down(index).await?;
            }
        }
        return Ok(());
    }
    for index in 0..patroni.nodes.len() {
        if !patroni.nodes[index].is_up() {
            patroni.start_again(index)?;
        }
    }
    patroni
        .configure(&json!({
            "synchronous_mode": synchronous,
            "synchronous_mode_strict": synchronous,
        }))
        .await?;
    patroni
        .wait_following(Duration::from_secs(120), synchronous)
        .await?;
    wait_for_standby_names(patroni, synchronous).await
}

/// Waits until the primary's `synchronous_standby_names` is set (`wanted`) or empty.
async fn wait_for_standby_names(patroni: &Patroni, wanted: bool) -> Result<()> {
    let started = Instant::now();
    loop {
        let names = psql_at(&patroni.address(), "SHOW synchronous_standby_names")
            .await
            .unwrap_or_default();
        if names.trim().is_empty() != wanted {
            return Ok(());
        }
        if started.elapsed() > Duration::from_secs(60) {
            bail!("synchronous_standby_names still {names:?} after 60 s");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
