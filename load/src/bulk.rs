//! Bulk transfers (issue 60) as an integration makes them: a batch of items created under an
//! `Idempotency-Key`, read until it is validated, authorised with its total and count, read
//! until it is completed, and its items listed page by page. Every call is sent again, on the
//! next process, after an answer that says nothing happened or might have (a transient code, no
//! answer): the keyed ones under the same key, so a retry is the same request. Shared by
//! `kobo-load payroll-chaos` ([`crate::payroll`]) and the bench's payroll scenario.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use crate::api::{amount_of, naira, Api, Outcome};
use crate::provision::Token;

pub const CREATE: &str = "/api/v1/transaction/transfer/api/create_bulk_transfer";
pub const GET: &str = "/api/v1/transaction/transfer/api/get_bulk_transfer";
pub const AUTHORIZE: &str = "/api/v1/transaction/transfer/api/authorize_bulk_transfer";
pub const ITEMS: &str = "/api/v1/transaction/transfer/api/fetch_bulk_transfer_items";
pub const ACCOUNTS: &str = "/api/v1/account/api/fetch_customer_accounts";
pub const TRANSFERS: &str = "/api/v1/transaction/transfer/api/fetch_transfers";

/// Kobo's own bank code: an item to it is paid intra-bank.
pub const OUR_BANK: &str = "090823";

/// One item of a batch as it is sent.
#[derive(Clone, Debug)]
pub struct Item {
    pub account_number: String,
    pub bank_code: String,
    pub account_name: String,
    /// In kobo.
    pub amount: i64,
    pub reference: String,
}

impl Item {
    pub fn to_json(&self) -> Value {
        json!({
            "account_number": self.account_number,
            "bank_code": self.bank_code,
            "account_name": self.account_name,
            "amount": naira(self.amount),
            "reference": self.reference,
        })
    }
}

/// Sends `body` to `path` with `token` (and `key` as its `Idempotency-Key`) until an answer
/// that is not transient, for at most `patience`; each attempt after the first goes to the next
/// process. Returns that answer (`00` or a refusal); an error when patience ran out.
pub async fn call(
    api: &Api,
    token: &Token,
    path: &str,
    key: Option<&str>,
    body: &Value,
    patience: Duration,
) -> Result<Outcome> {
    let started = Instant::now();
    let mut process = 0usize;
    loop {
        let outcome = match key {
            Some(key) => token.post_keyed(api, process, path, key, body).await,
            None => token.post(api, process, path, body).await,
        };
        let again = match &outcome {
            // A token taken again after `41` (Token::post did), or a transient answer.
            Outcome::Answer { code, .. } => code == "41" || crate::chaos::is_transient(code),
            Outcome::NoAnswer { .. } => true,
        };
        if !again {
            return Ok(outcome);
        }
        if started.elapsed() > patience {
            bail!("{path}: no answer but {outcome:?} after {patience:?} of trying");
        }
        let wait = match &outcome {
            Outcome::Answer {
                retry_after: Some(seconds),
                ..
            } => Duration::from_secs((*seconds).min(2)),
            _ => Duration::from_millis(100),
        };
        tokio::time::sleep(wait).await;
        process += 1;
    }
}

/// [`call`], the `data` of its `00` answer or an error naming the refusal.
pub async fn data(
    api: &Api,
    token: &Token,
    path: &str,
    key: Option<&str>,
    body: &Value,
    patience: Duration,
) -> Result<Value> {
    let outcome = call(api, token, path, key, body, patience).await?;
    match outcome.data() {
        Some(data) => Ok(data.clone()),
        None => bail!("{path} {body}: {}", describe(&outcome)),
    }
}

/// An answer in one line: code, HTTP status, message.
pub fn describe(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Answer {
            status, code, body, ..
        } => format!(
            "{code} (HTTP {status}) {}",
            body.get("message").and_then(Value::as_str).unwrap_or("")
        ),
        Outcome::NoAnswer { error, .. } => format!("no answer ({error})"),
    }
}

/// Creates a batch of `items` from `source` under `key` (`skip_invalid`): the batch as answered.
pub async fn create(
    api: &Api,
    token: &Token,
    key: &str,
    source: &str,
    reference: &str,
    items: &[Item],
) -> Result<Value> {
    let body = json!({
        "source_account_number": source,
        "on_invalid": "skip_invalid",
        "reference": reference,
        "narration": "Salaries",
        "items": items.iter().map(Item::to_json).collect::<Vec<_>>(),
    });
    data(
        api,
        token,
        CREATE,
        Some(key),
        &body,
        Duration::from_secs(120),
    )
    .await
}

/// The batch `id` now.
pub async fn get(api: &Api, token: &Token, id: &str) -> Result<Value> {
    data(
        api,
        token,
        GET,
        None,
        &json!({"bulk_transfer_id": id}),
        Duration::from_secs(120),
    )
    .await
}

/// Reads the batch every `every` until its status is not `waiting` (e.g. `validating`), at most
/// `patience`: the batch then.
pub async fn wait_past(
    api: &Api,
    token: &Token,
    id: &str,
    waiting: &[&str],
    every: Duration,
    patience: Duration,
) -> Result<Value> {
    let started = Instant::now();
    loop {
        let batch = get(api, token, id).await?;
        let status = batch["status"].as_str().unwrap_or_default();
        if !waiting.contains(&status) {
            return Ok(batch);
        }
        if started.elapsed() > patience {
            bail!(
                "bulk transfer {id} still {status} after {:.0} s: counts {}",
                patience.as_secs_f64(),
                batch["counts"]
            );
        }
        tokio::time::sleep(every).await;
    }
}

/// Authorises the validated `batch` under `key` with the total and count it shows: the answer's
/// batch.
pub async fn authorise(api: &Api, token: &Token, key: &str, batch: &Value) -> Result<Value> {
    let body = json!({
        "bulk_transfer_id": batch["bulk_transfer_id"],
        "total": batch["totals"]["total"],
        "item_count": batch["counts"]["valid"],
    });
    data(
        api,
        token,
        AUTHORIZE,
        Some(key),
        &body,
        Duration::from_secs(120),
    )
    .await
}

/// Every item of the batch, in order (pages of 100).
pub async fn items(api: &Api, token: &Token, id: &str) -> Result<Vec<Value>> {
    let mut all = Vec::new();
    for page in 1.. {
        let body = json!({"bulk_transfer_id": id, "page": page, "page_size": 100});
        let outcome = call(api, token, ITEMS, None, &body, Duration::from_secs(120)).await?;
        let (data, more) = match &outcome {
            Outcome::Answer { code, body, .. } if code == "00" => (
                body["data"].as_array().cloned().unwrap_or_default(),
                body["pagination"]["has_more"] == json!(true),
            ),
            other => bail!("{ITEMS} page {page}: {}", describe(other)),
        };
        let empty = data.is_empty();
        all.extend(data);
        if !more || empty {
            break;
        }
    }
    Ok(all)
}

/// `counts.<name>` of a batch.
pub fn count(batch: &Value, name: &str) -> u64 {
    batch["counts"][name].as_u64().unwrap_or(0)
}

/// `totals.<name>` of a batch, in kobo.
pub fn total(batch: &Value, name: &str) -> Result<i64> {
    amount_of(&batch["totals"], name).with_context(|| format!("totals.{name} of {batch}"))
}

/// Items paid or being paid: the executor's cursor, as the counts show it.
pub fn taken(batch: &Value) -> u64 {
    ["succeeded", "processing", "failed", "reversed"]
        .iter()
        .map(|name| count(batch, name))
        .sum()
}

/// The balance of every account of the integration's business, in kobo, by number.
pub async fn balances(api: &Api, token: &Token) -> Result<BTreeMap<String, i64>> {
    let listed = data(
        api,
        token,
        ACCOUNTS,
        None,
        &json!({"limit": 100}),
        Duration::from_secs(120),
    )
    .await?;
    listed
        .as_array()
        .context("fetch_customer_accounts: data is not a list")?
        .iter()
        .map(|account| {
            let number = account["account_number"]
                .as_str()
                .context("an account without a number")?
                .to_owned();
            let balance = amount_of(account, "balance")
                .with_context(|| format!("account {number} without a balance"))?;
            Ok((number, balance))
        })
        .collect()
}
