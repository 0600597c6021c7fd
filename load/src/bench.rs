//! The load generator: on each store, a real `kobo serve` with its rate limits raised, a few
//! businesses with many funded accounts, and closed-loop clients measuring each scenario's
//! throughput and latency; beside them, in the same run on the same machine, what the issue's
//! targets compare them with (pgbench, the raw ledger loop, `/healthz`). See BENCHMARKS.md for
//! the scenarios, the ratios and their targets.
//!
//! ```sh
//! bench/run                                   # the full run, into BENCHMARKS.md
//! cargo run -p kobo-load -- bench --smoke     # each scenario for 2 s: the harness works
//! ```

mod cpu;
mod driver;
mod exports;
mod members;
mod payroll;
mod reads;
mod reference;
pub mod replication;
mod report;
pub mod restore;
mod scenarios;
mod soak;
mod statements;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::json;

use crate::api::Api;
use crate::cluster::{Cluster, StoreKind};
use crate::history::History;
use crate::provision::{self, Plan};
use driver::{closed_loop, Load};
use members::Dashboard;
use report::{Machine, Report, StoreReport};
use scenarios::Target;

/// What a run measures; all by default, in this order on each store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Scenario {
    /// (f) `GET /healthz` and `get_profile`: the floor of any request.
    Floor,
    /// (a) Integration payouts between random accounts of each business.
    Payouts,
    /// (c) Every payout from one pool account (a salary run).
    Hot,
    /// (p) The same salary run as one bulk transfer: `--payroll-items` intra-bank items from
    /// the pool account, timed from the authorisation to `completed` (issue 60).
    Payroll,
    /// (b) The Dashboard: `generate_otp`, then `funds_transfer` with it.
    Dashboard,
    /// (e) The first page and a deep keyset page of an account's transactions.
    Reads,
    /// The raw ledger loop (`kobo bench ledger`): the reference of SQLite's payouts.
    Ledger,
    /// (g) Inbound credits (`simulate_inbound_transfer`) to random accounts of each business.
    Credits,
    /// (d) Inter-bank payouts to the sandbox provider (last: its settlements go on after).
    Interbank,
    /// PostgreSQL's pgbench (TPC-B-like): the reference of PostgreSQL's payouts.
    Pgbench,
    /// (x) A CSV export of an account of `--export-rows` transactions: rows/s, server memory.
    Export,
    /// (s) The same month's statement of an account with `--statement-rows` transactions
    /// before that month and of one with `--statement-big-rows`: p99 of each, and the ratio.
    Statement,
}

/// `kobo-load bench`.
#[derive(clap::Args, Clone, Debug)]
pub struct BenchArgs {
    /// The stores to measure, one after the other.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "sqlite,postgres"
    )]
    pub stores: Vec<StoreKind>,
    /// The scenarios (comma-separated; default: all).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub scenarios: Option<Vec<Scenario>>,
    /// A short run for CI: 1 s of warm-up and 2 s per scenario, 2,000 rows for the reads, no
    /// 10M account, no soak, pgbench at scale 1 for 2 s. Fails only if the harness broke.
    #[arg(long)]
    pub smoke: bool,
    /// Concurrent clients (also pgbench's).
    #[arg(long, default_value_t = 16)]
    pub clients: usize,
    /// Seconds each scenario is measured [default: 30; smoke 2].
    #[arg(long)]
    pub duration: Option<u64>,
    /// Seconds each scenario runs before it is measured [default: 5; smoke 1].
    #[arg(long)]
    pub warmup: Option<u64>,
    /// Transactions of the reads' account [default: 100000; smoke 2000].
    #[arg(long)]
    pub rows: Option<u64>,
    /// Transactions of the reads' big account, 0 for none [default: 10000000; smoke 0].
    #[arg(long)]
    pub big_rows: Option<u64>,
    /// Transactions made through the API for the reads when `kobo bench seed-transactions`
    /// is not there.
    #[arg(long, default_value_t = 2_000)]
    pub api_rows: u64,
    /// Transactions of the exported account [default: 1000000; smoke 5000].
    #[arg(long)]
    pub export_rows: Option<u64>,
    /// Transactions before the statement's month in its small account [default: 100000;
    /// smoke 2000].
    #[arg(long)]
    pub statement_rows: Option<u64>,
    /// Transactions before the statement's month in its big account, 0 for none [default:
    /// 10000000 on PostgreSQL, 1000000 on SQLite; smoke 5000].
    #[arg(long)]
    pub statement_big_rows: Option<u64>,
    /// Transactions in the statement's month (the previous Lagos calendar month), in each
    /// account [default: 3000; smoke 200].
    #[arg(long)]
    pub statement_lines: Option<u64>,
    /// Items of the payroll scenario's bulk transfer [default: 1000; smoke 100].
    #[arg(long)]
    pub payroll_items: Option<u64>,
    /// Payouts made by `kobo bench ledger` [default: 20000; smoke 500].
    #[arg(long)]
    pub ledger_transfers: Option<u64>,
    /// pgbench's scale (`pgbench -i -s`) [default: 10; smoke 1].
    #[arg(long)]
    pub pgbench_scale: Option<u32>,
    /// Seconds of payouts at half the measured maximum, the server's memory sampled; 0: no
    /// soak. The full run (bench/run) soaks for 600.
    #[arg(long, default_value_t = 0)]
    pub soak: u64,
    /// The soak's payouts per second instead of half the measured maximum: the same load for
    /// two builds compared one after the other.
    #[arg(long)]
    pub soak_rate: Option<f64>,
    /// Businesses, and current accounts per business (the sandbox allows 20; the reads add
    /// 2 to the first business).
    #[arg(long, default_value_t = 4)]
    pub businesses: usize,
    #[arg(long, default_value_t = 16)]
    pub accounts: usize,
    /// Dashboard members at most (each may generate 5 OTPs in 15 minutes, so the Dashboard
    /// scenario ends early when they are spent).
    #[arg(long, default_value_t = 2_000)]
    pub dashboard_members: usize,
    /// The seed of every random choice (random when absent; printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Where the stores and the logs go (default: a new directory under `target/bench/`).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Keep the stores (SQLite files, PostgreSQL databases) after the run.
    #[arg(long)]
    pub keep: bool,
    /// The `kobo` binary (default: the one beside this program).
    #[arg(long)]
    pub kobo: Option<PathBuf>,
    /// Write every figure as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write the results section of this Markdown file (replaced if there is one).
    #[arg(long)]
    pub markdown: Option<PathBuf>,
    /// Same as `--markdown BENCHMARKS.md`.
    #[arg(long)]
    pub write_benchmarks: bool,
    /// PostgreSQL's `kobo serve` reaches the database through Debian's PgBouncer in
    /// transaction mode (`--database-pool-mode transaction`), to measure what that costs.
    #[arg(long)]
    pub pgbouncer: bool,
}

/// Credited to every account: NGN 100,000,000, far more than the small payouts can move.
pub(crate) const FUNDING: i64 = 10_000_000_000;
/// Current accounts a sandbox business may have.
const SANDBOX_ACCOUNTS_MAX: usize = 20;
/// The Dashboard's pool is sized for this much more than the payouts' rate would do.
const MEMBERS_MARGIN: f64 = 1.25;

/// The effective settings (the flags, or the full run's or the smoke run's defaults).
struct Settings {
    load: Load,
    sizes: reads::Sizes,
    ledger_transfers: u64,
    payroll_items: u64,
    export_rows: u64,
    /// The statement's sizes; its big account's on each store ([`Settings::statement`]).
    statement_rows: u64,
    statement_big_rows: Option<u64>,
    statement_lines: u64,
    pgbench_scale: u32,
    pgbench_seconds: u64,
}

impl Settings {
    fn of(args: &BenchArgs) -> Settings {
        let pick = |given: Option<u64>, full: u64, smoke: u64| {
            given.unwrap_or(if args.smoke { smoke } else { full })
        };
        let duration = pick(args.duration, 30, 2);
        Settings {
            load: Load {
                clients: args.clients,
                warmup: Duration::from_secs(pick(args.warmup, 5, 1)),
                duration: Duration::from_secs(duration),
            },
            sizes: reads::Sizes {
                rows: pick(args.rows, 100_000, 2_000),
                big_rows: pick(args.big_rows, 10_000_000, 0),
                api_rows: args.api_rows,
            },
            ledger_transfers: pick(args.ledger_transfers, 20_000, 500),
            payroll_items: pick(args.payroll_items, 1_000, 100),
            export_rows: pick(args.export_rows, 1_000_000, 5_000),
            statement_rows: pick(args.statement_rows, 100_000, 2_000),
            statement_big_rows: args.statement_big_rows.or(args.smoke.then_some(5_000)),
            statement_lines: pick(args.statement_lines, 3_000, 200),
            pgbench_scale: args
                .pgbench_scale
                .unwrap_or(if args.smoke { 1 } else { 10 }),
            pgbench_seconds: duration,
        }
    }

    /// The statement's sizes on `store`: its big account 10M on PostgreSQL, 1M on SQLite
    /// (issue 61's targets) unless told.
    fn statement(&self, store: StoreKind) -> statements::Sizes {
        statements::Sizes {
            rows: self.statement_rows,
            big_rows: self.statement_big_rows.unwrap_or(match store {
                StoreKind::Postgres => 10_000_000,
                StoreKind::Sqlite => 1_000_000,
            }),
            lines: self.statement_lines,
        }
    }

    /// What kind of run this is: the full run's figures are the ones to quote.
    fn kind(&self, args: &BenchArgs) -> &'static str {
        let full = self.load.warmup.as_secs() == 5
            && self.load.duration.as_secs() == 30
            && self.sizes.rows == 100_000
            && self.sizes.big_rows == 10_000_000
            && args.soak == 600
            && args.soak_rate.is_none();
        match (args.smoke, full) {
            (true, _) => "smoke run (the harness works; the figures are not to be judged)",
            (false, true) => "full run",
            (false, false) => "shorter run than the full run (see Settings)",
        }
    }

    fn to_json(&self, args: &BenchArgs) -> serde_json::Value {
        json!({
            "smoke": args.smoke,
            "clients": self.load.clients,
            "warmup_seconds": self.load.warmup.as_secs(),
            "duration_seconds": self.load.duration.as_secs(),
            "rows": self.sizes.rows,
            "big_rows": self.sizes.big_rows,
            "ledger_transfers": self.ledger_transfers,
            "payroll_items": self.payroll_items,
            "export_rows": self.export_rows,
            "statement_rows": self.statement_rows,
            "statement_big_rows": self.statement_big_rows,
            "statement_lines": self.statement_lines,
            "pgbench_scale": self.pgbench_scale,
            "soak_seconds": args.soak,
            "soak_rate": args.soak_rate,
            "businesses": args.businesses,
            "accounts_per_business": args.accounts,
        })
    }
}

/// Runs the benchmark; `false` when the harness broke (a scenario with no success or with
/// failed operations), never because of a figure.
pub async fn run(args: BenchArgs) -> Result<bool> {
    let settings = Settings::of(&args);
    let scenarios = args
        .scenarios
        .clone()
        .unwrap_or_else(|| <Scenario as clap::ValueEnum>::value_variants().to_vec());
    if args.accounts < 2 || args.accounts + 2 > SANDBOX_ACCOUNTS_MAX {
        bail!(
            "--accounts must be 2 to {} (the sandbox allows {SANDBOX_ACCOUNTS_MAX} current accounts per business, and the reads add 2)",
            SANDBOX_ACCOUNTS_MAX - 2
        );
    }
    if args.businesses == 0 || args.clients == 0 {
        bail!("--businesses and --clients must be at least 1");
    }
    let seed = args.seed.unwrap_or_else(|| {
        chrono::Utc::now().timestamp_nanos_opt().unwrap_or(1) as u64 ^ u64::from(std::process::id())
    });
    let kobo = crate::cluster::kobo_binary(args.kobo.clone())?;
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => PathBuf::from("target/bench").join(format!(
            "{}-{seed}",
            chrono::Utc::now().format("%Y%m%dT%H%M%S")
        )),
    };
    std::fs::create_dir_all(&dir)?;
    let dir = dir.canonicalize()?;
    let machine = Machine::here();
    println!(
        "bench: {} client(s), {} s warm-up + {} s per scenario, stores {:?}, seed {seed}\n  {}\n  kobo: {}; in {}",
        settings.load.clients,
        settings.load.warmup.as_secs(),
        settings.load.duration.as_secs(),
        args.stores,
        machine.describe(),
        kobo.display(),
        dir.display()
    );
    if !args.smoke && !kobo.to_string_lossy().contains("release") {
        println!(
            "bench: WARNING: {} does not look like a release build; its figures say little",
            kobo.display()
        );
    }
    if !args.smoke && cfg!(debug_assertions) {
        println!("bench: WARNING: this kobo-load is a debug build: it takes CPU the server would have (bench/run builds it in release)");
    }

    let mut report = Report {
        kind: settings.kind(&args).into(),
        machine,
        date: chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string(),
        commit: commit().await,
        command: std::env::args().collect::<Vec<_>>().join(" "),
        kobo: kobo.display().to_string(),
        settings: {
            let mut settings = settings.to_json(&args);
            settings["seed"] = json!(seed);
            settings
        },
        pgbench: None,
        skipped: Vec::new(),
        failed: Vec::new(),
        stores: Vec::new(),
    };
    for store in args.stores.iter().copied() {
        // Just before PostgreSQL's own figures, on the machine as it is then.
        if store == StoreKind::Postgres && scenarios.contains(&Scenario::Pgbench) {
            println!(
                "bench: pgbench (scale {}, {} s)",
                settings.pgbench_scale, settings.pgbench_seconds
            );
            match reference::pgbench(
                settings.load.clients,
                settings.pgbench_seconds,
                settings.pgbench_scale,
            )
            .await
            {
                Ok(Some(pgbench)) => {
                    let cpu = pgbench.detail["postgres_cpu_us_per_transaction"].as_f64();
                    println!(
                        "  pgbench: {:.1} tps{}",
                        pgbench.per_second,
                        cpu.map_or(String::new(), |cpu| format!(
                            "; PostgreSQL's CPU per transaction {cpu:.0} µs"
                        ))
                    );
                    report.pgbench = Some(pgbench);
                }
                Ok(None) => report
                    .skipped
                    .push(("pgbench".into(), "pgbench is not installed".into())),
                Err(error) => {
                    println!("  pgbench: FAILED: {error:#}");
                    report.failed.push(("pgbench".into(), format!("{error:#}")));
                }
            }
        }
        println!("bench: {} store", report::store_name(store));
        let measured = match run_store(&args, &settings, &scenarios, &kobo, &dir, store, seed).await
        {
            Ok(measured) => measured,
            // The other store is still measured; the run says the harness broke.
            Err(error) => {
                let mut failed = StoreReport::new(store);
                failed.fail("server or provisioning", &error);
                failed
            }
        };
        report.stores.push(measured);
    }

    print!("{}", report.table());
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_vec_pretty(&report.to_json())?)
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("bench: figures in {}", path.display());
    }
    let markdown = args.markdown.clone().or_else(|| {
        args.write_benchmarks
            .then(|| PathBuf::from("BENCHMARKS.md"))
    });
    if let Some(path) = markdown {
        report.write_markdown(&path)?;
        println!("bench: results section of {} written", path.display());
    }
    let broken = report.broken();
    if broken.is_empty() {
        println!(
            "bench: every operation succeeded (the verdicts above are the figures', not the run's)"
        );
        Ok(true)
    } else {
        println!(
            "bench: HARNESS BROKEN: nothing succeeded, or operations failed, in: {}",
            broken.join(", ")
        );
        Ok(false)
    }
}

/// One store: a `kobo serve` on a fresh store, provisioned, measured, stopped, and its store
/// removed (unless `--keep`), whatever happened.
async fn run_store(
    args: &BenchArgs,
    settings: &Settings,
    scenarios: &[Scenario],
    kobo: &std::path::Path,
    dir: &std::path::Path,
    store: StoreKind,
    seed: u64,
) -> Result<StoreReport> {
    let store_dir = dir.join(report::store_name(store));
    let data = store_dir.join("data");
    let bouncer = match args.pgbouncer && store == StoreKind::Postgres {
        true => Some(crate::edge::PgBouncer::start(&store_dir).await?),
        false => None,
    };
    let mut cluster = Cluster::start_through(
        kobo,
        &data,
        store,
        1,
        serve_args(args.clients),
        bouncer.as_ref().map(|bouncer| bouncer.port),
    )
    .await
    .context("starting kobo")?;
    let measured =
        measure_store(args, settings, scenarios, &cluster, &store_dir, store, seed).await;
    cluster.stop().await;
    if let Some(bouncer) = bouncer {
        bouncer.stop().await;
    }
    if !args.keep {
        cluster.drop_database().await?;
        let _ = std::fs::remove_dir_all(&data);
    }
    measured
}

/// `kobo serve`'s flags: no rate limit or concurrency cap below what the clients send, and
/// time for a numbered page deep in 10M rows.
fn serve_args(clients: usize) -> Vec<String> {
    [
        "--rate-limit-per-minute",
        "1000000000",
        "--rate-limit-burst",
        "10000000",
        "--max-concurrent-requests",
        &(clients * 4).max(512).to_string(),
        "--request-timeout-seconds",
        "300",
        "--shutdown-timeout-seconds",
        "10",
    ]
    .iter()
    .map(|arg| arg.to_string())
    .collect()
}

/// [`closed_loop`], with what its operations cost the server (process `server`), PostgreSQL
/// and the generator in CPU ([`cpu`]).
async fn measured<S, F, Fut>(
    load: driver::Load,
    state: Arc<S>,
    server: Option<u32>,
    op: F,
) -> driver::Measurement
where
    S: Send + Sync + 'static,
    F: Fn(Arc<S>, usize, u64) -> Fut + Copy + Send + Sync + 'static,
    Fut: std::future::Future<Output = driver::Answer> + Send + 'static,
{
    let watch = cpu::Watch::after(load.warmup, server);
    let mut m = closed_loop(load, state, op).await;
    m.cpu = watch.per_op(m.ok).await;
    m
}

async fn measure_store(
    args: &BenchArgs,
    settings: &Settings,
    scenarios: &[Scenario],
    cluster: &Cluster,
    store_dir: &std::path::Path,
    store: StoreKind,
    seed: u64,
) -> Result<StoreReport> {
    let load = settings.load;
    let api = Api::new(cluster.bases(), Duration::from_secs(330));
    let history = History::create(&store_dir.join("provision.jsonl"))?;
    let plan = Plan {
        businesses: args.businesses,
        accounts_per_business: args.accounts,
        funding: FUNDING,
        approval_from: None,
        webhooks: None,
    };
    let started = Instant::now();
    let businesses = provision::provision(cluster, &api, &history, &plan).await?;
    history.flush()?;
    println!(
        "  {} businesses of {} funded accounts in {:.1} s",
        args.businesses,
        args.accounts,
        started.elapsed().as_secs_f64()
    );
    let target = Arc::new(Target {
        api,
        businesses,
        run: format!("b{:x}", chrono::Utc::now().timestamp_millis()),
        seed,
    });
    let mut out = StoreReport::new(store);
    let wanted = |scenario| scenarios.contains(&scenario);

    let server = cluster.pid(0);
    if wanted(Scenario::Floor) {
        let m = measured(load, target.clone(), server, scenarios::healthz).await;
        out.add(report::HEALTHZ, m, None);
        let m = measured(load, target.clone(), server, scenarios::profile).await;
        out.add(report::PROFILE, m, None);
    }
    if wanted(Scenario::Payouts) {
        let m = measured(load, target.clone(), server, scenarios::payout).await;
        out.add(
            report::PAYOUTS,
            m,
            Some(format!("{} businesses", args.businesses)),
        );
    }
    if wanted(Scenario::Hot) {
        let m = measured(load, target.clone(), server, scenarios::hot_payout).await;
        let note = format!(
            "from {} to {} accounts",
            target.pool().number,
            args.accounts - 1
        );
        out.add(report::HOT, m, Some(note));
    }
    if wanted(Scenario::Payroll) {
        match payroll::run(&target, settings.payroll_items as usize).await {
            Ok(payroll) => out.payroll = Some(payroll),
            Err(error) => out.fail("payroll", &error),
        }
    }
    if wanted(Scenario::Credits) {
        let m = measured(load, target.clone(), server, scenarios::credit).await;
        out.add(
            report::CREDITS,
            m,
            Some(format!("{} businesses", args.businesses)),
        );
    }
    if wanted(Scenario::Dashboard) {
        if let Err(error) = dashboard(args, load, cluster, &target, &mut out).await {
            out.fail(report::DASHBOARD, &error);
        }
    }
    if wanted(Scenario::Reads) {
        if let Err(error) = reads::run(cluster, &target, load, &settings.sizes, &mut out).await {
            out.fail("reads", &error);
        }
    }
    if wanted(Scenario::Export) {
        match exports::run(cluster, &target, settings.export_rows).await {
            Ok(Some(export)) => out.export = Some(export),
            Ok(None) => out.skip("export", "kobo bench seed-transactions unavailable"),
            Err(error) => out.fail("export", &error),
        }
    }
    if wanted(Scenario::Statement) {
        let sizes = settings.statement(store);
        if let Err(error) = statements::run(cluster, &target, load, &sizes, &mut out).await {
            out.fail("statement", &error);
        }
    }
    if wanted(Scenario::Ledger) {
        let business = &target.businesses[0].id;
        match reference::ledger(cluster, business, settings.ledger_transfers).await {
            Ok(Some(ledger)) => {
                println!(
                    "  {:<9} raw ledger loop: {:.1} transfers/s",
                    out.name(),
                    ledger.per_second
                );
                out.ledger = Some(ledger);
            }
            Ok(None) => out.skip("ledger", "kobo bench ledger unavailable"),
            Err(error) => out.fail("ledger", &error),
        }
    }
    if args.soak > 0 {
        match (
            out.get(report::PAYOUTS).map(|m| m.throughput()),
            cluster.pid(0),
        ) {
            (Some(max), Some(pid)) if max > 0.0 => {
                let rate = args.soak_rate.unwrap_or(max / 2.0);
                println!(
                    "  {:<9} soak: {rate:.0} payouts/s for {} s",
                    out.name(),
                    args.soak
                );
                out.soak = Some(
                    soak::soak(target.clone(), pid, rate, Duration::from_secs(args.soak)).await,
                );
            }
            _ => out.skip("soak", "needs the payouts scenario's throughput"),
        }
    }
    if wanted(Scenario::Interbank) {
        let m = closed_loop(load, target.clone(), scenarios::interbank_payout).await;
        out.add(
            report::INTERBANK,
            m,
            Some(format!("to {}", scenarios::EXTERNAL.0)),
        );
    }
    Ok(out)
}

/// (b): members enough for the payouts' rate (the Dashboard's two requests per operation
/// cannot go faster), or a 2-second probe's when the payouts were not measured.
async fn dashboard(
    args: &BenchArgs,
    load: Load,
    cluster: &Cluster,
    target: &Arc<Target>,
    out: &mut StoreReport,
) -> Result<()> {
    let rate = match out.get(report::PAYOUTS) {
        Some(payouts) => payouts.throughput(),
        None => {
            let probe = Load {
                clients: load.clients,
                warmup: Duration::ZERO,
                duration: Duration::from_secs(2),
            };
            closed_loop(probe, target.clone(), scenarios::payout)
                .await
                .throughput()
        }
    };
    let operations = rate * (load.warmup + load.duration).as_secs_f64() * MEMBERS_MARGIN;
    let count = Dashboard::members_for(operations, load.clients).min(args.dashboard_members);
    let members = members::enlist(cluster, target, count).await?;
    let dashboard = Arc::new(Dashboard::new(target.clone(), members, load.clients));
    let m = closed_loop(load, dashboard.clone(), members::dashboard_transfer).await;
    let note = if dashboard.spent() {
        format!("{count} members, all spent: ended after {:.1} s", m.seconds)
    } else {
        format!("{count} members")
    };
    out.add(report::DASHBOARD, m, Some(note));
    Ok(())
}

/// The commit measured (`git rev-parse --short HEAD`, `-dirty` with uncommitted changes).
async fn commit() -> String {
    let git = |args: &'static [&'static str]| async move {
        tokio::process::Command::new("git")
            .args(args)
            .output()
            .await
            .ok()
            .filter(|output| output.status.success())
            .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned())
    };
    match git(&["rev-parse", "--short", "HEAD"]).await {
        Some(hash) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .await
                .is_some_and(|status| !status.is_empty());
            if dirty {
                format!("{hash}-dirty")
            } else {
                hash
            }
        }
        None => "unknown".into(),
    }
}
