//! (x) An export of a long account: `kobo bench seed-transactions` fills an account with
//! `--export-rows` credits, then `create_export_api` (`transaction_csv`, the account, today)
//! is timed from its creation to `ready` (polled every 50 ms): its rows per second, and the
//! server's resident memory before and at its peak while the export is written (sampled from
//! `/proc/<pid>/status` every 50 ms), which a writer holding one part at a time keeps flat.
//! Every part is then downloaded and its rows counted: the file must hold every row once.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use base64::Engine;
use serde_json::{json, Value};

use super::reference::{seed_transactions, Reference};
use super::scenarios::Target;
use super::soak::rss_kib;
use crate::cluster::Cluster;
use crate::provision::{create_account, expect_ok};

/// How long an export may take before the run gives up on it.
const PATIENCE: Duration = Duration::from_secs(1_800);

async fn post(target: &Target, path: &str, body: Value) -> Result<Value> {
    let integration = &target.businesses[0].integration;
    expect_ok(integration.post(&target.api, 0, path, &body).await, path)
}

/// Seeds `rows`, exports them and reads the file back; `None` when the binary cannot seed.
pub async fn run(cluster: &Cluster, target: &Target, rows: u64) -> Result<Option<Reference>> {
    let account = create_account(
        &target.api,
        &target.businesses[0].integration,
        "Bench export",
    )
    .await?;
    let Some(seeded) = seed_transactions(cluster, &account.number, rows).await? else {
        return Ok(None);
    };
    let pid = cluster.pid(0).context("the server's pid")?;
    // Lagos today (the seeded rows are written now).
    let today = (chrono::Utc::now() + chrono::Duration::hours(1))
        .date_naive()
        .to_string();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = rss_kib(pid).unwrap_or(0);
    let started = Instant::now();
    let export = post(
        target,
        "/api/v1/export/api/create_export",
        json!({"category": "transaction_csv", "account_number": account.number,
            "start_date": today, "end_date": today}),
    )
    .await?;
    let id = export["export_id"].clone();
    let mut peak = before;
    let ready = loop {
        if let Some(rss) = rss_kib(pid) {
            peak = peak.max(rss);
        }
        let now = post(
            target,
            "/api/v1/export/api/get_export",
            json!({"export_id": id}),
        )
        .await?;
        match now["status"].as_str() {
            Some("ready") => break now,
            Some("pending" | "running") if started.elapsed() < PATIENCE => {}
            _ => bail!("the export did not become ready: {now}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let seconds = started.elapsed().as_secs_f64();
    let written = ready["row_count"].as_u64().unwrap_or(0);
    if written != rows {
        bail!("the export wrote {written} rows of {rows}");
    }
    // The file, part by part: a header and a row per transaction.
    let parts = ready["parts"].as_u64().unwrap_or(0);
    let mut lines = 0u64;
    let mut bytes = 0u64;
    for part in 1..=parts {
        let data = post(
            target,
            "/api/v1/export/api/download_export",
            json!({"export_id": id, "part": part}),
        )
        .await?;
        let content = base64::engine::general_purpose::STANDARD
            .decode(data["content_base64"].as_str().unwrap_or_default())
            .context("a part's base64")?;
        bytes += content.len() as u64;
        lines += content.windows(2).filter(|pair| pair == b"\r\n").count() as u64;
    }
    if lines != rows + 1 {
        bail!("the export's file holds {lines} lines for {rows} rows and a header");
    }
    println!(
        "  export    {rows} rows ({seeded:.1} s to seed) in {seconds:.2} s: {:.0} rows/s; \
         server RSS {} → {} MiB; {parts} parts, {:.1} MB",
        rows as f64 / seconds,
        before / 1024,
        peak / 1024,
        bytes as f64 / 1e6
    );
    Ok(Some(Reference {
        name: "export".to_owned(),
        per_second: rows as f64 / seconds,
        detail: json!({"rows": rows, "seconds": seconds, "parts": parts, "bytes": bytes,
            "rss_before_kib": before, "rss_peak_kib": peak}),
    }))
}
