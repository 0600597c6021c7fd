//! What the payouts are compared with, measured on the same machine in the same run:
//! PostgreSQL's own TPC-B-like `pgbench`, and `kobo bench ledger` (a payout's ledger
//! statements in one process, no HTTP); and the bulk loading of transactions for the reads.
//! Each answers `None` when the tool or the `kobo` command is not there, so a run skips it.

use std::process::Stdio;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use tokio::process::Command;

use super::driver::round;
use crate::cluster::{psql, Cluster};

/// A reference figure: operations per second and what else its tool said.
#[derive(Clone, Debug)]
pub struct Reference {
    pub name: String,
    pub per_second: f64,
    pub detail: Value,
}

impl Reference {
    pub fn to_json(&self) -> Value {
        json!({"name": self.name, "per_second": round(self.per_second, 1), "detail": self.detail})
    }
}

/// `pgbench -M prepared -c clients -j 2 -T seconds` (TPC-B-like) on a fresh database of
/// `scale` (`pgbench -i`), dropped afterwards.
pub async fn pgbench(clients: usize, seconds: u64, scale: u32) -> Result<Option<Reference>> {
    if Command::new("pgbench")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .await
        .is_err()
    {
        return Ok(None);
    }
    let name = format!(
        "kobo_pgbench_{}_{}",
        std::process::id(),
        chrono::Utc::now().timestamp_millis()
    );
    psql(&format!("CREATE DATABASE {name}")).await?;
    let measured = run_pgbench(&name, clients, seconds, scale).await;
    psql(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await?;
    measured.map(Some)
}

async fn run_pgbench(name: &str, clients: usize, seconds: u64, scale: u32) -> Result<Reference> {
    let connection = ["-h", "127.0.0.1", "-p", "5432", "-U", "postgres"];
    let started = Instant::now();
    tool(Command::new("pgbench").args(connection).args([
        "-i",
        "-q",
        "-s",
        &scale.to_string(),
        name,
    ]))
    .await?;
    let initialised = started.elapsed().as_secs_f64();
    let threads = clients.clamp(1, 2);
    let watch = super::cpu::Watch::after(std::time::Duration::ZERO, None);
    let out = tool(Command::new("pgbench").args(connection).args([
        "-M",
        "prepared",
        "-c",
        &clients.to_string(),
        "-j",
        &threads.to_string(),
        "-T",
        &seconds.to_string(),
        name,
    ]))
    .await?;
    let tps = parse_tps(&out).with_context(|| format!("no tps in pgbench's output:\n{out}"))?;
    let transactions = field(&out, "number of transactions actually processed: ")
        .and_then(|v| v.parse::<u64>().ok());
    // PostgreSQL's CPU per transaction, beside what a payout costs it (`cpu`).
    let cpu = watch.per_op(transactions.unwrap_or(0)).await;
    Ok(Reference {
        name: "pgbench".into(),
        per_second: tps,
        detail: json!({
            "command": format!("pgbench -M prepared -c {clients} -j {threads} -T {seconds} (scale {scale})"),
            "scale": scale,
            "init_seconds": round(initialised, 1),
            "latency_average_ms": field(&out, "latency average = ").and_then(|v| v.parse::<f64>().ok()),
            "transactions": transactions,
            "postgres_cpu_us_per_transaction": cpu.map(|cpu| cpu.postgres.round()),
        }),
    })
}

/// pgbench's throughput without the time to connect (`tps = 1234.5 (without initial
/// connection time)`).
fn parse_tps(out: &str) -> Option<f64> {
    out.lines()
        .find(|line| line.starts_with("tps = ") && line.contains("without initial connection"))
        .and_then(|line| line["tps = ".len()..].split_whitespace().next())
        .and_then(|value| value.parse().ok())
}

/// The first word after `prefix` on the line that starts with it.
fn field<'a>(out: &'a str, prefix: &str) -> Option<&'a str> {
    out.lines()
        .find_map(|line| line.strip_prefix(prefix))
        .and_then(|rest| rest.split_whitespace().next())
}

/// Runs a tool to its end; its standard output, or an error with what it said.
async fn tool(command: &mut Command) -> Result<String> {
    let output = command
        .stdin(Stdio::null())
        .output()
        .await
        .with_context(|| format!("cannot run {command:?}"))?;
    if !output.status.success() {
        bail!(
            "{command:?} failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// `kobo bench ledger --business <id> --transfers <n>`: the ledger statements of `n` payouts
/// in one process, on the cluster's store.
pub async fn ledger(
    cluster: &Cluster,
    business: &str,
    transfers: u64,
) -> Result<Option<Reference>> {
    if !cluster.has_command(&["bench", "ledger"]).await {
        return Ok(None);
    }
    let out = cluster
        .cli(&[
            "bench",
            "ledger",
            "--business",
            business,
            "--transfers",
            &transfers.to_string(),
        ])
        .await?;
    let seconds = out["seconds"]
        .as_f64()
        .with_context(|| format!("kobo bench ledger without seconds: {out}"))?;
    let done = out["transfers"].as_u64().unwrap_or(transfers);
    let per_second = out["per_second"]
        .as_f64()
        .unwrap_or(done as f64 / seconds.max(1e-9));
    Ok(Some(Reference {
        name: "ledger".into(),
        per_second,
        detail: json!({"transfers": done, "seconds": seconds}),
    }))
}

/// `kobo bench seed-transactions --account <n> --count <count>`: inserts `count` inbound
/// credits into the account, now; the seconds it took.
pub async fn seed_transactions(
    cluster: &Cluster,
    account: &str,
    count: u64,
) -> Result<Option<f64>> {
    seed_transactions_over(cluster, account, count, None).await
}

/// [`seed_transactions`], spread evenly over `[from, until)` (RFC 3339) when given
/// (`--from`, `--until`).
pub async fn seed_transactions_over(
    cluster: &Cluster,
    account: &str,
    count: u64,
    span: Option<(&str, &str)>,
) -> Result<Option<f64>> {
    if !cluster.has_command(&["bench", "seed-transactions"]).await {
        return Ok(None);
    }
    let count_text = count.to_string();
    let mut args = vec![
        "bench",
        "seed-transactions",
        "--account",
        account,
        "--count",
        &count_text,
    ];
    if let Some((from, until)) = span {
        args.extend(["--from", from, "--until", until]);
    }
    let out = cluster.cli(&args).await?;
    let inserted = out["inserted"].as_u64();
    if inserted != Some(count) {
        bail!("kobo bench seed-transactions: {count} asked, {out} answered");
    }
    Ok(Some(out["seconds"].as_f64().unwrap_or(f64::NAN)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgbench_output_is_read() {
        let out = "transaction type: <builtin: TPC-B (sort of)>\nscaling factor: 10\n\
                   number of transactions actually processed: 41234\n\
                   latency average = 7.761 ms\ninitial connection time = 12.345 ms\n\
                   tps = 2061.712345 (without initial connection time)\n";
        assert_eq!(parse_tps(out), Some(2061.712345));
        assert_eq!(field(out, "latency average = "), Some("7.761"));
        assert_eq!(
            field(out, "number of transactions actually processed: "),
            Some("41234")
        );
        assert_eq!(
            parse_tps("tps = 12 (including connections establishing)"),
            None
        );
    }
}
