//! The reliability run: concurrent clients move money between the run's businesses and to
//! other banks while a nemesis kills `kobo` processes with SIGKILL, takes the webhook receiver
//! down, restarts PostgreSQL, kills PgBouncer or fills and freezes SQLite's disk, and the
//! sandbox provider fails at random. Every request and answer goes to the history; when the
//! faults stop and everything has settled, [`crate::check`] judges the history against what
//! the API says.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use tokio::sync::Mutex as AsyncMutex;

use crate::api::{amount_of, naira, Api, Outcome};
use crate::check;
use crate::cluster::{Cluster, StoreKind};
use crate::edge::{HaProxy, PgBouncer};
use crate::history::History;
use crate::patroni::Patroni;
use crate::provision::{self, Account, Business, Plan};
use crate::receiver::Receiver;
use crate::rng::Rng;

/// `kobo-load chaos`.
#[derive(clap::Args, Clone, Debug)]
pub struct ChaosArgs {
    /// The store under test.
    #[arg(long, value_enum, default_value = "sqlite")]
    pub store: StoreKind,
    /// `kobo serve` processes sharing the store (default: 1 on SQLite, 2 on PostgreSQL).
    #[arg(long)]
    pub processes: Option<usize>,
    /// How long the clients run, in seconds.
    #[arg(long, default_value_t = 30)]
    pub duration: u64,
    /// Stop the clients once this many operations were made (whichever comes first).
    #[arg(long)]
    pub operations: Option<u64>,
    /// Concurrent clients.
    #[arg(long, default_value_t = 16)]
    pub clients: usize,
    /// SIGKILLs of a `kobo` process during the run (each restarted at once).
    #[arg(long, default_value_t = 2)]
    pub kills: u32,
    /// Seconds the webhook receiver answers 503 in the middle of the run (0: never).
    #[arg(long, default_value_t = 5)]
    pub receiver_outage: u64,
    /// Restart the PostgreSQL server (`pg_ctlcluster ... stop`, a pause of this many seconds,
    /// `start`) in the middle of the run; PostgreSQL only. 0: no restart.
    #[arg(long, default_value_t = 0)]
    pub postgres_outage: u64,
    /// SQLite only: put the data directory on a tmpfs of its own and fill it for this many
    /// seconds in the middle of the run (needs root). 0: no disk faults.
    #[arg(long, default_value_t = 0)]
    pub disk_faults: u64,
    /// SQLite only: make the database and its write-ahead log immutable (`chattr +i`) for this
    /// many seconds in the middle of the run (needs root). 0: never.
    #[arg(long, default_value_t = 0)]
    pub read_only_faults: u64,
    /// The sandbox provider's faults during the run (`kobo serve --sandbox-faults`).
    #[arg(
        long,
        default_value = "unavailable=0.05,timeout_after_submit=0.05,status_unknown=0.1,latency_ms=5"
    )]
    pub provider_faults: String,
    /// Businesses, and current accounts per business (the main account included).
    #[arg(long, default_value_t = 3)]
    pub businesses: usize,
    #[arg(long, default_value_t = 4)]
    pub accounts: usize,
    /// The seed of every random choice (random when absent; printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Where the stores, logs, history and summary go (default: a new directory under
    /// `target/chaos/`).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// The `kobo` binary (default: the one beside this program).
    #[arg(long)]
    pub kobo: Option<PathBuf>,
    /// How long to wait, after the faults stop, for every transfer to be final and every
    /// webhook delivered.
    #[arg(long, default_value_t = 240)]
    pub settle: u64,
    /// PostgreSQL only: the processes reach the database through Debian's PgBouncer in
    /// transaction mode (`deploy/pgbouncer.ini`, `--database-pool-mode transaction`).
    #[arg(long)]
    pub pgbouncer: bool,
    /// With `--pgbouncer`: SIGKILL PgBouncer in the middle of the run, keep it down this many
    /// seconds, then start it again on the same port with the same configuration (the
    /// processes reconnect without a restart). Every request must then be answered within the
    /// processes' request timeout plus 2 s, and none `96`. 0: no outage.
    #[arg(long, default_value_t = 0)]
    pub pgbouncer_outage: u64,
    /// `kobo serve --request-timeout-seconds` of every process (absent: the server's default,
    /// 30 s). A shorter one keeps a `--pgbouncer-outage` run short.
    #[arg(long)]
    pub request_timeout_seconds: Option<u64>,
    /// The clients reach the processes through Debian's HAProxy (`deploy/haproxy.cfg`,
    /// health checks on `/readyz`), not each process directly; needs three processes.
    #[arg(long)]
    pub haproxy: bool,
    /// Rolling restarts during the run: each restarts every process in turn, gracefully
    /// (SIGTERM, the drain, exit, start), the next once the balancer has the last back.
    #[arg(long, default_value_t = 0)]
    pub rolling_restarts: u32,
    /// `kobo serve --drain-seconds` of every process (with `--haproxy`: above the time it
    /// takes to mark a process down, about 1.5 s with deploy/haproxy.cfg).
    #[arg(long, default_value_t = 0)]
    pub drain_seconds: u64,
    /// A violation if any request failed for the platform's reasons (no answer, a balancer's
    /// error page, `96`, `97`, `98`): what a rolling restart must not cause.
    #[arg(long)]
    pub no_failed_requests: bool,
    /// The processes call `kobo-provider` over HTTP (`--provider-url`), which fails as
    /// `--provider-faults` says (latency, answers lost after it acted, outages), is killed with
    /// SIGKILL `--provider-kills` times, and sends the inbound credits the clients ask it for.
    #[arg(long)]
    pub network_provider: bool,
    /// SIGKILLs of `kobo-provider` (restarted after a pause of 1 to 3 s), with
    /// `--network-provider`.
    #[arg(long, default_value_t = 2)]
    pub provider_kills: u32,
    /// PostgreSQL only: the database is a cluster of three PostgreSQL machines under Patroni
    /// (`deploy/patroni.yml`: synchronous replication, automatic failover; etcd; pgBackRest's
    /// repository) on loopback ports, which the processes reach through HAProxy
    /// (`deploy/haproxy-postgres.cfg`), always at the primary.
    #[arg(long)]
    pub patroni: bool,
    /// With `--patroni`: the primary's machine dies this many times during the run (its
    /// Patroni and PostgreSQL SIGKILLed at once); each time, once a new primary serves, its
    /// data directory is removed and it is rebuilt from the new primary as a standby. Every
    /// request must then be answered within the processes' request timeout plus 2 s.
    #[arg(long, default_value_t = 0)]
    pub primary_kills: u32,
    /// With `--primary-kills`: seconds between a new primary serving and the dead machine's
    /// rebuild.
    #[arg(long, default_value_t = 3)]
    pub rebuild_after: u64,
    /// With `--primary-kills`: a violation (`slow_failover`) if a kill is not followed by a
    /// payout sent after it and acknowledged within this many seconds.
    #[arg(long)]
    pub failover_within: Option<u64>,
    /// With `--patroni`: a full backup (pgBackRest) once the businesses are made, a moment
    /// noted in the middle of the run, and after the check a restore of the cluster to that
    /// moment (across the failovers), where `kobo ledger verify` must be clean, every payout
    /// acknowledged before the moment present and none asked for after it.
    #[arg(long)]
    pub pitr: bool,
}

/// What the clients share.
struct World {
    api: Api,
    businesses: Vec<Business>,
    accounts: Vec<Account>,
    history: History,
    stop: AtomicBool,
    operations: AtomicU64,
    max_operations: u64,
    /// Acknowledged transfers, (business, reference_number), for later reads.
    acked: Mutex<Vec<(usize, String)>>,
    /// One review of held transfers at a time per business (OTPs are per member).
    reviewing: AsyncMutex<()>,
    seed: u64,
    /// Where SQLite's files are (the read-only fault's target).
    data_dir: PathBuf,
    /// With a provider over the network: where inbound credits are asked for.
    credits: Option<crate::provider::Credits>,
}

/// External sandbox accounts: (number, name). Emeka's transfers succeed, Bisi's fail and are
/// reversed, `0000000080`'s bank is down.
const EXTERNAL: [(&str, &str); 3] = [
    ("0123456788", "Emeka Nwosu"),
    ("0690000036", "Bisi Alade"),
    ("0000000080", "Unreachable Customer"),
];

pub async fn run(args: ChaosArgs) -> Result<bool> {
    let seed = args.seed.unwrap_or_else(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        nanos ^ u64::from(std::process::id())
    });
    let kobo = crate::cluster::kobo_binary(args.kobo.clone())?;
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => PathBuf::from("target/chaos").join(format!(
            "{}-{}-{seed}",
            chrono::Utc::now().format("%Y%m%dT%H%M%S"),
            match args.store {
                StoreKind::Sqlite => "sqlite",
                StoreKind::Postgres => "postgres",
            }
        )),
    };
    std::fs::create_dir_all(&dir)?;
    let dir = dir.canonicalize()?;
    let processes = args.processes.unwrap_or(match args.store {
        StoreKind::Sqlite => 1,
        StoreKind::Postgres => 2,
    });
    if args.postgres_outage > 0 && args.store != StoreKind::Postgres {
        bail!("--postgres-outage needs --store postgres");
    }
    if args.read_only_faults > 0 && args.store != StoreKind::Sqlite {
        bail!("--read-only-faults needs --store sqlite");
    }
    if args.pgbouncer && args.store != StoreKind::Postgres {
        bail!("--pgbouncer needs --store postgres");
    }
    if args.pgbouncer_outage > 0 && !args.pgbouncer {
        bail!("--pgbouncer-outage needs --pgbouncer");
    }
    if args.patroni && (args.store != StoreKind::Postgres || args.pgbouncer) {
        bail!("--patroni needs --store postgres, without --pgbouncer");
    }
    if (args.primary_kills > 0 || args.pitr) && !args.patroni {
        bail!("--primary-kills and --pitr need --patroni");
    }
    if args.postgres_outage > 0 && args.patroni {
        bail!("--postgres-outage restarts the machine's own PostgreSQL, not a Patroni cluster's");
    }
    // kobo serve's --request-timeout-seconds, 30 by default.
    let request_timeout = Duration::from_secs(args.request_timeout_seconds.unwrap_or(30));
    let data_dir = dir.join("data");
    std::fs::create_dir_all(&data_dir)?;
    let mut bouncer = match args.pgbouncer {
        true => Some(PgBouncer::start(&dir).await.context("starting PgBouncer")?),
        false => None,
    };
    let mut patroni = match args.patroni {
        true => {
            let starting = Instant::now();
            let patroni = Patroni::start(&dir, 3)
                .await
                .context("starting the Patroni cluster")?;
            println!(
                "chaos: Patroni cluster of 3 machines up in {:.1} s; HAProxy at {}",
                starting.elapsed().as_secs_f64(),
                patroni.address()
            );
            Some(patroni)
        }
        false => None,
    };
    let disk = if args.disk_faults > 0 {
        if args.store != StoreKind::Sqlite {
            bail!("--disk-faults needs --store sqlite");
        }
        Some(crate::faults::Disk::mount(&data_dir).await?)
    } else {
        None
    };
    println!(
        "chaos: {} store, {processes} process(es), {} clients, {} s, {} kills, seed {seed}; in {}",
        serde_json::to_value(args.store)?.as_str().unwrap_or("?"),
        args.clients,
        args.duration,
        args.kills,
        dir.display()
    );

    let base_args = vec![
        "--rate-limit-per-minute".to_owned(),
        "100000000".to_owned(),
        "--rate-limit-burst".to_owned(),
        "1000000".to_owned(),
        "--max-concurrent-requests".to_owned(),
        "512".to_owned(),
        // Retries within seconds, so a receiver back after an outage gets its events within
        // the run rather than on the spec's schedule of hours.
        "--sandbox-webhook-retry-schedule".to_owned(),
        "1,2,3,5,5,5,5,5,5".to_owned(),
        // The webhook receiver listens on loopback.
        "--allow-loopback-webhooks".to_owned(),
        "--shutdown-timeout-seconds".to_owned(),
        "10".to_owned(),
        "--drain-seconds".to_owned(),
        args.drain_seconds.to_string(),
    ];
    let mut base_args = base_args;
    if let Some(seconds) = args.request_timeout_seconds {
        base_args.extend(["--request-timeout-seconds".to_owned(), seconds.to_string()]);
    }
    let mut provider = match args.network_provider {
        true => Some(
            crate::provider::Provider::start(&kobo, &dir)
                .await
                .context("starting kobo-provider")?,
        ),
        false => None,
    };
    if let Some(provider) = &provider {
        base_args.extend(provider.serve_args());
    }
    let mut faulty_args = base_args.clone();
    if !args.provider_faults.is_empty() && provider.is_none() {
        faulty_args.push("--sandbox-faults".to_owned());
        faulty_args.push(format!("{},seed={seed}", args.provider_faults));
    }
    let postgres = match &patroni {
        Some(patroni) => patroni.address(),
        None => crate::cluster::LOCAL_POSTGRES.to_owned(),
    };
    let mut cluster = Cluster::start_at(
        &kobo,
        &data_dir,
        args.store,
        processes,
        base_args.clone(),
        bouncer.as_ref().map(|bouncer| bouncer.port),
        &postgres,
    )
    .await
    .context("starting kobo")?;
    let edge = match args.haproxy {
        true => Some(
            HaProxy::start(&dir, &cluster.ports())
                .await
                .context("starting HAProxy")?,
        ),
        false => None,
    };
    let history = History::create(&dir.join("history.jsonl"))?;
    let bases = match &edge {
        Some(edge) => vec![edge.base()],
        None => cluster.bases(),
    };
    let api = Api::new(bases, Duration::from_secs(40));
    // A pooler gone must not leave a request unanswered past the processes' own deadline:
    // each is answered (97, or 98 for a payment that was committing) half a second before it.
    // 2 s of slack for the client's side of the exchange on a busy machine.
    let answer_limit = request_timeout + Duration::from_secs(2);
    if args.pgbouncer_outage > 0 || args.primary_kills > 0 {
        api.answer_within(answer_limit);
    }
    let receiver = Receiver::default();
    let receiver_base = receiver.start().await?;
    let plan = Plan {
        businesses: args.businesses,
        accounts_per_business: args.accounts,
        funding: 50_000_000,
        approval_from: Some(150_000),
        webhooks: Some((receiver.clone(), receiver_base)),
    };
    let businesses = provision::provision(&cluster, &api, &history, &plan).await?;
    // The base backup a restore starts from: the businesses are in it, the run's payouts are
    // in the archived WAL.
    let backup = match (&patroni, args.pitr) {
        (Some(patroni), true) => {
            let took = patroni.backup().await.context("the base backup")?;
            println!("chaos: full backup in {:.1} s", took.as_secs_f64());
            history.record("backup", json!({"ms": took.as_millis() as u64}));
            Some(took)
        }
        _ => None,
    };
    // Now with the provider's faults: in the processes, or in kobo-provider, which from now
    // on also sends inbound credits to the first process.
    let credits = match &mut provider {
        Some(provider) => {
            if !args.provider_faults.is_empty() {
                provider.faults = Some(format!("{},seed={seed}", args.provider_faults));
            }
            provider.notify_url =
                Some(format!("{}/provider/v1/inbound_credit", cluster.bases()[0]));
            provider.restart().await?;
            Some(crate::provider::Credits {
                url: provider.url(),
                secret: provider.secret()?,
                http: reqwest::Client::new(),
            })
        }
        None => {
            // Restarted only if the faults change how they run (no `--provider-faults ""`).
            if faulty_args != cluster.serve_args {
                cluster.serve_args = faulty_args;
                for index in 0..processes {
                    roll(&mut cluster, edge.as_ref(), index).await?;
                }
            }
            None
        }
    };

    let accounts: Vec<Account> = businesses
        .iter()
        .flat_map(|b| b.accounts.iter().cloned())
        .collect();
    let world = Arc::new(World {
        api: api.clone(),
        businesses,
        accounts,
        history: history.clone(),
        stop: AtomicBool::new(false),
        operations: AtomicU64::new(0),
        max_operations: args.operations.unwrap_or(u64::MAX),
        acked: Mutex::new(Vec::new()),
        reviewing: AsyncMutex::new(()),
        seed,
        data_dir: data_dir.clone(),
        credits,
    });

    let started = Instant::now();
    let mut clients = Vec::new();
    for client in 0..args.clients {
        let world = world.clone();
        clients.push(tokio::spawn(
            async move { client_loop(world, client).await },
        ));
    }
    let probe = tokio::spawn(probe_loop(world.clone(), api.clone()));

    // The nemesis, on the run's clock.
    let faults = nemesis(
        &args,
        seed,
        &mut cluster,
        provider.as_mut(),
        edge.as_ref(),
        bouncer.as_mut(),
        patroni.as_mut(),
        &receiver,
        &history,
        disk.as_ref(),
        &world,
    )
    .await;
    if args.read_only_faults > 0 {
        // Writable again even when the nemesis stopped half-way.
        crate::faults::read_only(&data_dir, false).await?;
    }
    world.stop.store(true, Ordering::SeqCst);
    for client in clients {
        client.await??;
    }
    let faults = faults?;
    let ran = started.elapsed();
    probe.abort();
    let operations = world.operations.load(Ordering::SeqCst);
    println!(
        "chaos: {operations} operations in {:.1} s; faults: {}; {} failed request(s)",
        ran.as_secs_f64(),
        faults.describe(),
        api.failed_requests()
    );

    // The faults stop: the provider heals (the processes restart without them), the receiver
    // is up, held transfers are decided, and everything is given time to settle.
    receiver.set_down(false);
    match &mut provider {
        Some(provider) => {
            provider.faults = None;
            provider.restart().await?;
        }
        None if cluster.serve_args != base_args => {
            cluster.serve_args = base_args;
            for index in 0..processes {
                roll(&mut cluster, edge.as_ref(), index).await?;
            }
        }
        None => {}
    }
    history.record("settle", json!({}));
    let settling = Instant::now();
    settle(&world, Duration::from_secs(args.settle)).await?;
    history.flush()?;
    println!(
        "chaos: settled in {:.1} s; checking",
        settling.elapsed().as_secs_f64()
    );

    let mut verdict = check::check(check::Inputs {
        history: &history.path,
        api: &api,
        businesses: &world.businesses,
        cluster: &cluster,
        receiver: &receiver,
        failover_within: args.failover_within.map(Duration::from_secs),
    })
    .await?;
    if let Some(patroni) = &patroni {
        // Each process listens for revocations on the primary of now, not on a dead one.
        let listening = crate::patroni::psql_at(
            &patroni.address(),
            &format!(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = '{}' \
                 AND query ILIKE 'LISTEN%'",
                cluster.database_name().unwrap_or_default()
            ),
        )
        .await?;
        let listening: usize = listening.trim().parse().unwrap_or(0);
        if listening != processes {
            verdict.add(
                "listen_lost",
                format!(
                    "{listening} of {processes} processes listen for revocations on the primary"
                ),
            );
        }
    }
    if patroni.is_some() {
        // HAProxy leads to the primary once it is promoted, never to a standby or to a
        // PostgreSQL still finishing its promotion, where every write is refused as read-only
        // (SQLSTATE 25006), a refusal kobo cannot take for an outage.
        let mut refused = 0;
        let mut first = None;
        for log in cluster.logs() {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            for line in text
                .lines()
                .filter(|line| line.contains("read-only transaction"))
            {
                refused += 1;
                first.get_or_insert_with(|| format!("{}: {line}", log.display()));
            }
        }
        if let Some(first) = first {
            verdict.add(
                "reached_read_only",
                format!(
                    "{refused} log line(s) of a statement refused read-only; the first: {first}"
                ),
            );
        }
    }
    let restore = match (&mut patroni, args.pitr) {
        (Some(patroni), true) => {
            let checked = restore_check(
                patroni,
                &kobo,
                &dir,
                &cluster,
                &world.businesses,
                &history.path,
                &mut verdict,
            )
            .await;
            match checked {
                Ok(figures) => Some(figures),
                Err(error) => {
                    verdict.add("restore_mismatch", format!("the restore failed: {error:#}"));
                    None
                }
            }
        }
        _ => None,
    };
    let lost_commits = lost_commits(&cluster).await;
    if args.store == StoreKind::Postgres {
        println!(
            "chaos: commits whose answer was lost, as the processes found them out \
             (kobo_db_lost_commits): {lost_commits}"
        );
    }
    // A payment whose COMMIT the primary's death cut is found out on the new primary, within
    // the store's 10 s: a failover slower than that leaves its outcome unknown (98) though the
    // request still had time (docs/deploying.md, "A database machine that dies").
    let unknown = lost_commits["unknown"].as_u64().unwrap_or(0);
    if args.primary_kills > 0 && unknown > 0 {
        verdict.add(
            "outcome_unknown",
            format!(
                "{unknown} payment commit(s) cut by a failover whose outcome the processes \
                 could not find out (kobo_db_lost_commits{{outcome=\"unknown\"}})"
            ),
        );
    }
    let failed_requests = api.failed_requests();
    let answers = api.answers();
    let balancer_retries = match &edge {
        Some(edge) => Some(edge.retries().await?),
        None => None,
    };
    if args.no_failed_requests && failed_requests > 0 {
        verdict.add(
            "failed requests",
            format!(
                "{failed_requests} request(s) got no answer, a balancer's error page, 96, 97 \
                 or 98 (see the history's outcomes)"
            ),
        );
    }
    let summary = json!({
        "store": args.store,
        "processes": processes,
        "seed": seed,
        "clients": args.clients,
        "seconds": ran.as_secs_f64(),
        "operations": operations,
        "faults": faults.to_json(),
        "failed_requests": failed_requests,
        "answers": answers.summary(),
        "balancer_retries": balancer_retries,
        "pgbouncer": args.pgbouncer,
        "request_timeout_seconds": request_timeout.as_secs(),
        "network_provider": args.network_provider,
        "haproxy": args.haproxy,
        "patroni": args.patroni,
        "backup_ms": backup.map(|took| took.as_millis() as u64),
        "restore": restore,
        "lost_commits": lost_commits,
        "violations": verdict.violations,
        "examples": verdict.examples,
        "figures": verdict.figures,
        "history": history.path,
    });
    std::fs::write(
        dir.join("summary.json"),
        serde_json::to_vec_pretty(&summary)?,
    )?;
    if let Some(edge) = edge {
        println!(
            "chaos: HAProxy sent {} request(s) again after a connection to a process failed",
            balancer_retries.unwrap_or(0)
        );
        edge.stop().await;
    }
    cluster.stop().await;
    if let Some(mut provider) = provider {
        provider.kill().await?;
    }
    if let Some(bouncer) = bouncer {
        bouncer.stop().await;
    }
    if let Some(disk) = disk {
        disk.unmount().await;
    }
    let clean = verdict.is_clean();
    if let Some(patroni) = patroni {
        // The data goes with a clean run, as the database does; the logs stay.
        patroni.stop(clean).await;
    }
    let code = |code: &str| answers.by_code.get(code).copied().unwrap_or(0);
    println!(
        "chaos: every request's answers: {} 97, {} 98, {} 96, {} without an answer; slowest {}{}",
        code("97"),
        code("98"),
        code("96"),
        code("none"),
        answers
            .slowest
            .as_ref()
            .map_or("none".to_owned(), ToString::to_string),
        match answers.limit_ms {
            Some(limit) => format!(
                "; {} answered later than {limit} ms (request timeout {} s + 2 s)",
                answers.late_count,
                request_timeout.as_secs()
            ),
            None => String::new(),
        }
    );
    println!("{}", verdict.table());
    if clean {
        if !args.patroni {
            cluster.drop_database().await?;
        }
        println!(
            "chaos: no violations (seed {seed}); summary in {}",
            dir.join("summary.json").display()
        );
    } else {
        println!(
            "chaos: VIOLATIONS (seed {seed}); history, logs and summary kept in {}",
            dir.display()
        );
    }
    Ok(clean)
}

/// What the nemesis did.
#[derive(Default, Debug)]
struct Faults {
    kills: u32,
    provider_kills: u32,
    receiver_outages: u32,
    postgres_restarts: u32,
    pgbouncer_outages: u32,
    disk_full: u32,
    read_only: u32,
    rolling_restarts: u32,
    restart_ms: Vec<u64>,
    primary_kills: u32,
    /// Each primary kill: milliseconds until HAProxy sent connections to a new primary.
    elected_ms: Vec<u64>,
    /// Each dead machine's rebuild, from the removal of its data until every machine followed
    /// the primary again.
    rebuilt_ms: Vec<u64>,
}

impl Faults {
    fn describe(&self) -> String {
        format!(
            "{} kills, {} provider kills, {} receiver outages, {} PostgreSQL restarts, {} \
             PgBouncer outages, {} disk-full, {} read-only, {} rolling restarts, {} primary kills \
             (new primary after {:?} ms, rebuilt in {:?} ms)",
            self.kills,
            self.provider_kills,
            self.receiver_outages,
            self.postgres_restarts,
            self.pgbouncer_outages,
            self.disk_full,
            self.read_only,
            self.rolling_restarts,
            self.primary_kills,
            self.elected_ms,
            self.rebuilt_ms,
        )
    }

    fn to_json(&self) -> Value {
        json!({
            "kills": self.kills,
            "provider_kills": self.provider_kills,
            "receiver_outages": self.receiver_outages,
            "postgres_restarts": self.postgres_restarts,
            "pgbouncer_outages": self.pgbouncer_outages,
            "disk_full": self.disk_full,
            "read_only": self.read_only,
            "rolling_restarts": self.rolling_restarts,
            "restart_ms_max": self.restart_ms.iter().max(),
            "primary_kills": self.primary_kills,
            "new_primary_ms": self.elected_ms,
            "rebuilt_ms": self.rebuilt_ms,
        })
    }
}

/// Plans the run's faults at seeded moments and injects them until the run's end.
#[allow(clippy::too_many_arguments)]
async fn nemesis(
    args: &ChaosArgs,
    seed: u64,
    cluster: &mut Cluster,
    mut provider: Option<&mut crate::provider::Provider>,
    edge: Option<&HaProxy>,
    mut bouncer: Option<&mut PgBouncer>,
    mut patroni: Option<&mut Patroni>,
    receiver: &Receiver,
    history: &History,
    disk: Option<&crate::faults::Disk>,
    world: &World,
) -> Result<Faults> {
    let mut rng = Rng::new(seed, 0xFA_17);
    let span = args.duration * 1000;
    // (moment in thousandths of the run, what). The run's progress is its share of the
    // duration or of the operation budget, whichever is further along, so `--operations`
    // gets every fault too.
    let mut plan: Vec<(u64, &str)> = Vec::new();
    for _ in 0..args.kills {
        plan.push((100 + rng.below(700), "kill"));
    }
    if args.receiver_outage > 0 {
        plan.push((250, "receiver_down"));
    }
    if provider.is_some() {
        for _ in 0..args.provider_kills {
            plan.push((100 + rng.below(700), "provider_kill"));
        }
    }
    if args.postgres_outage > 0 {
        plan.push((500, "postgres_restart"));
    }
    if args.pgbouncer_outage > 0 && bouncer.is_some() {
        // Early enough that the clients keep going, on the processes that reconnected, for a
        // while after PgBouncer is back (in a run of twice the outage and more).
        plan.push((300, "pgbouncer_outage"));
    }
    if args.disk_faults > 0 {
        plan.push((400, "disk_full"));
    }
    if args.read_only_faults > 0 {
        plan.push((600, "read_only"));
    }
    if patroni.is_some() {
        // Spread over the run, the first early: each takes the failover, the pause and the
        // rebuild, and the next waits for them.
        let kills = u64::from(args.primary_kills);
        for n in 0..kills {
            plan.push((100 + n * 800 / kills.max(1), "primary_kill"));
        }
        if args.pitr {
            plan.push((550, "restore_target"));
        }
    }
    for n in 0..u64::from(args.rolling_restarts) {
        plan.push((
            150 + n * 700 / u64::from(args.rolling_restarts),
            "rolling_restart",
        ));
    }
    plan.sort();
    let started = Instant::now();
    let progress = || {
        let by_time = started.elapsed().as_millis() as u64 * 1000 / span.max(1);
        let by_operations = match args.operations {
            Some(budget) => world.operations.load(Ordering::SeqCst) * 1000 / budget.max(1),
            None => 0,
        };
        by_time.max(by_operations)
    };
    let mut faults = Faults::default();
    let primary_kills = plan
        .iter()
        .filter(|(_, what)| *what == "primary_kill")
        .count() as u32;
    let mut due = plan.into_iter().peekable();
    // The receiver comes back this long after it went down, whatever the progress.
    let mut receiver_back_at: Option<Instant> = None;
    loop {
        // The clients stopped (the operation budget is spent), or the run's time is up. Each
        // primary kill takes its failover and its machine's rebuild, one after the other (20 to
        // 30 s each), and a busy machine could push the last past the end of the run: the run
        // goes on, the clients with it, until every one asked for has been made.
        let time_up = progress() >= 1000 && faults.primary_kills >= primary_kills;
        if time_up || world.stop.load(Ordering::SeqCst) {
            break;
        }
        if receiver_back_at.is_some_and(|at| Instant::now() >= at) {
            receiver_back_at = None;
            history.record("fault", json!({"fault": "receiver_up"}));
            receiver.set_down(false);
        }
        match due.peek() {
            Some((at, _)) if *at <= progress() => {}
            _ => {
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        }
        let (_, what) = due.next().unwrap();
        match what {
            "kill" => {
                let index = rng.below(cluster.processes.len() as u64) as usize;
                history.record("fault", json!({"fault": "kill", "process": index}));
                cluster.kill(index).await?;
                let restarting = Instant::now();
                cluster.restart(index).await?;
                let ms = restarting.elapsed().as_millis() as u64;
                history.record(
                    "fault",
                    json!({"fault": "restarted", "process": index, "ms": ms}),
                );
                faults.kills += 1;
                faults.restart_ms.push(ms);
            }
            "provider_kill" => {
                if let Some(provider) = provider.as_deref_mut() {
                    history.record("fault", json!({"fault": "provider_kill"}));
                    provider.kill().await?;
                    tokio::time::sleep(Duration::from_millis(1000 + rng.below(2000))).await;
                    provider.restart().await?;
                    history.record("fault", json!({"fault": "provider_restarted"}));
                    faults.provider_kills += 1;
                }
            }
            "receiver_down" => {
                history.record("fault", json!({"fault": "receiver_down"}));
                receiver.set_down(true);
                faults.receiver_outages += 1;
                receiver_back_at = Some(Instant::now() + Duration::from_secs(args.receiver_outage));
            }
            "postgres_restart" => {
                history.record("fault", json!({"fault": "postgres_stop"}));
                crate::faults::postgres("stop").await?;
                tokio::time::sleep(Duration::from_secs(args.postgres_outage)).await;
                crate::faults::postgres("start").await?;
                history.record("fault", json!({"fault": "postgres_start"}));
                faults.postgres_restarts += 1;
            }
            "pgbouncer_outage" => {
                if let Some(bouncer) = bouncer.as_deref_mut() {
                    history.record(
                        "fault",
                        json!({"fault": "pgbouncer_kill", "port": bouncer.port}),
                    );
                    bouncer.kill().await?;
                    tokio::time::sleep(Duration::from_secs(args.pgbouncer_outage)).await;
                    let starting = Instant::now();
                    bouncer
                        .restart()
                        .await
                        .context("starting PgBouncer again")?;
                    history.record(
                        "fault",
                        json!({"fault": "pgbouncer_start", "port": bouncer.port,
                               "ms": starting.elapsed().as_millis() as u64}),
                    );
                    faults.pgbouncer_outages += 1;
                }
            }
            "disk_full" => {
                if let Some(disk) = disk {
                    history.record("fault", json!({"fault": "disk_full"}));
                    disk.fill().await?;
                    tokio::time::sleep(Duration::from_secs(args.disk_faults)).await;
                    disk.unfill().await?;
                    history.record("fault", json!({"fault": "disk_space_back"}));
                    faults.disk_full += 1;
                }
            }
            "rolling_restart" => {
                for index in 0..cluster.processes.len() {
                    history.record("fault", json!({"fault": "graceful_stop", "process": index}));
                    let restarting = Instant::now();
                    roll(cluster, edge, index).await?;
                    let ms = restarting.elapsed().as_millis() as u64;
                    history.record(
                        "fault",
                        json!({"fault": "back_in_rotation", "process": index, "ms": ms}),
                    );
                    faults.restart_ms.push(ms);
                }
                faults.rolling_restarts += 1;
            }
            "primary_kill" => {
                if let Some(patroni) = patroni.as_deref_mut() {
                    primary_kill(args, patroni, history, &mut faults).await?;
                }
            }
            "restore_target" => {
                history.record(
                    "restore_target",
                    json!({"time": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)}),
                );
            }
            "read_only" => {
                history.record("fault", json!({"fault": "read_only"}));
                crate::faults::read_only(&world.data_dir, true).await?;
                tokio::time::sleep(Duration::from_secs(args.read_only_faults)).await;
                crate::faults::read_only(&world.data_dir, false).await?;
                history.record("fault", json!({"fault": "writable_again"}));
                faults.read_only += 1;
            }
            _ => unreachable!(),
        }
    }
    if faults.primary_kills < primary_kills {
        bail!(
            "{} of the {primary_kills} primary kills asked for were made before the clients \
             stopped (their operation budget spent): a longer --duration or fewer --primary-kills",
            faults.primary_kills
        );
    }
    Ok(faults)
}

/// What the processes found out of the payments' commits whose answer was lost (a connection
/// cut after `COMMIT` was sent: a failover, a pooler killed): `kobo_db_lost_commits` of each
/// process's `/metrics`, by outcome, summed. A process restarted during the run counts from its
/// restart; one that does not answer is left out.
async fn lost_commits(cluster: &Cluster) -> Value {
    let http = reqwest::Client::new();
    let mut sums =
        std::collections::BTreeMap::from([("kept", 0u64), ("not_kept", 0), ("unknown", 0)]);
    for base in cluster.bases() {
        let Ok(response) = http.get(format!("{base}/metrics")).send().await else {
            continue;
        };
        let Ok(text) = response.text().await else {
            continue;
        };
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("kobo_db_lost_commits{outcome=\"") else {
                continue;
            };
            let Some((outcome, value)) = rest.split_once("\"} ") else {
                continue;
            };
            if let (Some(sum), Ok(value)) = (sums.get_mut(outcome), value.trim().parse::<u64>()) {
                *sum += value;
            }
        }
    }
    json!(sums)
}

/// The primary's machine dies: its Patroni and PostgreSQL SIGKILLed (when the cluster is
/// whole again, never two machines down at once). Once HAProxy sends connections to a new
/// primary and `--rebuild-after` seconds passed, the dead machine's data directory is removed
/// and it is rebuilt from the new primary as a standby.
async fn primary_kill(
    args: &ChaosArgs,
    patroni: &mut Patroni,
    history: &History,
    faults: &mut Faults,
) -> Result<()> {
    let leader = patroni
        .wait_healthy(Duration::from_secs(120))
        .await
        .context("before a primary kill")?;
    let name = patroni.nodes[leader].name.clone();
    history.record("fault", json!({"fault": "primary_kill", "machine": name}));
    patroni.kill(leader).await?;
    // Once the machine is dead: a payout sent after this cannot have committed on it, and the
    // time to the first one acknowledged is counted from here.
    history.record("fault", json!({"fault": "primary_dead", "machine": name}));
    let killed = Instant::now();
    let elected = loop {
        match patroni.in_use().await {
            Some(index) if index != leader => break index,
            _ => {}
        }
        if killed.elapsed() > Duration::from_secs(120) {
            bail!("no new primary 120 s after {name} died");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let ms = killed.elapsed().as_millis() as u64;
    history.record(
        "fault",
        json!({"fault": "primary_elected", "machine": patroni.nodes[elected].name, "ms": ms}),
    );
    faults.elected_ms.push(ms);
    faults.primary_kills += 1;
    tokio::time::sleep(Duration::from_secs(args.rebuild_after)).await;
    history.record("fault", json!({"fault": "rebuild", "machine": name}));
    let rebuilding = Instant::now();
    patroni
        .rebuild(leader, Duration::from_secs(300))
        .await
        .with_context(|| format!("rebuilding {name}"))?;
    let ms = rebuilding.elapsed().as_millis() as u64;
    history.record(
        "fault",
        json!({"fault": "rebuilt", "machine": name, "ms": ms}),
    );
    faults.rebuilt_ms.push(ms);
    Ok(())
}

/// `--pitr`, after the check: the cluster restored to the moment noted in the middle of the run
/// (from the base backup taken before the load and the WAL archived since, across every
/// failover) as a PostgreSQL of its own; `kobo ledger verify` on it, and a `kobo serve` on it
/// whose listings must hold every payout acknowledged before the moment and none asked for
/// after it (those in between may be there or not). Violations go to `verdict`; the figures
/// are returned.
async fn restore_check(
    patroni: &mut Patroni,
    kobo: &std::path::Path,
    dir: &std::path::Path,
    cluster: &Cluster,
    businesses: &[Business],
    history: &std::path::Path,
    verdict: &mut check::Verdict,
) -> Result<Value> {
    let records = History::read(history)?;
    let noted = records
        .iter()
        .find(|record| record["kind"] == "restore_target")
        .context("no moment noted for the restore (the run ended before the middle)")?;
    let noted_at = noted["at_ms"].as_u64().unwrap_or(0);
    let target = chrono::DateTime::parse_from_rfc3339(noted["time"].as_str().unwrap_or_default())?
        .with_timezone(&chrono::Utc);
    // Keys by business: acknowledged before the moment, and first asked for after it.
    let mut acked_before = std::collections::BTreeSet::<(usize, String)>::new();
    let mut asked_after = std::collections::BTreeSet::<(usize, String)>::new();
    for record in &records {
        let at = record["at_ms"].as_u64().unwrap_or(0);
        let business = record["business"].as_u64().unwrap_or(0) as usize;
        let key = record["key"].as_str().unwrap_or_default().to_owned();
        match record["kind"].as_str() {
            Some("payout") if at <= noted_at && record["outcome"]["code"] == "00" => {
                acked_before.insert((business, key));
            }
            Some("payout_intent") if at > noted_at => {
                asked_after.insert((business, key));
            }
            _ => {}
        }
    }
    // Everything committed until now is in the repository, the WAL after the moment included.
    patroni
        .archive_now()
        .await
        .context("archiving the last WAL")?;
    let restored = patroni
        .restore(target, &dir.join("restore"))
        .await
        .context("the restore")?;
    println!(
        "chaos: restored to {target} in {:.1} s ({:.1} s copying the backup)",
        restored.recovered.as_secs_f64(),
        restored.copied.as_secs_f64()
    );
    let name = cluster.database_name().context("no PostgreSQL database")?;
    let mut copy = Cluster::on_database(
        kobo,
        &dir.join("restore").join("kobo"),
        &restored.address(),
        name,
        1,
        Vec::new(),
    )
    .await
    .context("kobo serve on the restored copy")?;
    let checked = async {
        match copy.cli(&["ledger", "verify"]).await {
            Ok(report) if report["ok"] == json!(true) => {}
            Ok(report) => verdict.add(
                "restore_ledger_verify",
                format!("{}", report["discrepancies"]),
            ),
            Err(error) => verdict.add("restore_ledger_verify", format!("{error:#}")),
        }
        let api = Api::new(copy.bases(), Duration::from_secs(40));
        let mut transfers = 0;
        for business in businesses {
            let token = provision::Token::take(&api, business.integration.login().clone()).await?;
            let listed = check::all_pages(
                &api,
                "/api/v1/transaction/transfer/api/fetch_transfers",
                &token.get().await,
                json!({}),
            )
            .await?;
            transfers += listed.len();
            let references: std::collections::BTreeSet<&str> = listed
                .iter()
                .filter_map(|transfer| transfer["reference"].as_str())
                .collect();
            for (_, key) in acked_before.iter().filter(|(b, _)| *b == business.index) {
                if !references.contains(key.as_str()) {
                    verdict.add(
                        "restore_mismatch",
                        format!("{key}: acknowledged before {target}, not in the restored copy"),
                    );
                }
            }
            for (_, key) in asked_after.iter().filter(|(b, _)| *b == business.index) {
                if references.contains(key.as_str()) {
                    verdict.add(
                        "restore_mismatch",
                        format!("{key}: first asked for after {target}, in the restored copy"),
                    );
                }
            }
        }
        anyhow::Ok(transfers)
    }
    .await;
    copy.stop().await;
    let transfers = checked?;
    Ok(json!({
        "target": target.to_rfc3339(),
        "copied_ms": restored.copied.as_millis() as u64,
        "recovered_ms": restored.recovered.as_millis() as u64,
        "transfers": transfers,
        "acknowledged_before": acked_before.len(),
        "asked_after": asked_after.len(),
    }))
}

/// Restarts process `index` gracefully (SIGTERM: it drains, finishes its requests and exits),
/// and with a balancer waits until the balancer sends it traffic again.
async fn roll(cluster: &mut Cluster, edge: Option<&HaProxy>, index: usize) -> Result<()> {
    cluster.stop_one(index).await;
    cluster.restart(index).await?;
    if let Some(edge) = edge {
        edge.wait_until(index, true, Duration::from_secs(30))
            .await?;
    }
    Ok(())
}

/// Every 250 ms, each process's `/readyz`, recorded when it changes.
async fn probe_loop(world: Arc<World>, api: Api) {
    let mut last: Vec<Option<u16>> = vec![Some(200); api.bases.len()];
    loop {
        for (index, previous) in last.iter_mut().enumerate() {
            let status = api.get_status(index, "/readyz").await;
            if status != *previous {
                world
                    .history
                    .record("readyz", json!({"process": index, "status": status}));
                *previous = status;
            }
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

async fn client_loop(world: Arc<World>, client: usize) -> Result<()> {
    let mut rng = Rng::new(world.seed, client as u64 + 1);
    let mut sequence = 0u64;
    while !world.stop.load(Ordering::SeqCst) {
        if world.operations.fetch_add(1, Ordering::SeqCst) >= world.max_operations {
            world.stop.store(true, Ordering::SeqCst);
            break;
        }
        sequence += 1;
        let business = rng.below(world.businesses.len() as u64) as usize;
        match rng.below(100) {
            0..=4 if world.credits.is_some() => {
                inbound_credit(&world, &mut rng, client, sequence, business).await
            }
            0..=44 => payout(&world, &mut rng, client, sequence, business, false).await?,
            45..=59 => payout(&world, &mut rng, client, sequence, business, true).await?,
            60..=74 => read_balances(&world, client, business).await?,
            75..=84 => read_listings(&world, &mut rng, client, business).await?,
            85..=92 => review(&world, &mut rng, client).await?,
            _ => read_transfer(&world, &mut rng, client).await?,
        }
    }
    Ok(())
}

/// An inbound NIP credit to one of the business's accounts, asked of `kobo-provider` under a
/// reference of the client's (again until it answers, the same reference being the same
/// credit): recorded as funding, with its NIP session, which the checker finds booked once.
async fn inbound_credit(
    world: &World,
    rng: &mut Rng,
    client: usize,
    sequence: u64,
    business: usize,
) {
    let Some(credits) = &world.credits else {
        return;
    };
    let account = rng.pick(&world.businesses[business].accounts).clone();
    let amount = rng.between(100, 500_000);
    let reference = format!("in-c{client}-{sequence}-{:x}", world.seed & 0xFFFF_FFFF);
    let body = json!({
        "account_number": account.number,
        "amount": naira(amount),
        "sender_account_number": "0123456788",
        "sender_bank_code": "000013",
        "sender_name": "Emeka Nwosu",
        "narration": format!("load {reference}"),
        "payment_reference": reference,
    });
    match credits.credit(&body, Duration::from_secs(60)).await {
        Some(session) => world.history.record(
            "fund",
            json!({"business": business, "account": account.number, "amount": amount,
                   "session": session, "reference": reference}),
        ),
        None => world.history.record(
            "credit_unanswered",
            json!({"business": business, "reference": reference}),
        ),
    }
}

/// One payout as a careful partner makes it: a fresh idempotency key (also the transfer's
/// `reference`), resent unchanged after a timeout, a broken connection or a transient answer
/// ([`is_transient`]: `28`, `97`, `98`, ...), on another process when there are several, until
/// an answer says what happened.
async fn payout(
    world: &World,
    rng: &mut Rng,
    client: usize,
    sequence: u64,
    business: usize,
    inter: bool,
) -> Result<()> {
    let owner = &world.businesses[business];
    let source = rng.pick(&owner.accounts).clone();
    let amount = if rng.percent(3) {
        // Now and then more than any account holds (within the largest transfer allowed):
        // refused, nothing moves.
        900_000_000
    } else {
        rng.between(100, 200_000)
    };
    let key = format!("c{client}-{sequence}-{:x}", world.seed & 0xFFFF_FFFF);
    let (beneficiary, name, bank, kind) = if inter {
        let (number, name) = *rng.pick(&EXTERNAL);
        (number.to_owned(), name.to_owned(), "000013", "inter")
    } else {
        let target = loop {
            let candidate = rng.pick(&world.accounts);
            if candidate.number != source.number {
                break candidate.clone();
            }
        };
        (target.number, target.name, "090823", "intra")
    };
    let body = json!({
        "source_account_number": source.number,
        "source_account_name": source.name,
        "beneficiary_account_number": beneficiary,
        "beneficiary_account_name": name,
        "bank_code": bank,
        "amount": naira(amount),
        "narration": format!("load {key}"),
        "transfer_type": kind,
        "reference": key,
    });
    world.history.record(
        "payout_intent",
        json!({
            "client": client, "business": business, "key": key, "amount": amount,
            "type": kind, "source": source.number, "beneficiary": beneficiary,
        }),
    );
    let answer = send_keyed(world, rng, client, business, &key, &body).await;
    // Now and then the same request again, as a client that lost track would: it must name
    // the same transfer.
    if answer.is_some_and(|code| code == "00") && rng.percent(10) {
        send_keyed(world, rng, client, business, &key, &body).await;
    }
    Ok(())
}

/// Sends `funds_transfer_api` with `key` until it has an answer that is not transient; returns
/// that answer's code (`None`: gave up).
async fn send_keyed(
    world: &World,
    rng: &mut Rng,
    client: usize,
    business: usize,
    key: &str,
    body: &Value,
) -> Option<String> {
    let owner = &world.businesses[business];
    let mut process = rng.below(world.api.bases.len() as u64) as usize;
    let started = Instant::now();
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        let token = owner.integration.get().await;
        let outcome = world
            .api
            .post(
                process,
                "/api/v1/transaction/transfer/api/funds_transfer",
                Some(&token),
                &[("Idempotency-Key", key)],
                body,
            )
            .await;
        let data = outcome.data();
        world.history.record(
            "payout",
            json!({
                "client": client, "business": business, "key": key, "attempt": attempt,
                "process": process % world.api.bases.len(), "outcome": outcome.summary(),
                "reference_number": data.and_then(|d| d.get("reference_number")),
                "transfer_status": data.and_then(|d| d.get("transfer_status")),
                "amount": data.and_then(|d| amount_of(d, "amount")),
            }),
        );
        if let Some(data) = data {
            if let Some(reference) = data.get("reference_number").and_then(Value::as_str) {
                world
                    .acked
                    .lock()
                    .unwrap()
                    .push((business, reference.to_owned()));
            }
            return Some("00".into());
        }
        let give_up = started.elapsed() > Duration::from_secs(120);
        match &outcome {
            Outcome::Answer { code, .. } if code == "41" => {
                let _ = owner.integration.refresh(&world.api, &token).await;
            }
            Outcome::Answer {
                code, retry_after, ..
            } if is_transient(code) => {
                if give_up {
                    return None;
                }
                let wait = retry_after.map_or(200, |s| s.min(2) * 1000);
                tokio::time::sleep(Duration::from_millis(wait)).await;
                process += 1;
            }
            Outcome::Answer { code, .. } => return Some(code.clone()),
            Outcome::NoAnswer { .. } => {
                if give_up {
                    return None;
                }
                tokio::time::sleep(Duration::from_millis(100 + rng.below(300))).await;
                process += 1;
            }
        }
    }
}

/// Answers after which a client tries the same request again: in progress, rate limited, the
/// service (not the provider) unavailable, an internal error, a payment's outcome unknown
/// (`98`: its commit's answer was lost; the same `Idempotency-Key` replays it if it was kept,
/// makes it once if not), or no code at all.
pub fn is_transient(code: &str) -> bool {
    matches!(code, "28" | "29" | "96" | "97" | "98" | "")
}

/// Every account's balance, as the partner's integration reads it.
async fn read_balances(world: &World, client: usize, business: usize) -> Result<()> {
    let outcome = world.businesses[business]
        .integration
        .post(
            &world.api,
            client,
            "/api/v1/account/api/fetch_customer_accounts",
            &json!({"limit": 100}),
        )
        .await;
    let balances: Option<Vec<(String, Option<String>)>> = outcome.data().and_then(|data| {
        data.as_array().map(|accounts| {
            accounts
                .iter()
                .map(|a| {
                    (
                        a["account_number"].as_str().unwrap_or_default().to_owned(),
                        a["balance"].as_str().map(str::to_owned),
                    )
                })
                .collect()
        })
    });
    world.history.record(
        "balances",
        json!({"client": client, "business": business, "outcome": outcome.summary(), "balances": balances}),
    );
    Ok(())
}

/// The first page of the transactions or of the transfers.
async fn read_listings(world: &World, rng: &mut Rng, client: usize, business: usize) -> Result<()> {
    let path = if rng.percent(50) {
        "/api/v1/transaction/api/fetch_transactions"
    } else {
        "/api/v1/transaction/transfer/api/fetch_transfers"
    };
    let outcome = world.businesses[business]
        .integration
        .post(&world.api, client, path, &json!({"limit": 50}))
        .await;
    world.history.record(
        "listing",
        json!({"client": client, "business": business, "path": path, "outcome": outcome.summary()}),
    );
    Ok(())
}

/// An acknowledged transfer, read back: it must exist, whatever happened to the process that
/// acknowledged it.
async fn read_transfer(world: &World, rng: &mut Rng, client: usize) -> Result<()> {
    let picked = {
        let acked = world.acked.lock().unwrap();
        if acked.is_empty() {
            None
        } else {
            Some(acked[rng.below(acked.len() as u64) as usize].clone())
        }
    };
    let Some((business, reference)) = picked else {
        return Ok(());
    };
    let outcome = world.businesses[business]
        .integration
        .post(
            &world.api,
            client,
            "/api/v1/transaction/transfer/api/get_transfer",
            &json!({"reference_number": reference}),
        )
        .await;
    world.history.record(
        "read_transfer",
        json!({"client": client, "business": business, "reference_number": reference, "outcome": outcome.summary()}),
    );
    Ok(())
}

/// The owner of the business with an approval policy approves (with a fresh OTP) or rejects
/// one of its held transfers.
async fn review(world: &World, rng: &mut Rng, client: usize) -> Result<()> {
    let Some(business) = world.businesses.iter().find(|b| b.approval_from.is_some()) else {
        return Ok(());
    };
    let Ok(_guard) = world.reviewing.try_lock() else {
        return Ok(());
    };
    let pending = business
        .owner
        .post(
            &world.api,
            client,
            "/api/v1/transaction/transfer/web/fetch_pending_transfers",
            &json!({"limit": 20}),
        )
        .await;
    let token = business.owner.get().await;
    let Some(held) = pending
        .data()
        .and_then(Value::as_array)
        .filter(|h| !h.is_empty())
    else {
        return Ok(());
    };
    let reference = held[rng.below(held.len() as u64) as usize]["reference_number"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let (action, outcome) = if rng.percent(60) {
        let otp = world
            .api
            .post(
                client,
                "/api/v1/auth/web/generate_otp",
                Some(&token),
                &[],
                &json!({}),
            )
            .await;
        let Some(otp) = otp
            .data()
            .and_then(|d| d.get("otp"))
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            return Ok(());
        };
        let outcome = world
            .api
            .post(
                client,
                "/api/v1/transaction/transfer/web/approve_transfer",
                Some(&token),
                &[],
                &json!({"reference_number": reference, "otp": otp}),
            )
            .await;
        ("approve", outcome)
    } else {
        let outcome = world
            .api
            .post(
                client,
                "/api/v1/transaction/transfer/web/reject_transfer",
                Some(&token),
                &[],
                &json!({"reference_number": reference, "reason": "Load test review"}),
            )
            .await;
        ("reject", outcome)
    };
    world.history.record(
        "review",
        json!({"client": client, "business": business.index, "reference_number": reference,
               "action": action, "outcome": outcome.summary()}),
    );
    Ok(())
}

/// After the faults: held transfers are rejected (a run cannot wait the 72 hours of their
/// expiry), then waits until no transfer is in flight and no webhook event waits.
async fn settle(world: &World, patience: Duration) -> Result<()> {
    let deadline = Instant::now() + patience;
    for business in &world.businesses {
        if business.approval_from.is_none() {
            continue;
        }
        loop {
            let token = business.owner.get().await;
            let pending = world
                .api
                .post(
                    0,
                    "/api/v1/transaction/transfer/web/fetch_pending_transfers",
                    Some(&token),
                    &[],
                    &json!({"limit": 100}),
                )
                .await;
            let held: Vec<String> = match pending.data().and_then(Value::as_array) {
                Some(held) => held
                    .iter()
                    .filter_map(|h| h["reference_number"].as_str().map(str::to_owned))
                    .collect(),
                None => bail!("fetch_pending_transfers after the run: {pending:?}"),
            };
            if held.is_empty() {
                break;
            }
            for reference in held {
                let outcome = world
                    .api
                    .post(
                        0,
                        "/api/v1/transaction/transfer/web/reject_transfer",
                        Some(&token),
                        &[],
                        &json!({"reference_number": reference, "reason": "End of the run"}),
                    )
                    .await;
                world.history.record(
                    "review",
                    json!({"client": "settle", "business": business.index,
                           "reference_number": reference, "action": "reject",
                           "outcome": outcome.summary()}),
                );
            }
        }
    }
    let mut told = Instant::now();
    loop {
        let mut waiting = 0usize;
        // What waits, by kind, to say what a long settling waits for.
        let mut kinds: std::collections::BTreeMap<&str, usize> = Default::default();
        for business in &world.businesses {
            let token = business.integration.get().await;
            for status in ["processing", "pending_approval"] {
                let outcome = world
                    .api
                    .post(
                        0,
                        "/api/v1/transaction/transfer/api/fetch_transfers",
                        Some(&token),
                        &[],
                        &json!({"filters": {"transfer_status": status}, "limit": 100}),
                    )
                    .await;
                let count = outcome.data().and_then(Value::as_array).map_or(1, Vec::len);
                waiting += count;
                *kinds.entry(status).or_default() += count;
            }
            let owner = business.owner.get().await;
            let events = world
                .api
                .post(
                    0,
                    "/api/v1/customer/web/fetch_webhook_events",
                    Some(&owner),
                    &[],
                    &json!({"filters": {"status": "pending"}, "limit": 100}),
                )
                .await;
            let count = events.data().and_then(Value::as_array).map_or(1, Vec::len);
            waiting += count;
            *kinds.entry("pending webhook events").or_default() += count;
        }
        if waiting == 0 {
            return Ok(());
        }
        if told.elapsed() > Duration::from_secs(10) {
            told = Instant::now();
            println!("chaos: settling, still waiting for {kinds:?}");
        }
        if Instant::now() > deadline {
            println!("chaos: {waiting} transfers or events still in flight after {patience:?}");
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
