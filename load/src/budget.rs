//! `kobo-load budget`: one credential's request budget across three `kobo serve` processes on
//! one PostgreSQL, reached through HAProxy (and PgBouncer): a credential's requests, spread by
//! the balancer over the processes, are granted its burst once between them, not once per
//! process (docs/deploying.md).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::{json, Value};

use crate::api::Api;
use crate::cluster::{Cluster, StoreKind};
use crate::edge::{HaProxy, PgBouncer};
use crate::provision::{Login, Token, OWNER_PASSWORD};

/// The processes behind the balancer (`deploy/haproxy.cfg` names three).
const PROCESSES: usize = 3;

#[derive(clap::Args, Clone, Debug)]
pub struct BudgetArgs {
    /// `kobo serve --rate-limit-per-minute` of every process: slow, so that little comes back
    /// while the requests run.
    #[arg(long, default_value_t = 60)]
    pub per_minute: u32,
    /// `kobo serve --rate-limit-burst` of every process.
    #[arg(long, default_value_t = 100)]
    pub burst: u32,
    /// Requests of the one credential, through the balancer.
    #[arg(long, default_value_t = 300)]
    pub requests: usize,
    /// Of those, how many in flight at once.
    #[arg(long, default_value_t = 16)]
    pub concurrency: usize,
    /// The processes reach PostgreSQL through Debian's PgBouncer in transaction mode.
    #[arg(long)]
    pub pgbouncer: bool,
    /// Where the logs and the summary go (default: a new directory under `target/budget/`).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// The `kobo` binary (default: the one beside this program).
    #[arg(long)]
    pub kobo: Option<PathBuf>,
}

pub async fn run(args: BudgetArgs) -> Result<bool> {
    let kobo = crate::cluster::kobo_binary(args.kobo.clone())?;
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => PathBuf::from("target/budget")
            .join(chrono::Utc::now().format("%Y%m%dT%H%M%S").to_string()),
    };
    std::fs::create_dir_all(&dir)?;
    let dir = dir.canonicalize()?;
    let bouncer = match args.pgbouncer {
        true => Some(PgBouncer::start(&dir).await.context("starting PgBouncer")?),
        false => None,
    };
    let serve_args = vec![
        "--rate-limit-per-minute".to_owned(),
        args.per_minute.to_string(),
        "--rate-limit-burst".to_owned(),
        args.burst.to_string(),
    ];
    let mut cluster = Cluster::start_through(
        &kobo,
        &dir.join("data"),
        StoreKind::Postgres,
        PROCESSES,
        serve_args,
        bouncer.as_ref().map(|bouncer| bouncer.port),
    )
    .await
    .context("starting kobo")?;
    let edge = HaProxy::start(&dir, &cluster.ports())
        .await
        .context("starting HAProxy")?;
    let api = Api::new(vec![edge.base()], Duration::from_secs(20));

    // A business made by the operator CLI: its owner's budget is untouched (a login is not
    // an authenticated request).
    let email = format!("owner@budget-{}.kobo.test", std::process::id());
    cluster
        .cli(&[
            "business",
            "create",
            "--name",
            "Budget Check Ltd",
            "--owner-email",
            &email,
            "--owner-password",
            OWNER_PASSWORD,
            "--active",
        ])
        .await?;
    let owner = Token::take(&api, Login::Owner { email }).await?;
    let token = Arc::new(owner.get().await);

    let started = Instant::now();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut workers = Vec::new();
    for _ in 0..args.concurrency {
        let (api, token, next) = (api.clone(), token.clone(), next.clone());
        let requests = args.requests;
        workers.push(tokio::spawn(async move {
            let mut codes = Vec::new();
            while next.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < requests {
                let outcome = api
                    .post(
                        0,
                        "/api/v1/auth/web/get_profile",
                        Some(&token),
                        &[],
                        &json!({}),
                    )
                    .await;
                codes.push(outcome.code().unwrap_or("no answer").to_owned());
            }
            codes
        }));
    }
    let mut codes = Vec::new();
    for worker in workers {
        codes.extend(worker.await?);
    }
    let elapsed = started.elapsed();
    let count = |code: &str| codes.iter().filter(|got| *got == code).count();
    let (granted, refused) = (count("00"), count("29"));
    let other = codes.len() - granted - refused;
    // What the budget allows: its burst, and what came back while the requests ran.
    let refill = (elapsed.as_secs_f64() * f64::from(args.per_minute) / 60.0).ceil() as usize;
    let allowed = args.burst as usize + refill;
    // A lease a process claimed and did not spend is lost: at most one a process, less one.
    // The lease's size is kobo's `rate_limit::lease_units`, written again here: kobo-load
    // knows kobo only by its API and its documentation (docs/deploying.md), never its crates.
    let lease = (args.burst / 20).clamp(1, 100) as usize;
    let least = (args.burst as usize).saturating_sub(PROCESSES * (lease - 1));
    let per_process = granted_per_process(&cluster).await;
    let clean = granted <= allowed && granted >= least && other == 0;
    let summary = json!({
        "processes": PROCESSES,
        "pgbouncer": args.pgbouncer,
        "per_minute": args.per_minute,
        "burst": args.burst,
        "requests": codes.len(),
        "seconds": elapsed.as_secs_f64(),
        "granted": granted,
        "refused": refused,
        "other": other,
        "allowed_at_most": allowed,
        "granted_at_least": least,
        "granted_per_process": per_process,
        "clean": clean,
    });
    std::fs::write(
        dir.join("summary.json"),
        serde_json::to_vec_pretty(&summary)?,
    )?;
    println!("{}", serde_json::to_string_pretty(&summary)?);
    edge.stop().await;
    cluster.stop().await;
    if let Some(bouncer) = bouncer {
        bouncer.stop().await;
    }
    if clean {
        cluster.drop_database().await?;
        println!(
            "budget: {granted} of {} requests granted across {PROCESSES} processes, within one budget ({least} to {allowed})",
            codes.len()
        );
    } else {
        println!(
            "budget: VIOLATION: {granted} granted (one budget allows {least} to {allowed}), {other} neither granted nor refused; logs in {}",
            dir.display()
        );
    }
    Ok(clean)
}

/// How many `get_profile` calls each process answered with 200, from its `/metrics`.
async fn granted_per_process(cluster: &Cluster) -> Vec<Value> {
    let http = reqwest::Client::new();
    let mut counts = Vec::new();
    for base in cluster.bases() {
        let text = match http.get(format!("{base}/metrics")).send().await {
            Ok(response) => response.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        };
        let granted: f64 = text
            .lines()
            .filter(|line| {
                line.starts_with("kobo_http_requests_total")
                    && line.contains("operation=\"get_profile\"")
                    && line.contains("status=\"200\"")
            })
            .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
            .sum();
        counts.push(json!(granted as u64));
    }
    counts
}
