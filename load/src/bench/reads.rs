//! (e) Reading transactions: the first page of an account holding many, and a page deep in
//! its list, reached the way a client reaches it (the keyset cursor) and checked against the
//! numbered page at the same place before it is timed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::driver::{in_parallel, judge, Load};
use super::reference::seed_transactions;
use super::report::{reads_deep, reads_first, rows_label, StoreReport};
use super::scenarios::{page, Page, Target, FETCH_TRANSACTIONS};
use crate::cluster::Cluster;
use crate::provision::{create_account, credit};

/// Items per page, first and deep alike.
pub const PAGE_SIZE: usize = 50;
/// The deep page follows this fraction of the account's transactions.
const DEPTH: f64 = 0.9;
/// Pages the cursor is followed from the first page at most, and for how long; deeper, the
/// place is reached with one numbered page (an `OFFSET`, slow but once) and only checked by
/// the page after it.
const WALK_MAX_PAGES: u64 = 2_000;
const WALK_MAX_TIME: Duration = Duration::from_secs(60);
/// Inbound credits made at once when the rows are made through the API.
const CREDITS_AT_ONCE: usize = 16;

/// How many rows, and how to make them.
pub struct Sizes {
    /// The account the ratios call small (100k in a full run), and the big one (10M; 0: none).
    pub rows: u64,
    pub big_rows: u64,
    /// Rows made through the API instead, when `kobo bench seed-transactions` is not there.
    pub api_rows: u64,
}

/// Makes the accounts, fills them and measures both pages of each.
pub async fn run(
    cluster: &Cluster,
    target: &Arc<Target>,
    load: Load,
    sizes: &Sizes,
    out: &mut StoreReport,
) -> Result<()> {
    let seeding = cluster.has_command(&["bench", "seed-transactions"]).await;
    let mut counts = vec![sizes.rows];
    if sizes.big_rows > 0 {
        counts.push(sizes.big_rows);
    }
    if !seeding {
        for count in &counts {
            out.skip(
                format!("reads @{}", rows_label(*count)),
                "seed-transactions unavailable",
            );
        }
        // The paging is still measured and checked, on what the API can make in a while.
        counts = vec![sizes.api_rows];
    }
    for (index, count) in counts.into_iter().enumerate() {
        let label = if seeding {
            rows_label(count)
        } else {
            format!("{} via API", rows_label(count))
        };
        let account = create_account(
            &target.api,
            &target.businesses[0].integration,
            &format!("Bench reads {label}"),
        )
        .await?;
        let started = Instant::now();
        let via = if seeding {
            seed_transactions(cluster, &account.number, count)
                .await?
                .context("kobo bench seed-transactions went away")?;
            "kobo bench seed-transactions"
        } else {
            credit_many(target, &account.number, count).await?;
            "inbound credits through the API"
        };
        let made = format!(
            "{count} rows by {via} in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        println!("  {:<9} {made}", out.name());
        let first = Arc::new(Page {
            target: target.clone(),
            body: json!({"filters": {"account_number": account.number}, "limit": PAGE_SIZE}),
            expected: PAGE_SIZE,
        });
        let server = cluster.pid(0);
        out.add(
            reads_first(&label),
            super::measured(load, first, server, page).await,
            Some(made),
        );
        let (body, how) = deep_cursor(target, &account.number, count).await?;
        let deep = Arc::new(Page {
            target: target.clone(),
            body,
            expected: PAGE_SIZE,
        });
        out.add(
            reads_deep(&label),
            super::measured(load, deep, server, page).await,
            Some(how),
        );
        if index == 0 {
            out.reads_small = Some(label);
        } else {
            out.reads_big = Some(label);
        }
    }
    Ok(())
}

/// `count` inbound credits of NGN 1.00 into `account`.
async fn credit_many(target: &Arc<Target>, account: &str, count: u64) -> Result<()> {
    in_parallel(count as usize, CREDITS_AT_ONCE, |n| {
        let (target, account) = (target.clone(), account.to_owned());
        async move {
            credit(
                &target.api,
                &target.businesses[0].integration,
                n,
                &account,
                100,
            )
            .await
        }
    })
    .await?;
    Ok(())
}

/// One page of the account's transactions: its items and its `pagination`.
async fn fetch(target: &Target, body: &Value) -> Result<(Vec<Value>, Value)> {
    let outcome = target.businesses[0]
        .integration
        .post(&target.api, 0, FETCH_TRANSACTIONS, body)
        .await;
    let items = judge(&outcome)
        .map_err(|failure| anyhow::anyhow!("fetch_transactions {body}: {failure:?}"))?
        .as_array()
        .context("fetch_transactions: data is not a list")?
        .clone();
    let pagination = match &outcome {
        crate::api::Outcome::Answer { body, .. } => body["pagination"].clone(),
        crate::api::Outcome::NoAnswer { .. } => Value::Null,
    };
    Ok((items, pagination))
}

/// The keyset request of the page after [`DEPTH`] of the account's `rows` transactions, and
/// how it was found. The place is the last row of a numbered page; the keyset page after it
/// must hold exactly the next numbered page, and (when the depth is within
/// [`WALK_MAX_PAGES`]) following the cursor from the first page must arrive at the same row.
async fn deep_cursor(target: &Target, account: &str, rows: u64) -> Result<(Value, String)> {
    let pages = rows / PAGE_SIZE as u64;
    if pages < 2 {
        bail!("reads need at least {} transactions", 2 * PAGE_SIZE);
    }
    let depth = ((pages as f64 * DEPTH) as u64).clamp(1, pages - 1);
    let filters = json!({"account_number": account});
    let started = Instant::now();
    let (jumped, _) = fetch(
        target,
        &json!({"filters": filters, "page": depth, "page_size": PAGE_SIZE}),
    )
    .await?;
    let offset_ms = started.elapsed().as_secs_f64() * 1000.0;
    let last = jumped
        .last()
        .context("a numbered page inside the list is empty")?;
    let keyset = json!({
        "filters": filters,
        "limit": PAGE_SIZE,
        "cursor_created_at": last["created_at"],
        "cursor_id": last["id"],
    });
    let (numbered, _) = fetch(
        target,
        &json!({"filters": filters, "page": depth + 1, "page_size": PAGE_SIZE}),
    )
    .await?;
    let (after, _) = fetch(target, &keyset).await?;
    if ids(&after) != ids(&numbered) || after.len() != PAGE_SIZE {
        bail!(
            "paging: the keyset page after row {} is not numbered page {} ({} and {} items)",
            depth * PAGE_SIZE as u64,
            depth + 1,
            after.len(),
            numbered.len()
        );
    }
    let mut how = format!(
        "the page after row {} of {rows}; the numbered page there took {offset_ms:.0} ms",
        depth * PAGE_SIZE as u64
    );
    if depth <= WALK_MAX_PAGES {
        let started = Instant::now();
        match walk(target, &filters, depth).await? {
            Walk::Reached(id) if id.as_deref() == last["id"].as_str() => how.push_str(&format!(
                ", the cursor walk of {depth} pages to it agreed ({:.1} s)",
                started.elapsed().as_secs_f64()
            )),
            Walk::Reached(id) => bail!(
                "paging: {depth} keyset pages end at row {id:?}, numbered page {depth} at {}",
                last["id"]
            ),
            Walk::OutOfTime(pages) => how.push_str(&format!(
                ", the cursor walk to it stopped after {pages} pages in {} s (in order, no row twice)",
                WALK_MAX_TIME.as_secs()
            )),
        }
    }
    Ok((keyset, how))
}

/// Where a cursor walk ended.
enum Walk {
    /// The id of the last row of the last page.
    Reached(Option<String>),
    /// [`WALK_MAX_TIME`] passed after this many pages.
    OutOfTime(u64),
}

/// Follows the cursor for `pages` pages from the first, checking that every page is full, in
/// order (newest first) and new.
async fn walk(target: &Target, filters: &Value, pages: u64) -> Result<Walk> {
    let started = Instant::now();
    let mut body = json!({"filters": filters, "limit": PAGE_SIZE});
    let mut previous: Option<(String, String)> = None;
    for number in 1..=pages {
        if started.elapsed() > WALK_MAX_TIME {
            return Ok(Walk::OutOfTime(number - 1));
        }
        let (items, pagination) = fetch(target, &body).await?;
        if items.len() != PAGE_SIZE || pagination["has_more"] != true {
            bail!("paging: keyset page {number} has {} items", items.len());
        }
        for item in &items {
            let key = (
                timestamp(&item["created_at"])?,
                item["id"].as_str().unwrap_or_default().to_owned(),
            );
            if previous.as_ref().is_some_and(|before| key >= *before) {
                bail!("paging: keyset page {number} is out of order or repeats a row at {key:?}");
            }
            previous = Some(key);
        }
        body = json!({
            "filters": filters,
            "limit": PAGE_SIZE,
            "cursor_created_at": pagination["next_cursor_created_at"],
            "cursor_id": pagination["next_cursor_id"],
        });
    }
    Ok(Walk::Reached(body["cursor_id"].as_str().map(str::to_owned)))
}

/// A `created_at` as a comparable instant's text (RFC 3339, UTC, nanoseconds).
fn timestamp(value: &Value) -> Result<String> {
    let text = value.as_str().context("an item without created_at")?;
    let parsed = chrono::DateTime::parse_from_rfc3339(text)
        .with_context(|| format!("created_at {text:?} is not RFC 3339"))?;
    Ok(parsed
        .with_timezone(&chrono::Utc)
        .format("%Y-%m-%dT%H:%M:%S%.9f")
        .to_string())
}

fn ids(items: &[Value]) -> Vec<&str> {
    items
        .iter()
        .map(|item| item["id"].as_str().unwrap_or_default())
        .collect()
}
