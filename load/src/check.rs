//! The checker: from the history file and what the API answers once everything settled (and
//! `kobo ledger verify`), counts every violation of the bank's promises. It reads no table of
//! kobo's and shares no code with it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{bail, Result};
use serde_json::{json, Value};

use crate::api::{amount_of, kobo, Api};
use crate::cluster::Cluster;
use crate::history::History;
use crate::provision::Business;
use crate::receiver::Receiver;

pub struct Inputs<'a> {
    pub history: &'a Path,
    pub api: &'a Api,
    pub businesses: &'a [Business],
    pub cluster: &'a Cluster,
    pub receiver: &'a Receiver,
    /// With primary kills: each must be followed by a payout sent after it and acknowledged
    /// within this (`slow_failover`).
    pub failover_within: Option<std::time::Duration>,
}

/// The kinds of violation, in the order the table shows them; the goal is zero in each.
pub const VIOLATIONS: [(&str, &str); 26] = [
    (
        "money_not_conserved",
        "funding ≠ balances + money that left",
    ),
    ("negative_balance_read", "a balance read below zero"),
    ("ack_lost", "an acknowledged transfer missing afterwards"),
    (
        "ack_duplicated",
        "an acknowledged transfer listed more than once",
    ),
    (
        "key_executed_twice",
        "one idempotency key, more than one transfer",
    ),
    (
        "replay_mismatch",
        "the same key answered with another transfer",
    ),
    (
        "refused_but_executed",
        "a key only ever refused, yet a transfer exists",
    ),
    ("unknown_transfer", "a transfer no client asked for"),
    (
        "amount_mismatch",
        "a transfer's amount differs from the request",
    ),
    ("not_final", "a transfer not final once the faults stopped"),
    (
        "acked_not_readable",
        "an acknowledged transfer answered not-found",
    ),
    (
        "listing_vs_balance",
        "an account's transactions do not sum to its balance",
    ),
    ("ledger_verify", "kobo ledger verify found a discrepancy"),
    ("internal_errors", "a 96 answer, to any request of the run"),
    ("hangs", "a request with no answer within the client's 40 s"),
    (
        "late_answers",
        "answered after the request timeout + 2 s (--pgbouncer-outage)",
    ),
    (
        "readyz_blind",
        "the database, PgBouncer or the primary was down, /readyz never said so",
    ),
    (
        "listen_lost",
        "after a failover, a process not listening for revocations on the primary",
    ),
    (
        "slow_failover",
        "no payout acknowledged within --failover-within of a primary kill",
    ),
    (
        "reached_read_only",
        "a statement refused read-only: HAProxy led to a standby or an unfinished promotion",
    ),
    (
        "outcome_unknown",
        "a payment's COMMIT cut by a failover, its outcome not found out (--primary-kills)",
    ),
    (
        "webhook_not_delivered",
        "an event not received (verified) by the endpoint",
    ),
    (
        "webhook_bad",
        "a bad signature, unknown event or id mismatch",
    ),
    (
        "inbound_not_booked_once",
        "an inbound credit the provider sent, not booked exactly once",
    ),
    (
        "restore_mismatch",
        "a restored copy without a payout acked before its moment, or with one asked after",
    ),
    (
        "restore_ledger_verify",
        "kobo ledger verify found a discrepancy in the restored copy",
    ),
];

pub struct Verdict {
    pub violations: BTreeMap<String, u64>,
    /// Examples of each violation, for the person reading the summary.
    pub examples: BTreeMap<String, Vec<String>>,
    pub figures: Value,
}

impl Verdict {
    /// Adds a violation found outside the history's check.
    pub fn add(&mut self, name: &str, example: String) {
        *self.violations.entry(name.into()).or_default() += 1;
        self.examples.entry(name.into()).or_default().push(example);
    }

    pub fn is_clean(&self) -> bool {
        self.violations.values().all(|count| *count == 0)
    }

    pub fn table(&self) -> String {
        let mut out = String::from("violation                 count  what\n");
        for (name, what) in VIOLATIONS {
            let count = self.violations.get(name).copied().unwrap_or(0);
            out.push_str(&format!("{name:<25} {count:>5}  {what}\n"));
            for example in self.examples.get(name).into_iter().flatten().take(5) {
                out.push_str(&format!("    e.g. {example}\n"));
            }
        }
        out
    }
}

#[derive(Default)]
struct Verdicts {
    counts: BTreeMap<String, u64>,
    examples: BTreeMap<String, Vec<String>>,
}

impl Verdicts {
    fn add(&mut self, name: &str, example: String) {
        self.add_many(name, 1, [example]);
    }

    /// `count` violations of one kind, some of them as `examples`.
    fn add_many(&mut self, name: &str, count: u64, examples: impl IntoIterator<Item = String>) {
        *self.counts.entry(name.into()).or_default() += count;
        let kept = self.examples.entry(name.into()).or_default();
        for example in examples {
            if kept.len() < 20 {
                kept.push(example);
            }
        }
    }
}

/// What the history says of one idempotency key.
#[derive(Default, Debug)]
struct Key {
    business: usize,
    amount: i64,
    acked: BTreeSet<String>,
    /// Codes of the answers that said "no" (not transient).
    refusals: Vec<String>,
    /// Attempts that got no answer, or a transient one: the request may have run. A `98`
    /// (outcome unknown: the answer to its commit was lost) is one, and may have been written;
    /// a `97` says nothing was kept, but a key answered `97` once may have run at another
    /// attempt. Every `00` must still be written exactly once, and no key twice.
    unknown: u32,
}

const FINAL: [&str; 6] = [
    "success",
    "reversed",
    "rejected",
    "expired",
    "cancelled",
    "failed",
];

pub async fn check(inputs: Inputs<'_>) -> Result<Verdict> {
    let records = History::read(inputs.history)?;
    let mut verdicts = Verdicts::default();
    let mut funding = 0i64;
    let mut keys: BTreeMap<String, Key> = BTreeMap::new();
    let mut answered = 0u64;
    let mut codes: BTreeMap<String, u64> = BTreeMap::new();
    // PostgreSQL or PgBouncer outages made by the nemesis, and whether a probe said not-ready
    // in each.
    let mut outages: Vec<bool> = Vec::new();
    let mut in_outage = false;
    // Inbound credits the provider acknowledged: (business, NIP session).
    let mut notified: Vec<(usize, String)> = Vec::new();
    // Primary kills: (when, the machine, the first payout sent after it and acknowledged,
    // milliseconds after the kill).
    let mut kills: Vec<(u64, String, Option<u64>)> = Vec::new();
    for record in &records {
        let kind = record["kind"].as_str().unwrap_or_default();
        let outcome = &record["outcome"];
        // `96`s are counted from every request the client made (below), recorded or not.
        if let Some(code) = outcome.get("code").and_then(Value::as_str) {
            answered += 1;
            *codes.entry(code.into()).or_default() += 1;
        }
        if outcome.get("no_answer").and_then(Value::as_str) == Some("timeout") {
            verdicts.add("hangs", format!("{record}"));
        }
        match kind {
            "fault" => match record["fault"].as_str() {
                Some("postgres_stop" | "pgbouncer_kill") => {
                    outages.push(false);
                    in_outage = true;
                }
                Some("primary_kill") => {
                    outages.push(false);
                    in_outage = true;
                }
                // Recorded once the machine is dead: the time to the first payout
                // acknowledged again counts from here.
                Some("primary_dead") => {
                    let machine = record["machine"].as_str().unwrap_or_default();
                    kills.push((record["at_ms"].as_u64().unwrap_or(0), machine.into(), None));
                }
                // The probe runs every 250 ms: its answers from the next second still count.
                Some("postgres_start" | "pgbouncer_start" | "primary_elected") => in_outage = false,
                _ => {}
            },
            "readyz" => {
                let unready = record["status"].as_u64() == Some(503);
                if unready && (in_outage || outages.last() == Some(&false)) {
                    if let Some(seen) = outages.last_mut() {
                        *seen = true;
                    }
                }
            }
            "fund" => {
                funding += record["amount"].as_i64().unwrap_or(0);
                if let Some(session) = record["session"].as_str() {
                    let business = record["business"].as_u64().unwrap_or(0) as usize;
                    notified.push((business, session.to_owned()));
                }
            }
            "credit_unanswered" => {
                verdicts.add("inbound_not_booked_once", format!("no answer: {record}"))
            }
            "payout_intent" => {
                let key = keys
                    .entry(record["key"].as_str().unwrap_or_default().into())
                    .or_default();
                key.business = record["business"].as_u64().unwrap_or(0) as usize;
                key.amount = record["amount"].as_i64().unwrap_or(0);
            }
            "payout" => {
                let key = keys
                    .entry(record["key"].as_str().unwrap_or_default().into())
                    .or_default();
                match outcome.get("code").and_then(Value::as_str) {
                    Some("00") => {
                        if let Some(reference) = record["reference_number"].as_str() {
                            key.acked.insert(reference.into());
                        }
                        let at = record["at_ms"].as_u64().unwrap_or(0);
                        let sent = at.saturating_sub(outcome["ms"].as_u64().unwrap_or(0));
                        for (killed, _, first) in kills.iter_mut() {
                            if first.is_none() && sent >= *killed {
                                *first = Some(at - *killed);
                            }
                        }
                        if record["amount"].as_i64() != Some(key.amount) {
                            verdicts.add("amount_mismatch", format!("answer {record}"));
                        }
                    }
                    Some(code) if crate::chaos::is_transient(code) || code == "41" => {
                        key.unknown += 1
                    }
                    Some(code) => key.refusals.push(code.into()),
                    None => key.unknown += 1,
                }
            }
            "balances" => {
                for pair in record["balances"].as_array().into_iter().flatten() {
                    let balance = pair[1].as_str().and_then(kobo);
                    if balance.is_none_or(|b| b < 0) {
                        verdicts.add("negative_balance_read", format!("{pair}"));
                    }
                }
            }
            "read_transfer" if outcome.get("code").and_then(Value::as_str) == Some("47") => {
                verdicts.add("acked_not_readable", format!("{record}"));
            }
            _ => {}
        }
    }
    for (index, seen) in outages.iter().enumerate() {
        if !seen {
            verdicts.add(
                "readyz_blind",
                format!("PostgreSQL or PgBouncer outage {}", index + 1),
            );
        }
    }
    if let Some(limit) = inputs.failover_within {
        for (_, machine, first) in &kills {
            if first.is_none_or(|ms| ms > limit.as_millis() as u64) {
                verdicts.add(
                    "slow_failover",
                    format!("{machine} killed: first payout acknowledged after {first:?} ms"),
                );
            }
        }
    }
    // What the client measured of every attempt, the probes', logins' and settling's included.
    let answers = inputs.api.answers();
    verdicts.add_many(
        "internal_errors",
        answers.internal_error_count,
        answers.internal_errors.iter().map(ToString::to_string),
    );
    if let Some(limit) = answers.limit_ms {
        verdicts.add_many(
            "late_answers",
            answers.late_count,
            answers
                .late
                .iter()
                .map(|attempt| format!("{attempt} (limit {limit} ms)")),
        );
    }
    for (name, key) in &keys {
        if key.acked.len() > 1 {
            verdicts.add("replay_mismatch", format!("{name}: {:?}", key.acked));
        }
    }

    // What the API says now.
    let mut balances_total = 0i64;
    let mut left = 0i64;
    let mut transfers_seen = 0u64;
    let mut transactions_seen = 0u64;
    let mut events_seen = 0u64;
    let received_ids = inputs.receiver.ids();
    let mut listed_ids = BTreeSet::new();
    for business in inputs.businesses {
        let token = business.integration.get().await;
        let owner = business.owner.get().await;
        // The four listings at once: on a long run they are hundreds of thousands of rows.
        let (accounts, transfers, transactions, events) = tokio::try_join!(
            all_pages(
                inputs.api,
                "/api/v1/account/api/fetch_customer_accounts",
                &token,
                json!({}),
            ),
            all_pages(
                inputs.api,
                "/api/v1/transaction/transfer/api/fetch_transfers",
                &token,
                json!({}),
            ),
            all_pages(
                inputs.api,
                "/api/v1/transaction/api/fetch_transactions",
                &token,
                json!({}),
            ),
            all_pages(
                inputs.api,
                "/api/v1/customer/web/fetch_webhook_events",
                &owner,
                json!({}),
            ),
        )?;
        let mut balances: BTreeMap<String, i64> = BTreeMap::new();
        for account in &accounts {
            let balance = amount_of(account, "balance").unwrap_or(i64::MIN);
            if balance < 0 {
                verdicts.add("negative_balance_read", format!("final {account}"));
            }
            balances_total += balance;
            balances.insert(
                account["account_number"]
                    .as_str()
                    .unwrap_or_default()
                    .into(),
                balance,
            );
        }

        transfers_seen += transfers.len() as u64;
        let mut by_key: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
        let mut by_number: BTreeMap<String, u32> = BTreeMap::new();
        for transfer in &transfers {
            let status = transfer["transfer_status"].as_str().unwrap_or_default();
            let reference = transfer["reference"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let number = transfer["reference_number"].as_str().unwrap_or_default();
            *by_number.entry(number.into()).or_default() += 1;
            by_key.entry(reference.clone()).or_default().push(transfer);
            if !FINAL.contains(&status) {
                verdicts.add("not_final", format!("{number} {status}"));
            }
            match keys.get(&reference) {
                Some(key) if key.business == business.index => {
                    if amount_of(transfer, "amount") != Some(key.amount) {
                        verdicts.add("amount_mismatch", format!("listed {transfer}"));
                    }
                    if key.acked.is_empty() && key.unknown == 0 {
                        verdicts.add(
                            "refused_but_executed",
                            format!("{reference}: answers {:?}, listed {number}", key.refusals),
                        );
                    }
                }
                _ => verdicts.add("unknown_transfer", format!("{transfer}")),
            }
            let fee =
                amount_of(transfer, "fee").unwrap_or(0) + amount_of(transfer, "vat").unwrap_or(0);
            let amount = amount_of(transfer, "amount").unwrap_or(0);
            if status == "success" {
                left += fee;
                if transfer["transfer_type"].as_str() == Some("inter") {
                    left += amount;
                }
            }
        }
        for (reference, listed) in &by_key {
            if listed.len() > 1 {
                verdicts.add(
                    "key_executed_twice",
                    format!("{reference}: {} transfers", listed.len()),
                );
            }
        }
        for (name, key) in keys.iter().filter(|(_, k)| k.business == business.index) {
            for number in &key.acked {
                match by_number.get(number).copied().unwrap_or(0) {
                    0 => verdicts.add("ack_lost", format!("{name} -> {number}")),
                    1 => {}
                    n => verdicts.add("ack_duplicated", format!("{name} -> {number} x{n}")),
                }
            }
        }

        transactions_seen += transactions.len() as u64;
        let mut sessions: BTreeMap<&str, u32> = BTreeMap::new();
        for transaction in &transactions {
            if let Some(session) = transaction["session_id"].as_str() {
                if transaction["transaction_type"].as_str() == Some("credit") {
                    *sessions.entry(session).or_default() += 1;
                }
            }
        }
        for (_, session) in notified.iter().filter(|(b, _)| *b == business.index) {
            match sessions.get(session.as_str()).copied().unwrap_or(0) {
                1 => {}
                n => verdicts.add(
                    "inbound_not_booked_once",
                    format!("{session}: booked {n} times"),
                ),
            }
        }
        // Every transaction, whatever its status, moved its account's balance when it was
        // written (API 2.6.0): a failed or reversed debit has the credit that gave the money
        // back (a NIP reversal's, or a held transfer's release, `REV-`).
        let mut sums: BTreeMap<String, i64> = BTreeMap::new();
        for transaction in &transactions {
            let amount = amount_of(transaction, "amount").unwrap_or(0);
            let sign = match transaction["transaction_type"].as_str() {
                Some("credit") => 1,
                _ => -1,
            };
            *sums
                .entry(
                    transaction["account_number"]
                        .as_str()
                        .unwrap_or_default()
                        .into(),
                )
                .or_default() += sign * amount;
        }
        for (number, balance) in &balances {
            let sum = sums.get(number).copied().unwrap_or(0);
            if sum != *balance {
                verdicts.add(
                    "listing_vs_balance",
                    format!("{number}: transactions sum to {sum}, balance {balance}"),
                );
            }
        }

        events_seen += events.len() as u64;
        for event in &events {
            let id = event["id"].as_str().unwrap_or_default().to_owned();
            if event["status"].as_str() != Some("delivered") || !received_ids.contains(&id) {
                verdicts.add(
                    "webhook_not_delivered",
                    format!("{id} {} {}", event["event_type"], event["status"]),
                );
            }
            listed_ids.insert(id);
        }
    }
    if funding != balances_total + left {
        verdicts.add(
            "money_not_conserved",
            format!(
                "funded {funding}, balances {balances_total}, left the bank {left}: {} kobo unaccounted",
                funding - balances_total - left
            ),
        );
    }
    {
        let received = inputs.receiver.received.lock().unwrap();
        for _ in 0..received.bad_signatures {
            verdicts.add("webhook_bad", "bad signature".into());
        }
        for _ in 0..received.id_mismatch {
            verdicts.add(
                "webhook_bad",
                "webhook-id differs from the payload's id".into(),
            );
        }
        for _ in 0..received.unknown_business {
            verdicts.add(
                "webhook_bad",
                "delivery to an endpoint no business has".into(),
            );
        }
    }
    for id in received_ids.difference(&listed_ids) {
        verdicts.add(
            "webhook_bad",
            format!("received {id}, which no business lists"),
        );
    }

    let ledger = inputs.cluster.cli(&["ledger", "verify"]).await;
    match &ledger {
        Ok(report) if report["ok"] == json!(true) => {}
        Ok(report) => verdicts.add("ledger_verify", format!("{}", report["discrepancies"])),
        Err(error) => verdicts.add("ledger_verify", format!("{error:#}")),
    }
    let deliveries = inputs.receiver.received.lock().unwrap().deliveries;
    let figures = json!({
        "records": records.len(),
        "answered": answered,
        "answers_by_code": codes,
        "keys": keys.len(),
        "acknowledged": keys.values().filter(|k| !k.acked.is_empty()).count(),
        "transfers": transfers_seen,
        "transactions": transactions_seen,
        "funded_kobo": funding,
        "left_the_bank_kobo": left,
        "webhook_events": events_seen,
        "webhook_deliveries": deliveries,
        "primary_kills": kills
            .iter()
            .map(|(at, machine, first)| json!({
                "machine": machine, "at_ms": at, "first_payout_acknowledged_ms": first,
            }))
            .collect::<Vec<_>>(),
    });
    let mut violations: BTreeMap<String, u64> = VIOLATIONS
        .iter()
        .map(|(name, _)| (name.to_string(), 0))
        .collect();
    for (name, count) in verdicts.counts {
        violations.insert(name, count);
    }
    Ok(Verdict {
        violations,
        examples: verdicts.examples,
        figures,
    })
}

/// Every item of a keyset-paged list, 100 at a time.
pub async fn all_pages(api: &Api, path: &str, token: &str, mut body: Value) -> Result<Vec<Value>> {
    let mut items = Vec::new();
    body["limit"] = json!(100);
    loop {
        let outcome = api.post(0, path, Some(token), &[], &body).await;
        let (data, pagination) = match &outcome {
            crate::api::Outcome::Answer {
                code, body: answer, ..
            } if code == "00" => (answer["data"].clone(), answer["pagination"].clone()),
            other => bail!("{path}: {other:?}"),
        };
        items.extend(data.as_array().cloned().unwrap_or_default());
        if pagination["has_more"] != json!(true) {
            return Ok(items);
        }
        body["cursor_created_at"] = pagination["next_cursor_created_at"].clone();
        body["cursor_id"] = pagination["next_cursor_id"].clone();
    }
}
