//! A seeded random workload: accounts opened, customers verified, credits posted, lists read
//! with random filters and page sizes, each answer checked against a model kept beside it;
//! then `kobo ledger verify`. The seed is printed; `KOBO_WORKLOAD_SEED=<n>` replays one.

use std::collections::BTreeMap;

use generated_server::{Operation, ResponseCode};
use kobo::on_both_stores;
use kobo::testkit::{StoreKind, TestKit};
use serde_json::{json, Value};

use crate::races::roomy_budget;

/// xorshift64*: small, seeded, reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What the bank should say.
#[derive(Default)]
struct Model {
    /// account number -> balance in kobo.
    balances: BTreeMap<String, i128>,
    /// account number -> (collections, collected kobo).
    collections: BTreeMap<String, (u64, i128)>,
    /// Every credit's reference, oldest first.
    credits: Vec<(String, String)>,
    virtual_accounts: u64,
}

fn kobo_text(kobo: i128, digits: usize) -> String {
    let text = format!("{}.{:02}", kobo / 100, kobo % 100);
    if digits == 9 {
        format!("{text}0000000")
    } else {
        text
    }
}

/// Walks a list by cursor with `limit`, returning every item.
async fn walk(kit: &TestKit, operation: Operation, token: &str, mut body: Value) -> Vec<Value> {
    let limit = body["limit"].clone();
    let mut items = Vec::new();
    loop {
        let reply = kit.op(operation, token, body.clone()).await;
        reply.expect(ResponseCode::Success);
        items.extend(reply.body["data"].as_array().unwrap().iter().cloned());
        let pagination = &reply.body["pagination"];
        if !pagination["has_more"].as_bool().unwrap() {
            return items;
        }
        body["cursor_created_at"] = pagination["next_cursor_created_at"].clone();
        body["cursor_id"] = pagination["next_cursor_id"].clone();
        body["limit"] = limit.clone();
    }
}

async fn a_random_workload_keeps_the_books(kind: StoreKind) {
    let seed = std::env::var("KOBO_WORKLOAD_SEED")
        .ok()
        .and_then(|seed| seed.parse().ok())
        .unwrap_or_else(|| u64::from(std::process::id()) | 1);
    println!("workload seed {seed} (KOBO_WORKLOAD_SEED={seed} replays it)");
    let mut rng = Rng(seed);
    let kit = TestKit::start(kind, roomy_budget()).await;
    let token = kit.integration_token().await;
    let mut model = Model::default();
    model
        .balances
        .insert(kit.business.main_account_number.clone(), 0);

    for step in 0..150 {
        let numbers: Vec<String> = model.balances.keys().cloned().collect();
        match rng.below(10) {
            0 => {
                let account = kit.op(Operation::CreateAccountApi, &token, json!({})).await;
                if account.code() == Some(ResponseCode::Success) {
                    let number = account.body["data"]["account_number"].as_str().unwrap();
                    model.balances.insert(number.to_owned(), 0);
                } else {
                    account.expect(ResponseCode::ProviderError);
                }
            }
            1 => {
                // A fresh identity: 11 digits not ending in the magic 80 or 83.
                let bvn = format!("{:09}{:02}", step * 7919 + 1000, 11 + rng.below(60));
                let account = kit
                    .op(
                        Operation::CreateCustomerAccount,
                        &token,
                        json!({"bvn": bvn}),
                    )
                    .await
                    .expect(ResponseCode::Success)
                    .clone();
                model
                    .balances
                    .insert(account["account_number"].as_str().unwrap().to_owned(), 0);
                model.virtual_accounts += 1;
            }
            2..=7 => {
                let number = &numbers[rng.below(numbers.len() as u64) as usize];
                // From a kobo to ten million naira, with 0, 1 or 2 fraction digits.
                let kobo = i128::from(1 + rng.below(1_000_000_000));
                let amount = match rng.below(3) {
                    0 if kobo >= 100 => format!("{}", kobo / 100),
                    1 if kobo >= 10 => format!("{}.{}", kobo / 100, (kobo % 100) / 10),
                    _ => format!("{}.{:02}", kobo / 100, kobo % 100),
                };
                let posted = match amount.split_once('.') {
                    None => kobo / 100 * 100,
                    Some((_, fraction)) if fraction.len() == 1 => kobo / 10 * 10,
                    Some(_) => kobo,
                };
                if posted == 0 {
                    continue;
                }
                let credit = kit.credit(&token, number, &amount).await;
                assert_eq!(credit["amount"], kobo_text(posted, 2), "{amount}");
                *model.balances.get_mut(number).unwrap() += posted;
                let entry = model.collections.entry(number.clone()).or_default();
                entry.0 += 1;
                entry.1 += posted;
                model.credits.push((
                    credit["reference_number"].as_str().unwrap().to_owned(),
                    number.clone(),
                ));
            }
            _ => {
                // A listing with a random account filter and page size, against the model.
                let limit = 1 + rng.below(9);
                let filter = (rng.below(2) == 0)
                    .then(|| numbers[rng.below(numbers.len() as u64) as usize].clone());
                let body = match &filter {
                    Some(number) => json!({"limit": limit, "filters": {"account_number": number}}),
                    None => json!({"limit": limit}),
                };
                let listed: Vec<String> = walk(&kit, Operation::FetchTransactionsApi, &token, body)
                    .await
                    .iter()
                    .map(|t| t["reference_number"].as_str().unwrap().to_owned())
                    .collect();
                let expected: Vec<String> = model
                    .credits
                    .iter()
                    .rev()
                    .filter(|(_, number)| filter.as_ref().is_none_or(|f| f == number))
                    .map(|(reference, _)| reference.clone())
                    .collect();
                assert_eq!(listed, expected, "step {step}, seed {seed}");
            }
        }
    }

    // Every balance and collection total, as the model says.
    let accounts = walk(
        &kit,
        Operation::FetchAccountCollections,
        &kit.owner_token,
        json!({"limit": 13}),
    )
    .await;
    assert_eq!(accounts.len(), model.balances.len());
    for account in &accounts {
        let number = account["account_number"].as_str().unwrap();
        assert_eq!(
            account["balance"],
            kobo_text(model.balances[number], 9),
            "{number}"
        );
        let (count, sum) = model.collections.get(number).copied().unwrap_or_default();
        assert_eq!(account["total_collections"], count);
        assert_eq!(account["total_collection_amount"], kobo_text(sum, 2));
    }
    let total: i128 = model.balances.values().sum();
    let metrics = kit
        .op(
            Operation::GetTotalAccountMetrics,
            &kit.owner_token,
            json!({}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(metrics["total_business_balance"], kobo_text(total, 9));
    assert_eq!(metrics["total_volume_collected"], kobo_text(total, 2));
    assert_eq!(metrics["total_virtual_accounts"], model.virtual_accounts);
    let report = kit.assert_ledger_balances().await;
    assert_eq!(report.journal_entries as usize, model.credits.len());
}

on_both_stores!(kind: a_random_workload_keeps_the_books);
