//! `kobo-load payroll-chaos`: a salary run under SIGKILL (issue 60). One business pays a batch
//! of 1,000 items from one account, about half to accounts of other businesses of the run
//! (intra-bank, paid at once) and half over NIP through the provider (`kobo-provider` with
//! `--network-provider`, failing at random as `--provider-faults` says; some recipients' banks
//! decline and the transfer is reversed, some amounts are refused at screening), a few items
//! invalid on purpose. Once the batch is validated and authorised, the `kobo` process paying it
//! is killed with SIGKILL several times while it pays (each restarted at once; the provider too,
//! with `--provider-kills`), then the run waits for `completed` and checks, from the API alone
//! and `kobo ledger verify`: every valid item paid exactly once (one transfer, its own reference
//! number) or failed and its money released; the counts right; the source account's balance the
//! reservation less what came back; each recipient credited exactly its items.
//!
//! The executor holds a batch under a lease (`service/src/money/bulk/execute.rs`, 15 s), and
//! the NIP worker the transfers it is sending (`service/src/money/transfers/nip.rs`, 60 s),
//! which a process killed cannot give back: the batch waits for them to run out, whichever
//! process takes it up next. `--expire-leases` kills every process at once and ends their leases
//! in the store itself while they are dead (what their running out would do), so that a CI run
//! does not wait a minute a kill.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use tokio::process::Command;

use crate::api::{amount_of, Api};
use crate::bulk::{self, Item, OUR_BANK};
use crate::check::all_pages;
use crate::cluster::{Cluster, StoreKind};
use crate::history::History;
use crate::provision::{self, Account, Plan};
use crate::rng::Rng;

/// `kobo-load payroll-chaos`.
#[derive(clap::Args, Clone, Debug)]
pub struct PayrollArgs {
    /// The store under test.
    #[arg(long, value_enum, default_value = "sqlite")]
    pub store: StoreKind,
    /// `kobo serve` processes sharing the store (default: 1 on SQLite, 2 on PostgreSQL).
    #[arg(long)]
    pub processes: Option<usize>,
    /// Items of the batch (at most 5,000).
    #[arg(long, default_value_t = 1_000)]
    pub items: usize,
    /// Businesses whose accounts (two each) receive the intra-bank items.
    #[arg(long, default_value_t = 3)]
    pub recipients: usize,
    /// SIGKILLs of the process paying the batch, spread over the items (each restarted at
    /// once). Each one made while an item is being paid; those the run is too short for are
    /// not made (a run with none made fails: it tested nothing).
    #[arg(long, default_value_t = 2)]
    pub kills: u32,
    /// The processes call `kobo-provider` over HTTP (`--provider-url`), which fails as
    /// `--provider-faults` says once the batch is validated and is killed with SIGKILL
    /// `--provider-kills` times; otherwise the in-process sandbox fails so
    /// (`--sandbox-faults`).
    #[arg(long)]
    pub network_provider: bool,
    /// SIGKILLs of `kobo-provider` (with `--network-provider`), each with one of the `kobo`
    /// kills, down 1 to 3 s (while the batch waits for the dead process's lease).
    #[arg(long, default_value_t = 1)]
    pub provider_kills: u32,
    /// The provider's faults from the authorisation on. `unavailable` is kept rare: each
    /// screening it meets pauses the batch 5 s (RELIABILITY.md, "A salary run killed while it
    /// pays").
    #[arg(
        long,
        default_value = "unavailable=0.003,refuse=0.02,timeout_after_submit=0.02,status_unknown=0.05,latency_ms=2"
    )]
    pub provider_faults: String,
    /// Each kill SIGKILLs every process, and the harness then ends the leases they held in
    /// the store (`psql`, `sqlite3`: the bulk executor's and the NIP worker's), as their time
    /// running out would, before they start again: the batch goes on at once instead of a
    /// minute after each kill. Without it, only the process paying the batch is killed and the
    /// run waits for its leases.
    #[arg(long)]
    pub expire_leases: bool,
    /// Seconds to wait for the batch to be validated, then again for it to complete.
    #[arg(long, default_value_t = 600)]
    pub patience: u64,
    /// The seed of every random choice (random when absent; printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Where the store, logs, history and summary go (default: a new directory under
    /// `target/chaos/`).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// The `kobo` binary (default: the one beside this program).
    #[arg(long)]
    pub kobo: Option<PathBuf>,
}

/// The sandbox's NIP accounts: Emeka's transfers succeed, Bisi's are declined and reversed.
const EMEKA: (&str, &str) = ("0123456788", "Emeka Nwosu");
const BISI: (&str, &str) = ("0690000036", "Bisi Alade");
/// An account the sandbox's NIP does not know (name enquiry: not found).
const NOBODY: &str = "0690000099";
/// The NIP bank of the sandbox's accounts.
const NIP_BANK: &str = "000013";
/// The amount the sandbox refuses at screening (NGN 8383.83): the item fails when it is paid.
const REFUSED_AMOUNT: i64 = 838_383;
/// Credited to every account at the start (NGN 10,000,000).
const FUNDING: i64 = 1_000_000_000;

/// What an item is meant to come to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
enum Kind {
    /// To an account of a recipient business: `success`.
    Intra,
    /// To Emeka: `success` (or `failed` 83 when a fault refuses its screening).
    Nip,
    /// To Bisi: declined by her bank, `reversed` (or `failed` 83 at screening).
    NipDeclined,
    /// NGN 8383.83 to Emeka: refused at screening, `failed` 83 and released.
    NipRefused,
    /// Invalid: an intra-bank account under another name (`49`).
    WrongName,
    /// Invalid: no such Kobo account (`06`).
    NoKoboAccount,
    /// Invalid: no such account at the other bank (`06`).
    NoNipAccount,
}

impl Kind {
    fn valid(self) -> bool {
        !matches!(
            self,
            Kind::WrongName | Kind::NoKoboAccount | Kind::NoNipAccount
        )
    }
}

/// One SIGKILL of the run.
#[derive(Debug, serde::Serialize)]
struct Kill {
    /// Seconds after the authorisation was answered.
    at_s: f64,
    /// Items taken (paid or failed) when it was made, of the valid ones.
    taken: u64,
    /// The processes killed: the one holding the batch, or with `--expire-leases` all.
    processes: Vec<usize>,
    /// With several processes, whether the one killed was known (from the store's lease) to
    /// hold the batch.
    held_the_lease: Option<bool>,
    provider_killed: bool,
    lease_ended_by_harness: bool,
    /// Seconds from the kill to every process killed serving again.
    restarted_after_s: f64,
    /// Items taken at the first read after the restart (the items paid between the read that
    /// triggered the kill and the kill itself included).
    #[serde(skip)]
    baseline: Option<u64>,
    /// Seconds from the kill to the first read showing an item taken after that first read:
    /// when the batch was paid again, the dead process's lease run out. Not measured with
    /// `--expire-leases`, where the restarted processes may pay before that first read.
    resumed_after_s: Option<f64>,
}

pub async fn run(args: PayrollArgs) -> Result<bool> {
    let seed = args.seed.unwrap_or_else(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        nanos ^ u64::from(std::process::id())
    });
    if args.items == 0 || args.items > 5_000 {
        bail!("--items must be 1 to 5000");
    }
    if args.recipients == 0 {
        bail!("--recipients must be at least 1");
    }
    let store_name = match args.store {
        StoreKind::Sqlite => "sqlite",
        StoreKind::Postgres => "postgres",
    };
    let kobo = crate::cluster::kobo_binary(args.kobo.clone())?;
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => PathBuf::from("target/chaos").join(format!(
            "{}-payroll-{store_name}-{seed}",
            chrono::Utc::now().format("%Y%m%dT%H%M%S"),
        )),
    };
    std::fs::create_dir_all(&dir)?;
    let dir = dir.canonicalize()?;
    let data_dir = dir.join("data");
    let processes = args.processes.unwrap_or(match args.store {
        StoreKind::Sqlite => 1,
        StoreKind::Postgres => 2,
    });
    println!(
        "payroll-chaos: {store_name} store, {processes} process(es), {} items, {} kills, \
         provider {}, seed {seed}; in {}",
        args.items,
        args.kills,
        if args.network_provider {
            "kobo-provider"
        } else {
            "in-process sandbox"
        },
        dir.display()
    );
    let began = Instant::now();
    let mut base_args: Vec<String> = [
        "--rate-limit-per-minute",
        "100000000",
        "--rate-limit-burst",
        "1000000",
        "--max-concurrent-requests",
        "512",
        "--shutdown-timeout-seconds",
        "10",
    ]
    .iter()
    .map(|arg| arg.to_string())
    .collect();
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
    let mut cluster = Cluster::start_through(
        &kobo,
        &data_dir,
        args.store,
        processes,
        base_args.clone(),
        None,
    )
    .await
    .context("starting kobo")?;
    let run = Runner {
        args: &args,
        seed,
        dir: &dir,
        data_dir: &data_dir,
    };
    let outcome = run.story(&mut cluster, provider.as_mut(), began).await;
    cluster.stop().await;
    if let Some(mut provider) = provider {
        provider.kill().await?;
    }
    let (violations, summary) = outcome?;
    std::fs::write(
        dir.join("summary.json"),
        serde_json::to_vec_pretty(&summary)?,
    )?;
    println!("violation                count  examples");
    let mut clean = true;
    for (kind, examples) in &violations {
        clean = false;
        println!("{kind:<24} {:>5}", examples.len());
        for example in examples.iter().take(5) {
            println!("    e.g. {example}");
        }
    }
    if clean {
        cluster.drop_database().await?;
        println!(
            "payroll-chaos: no violations (seed {seed}) in {:.1} s; summary in {}",
            began.elapsed().as_secs_f64(),
            dir.join("summary.json").display()
        );
    } else {
        println!(
            "payroll-chaos: VIOLATIONS (seed {seed}); store, history, logs and summary kept in {}",
            dir.display()
        );
    }
    Ok(clean)
}

/// Violations by kind, each with its examples.
type Violations = BTreeMap<String, Vec<String>>;

fn violation(violations: &mut Violations, kind: &str, example: String) {
    violations.entry(kind.to_owned()).or_default().push(example);
}

struct Runner<'a> {
    args: &'a PayrollArgs,
    seed: u64,
    dir: &'a Path,
    data_dir: &'a Path,
}

impl Runner<'_> {
    /// Provisions, makes, validates, authorises and pays the batch under the kills, then checks.
    async fn story(
        &self,
        cluster: &mut Cluster,
        mut provider: Option<&mut crate::provider::Provider>,
        began: Instant,
    ) -> Result<(Violations, Value)> {
        let args = self.args;
        let mut violations = Violations::new();
        let api = Api::new(cluster.bases(), Duration::from_secs(40));
        let history = History::create(&self.dir.join("history.jsonl"))?;
        let plan = Plan {
            businesses: 1 + args.recipients,
            accounts_per_business: 2,
            funding: FUNDING,
            approval_from: None,
            webhooks: None,
        };
        let businesses = provision::provision(cluster, &api, &history, &plan).await?;
        let provisioned_s = began.elapsed().as_secs_f64();
        let payer = &businesses[0];
        let source = payer.accounts[0].clone();
        let recipients: Vec<(usize, Account)> = businesses[1..]
            .iter()
            .enumerate()
            .flat_map(|(n, business)| business.accounts.iter().map(move |a| (n + 1, a.clone())))
            .collect();
        let run = format!("pr{:x}", chrono::Utc::now().timestamp_millis());
        let (items, kinds) = plan_items(self.seed, args.items, &recipients, &run);
        let planned_invalid = kinds.iter().filter(|kind| !kind.valid()).count() as u64;

        // The batch, validated without faults (name enquiries are not what is under test).
        let validating = Instant::now();
        let created = bulk::create(
            &api,
            &payer.integration,
            &format!("{run}-create"),
            &source.number,
            &format!("{run}-batch"),
            &items,
        )
        .await?;
        let id = created["bulk_transfer_id"]
            .as_str()
            .context("create_bulk_transfer without a bulk_transfer_id")?
            .to_owned();
        history.record("created", json!({"id": id, "status": created["status"]}));
        let validated = bulk::wait_past(
            &api,
            &payer.integration,
            &id,
            &["validating"],
            Duration::from_millis(200),
            Duration::from_secs(args.patience),
        )
        .await?;
        let validate_s = validating.elapsed().as_secs_f64();
        history.record("validated", json!({"batch": validated}));
        if validated["status"] != "validated" {
            bail!("the batch was not validated: {validated}");
        }
        let valid = bulk::count(&validated, "valid");
        if bulk::count(&validated, "invalid") != planned_invalid
            || valid != args.items as u64 - planned_invalid
        {
            violation(
                &mut violations,
                "validation_counts",
                format!(
                    "{planned_invalid} items invalid on purpose, the batch counts {}",
                    validated["counts"]
                ),
            );
        }
        println!(
            "payroll-chaos: provisioned in {provisioned_s:.1} s; {} items validated in \
             {validate_s:.1} s: {valid} valid, {} invalid, total NGN {}",
            args.items,
            bulk::count(&validated, "invalid"),
            validated["totals"]["total"].as_str().unwrap_or("?"),
        );

        // The faults from now on.
        if !args.provider_faults.is_empty() {
            let faults = format!("{},seed={}", args.provider_faults, self.seed);
            match provider.as_deref_mut() {
                Some(provider) => {
                    provider.faults = Some(faults);
                    provider.restart().await?;
                }
                None => {
                    cluster
                        .serve_args
                        .extend(["--sandbox-faults".to_owned(), faults]);
                    for index in 0..cluster.processes.len() {
                        cluster.stop_one(index).await;
                        cluster.restart(index).await?;
                    }
                }
            }
        }

        let mut before = bulk::balances(&api, &payer.integration).await?;
        for business in &businesses[1..] {
            before.extend(bulk::balances(&api, &business.integration).await?);
        }
        let authorised =
            bulk::authorise(&api, &payer.integration, &format!("{run}-go"), &validated)
                .await
                .context("authorising the batch")?;
        let paying = Instant::now();
        history.record("authorised", json!({"batch": authorised}));
        if authorised["status"] != "executing" {
            bail!("the authorised batch is not executing: {authorised}");
        }

        let (kills, completed) = self
            .nemesis(cluster, provider, &api, payer, &id, valid, &history, paying)
            .await?;
        let pay_s = paying.elapsed().as_secs_f64();
        history.record("completed", json!({"batch": completed, "kills": kills}));
        history.flush()?;
        let made = kills.len();
        println!(
            "payroll-chaos: {} in {pay_s:.1} s after the authorisation, {made} kill(s): {}",
            completed["status"].as_str().unwrap_or("?"),
            kills
                .iter()
                .map(|kill| format!(
                    "at {:.1} s, {} of {valid} items taken, process(es) {:?}{}{}, serving again \
                     after {:.1} s{}",
                    kill.at_s,
                    kill.taken,
                    kill.processes,
                    if kill.provider_killed {
                        " and kobo-provider"
                    } else {
                        ""
                    },
                    if kill.lease_ended_by_harness {
                        ", leases ended by the harness"
                    } else {
                        ""
                    },
                    kill.restarted_after_s,
                    match (kill.lease_ended_by_harness, kill.resumed_after_s) {
                        (true, _) => String::new(),
                        (false, Some(s)) => format!(", paying again after {s:.1} s"),
                        (false, None) => ", never paying again".to_owned(),
                    }
                ))
                .collect::<Vec<_>>()
                .join("; ")
        );
        if args.kills > 0 && made == 0 {
            violation(
                &mut violations,
                "no_kill_mid_run",
                format!(
                    "no kill was made while items were being paid ({} asked for): the run \
                     tested nothing",
                    args.kills
                ),
            );
        }

        let checking = Instant::now();
        let figures = check(
            &api,
            cluster,
            &businesses,
            &source,
            &id,
            &items,
            &kinds,
            &validated,
            &completed,
            &before,
            &mut violations,
        )
        .await?;
        let check_s = checking.elapsed().as_secs_f64();
        println!(
            "payroll-chaos: checked in {check_s:.1} s: {}",
            serde_json::to_string(&figures["outcomes"])?
        );
        let summary = json!({
            "store": args.store,
            "processes": cluster.processes.len(),
            "seed": self.seed,
            "items": args.items,
            "network_provider": args.network_provider,
            "provider_faults": args.provider_faults,
            "expire_leases": args.expire_leases,
            "seconds": {
                "provision": provisioned_s,
                "validate": validate_s,
                "pay": pay_s,
                "check": check_s,
                "total": began.elapsed().as_secs_f64(),
            },
            "kills": kills,
            "batch": completed,
            "figures": figures,
            "violations": violations,
            "history": history.path,
        });
        Ok((violations, summary))
    }

    /// Reads the batch every 100 ms until it is `completed` (at most `--patience`), killing the
    /// process that pays it when the items taken pass each planned mark. Returns the kills and
    /// the completed batch.
    #[allow(clippy::too_many_arguments)]
    async fn nemesis(
        &self,
        cluster: &mut Cluster,
        mut provider: Option<&mut crate::provider::Provider>,
        api: &Api,
        payer: &provision::Business,
        id: &str,
        valid: u64,
        history: &History,
        paying: Instant,
    ) -> Result<(Vec<Kill>, Value)> {
        let args = self.args;
        let mut rng = Rng::new(self.seed, 0x5A1A);
        // The marks: spread over the items, each moved by up to a quarter of the spacing.
        let kills = u64::from(args.kills);
        let spacing = valid / (kills + 1);
        let marks: Vec<u64> = (1..=kills)
            .map(|k| {
                let jitter = rng.below(spacing / 2 + 1) as i64 - (spacing / 4) as i64;
                (k * spacing).saturating_add_signed(jitter).max(1)
            })
            .collect();
        let mut provider_kills = args.provider_kills.min(args.kills);
        let mut made: Vec<Kill> = Vec::new();
        loop {
            let batch = bulk::get(api, &payer.integration, id).await?;
            let status = batch["status"].as_str().unwrap_or_default().to_owned();
            let taken = bulk::taken(&batch);
            if let Some(kill) = made.last_mut() {
                match kill.baseline {
                    None => kill.baseline = Some(taken),
                    Some(baseline)
                        if !kill.lease_ended_by_harness
                            && kill.resumed_after_s.is_none()
                            && taken > baseline =>
                    {
                        kill.resumed_after_s = Some(paying.elapsed().as_secs_f64() - kill.at_s);
                    }
                    Some(_) => {}
                }
            }
            if status != "executing" {
                return Ok((made, batch));
            }
            if paying.elapsed() > Duration::from_secs(args.patience) {
                bail!(
                    "the batch is still executing {} s after its authorisation: counts {}",
                    args.patience,
                    batch["counts"]
                );
            }
            let due = marks
                .get(made.len())
                .is_some_and(|mark| taken >= *mark && taken < valid);
            if due {
                let with_provider = provider.is_some() && provider_kills > 0;
                provider_kills -= u32::from(with_provider);
                let kill = self
                    .kill(
                        cluster,
                        provider.as_deref_mut().filter(|_| with_provider),
                        &mut rng,
                        id,
                        taken,
                        paying,
                        history,
                    )
                    .await?;
                made.push(kill);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// SIGKILLs the process holding the batch (from the store's lease; any when it cannot be
    /// told), and `provider` with it; restarts them. With `--expire-leases`, every process is
    /// killed, and the leases they held are ended in the store before they start again.
    #[allow(clippy::too_many_arguments)]
    async fn kill(
        &self,
        cluster: &mut Cluster,
        mut provider: Option<&mut crate::provider::Provider>,
        rng: &mut Rng,
        id: &str,
        taken: u64,
        paying: Instant,
        history: &History,
    ) -> Result<Kill> {
        let count = cluster.processes.len();
        let (victims, held_the_lease) = if self.args.expire_leases {
            ((0..count).collect::<Vec<_>>(), None)
        } else {
            let holder = match self.lease_owner(cluster, id).await {
                Ok(owner) => owner.and_then(|owner| {
                    let pid: u32 = owner.split('-').next()?.parse().ok()?;
                    (0..count).find(|index| cluster.pid(*index) == Some(pid))
                }),
                Err(error) => {
                    println!(
                        "payroll-chaos: cannot read the batch's lease ({error:#}); killing any"
                    );
                    None
                }
            };
            let index = holder.unwrap_or_else(|| rng.below(count as u64) as usize);
            (vec![index], (count > 1).then_some(holder.is_some()))
        };
        let at_s = paying.elapsed().as_secs_f64();
        for index in &victims {
            history.record(
                "fault",
                json!({"fault": "kill", "process": index, "pid": cluster.pid(*index),
                       "taken": taken, "held_the_lease": held_the_lease}),
            );
            cluster.kill(*index).await?;
        }
        let provider_killed = provider.is_some();
        if let Some(provider) = provider.as_deref_mut() {
            history.record("fault", json!({"fault": "provider_kill"}));
            provider.kill().await?;
        }
        let pause = Duration::from_millis(1000 + rng.below(2000));
        if self.args.expire_leases {
            // The provider first, so that the batch does not go on into a provider that is down
            // (its screening would stop the executor for a lease of its own).
            if let Some(provider) = provider.as_deref_mut() {
                tokio::time::sleep(pause).await;
                provider.restart().await?;
                history.record("fault", json!({"fault": "provider_restarted"}));
            }
            self.end_leases(cluster).await?;
            history.record("fault", json!({"fault": "leases_ended"}));
            for index in &victims {
                cluster.restart(*index).await?;
            }
        } else {
            for index in &victims {
                cluster.restart(*index).await?;
            }
            if let Some(provider) = provider {
                tokio::time::sleep(pause).await;
                provider.restart().await?;
                history.record("fault", json!({"fault": "provider_restarted"}));
            }
        }
        history.record("fault", json!({"fault": "restarted", "processes": victims}));
        Ok(Kill {
            restarted_after_s: paying.elapsed().as_secs_f64() - at_s,
            baseline: None,
            at_s,
            taken,
            processes: victims,
            held_the_lease,
            provider_killed,
            lease_ended_by_harness: self.args.expire_leases,
            resumed_after_s: None,
        })
    }

    /// The batch's `lease_owner` (`<pid>-<uuid>` of the process holding it), read in the store.
    async fn lease_owner(&self, cluster: &Cluster, id: &str) -> Result<Option<String>> {
        if cluster.processes.len() == 1 {
            return Ok(None);
        }
        let answer = self
            .sql(
                cluster,
                &format!("SELECT lease_owner FROM bulk_transfers WHERE id = '{id}'"),
            )
            .await?;
        let owner = answer.trim();
        Ok((!owner.is_empty()).then(|| owner.to_owned()))
    }

    /// Ends every lease of the bulk transfer executor and of the NIP worker, every process
    /// being dead: what their running out would do.
    async fn end_leases(&self, cluster: &Cluster) -> Result<()> {
        self.sql(
            cluster,
            "UPDATE bulk_transfers SET lease_until = NULL WHERE lease_until IS NOT NULL; \
             UPDATE transfers SET lease_until = NULL WHERE lease_until IS NOT NULL;",
        )
        .await
        .map(drop)
    }

    /// Statements on the run's store with the database's own client (`psql`; `sqlite3`, or
    /// Python's `sqlite3` module where that is not installed); the output of the last.
    async fn sql(&self, cluster: &Cluster, statements: &str) -> Result<String> {
        let output = match (self.args.store, cluster.database_name()) {
            (StoreKind::Postgres, Some(name)) => {
                Command::new("psql")
                    .args([
                        &format!(
                            "postgres://postgres@{}/{name}",
                            crate::cluster::LOCAL_POSTGRES
                        ),
                        "-v",
                        "ON_ERROR_STOP=1",
                        "-Atqc",
                        statements,
                    ])
                    .output()
                    .await
            }
            _ => {
                let database = self.data_dir.join("kobo.db");
                let cli = Command::new("sqlite3")
                    .args(["-cmd", ".timeout 10000"])
                    .arg(&database)
                    .arg(statements)
                    .output()
                    .await;
                match cli {
                    Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                        Command::new("python3")
                            .args(["-c", SQLITE_BY_PYTHON])
                            .arg(&database)
                            .arg(statements)
                            .output()
                            .await
                    }
                    other => other,
                }
            }
        }
        .with_context(|| format!("cannot run the store's client for {statements:?}"))?;
        if !output.status.success() {
            bail!(
                "{statements:?}: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }
}

/// `python3 -c` with the database and the statements: runs them in one transaction, prints the
/// last one's rows as `sqlite3` would (`|` between columns).
const SQLITE_BY_PYTHON: &str = "import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=10)
rows = []
for statement in filter(str.strip, sys.argv[2].split(';')):
    rows = db.execute(statement).fetchall()
db.commit()
for row in rows:
    print('|'.join('' if value is None else str(value) for value in row))
";

/// The batch: `count` items in a seeded order, about 1% invalid on purpose (3 at least), the
/// valid ones half intra-bank to the recipients' accounts in turn, half over NIP (one in ten
/// to Bisi, declined; one in 25 of NGN 8383.83, refused at screening; the rest to Emeka).
fn plan_items(
    seed: u64,
    count: usize,
    recipients: &[(usize, Account)],
    run: &str,
) -> (Vec<Item>, Vec<Kind>) {
    let mut rng = Rng::new(seed, 0xB01C);
    let invalid = (count / 100).max(3).min(count.saturating_sub(1));
    let mut kinds: Vec<Kind> = Vec::with_capacity(count);
    for n in 0..invalid {
        kinds.push(match n % 3 {
            0 => Kind::WrongName,
            1 => Kind::NoKoboAccount,
            _ => Kind::NoNipAccount,
        });
    }
    for n in 0..count - invalid {
        kinds.push(match (n % 2, (n / 2) % 25, (n / 2) % 10) {
            (0, _, _) => Kind::Intra,
            (_, 12, _) => Kind::NipRefused,
            (_, _, 5) => Kind::NipDeclined,
            _ => Kind::Nip,
        });
    }
    // Fisher-Yates, seeded: the invalid and the failing items anywhere in the batch.
    for n in (1..kinds.len()).rev() {
        let other = rng.below(n as u64 + 1) as usize;
        kinds.swap(n, other);
    }
    let mut intra = 0usize;
    let items = kinds
        .iter()
        .enumerate()
        .map(|(n, kind)| {
            let amount = rng.between(5_000, 200_000);
            let (number, bank, name, amount) = match kind {
                Kind::Intra | Kind::WrongName => {
                    let (_, account) = &recipients[intra % recipients.len()];
                    intra += 1;
                    let name = match kind {
                        Kind::WrongName => "Somebody Else Entirely".to_owned(),
                        _ => account.name.clone(),
                    };
                    (account.number.clone(), OUR_BANK, name, amount)
                }
                Kind::NoKoboAccount => (
                    "9999999999".to_owned(),
                    OUR_BANK,
                    "Nobody".to_owned(),
                    amount,
                ),
                Kind::Nip => (EMEKA.0.to_owned(), NIP_BANK, EMEKA.1.to_owned(), amount),
                Kind::NipDeclined => (BISI.0.to_owned(), NIP_BANK, BISI.1.to_owned(), amount),
                Kind::NipRefused => (
                    EMEKA.0.to_owned(),
                    NIP_BANK,
                    EMEKA.1.to_owned(),
                    REFUSED_AMOUNT,
                ),
                Kind::NoNipAccount => (NOBODY.to_owned(), NIP_BANK, "Nobody".to_owned(), amount),
            };
            Item {
                account_number: number,
                bank_code: bank.to_owned(),
                account_name: name,
                amount,
                reference: format!("{run}-{n}"),
            }
        })
        .collect();
    (items, kinds)
}

/// The independent check, from the API and `kobo ledger verify`: violations into `violations`,
/// the figures returned.
#[allow(clippy::too_many_arguments)]
async fn check(
    api: &Api,
    cluster: &Cluster,
    businesses: &[provision::Business],
    source: &Account,
    id: &str,
    sent: &[Item],
    kinds: &[Kind],
    validated: &Value,
    completed: &Value,
    before: &BTreeMap<String, i64>,
    violations: &mut Violations,
) -> Result<Value> {
    let payer = &businesses[0];
    let token = &payer.integration;
    // The batch's own counts.
    let valid = bulk::count(completed, "valid");
    let (succeeded, failed, reversed) = (
        bulk::count(completed, "succeeded"),
        bulk::count(completed, "failed"),
        bulk::count(completed, "reversed"),
    );
    if completed["status"] != "completed" {
        violation(
            violations,
            "not_completed",
            format!("the batch ended {}", completed["status"]),
        );
    }
    if succeeded + failed + reversed != valid
        || bulk::count(completed, "processing") != 0
        || bulk::count(completed, "pending") != 0
        || bulk::count(completed, "items") != sent.len() as u64
    {
        violation(
            violations,
            "counts_wrong",
            format!(
                "counts {} of {} items sent",
                completed["counts"],
                sent.len()
            ),
        );
    }
    let reserved = bulk::total(completed, "reserved")?;
    let released = bulk::total(completed, "released")?;
    if reserved != bulk::total(validated, "total")? {
        violation(
            violations,
            "reservation_wrong",
            format!(
                "reserved {} for a validated total of {}",
                completed["totals"]["reserved"], validated["totals"]["total"]
            ),
        );
    }

    // Every item, against what was sent and what it was meant to come to.
    let items = bulk::items(api, token, id).await?;
    if items.len() != sent.len() {
        violation(
            violations,
            "items_missing",
            format!("{} items listed, {} sent", items.len(), sent.len()),
        );
    }
    let mut outcomes: BTreeMap<String, u64> = BTreeMap::new();
    let mut by_kind: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut references = BTreeSet::new();
    let mut paid: BTreeMap<String, &Value> = BTreeMap::new(); // transfer_id → item
    let mut unpaid_ids = BTreeSet::new();
    let mut released_items = 0i64;
    let mut reversed_items = 0i64;
    // Intra-bank successes by recipient account.
    let mut credited: BTreeMap<String, i64> = BTreeMap::new();
    let charged = |item: &Value| -> i64 {
        amount_of(item, "amount").unwrap_or(0)
            + amount_of(item, "fee").unwrap_or(0)
            + amount_of(item, "vat").unwrap_or(0)
    };
    for (index, item) in items.iter().enumerate() {
        let (Some(sent_item), Some(kind)) = (sent.get(index), kinds.get(index)) else {
            break;
        };
        let outcome = item["outcome"].as_str().unwrap_or("?").to_owned();
        let validation = item["validation"].as_str().unwrap_or("?");
        *outcomes.entry(outcome.clone()).or_default() += 1;
        *by_kind
            .entry(
                serde_json::to_value(kind)?
                    .as_str()
                    .unwrap_or("?")
                    .to_owned(),
            )
            .or_default()
            .entry(match item["failure_code"].as_str() {
                Some(code) => format!("{outcome} {code}"),
                None => outcome.clone(),
            })
            .or_default() += 1;
        let label = format!("item {index} ({kind:?}, ref {})", sent_item.reference);
        if item["index"] != json!(index)
            || item["reference"] != json!(sent_item.reference)
            || amount_of(item, "amount") != Some(sent_item.amount)
        {
            violation(
                violations,
                "item_changed",
                format!("{label}: listed as {item}"),
            );
        }
        if validation != if kind.valid() { "valid" } else { "invalid" } {
            violation(
                violations,
                "validation_wrong",
                format!("{label}: {validation} ({})", item["refusal_code"]),
            );
        }
        let transfer_id = item["transfer_id"].as_str().unwrap_or_default().to_owned();
        let reference_number = item["reference_number"].as_str();
        if validation != "valid" {
            if outcome != "unpaid" || reference_number.is_some() {
                violation(
                    violations,
                    "invalid_item_paid",
                    format!("{label}: {outcome}, reference number {reference_number:?}"),
                );
            }
            unpaid_ids.insert(transfer_id);
            continue;
        }
        let expected: &[&str] = match kind {
            Kind::Intra => &["success"],
            Kind::Nip => &["success", "failed 83"],
            Kind::NipDeclined => &["reversed", "failed 83"],
            Kind::NipRefused => &["failed 83"],
            _ => &[],
        };
        let seen = match item["failure_code"].as_str() {
            Some(code) => format!("{outcome} {code}"),
            None => outcome.clone(),
        };
        if !expected.contains(&seen.as_str()) {
            violation(
                violations,
                "unexpected_outcome",
                format!("{label}: {seen}, expected one of {expected:?}"),
            );
        }
        match reference_number {
            Some(number) => {
                if !references.insert(number.to_owned()) {
                    violation(
                        violations,
                        "reference_number_twice",
                        format!("{label}: reference number {number} of another item too"),
                    );
                }
                paid.insert(transfer_id, item);
                if outcome == "reversed" {
                    reversed_items += charged(item);
                }
                if outcome == "success" && *kind == Kind::Intra {
                    *credited
                        .entry(sent_item.account_number.clone())
                        .or_default() += sent_item.amount;
                }
            }
            None => {
                if outcome != "failed" || item["failure_code"].is_null() {
                    violation(
                        violations,
                        "item_not_final",
                        format!("{label}: {outcome} without a transfer"),
                    );
                }
                released_items += charged(item);
                unpaid_ids.insert(transfer_id);
            }
        }
    }
    if outcomes.get("success").copied().unwrap_or(0) != succeeded
        || outcomes.get("reversed").copied().unwrap_or(0) != reversed
        || outcomes.get("failed").copied().unwrap_or(0) != failed
    {
        violation(
            violations,
            "counts_wrong",
            format!(
                "the items' outcomes {outcomes:?} against the counts {}",
                completed["counts"]
            ),
        );
    }

    // Every transfer of the payer: one per paid item, none else.
    let transfers = all_pages(api, bulk::TRANSFERS, &token.get().await, json!({})).await?;
    let mut listed: BTreeMap<String, u64> = BTreeMap::new();
    for transfer in &transfers {
        let transfer_id = transfer["id"].as_str().unwrap_or_default().to_owned();
        *listed.entry(transfer_id.clone()).or_default() += 1;
        match paid.get(&transfer_id) {
            Some(item) => {
                let status = transfer["transfer_status"].as_str().unwrap_or("?");
                let outcome = item["outcome"].as_str().unwrap_or("?");
                if transfer["reference_number"] != item["reference_number"]
                    || transfer["amount"] != item["amount"]
                    || transfer["reference"] != item["reference"]
                    || status != outcome
                {
                    violation(
                        violations,
                        "transfer_mismatch",
                        format!(
                            "transfer {transfer_id} ({} {} {status}) of item {} ({} {} {outcome})",
                            transfer["reference_number"],
                            transfer["amount"],
                            item["index"],
                            item["reference_number"],
                            item["amount"]
                        ),
                    );
                }
            }
            None if unpaid_ids.contains(&transfer_id) => violation(
                violations,
                "unpaid_item_has_transfer",
                format!(
                    "transfer {transfer_id} ({}) of an item not paid",
                    transfer["reference_number"]
                ),
            ),
            None => violation(
                violations,
                "unknown_transfer",
                format!(
                    "transfer {transfer_id} ({}) of no item",
                    transfer["reference_number"]
                ),
            ),
        }
    }
    for (transfer_id, times) in &listed {
        if *times > 1 {
            violation(
                violations,
                "paid_twice",
                format!("transfer {transfer_id} listed {times} times"),
            );
        }
    }
    for (transfer_id, item) in &paid {
        if !listed.contains_key(transfer_id) {
            violation(
                violations,
                "paid_item_without_transfer",
                format!(
                    "item {} ({}): transfer {transfer_id} not listed",
                    item["index"], item["reference_number"]
                ),
            );
        }
    }

    // The money: the source account lost the reservation, less what came back; each
    // recipient got its items; nothing else moved.
    let mut after = bulk::balances(api, token).await?;
    for business in &businesses[1..] {
        after.extend(bulk::balances(api, &business.integration).await?);
    }
    if released != released_items {
        violation(
            violations,
            "release_wrong",
            format!(
                "released {} (totals.released), the failed items without a transfer come to {}",
                crate::api::naira(released),
                crate::api::naira(released_items)
            ),
        );
    }
    let initial = before.get(&source.number).copied().unwrap_or(0);
    let expected = initial - reserved + released + reversed_items;
    let final_balance = after.get(&source.number).copied().unwrap_or(0);
    if final_balance != expected {
        violation(
            violations,
            "source_balance_wrong",
            format!(
                "{}: {} at the end; {} before − {} reserved + {} released + {} reversed = {}",
                source.number,
                crate::api::naira(final_balance),
                crate::api::naira(initial),
                crate::api::naira(reserved),
                crate::api::naira(released),
                crate::api::naira(reversed_items),
                crate::api::naira(expected)
            ),
        );
    }
    for (number, balance) in &after {
        if *number == source.number {
            continue;
        }
        let grew = balance - before.get(number).copied().unwrap_or(0);
        let owed = credited.get(number).copied().unwrap_or(0);
        if grew != owed {
            violation(
                violations,
                "recipient_balance_wrong",
                format!(
                    "{number}: grew by {}, its successful items come to {}",
                    crate::api::naira(grew),
                    crate::api::naira(owed)
                ),
            );
        }
    }

    let ledger = cluster.cli(&["ledger", "verify"]).await;
    match &ledger {
        Ok(report) if report["ok"] == json!(true) => {}
        Ok(report) => violation(
            violations,
            "ledger_verify",
            format!("{}", report["discrepancies"]),
        ),
        Err(error) => violation(violations, "ledger_verify", format!("{error:#}")),
    }
    Ok(json!({
        "outcomes": outcomes,
        "by_kind": by_kind,
        "transfers": transfers.len(),
        "reserved_kobo": reserved,
        "released_kobo": released,
        "reversed_kobo": reversed_items,
        "source_before_kobo": initial,
        "source_after_kobo": final_balance,
        "ledger_verify": ledger.ok(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_is_half_intra_half_nip_with_a_few_invalid_and_unique_references() {
        let recipients: Vec<(usize, Account)> = (0..4)
            .map(|n| {
                let account = Account {
                    number: format!("100000000{n}"),
                    name: format!("Recipient {n}"),
                };
                (1 + n / 2, account)
            })
            .collect();
        let (items, kinds) = plan_items(7, 1_000, &recipients, "pr1");
        assert_eq!(items.len(), 1_000);
        let count = |kind| kinds.iter().filter(|k| **k == kind).count();
        assert_eq!(kinds.iter().filter(|k| !k.valid()).count(), 10);
        assert_eq!(count(Kind::Intra), 495);
        assert_eq!(
            count(Kind::Nip) + count(Kind::NipDeclined) + count(Kind::NipRefused),
            495
        );
        assert!(count(Kind::NipDeclined) >= 40 && count(Kind::NipRefused) >= 15);
        let references: BTreeSet<&str> = items.iter().map(|i| i.reference.as_str()).collect();
        assert_eq!(references.len(), 1_000);
        for (item, kind) in items.iter().zip(&kinds) {
            assert_eq!(
                item.bank_code == OUR_BANK,
                matches!(kind, Kind::Intra | Kind::WrongName | Kind::NoKoboAccount)
            );
            assert_eq!(item.amount == REFUSED_AMOUNT, *kind == Kind::NipRefused);
        }
        // The same seed, the same batch.
        let (again, _) = plan_items(7, 1_000, &recipients, "pr1");
        assert!(items
            .iter()
            .zip(&again)
            .all(|(a, b)| a.to_json() == b.to_json()));
    }
}
