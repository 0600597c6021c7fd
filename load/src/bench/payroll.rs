//! (p) A salary run as one bulk transfer (issue 60): `--payroll-items` (1,000) intra-bank
//! items from the pool account (the one `hot` pays from) to the first business's other
//! accounts, NGN 1.00 to 10.00 each. The batch is created and validated, then authorised, and
//! timed from the authorisation's answer to `completed`, read every 50 ms: items per second,
//! which the issue compares with the `hot` payouts per second of the same run (one account's
//! payouts one request each). The moment the first item is taken is noted too, so that the
//! worker's pick-up (it looks for work every second when idle) can be told from its pace.

use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use serde_json::json;

use super::driver::round;
use super::reference::Reference;
use super::scenarios::{Target, OUR_BANK};
use crate::bulk::{self, Item};

/// How long validation, then payment, may take before the run gives up on the batch.
const PATIENCE: Duration = Duration::from_secs(900);

/// How often the batch is read while it is paid.
const POLL: Duration = Duration::from_millis(50);

/// Makes, validates, authorises and times the batch of `count` items.
pub async fn run(target: &Target, count: usize) -> Result<Reference> {
    let business = &target.businesses[0];
    let token = &business.integration;
    let recipients = &business.accounts[1..];
    let mut rng = target.rng(0, 0x9A11);
    let items: Vec<Item> = (0..count)
        .map(|n| {
            let to = &recipients[n % recipients.len()];
            Item {
                account_number: to.number.clone(),
                bank_code: OUR_BANK.to_owned(),
                account_name: to.name.clone(),
                amount: rng.between(100, 1000),
                reference: target.key("p", 0, n as u64),
            }
        })
        .collect();
    let validating = Instant::now();
    let created = bulk::create(
        &target.api,
        token,
        &target.key("p-create", 0, 0),
        &target.pool().number,
        &target.key("p-batch", 0, 0),
        &items,
    )
    .await?;
    let id = created["bulk_transfer_id"].as_str().unwrap_or_default();
    let validated =
        bulk::wait_past(&target.api, token, id, &["validating"], POLL, PATIENCE).await?;
    let validate_seconds = validating.elapsed().as_secs_f64();
    if validated["status"] != "validated" || bulk::count(&validated, "valid") != count as u64 {
        bail!("the salary run was not validated whole: {validated}");
    }
    let authorised =
        bulk::authorise(&target.api, token, &target.key("p-go", 0, 0), &validated).await?;
    let started = Instant::now();
    if authorised["status"] != "executing" {
        bail!("the authorised salary run is not executing: {authorised}");
    }
    let mut first_taken = None;
    let done = loop {
        let batch = bulk::get(&target.api, token, id).await?;
        if first_taken.is_none() && bulk::taken(&batch) > 0 {
            first_taken = Some(started.elapsed().as_secs_f64());
        }
        if batch["status"] != "executing" {
            break batch;
        }
        if started.elapsed() > PATIENCE {
            bail!(
                "the salary run is still executing after {PATIENCE:?}: {}",
                batch["counts"]
            );
        }
        tokio::time::sleep(POLL).await;
    };
    let seconds = started.elapsed().as_secs_f64();
    let succeeded = bulk::count(&done, "succeeded");
    if done["status"] != "completed" || succeeded != count as u64 {
        bail!(
            "the salary run ended {}: {}",
            done["status"],
            done["counts"]
        );
    }
    let first = first_taken.unwrap_or(seconds);
    let per_second = count as f64 / seconds;
    println!(
        "  payroll   {count} intra-bank items: validated in {validate_seconds:.2} s; paid in \
         {seconds:.2} s after the authorisation ({per_second:.1} items/s; the first taken after \
         {first:.2} s, {:.1} items/s from there)",
        count as f64 / (seconds - first).max(0.001)
    );
    Ok(Reference {
        name: "payroll".to_owned(),
        per_second,
        detail: json!({
            "items": count,
            "seconds": round(seconds, 3),
            "first_item_seconds": round(first, 3),
            "items_per_second_after_first": round(count as f64 / (seconds - first).max(0.001), 1),
            "validate_seconds": round(validate_seconds, 3),
            "bulk_transfer_id": id,
        }),
    })
}
