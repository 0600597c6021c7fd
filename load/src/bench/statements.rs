//! (s) A month's statement of an account with a long history (issue 61): "a one-month
//! statement of an account with 10 million postings: p99 at most 1.5 times the same statement
//! of an account with 100 thousand".
//!
//! Two accounts, each the main account of a business of its own made for it (nothing on its
//! ledger yet, so its history can be put in the past: a business's ledger time only moves
//! forward). `kobo bench seed-transactions --from --until` gives each `lines` credits spread
//! over the previous Lagos calendar month, and before that month its history: `rows` credits
//! (small) or `big_rows` (large), spread over the [`HISTORY_DAYS`] before it. The same
//! statement, then, of two accounts whose histories differ a hundredfold (ten on SQLite).
//!
//! The statement is checked once (every page, its lines, its figures), then timed two ways
//! with `get_account_statement_api` (integration token), at most [`CLIENTS`] at once: its
//! first page (100 lines and the period's figures, as a screen shows it), and the whole month
//! (every page, 100 lines each, following `pagination`'s cursor, as a user downloading the
//! month reads it; each page carries the period's figures again, so each pays for them).
//! The target's ratio is the whole month's p99, large ÷ small.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use chrono::{Datelike, Days, FixedOffset, Months, NaiveDate, TimeZone};
use serde_json::{json, Value};

use super::driver::{judge, Answer, Failure, Load};
use super::reference::seed_transactions_over;
use super::report::{rows_label, statement_first, statement_month, StoreReport};
use super::scenarios::Target;
use crate::api::Outcome;
use crate::cluster::Cluster;
use crate::provision::{create_business, Token};

pub const GET_STATEMENT: &str = "/api/v1/account/api/get_account_statement";
/// Lines a page: the API's largest.
const PAGE_SIZE: u64 = 100;
/// The history before the month is spread over these days.
const HISTORY_DAYS: u64 = 330;
/// Clients at once: a few users reading statements, not the throughput scenarios' queue, so
/// that the p99 is a statement's own time more than its wait behind others on two cores.
pub const CLIENTS: usize = 4;

/// How many rows each account holds.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// History before the month: the small account's and the large one's (0: none).
    pub rows: u64,
    pub big_rows: u64,
    /// Credits in the month, each account's.
    pub lines: u64,
}

/// The statement's period: the previous Lagos calendar month, and its instants.
struct Month {
    start: NaiveDate,
    end: NaiveDate,
    /// RFC 3339, Lagos midnights: the history's start, the month's start and its end.
    history_from: String,
    from: String,
    until: String,
}

impl Month {
    fn previous() -> Result<Month> {
        let lagos = FixedOffset::east_opt(3600).context("Lagos")?;
        let today = chrono::Utc::now().with_timezone(&lagos).date_naive();
        let this_month = today.with_day(1).context("a first of the month")?;
        let start = this_month - Months::new(1);
        let midnight = |day: NaiveDate| -> Result<String> {
            Ok(lagos
                .from_local_datetime(&day.and_hms_opt(0, 0, 0).context("midnight")?)
                .single()
                .context("one Lagos midnight")?
                .to_rfc3339())
        };
        Ok(Month {
            start,
            end: this_month.pred_opt().context("the month's last day")?,
            history_from: midnight(start - Days::new(HISTORY_DAYS))?,
            from: midnight(start)?,
            until: midnight(this_month)?,
        })
    }
}

/// One account's statement, timed: its first page or the whole month.
struct Statement {
    target: Arc<Target>,
    integration: Arc<Token>,
    body: Value,
    lines: u64,
    whole: bool,
}

/// Makes both accounts, fills them, checks each statement and times it. `None` when the `kobo`
/// binary cannot seed history in the past.
pub async fn run(
    cluster: &Cluster,
    target: &Arc<Target>,
    load: Load,
    sizes: &Sizes,
    out: &mut StoreReport,
) -> Result<()> {
    let words = ["bench", "seed-transactions"];
    if !cluster.has_flag(&words, "--from").await {
        out.skip(
            "statement",
            "kobo bench seed-transactions --from unavailable",
        );
        return Ok(());
    }
    let month = Month::previous()?;
    let load = Load {
        clients: load.clients.min(CLIENTS),
        ..load
    };
    let mut histories = vec![sizes.rows];
    if sizes.big_rows > 0 {
        histories.push(sizes.big_rows);
    }
    // Every account seeded and checked first, then each timed, one right after the other: the
    // minutes of seeding the large one are not between the two measurements.
    let mut accounts = Vec::new();
    for (index, rows) in histories.into_iter().enumerate() {
        let prepared = prepare(cluster, target, &month, sizes.lines, index, rows).await?;
        println!(
            "  {:<9} statement @{}: {}; {}",
            out.name(),
            prepared.label,
            prepared.made,
            prepared.checked
        );
        accounts.push(prepared);
    }
    let server = cluster.pid(0);
    for whole in [true, false] {
        for account in &accounts {
            let statement = Arc::new(Statement {
                target: target.clone(),
                integration: account.integration.clone(),
                body: account.body.clone(),
                lines: sizes.lines,
                whole,
            });
            let m = super::measured(load, statement, server, read).await;
            let (scenario, note) = match whole {
                true => (statement_month(&account.label), &account.checked),
                false => (statement_first(&account.label), &account.made),
            };
            out.add(
                scenario,
                m,
                Some(format!("{note}; {} clients", load.clients)),
            );
        }
    }
    for (index, account) in accounts.into_iter().enumerate() {
        match index {
            0 => out.statement_small = Some(account.label),
            _ => out.statement_big = Some(account.label),
        }
    }
    Ok(())
}

/// An account ready to be timed: its statement's request and what was done to make it.
struct Prepared {
    label: String,
    integration: Arc<Token>,
    body: Value,
    /// How it was seeded, and how its statement read when checked.
    made: String,
    checked: String,
}

/// A fresh business's main account with `rows` credits before the month and `lines` in it,
/// its statement checked once.
async fn prepare(
    cluster: &Cluster,
    target: &Arc<Target>,
    month: &Month,
    lines: u64,
    index: usize,
    rows: u64,
) -> Result<Prepared> {
    let label = rows_label(rows);
    let name = format!("Bench Statement {label} Ltd");
    let email = format!("statement-{index}@load-{}.kobo.test", std::process::id());
    let business = create_business(cluster, &target.api, &name, &email).await?;
    let account = business.main_account.number.clone();
    let started = Instant::now();
    for (count, from, until) in [
        (rows, &month.history_from, &month.from),
        (lines, &month.from, &month.until),
    ] {
        seed_transactions_over(
            cluster,
            &account,
            count,
            Some((from.as_str(), until.as_str())),
        )
        .await?
        .context("kobo bench seed-transactions went away")?;
    }
    let made = format!(
        "{lines} lines in {}, {rows} rows before; seeded in {:.1} s",
        month.start.format("%Y-%m"),
        started.elapsed().as_secs_f64()
    );
    let body = json!({"account_number": account, "start_date": month.start.to_string(),
        "end_date": month.end.to_string(), "limit": PAGE_SIZE});
    let checked = check(target, &business.integration, &body, rows, lines).await?;
    Ok(Prepared {
        label,
        integration: Arc::new(business.integration),
        body,
        made,
        checked,
    })
}

/// One page of the statement: the answer's `data` and `pagination`.
async fn page(
    target: &Target,
    integration: &Token,
    client: usize,
    body: &Value,
) -> Result<(Value, Value), Failure> {
    let outcome = integration
        .post(&target.api, client, GET_STATEMENT, body)
        .await;
    let data = judge(&outcome)?.clone();
    let pagination = match &outcome {
        Outcome::Answer { body, .. } => body["pagination"].clone(),
        Outcome::NoAnswer { .. } => Value::Null,
    };
    Ok((data, pagination))
}

/// `body` for the page after the one whose `pagination` this is, or `None` after the last.
fn next(body: &Value, pagination: &Value) -> Option<Value> {
    if pagination["has_more"] != true {
        return None;
    }
    let mut body = body.clone();
    body["cursor_created_at"] = pagination["next_cursor_created_at"].clone();
    body["cursor_id"] = pagination["next_cursor_id"].clone();
    Some(body)
}

/// Reads the whole statement once and checks it: `lines` credits of NGN 1.00, oldest first,
/// each inside the month and once, every page with the same figures, the opening balance the
/// `history` credits before it, reconciling. Says how long that read took.
async fn check(
    target: &Target,
    integration: &Token,
    body: &Value,
    history: u64,
    lines: u64,
) -> Result<String> {
    let started = Instant::now();
    let mut body = body.clone();
    let mut figures: Option<Value> = None;
    let mut seen = 0u64;
    let mut pages = 0u64;
    let mut previous: Option<(String, String)> = None;
    loop {
        let (mut data, pagination) = page(target, integration, 0, &body)
            .await
            .map_err(|failure| anyhow::anyhow!("get_account_statement_api: {failure:?}"))?;
        pages += 1;
        for line in data["lines"].as_array().context("a page without lines")? {
            let key = (
                line["created_at"].as_str().unwrap_or_default().to_owned(),
                line["id"].as_str().unwrap_or_default().to_owned(),
            );
            let at = chrono::DateTime::parse_from_rfc3339(&key.0)
                .with_context(|| format!("a line's created_at {:?}", key.0))?;
            if previous.as_ref().is_some_and(|before| {
                chrono::DateTime::parse_from_rfc3339(&before.0).is_ok_and(|before| before >= at)
            }) {
                bail!("statement: line {seen} is not after the one before it: {line}");
            }
            previous = Some(key);
            seen += 1;
        }
        data["lines"] = json!([]);
        match &figures {
            Some(first) if first != &data => bail!("statement: page {pages}'s figures differ"),
            Some(_) => {}
            None => figures = Some(data),
        }
        match next(&body, &pagination) {
            Some(after) => body = after,
            None => break,
        }
    }
    let figures = figures.context("no page")?;
    let naira = |kobo: u64| format!("{}.{:02}", kobo / 100, kobo % 100);
    let expected = json!({
        "opening_balance": naira(history * 100),
        "closing_balance": naira((history + lines) * 100),
        "total_credits": naira(lines * 100),
        "credit_count": lines,
        "debit_count": 0,
    });
    for (field, value) in expected.as_object().into_iter().flatten() {
        if &figures[field] != value {
            bail!("statement: {field} is {}, {value} expected", figures[field]);
        }
    }
    if seen != lines {
        bail!("statement: {seen} lines, {lines} expected");
    }
    Ok(format!(
        "{pages} pages of up to {PAGE_SIZE}; checked once in {:.2} s",
        started.elapsed().as_secs_f64()
    ))
}

/// The timed operation: the first page, or every page of the month.
async fn read(statement: Arc<Statement>, client: usize, _sequence: u64) -> Answer {
    let Statement {
        target,
        integration,
        body,
        lines,
        whole,
    } = &*statement;
    let mut body = body.clone();
    let mut seen = 0u64;
    loop {
        let (data, pagination) = page(target, integration, client, &body).await?;
        seen += data["lines"].as_array().map_or(0, |page| page.len() as u64);
        if !whole {
            let expected = (*lines).min(PAGE_SIZE);
            if seen != expected {
                return Err(Failure::new(
                    "short page",
                    format!("{seen} lines, {expected} expected"),
                ));
            }
            return Ok(());
        }
        match next(&body, &pagination) {
            Some(after) => body = after,
            None => break,
        }
    }
    if seen != *lines {
        return Err(Failure::new(
            "short statement",
            format!("{seen} lines, {lines} expected"),
        ));
    }
    Ok(())
}
