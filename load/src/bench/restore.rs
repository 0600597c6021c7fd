//! `kobo-load restore`: a point-in-time restore of a database with a long history, measured.
//! On a Patroni cluster of three machines ([`crate::patroni`]) with pgBackRest's repository
//! (`deploy/pgbackrest.conf`):
//!
//! 1. one business, and a full base backup of the nearly empty database (backup A);
//! 2. `--transactions` inbound credits written to one account (`kobo bench seed-transactions`,
//!    through HAProxy, synchronous replication), then a second full backup (backup B);
//! 3. a moment T noted, with the number of transactions `kobo ledger verify` counts then;
//!    more credits written after T, and the WAL archived;
//! 4. a restore to T from backup B (copy the backup, replay the little WAL after it), and one
//!    from backup A (replay the WAL of the whole history), each started as a PostgreSQL of its
//!    own and checked with `kobo ledger verify`: clean, and the transactions of T, not one
//!    more or less.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use crate::api::Api;
use crate::cluster::{Cluster, StoreKind};
use crate::history::History;
use crate::patroni::Patroni;
use crate::provision::{self, Plan};

/// `kobo-load restore`.
#[derive(clap::Args, Clone, Debug)]
pub struct RestoreArgs {
    /// Transactions written between the two base backups.
    #[arg(long, default_value_t = 1_000_000)]
    pub transactions: u64,
    /// Transactions written after the moment restored to (which the copies must not have).
    #[arg(long, default_value_t = 1_000)]
    pub after: u64,
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

pub async fn run(args: RestoreArgs) -> Result<bool> {
    let kobo = crate::cluster::kobo_binary(args.kobo.clone())?;
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => PathBuf::from("target/bench").join(format!(
            "{}-restore",
            chrono::Utc::now().format("%Y%m%dT%H%M%S")
        )),
    };
    std::fs::create_dir_all(&dir)?;
    let dir = dir.canonicalize()?;
    println!(
        "restore: {} transactions between two full backups, {} after the moment; in {}",
        args.transactions,
        args.after,
        dir.display()
    );
    let mut patroni = Patroni::start(&dir, 3)
        .await
        .context("starting the Patroni cluster")?;
    let measured = measure(&args, &kobo, &dir, &mut patroni).await;
    patroni.stop(true).await;
    let (report, clean) = measured?;
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_vec_pretty(&report)?)?;
    }
    Ok(clean)
}

async fn measure(
    args: &RestoreArgs,
    kobo: &std::path::Path,
    dir: &std::path::Path,
    patroni: &mut Patroni,
) -> Result<(Value, bool)> {
    let mut cluster = Cluster::start_at(
        kobo,
        &dir.join("data"),
        StoreKind::Postgres,
        1,
        super::serve_args(1),
        None,
        &patroni.address(),
    )
    .await
    .context("starting kobo")?;
    let api = Api::new(cluster.bases(), Duration::from_secs(60));
    let history = History::create(&dir.join("provision.jsonl"))?;
    let plan = Plan {
        businesses: 1,
        accounts_per_business: 2,
        funding: 1_000_000,
        approval_from: None,
        webhooks: None,
    };
    let businesses = provision::provision(&cluster, &api, &history, &plan).await?;
    let account = businesses[0].accounts[1].number.clone();
    cluster.stop().await;

    let timed = Instant::now();
    patroni.backup().await.context("backup A")?;
    let backup_a = timed.elapsed();
    println!(
        "restore: backup A (before the history) in {:.1} s",
        backup_a.as_secs_f64()
    );

    let seeded = super::reference::seed_transactions(&cluster, &account, args.transactions)
        .await?
        .context("this kobo has no `kobo bench seed-transactions`")?;
    println!(
        "restore: {} transactions written in {seeded:.1} s ({:.0}/s, synchronous replication)",
        args.transactions,
        args.transactions as f64 / seeded
    );
    let timed = Instant::now();
    patroni.backup().await.context("backup B")?;
    let backup_b = timed.elapsed();
    let backups = patroni.backups().await?;
    let [(set_a, _, _), .., (_, repository_b, size_b)] = backups.as_slice() else {
        bail!("two backups expected, pgbackrest lists {backups:?}");
    };
    println!(
        "restore: backup B (after the history) in {:.1} s: database {:.0} MB, {:.0} MB in the \
         repository",
        backup_b.as_secs_f64(),
        *size_b as f64 / 1e6,
        *repository_b as f64 / 1e6
    );

    let live = cluster.cli(&["ledger", "verify"]).await?;
    let expected = live["transactions"]
        .as_u64()
        .context("ledger verify's count")?;
    // The moment: after everything counted, before everything written next.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let target = chrono::Utc::now();
    tokio::time::sleep(Duration::from_secs(1)).await;
    super::reference::seed_transactions(&cluster, &account, args.after).await?;
    patroni.archive_now().await?;

    let mut restores = Vec::new();
    let mut clean = true;
    for (label, set) in [
        ("from backup B, the WAL after it", None),
        (
            "from backup A, the WAL of the whole history",
            Some(set_a.clone()),
        ),
    ] {
        let restored = patroni
            .restore_from(target, &dir.join("restored"), set.as_deref())
            .await
            .with_context(|| format!("the restore {label}"))?;
        let name = cluster.database_name().context("no database")?;
        let copy = Cluster::on_database(
            kobo,
            &dir.join("restored").join("kobo"),
            &restored.address(),
            name,
            0,
            Vec::new(),
        )
        .await?;
        let verifying = Instant::now();
        let report = copy.cli(&["ledger", "verify"]).await?;
        let verified = verifying.elapsed();
        let transactions = report["transactions"].as_u64();
        let ok = report["ok"] == json!(true) && transactions == Some(expected);
        clean &= ok;
        println!(
            "restore: to {target} {label}: {:.1} s ({:.1} s copying the backup), then `kobo \
             ledger verify` {:.1} s: {} transactions ({expected} at the moment), {}",
            restored.recovered.as_secs_f64(),
            restored.copied.as_secs_f64(),
            verified.as_secs_f64(),
            transactions.unwrap_or(0),
            if ok { "clean" } else { "NOT AS EXPECTED" }
        );
        if !ok {
            println!("  ledger verify: {report}");
        }
        restores.push(json!({
            "from": label,
            "seconds": restored.recovered.as_secs_f64(),
            "copying_seconds": restored.copied.as_secs_f64(),
            "verify_seconds": verified.as_secs_f64(),
            "transactions": transactions,
            "expected": expected,
            "ok": ok,
        }));
        patroni.discard(restored).await?;
    }
    Ok((
        json!({
            "transactions_written": args.transactions,
            "seed_seconds": seeded,
            "backup_a_seconds": backup_a.as_secs_f64(),
            "backup_b_seconds": backup_b.as_secs_f64(),
            "backup_b_database_bytes": size_b,
            "backup_b_repository_bytes": repository_b,
            "transactions_at_target": expected,
            "restores": restores,
        }),
        clean,
    ))
}
