//! A seeded random workload of concurrent transfers: three businesses funded by inbound
//! credits pay each other and the sandbox's external accounts (one succeeds, one fails and is
//! reversed, one confirms late, one bank is down, one amount is refused), intra-bank and over
//! NIP, while the provider's faults are switched on and off and the NIP worker runs; one
//! business has an approval policy, so a maker holds transfers, a checker approves (with an OTP
//! of their own) or rejects, the maker cancels, and the rest expire; keys are resent, some at
//! once. Then the faults stop, held transfers expire, the worker drains, and the books must
//! hold: `kobo ledger verify` clean, no money created or lost (per business, against a model
//! of what the answers said), no negative balance, one transfer per idempotency key at most,
//! every inter-bank transfer final.
//!
//! On PostgreSQL the requests and the worker's passes are spread over two `kobo` processes,
//! so they truly run in parallel. The seed is printed; `KOBO_WORKLOAD_SEED=<n>` replays each
//! task's choices (the interleaving of the tasks is the scheduler's).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use chrono::Duration;
use generated_server::{Operation, ResponseCode};
use kobo::kernel::config::Environment;
use kobo::kernel::store::Store;
use kobo::money::{approvals, nip};
use kobo::on_both_stores;
use kobo::platform::permissions::CHECKER_ROLE_ID;
use kobo::provider::faults::{Faults, FaultyProvider};
use kobo::provider::sandbox::SandboxProvider;
use kobo::testkit::{Call, Process, Reply, StoreKind, TestKit, OWNER_PASSWORD};
use serde_json::{json, Value};

use crate::races::roomy_budget;

/// xorshift64*: small, seeded, reproducible (as in `workload.rs`).
struct Rng(u64);

impl Rng {
    fn new(seed: u64, stream: u64) -> Rng {
        Rng((seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// An account that can receive a transfer: its number, name and bank.
#[derive(Clone, Debug)]
struct Payee {
    number: String,
    name: String,
    bank: &'static str,
}

/// A business of the workload.
#[derive(Clone, Debug)]
struct Business {
    id: String,
    owner_email: String,
    token: String,
    /// Its accounts, as sources: number and registered name.
    accounts: Vec<(String, String)>,
}

/// What the answers said.
#[derive(Default)]
struct Model {
    /// Idempotency key -> the references of the transfers its `00` answers named.
    keys: BTreeMap<String, BTreeSet<String>>,
    /// Every transfer a `00` answer named.
    references: BTreeSet<String>,
    /// Kobo credited to each business by inbound transfers.
    credits: BTreeMap<String, i128>,
    /// Answers by operation and code, for the summary.
    answers: BTreeMap<(&'static str, String), usize>,
}

type Shared = Arc<Mutex<Model>>;

/// Where requests go: the kit's own process, and on PostgreSQL a second one.
#[derive(Clone)]
struct Front {
    kit: Arc<TestKit>,
    second: Option<Arc<Process>>,
}

impl Front {
    async fn send(&self, turn: u64, call: Call<'_>) -> Reply {
        match &self.second {
            Some(second) if turn % 2 == 1 => second.send(call).await,
            _ => self.kit.send(call).await,
        }
    }
}

fn kobo_of(amount: &Value) -> i128 {
    let text = amount.as_str().expect("an amount");
    let (whole, fraction) = text.split_once('.').unwrap_or((text, "0"));
    let fraction = format!("{fraction:0<2}");
    whole.parse::<i128>().unwrap() * 100 + fraction[..2].parse::<i128>().unwrap()
}

/// Records an answer of `operation`; a `00` naming a transfer is filed under its key. Panics
/// on any code outside `allowed`.
fn record(
    model: &Shared,
    operation: Operation,
    key: Option<&str>,
    reply: &Reply,
    allowed: &[&str],
) {
    let code = reply.body["response_code"]
        .as_str()
        .unwrap_or("none")
        .to_owned();
    assert!(
        allowed.contains(&code.as_str()),
        "{} answered {code}: {reply:#?}",
        operation.id()
    );
    assert_eq!(
        Some(reply.status.as_u16()),
        reply.code().map(|c| c.http_status()),
        "{reply:#?}"
    );
    let mut model = model.lock().unwrap();
    *model
        .answers
        .entry((operation.id(), code.clone()))
        .or_default() += 1;
    if code == "00" {
        if let Some(reference) = reply.body["data"]["reference_number"].as_str() {
            model.references.insert(reference.to_owned());
            if let Some(key) = key {
                model
                    .keys
                    .entry(key.to_owned())
                    .or_default()
                    .insert(reference.to_owned());
            }
        }
    }
}

/// A transfer body from `source` to `payee`.
fn transfer_body(source: &(String, String), payee: &Payee, amount: &str) -> Value {
    json!({
        "source_account_number": source.0,
        "source_account_name": source.1,
        "beneficiary_account_number": payee.number,
        "beneficiary_account_name": payee.name,
        "bank_code": payee.bank,
        "amount": amount,
        "narration": "Workload",
        "transfer_type": if payee.bank == "090823" { "intra" } else { "inter" },
    })
}

/// A random amount: mostly NGN 1 to 20,000 with kobo, sometimes the sandbox's refused
/// 8383.83, sometimes more than any balance.
fn amount(rng: &mut Rng, at_least: u64) -> String {
    match rng.below(20) {
        0 => "8383.83".into(),
        1 => "900000".into(),
        _ => {
            let kobo = at_least * 100 + rng.below(2_000_000 - at_least * 100);
            format!("{}.{:02}", kobo / 100, kobo % 100)
        }
    }
}

const TRANSFER_CODES: &[&str] = &["00", "28", "80", "83"];

/// An integration pays out at random; keys are resent, one after the other or at once.
async fn integration_payouts(
    front: Front,
    model: Shared,
    business: Business,
    payees: Vec<Payee>,
    mut rng: Rng,
    steps: u64,
) {
    for step in 0..steps {
        let source = rng.pick(&business.accounts).clone();
        let payee = loop {
            let payee = rng.pick(&payees).clone();
            if payee.number != source.0 {
                break payee;
            }
        };
        let body = transfer_body(&source, &payee, &amount(&mut rng, 1));
        let key = format!("{}-{step}", &business.id[..8]);
        let call = || {
            Call::new(
                Operation::FundsTransferApi.path(),
                Some(business.token.as_str()),
                body.clone(),
            )
            .header("idempotency-key", key.clone())
        };
        let sends = match rng.below(8) {
            0 => 3, // at once
            1 | 2 => 2,
            _ => 1,
        };
        if sends == 3 {
            let turn = rng.next();
            let (a, b, c) = tokio::join!(
                front.send(turn, call()),
                front.send(turn.wrapping_add(1), call()),
                front.send(turn.wrapping_add(2), call())
            );
            for reply in [a, b, c] {
                record(
                    &model,
                    Operation::FundsTransferApi,
                    Some(key.as_str()),
                    &reply,
                    TRANSFER_CODES,
                );
            }
        } else {
            for _ in 0..sends {
                let reply = front.send(rng.next(), call()).await;
                record(
                    &model,
                    Operation::FundsTransferApi,
                    Some(key.as_str()),
                    &reply,
                    TRANSFER_CODES,
                );
            }
        }
    }
}

/// A fresh OTP of the member behind `token`.
async fn otp(front: &Front, turn: u64, token: &str) -> String {
    let reply = front
        .send(
            turn,
            Call::new(Operation::GenerateOtp.path(), Some(token), json!({})),
        )
        .await;
    reply.expect(ResponseCode::Success)["otp"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The maker (the owner of the business with the policy) sends transfers the policy holds,
/// with OTPs, and cancels some of them.
async fn maker(
    front: Front,
    model: Shared,
    token: String,
    source: (String, String),
    payees: Vec<Payee>,
    mut rng: Rng,
    steps: u64,
) {
    let mut held: Vec<String> = Vec::new();
    for step in 0..steps {
        if !held.is_empty() && rng.below(4) == 0 {
            let reference = held.remove(rng.below(held.len() as u64) as usize);
            let reply = front
                .send(
                    rng.next(),
                    Call::new(
                        Operation::CancelTransfer.path(),
                        Some(token.as_str()),
                        json!({"reference_number": reference}),
                    ),
                )
                .await;
            // The checker may have decided first.
            record(
                &model,
                Operation::CancelTransfer,
                None,
                &reply,
                &["00", "48"],
            );
            continue;
        }
        let payee = loop {
            let payee = rng.pick(&payees).clone();
            if payee.number != source.0 {
                break payee;
            }
        };
        let mut body = transfer_body(&source, &payee, &amount(&mut rng, 5_000));
        body["otp"] = json!(otp(&front, rng.next(), &token).await);
        let key = format!("maker-{step}");
        let reply = front
            .send(
                rng.next(),
                Call::new(Operation::FundsTransfer.path(), Some(token.as_str()), body)
                    .header("idempotency-key", key.clone()),
            )
            .await;
        record(
            &model,
            Operation::FundsTransfer,
            Some(key.as_str()),
            &reply,
            TRANSFER_CODES,
        );
        if reply.code() == Some(ResponseCode::Success) {
            assert_eq!(reply.body["data"]["transfer_status"], "pending_approval");
            held.push(
                reply.body["data"]["reference_number"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            );
        }
    }
}

/// The checker works through the held transfers: approves with an OTP of their own (some under
/// a key, resent with a fresh OTP), rejects, or leaves them to expire.
async fn checker(front: Front, model: Shared, token: String, mut rng: Rng, steps: u64) {
    for step in 0..steps {
        let pending = front
            .send(
                rng.next(),
                Call::new(
                    Operation::FetchPendingTransfers.path(),
                    Some(token.as_str()),
                    json!({"limit": 100}),
                ),
            )
            .await;
        let pending = pending.expect(ResponseCode::Success).clone();
        let pending = pending.as_array().unwrap();
        if pending.is_empty() {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            continue;
        }
        let reference = rng.pick(pending)["reference_number"].clone();
        match rng.below(5) {
            0 | 1 => {
                let key = format!("approve-{step}");
                let resends = 1 + rng.below(2);
                for _ in 0..resends {
                    let code = otp(&front, rng.next(), &token).await;
                    let reply = front
                        .send(
                            rng.next(),
                            Call::new(
                                Operation::ApproveTransfer.path(),
                                Some(token.as_str()),
                                json!({"reference_number": reference, "otp": code}),
                            )
                            .header("idempotency-key", key.clone()),
                        )
                        .await;
                    // 48: the maker cancelled it first; 80: the provider is down; 83: refused.
                    record(
                        &model,
                        Operation::ApproveTransfer,
                        Some(key.as_str()),
                        &reply,
                        &["00", "48", "80", "83"],
                    );
                }
            }
            2 => {
                let reply = front
                    .send(
                        rng.next(),
                        Call::new(
                            Operation::RejectTransfer.path(),
                            Some(token.as_str()),
                            json!({"reference_number": reference, "reason": "Not budgeted"}),
                        ),
                    )
                    .await;
                record(
                    &model,
                    Operation::RejectTransfer,
                    None,
                    &reply,
                    &["00", "48"],
                );
            }
            // Left for later, or to expire.
            _ => tokio::time::sleep(std::time::Duration::from_millis(5)).await,
        }
    }
}

/// Switches the provider's faults on and off and runs the NIP worker (from both processes on
/// PostgreSQL), moving the clock a little each time, until told to stop.
async fn weather(
    faults: Arc<Faults>,
    stores: Vec<Store>,
    provider: Arc<dyn kobo::provider::CoreBanking>,
    clock: kobo::kernel::clock::Clock,
    stop: Arc<AtomicBool>,
    mut rng: Rng,
) -> usize {
    let mut passes = 0;
    while !stop.load(Ordering::SeqCst) {
        Faults::set(&faults.down, rng.below(5) == 0);
        Faults::set(&faults.timeout_after_submit, rng.below(3) == 0);
        Faults::set(&faults.status_unknown, rng.below(3) == 0);
        let store = &stores[passes % stores.len()];
        nip::process_due(store, &*provider, &clock, Environment::Sandbox, 20)
            .await
            .expect("a NIP pass");
        passes += 1;
        clock.advance(Duration::seconds(2));
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    }
    passes
}

/// Every transfer of a business, walked by cursor.
async fn transfers_of(kit: &TestKit, token: &str) -> Vec<Value> {
    let mut body = json!({"limit": 100});
    let mut all = Vec::new();
    loop {
        let reply = kit
            .op(Operation::FetchTransfersWeb, token, body.clone())
            .await;
        reply.expect(ResponseCode::Success);
        all.extend(reply.body["data"].as_array().unwrap().iter().cloned());
        let pagination = &reply.body["pagination"];
        if !pagination["has_more"].as_bool().unwrap() {
            return all;
        }
        body["cursor_created_at"] = pagination["next_cursor_created_at"].clone();
        body["cursor_id"] = pagination["next_cursor_id"].clone();
    }
}

async fn a_random_transfer_workload_keeps_the_books(kind: StoreKind) {
    let seed = std::env::var("KOBO_WORKLOAD_SEED")
        .ok()
        .and_then(|seed| seed.parse().ok())
        .unwrap_or_else(|| u64::from(std::process::id()) | 1);
    println!("transfer workload seed {seed} (KOBO_WORKLOAD_SEED={seed} replays it)");
    let mut rng = Rng::new(seed, 0);
    let mut config = roomy_budget();
    config.otp.issue_limit = 100_000;
    let mut kit = TestKit::start(kind, config).await;
    let faults = Arc::new(Faults::default());
    kit.use_provider(Arc::new(FaultyProvider {
        inner: Arc::new(SandboxProvider::new(kit.clock.clone())),
        faults: faults.clone(),
    }));
    let model: Shared = Arc::default();
    let first_day = kit
        .clock
        .now()
        .with_timezone(&chrono::FixedOffset::east_opt(3600).unwrap())
        .date_naive();

    // Three businesses: Adaeze Foods (two accounts, an approval policy from NGN 5,000, a
    // checker), Lagos Fresh Produce and Ikeja Hardware.
    let adaeze_token = kit.integration_token().await;
    let second_account = kit
        .op(Operation::CreateAccountApi, &adaeze_token, json!({}))
        .await
        .expect(ResponseCode::Success)
        .clone();
    let adaeze = Business {
        id: kit.business.business_id.clone(),
        owner_email: kit.business.owner_email.clone(),
        token: adaeze_token,
        accounts: vec![
            (
                kit.business.main_account_number.clone(),
                kit.business.name.clone(),
            ),
            (
                second_account["account_number"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                second_account["account_name"].as_str().unwrap().to_owned(),
            ),
        ],
    };
    let mut businesses = vec![adaeze];
    for (name, email) in [
        ("Lagos Fresh Produce Ltd", "owner@lagosfresh.ng"),
        ("Ikeja Hardware Ltd", "owner@ikejahardware.ng"),
    ] {
        let (other, _) = kit.other_business(name, email).await;
        businesses.push(Business {
            owner_email: email.to_owned(),
            token: kit.integration_token_of(&other).await,
            id: other.business_id.clone(),
            accounts: vec![(other.main_account_number.clone(), other.name.clone())],
        });
    }
    kit.op(
        Operation::CreateApprovalPolicy,
        &kit.owner_token,
        json!({"min_amount": "5000"}),
    )
    .await
    .expect(ResponseCode::Success);
    let (_, checker_token) = kit
        .add_member("ngozi.eze@adaezefoods.ng", CHECKER_ROLE_ID)
        .await;

    // Funded by inbound credits.
    for business in &businesses {
        for (number, _) in &business.accounts {
            let kobo = 20_000_000 + i128::from(rng.below(30_000_000));
            let amount = format!("{}.{:02}", kobo / 100, kobo % 100);
            kit.credit(&business.token, number, &amount).await;
            *model
                .lock()
                .unwrap()
                .credits
                .entry(business.id.clone())
                .or_default() += kobo;
        }
    }
    // Who can be paid: every Kobo account, and the sandbox's external accounts (Emeka is
    // credited, Bisi's bank fails the transfer, Sani's confirms after a minute, 0000000080 is
    // down).
    let mut payees: Vec<Payee> = businesses
        .iter()
        .flat_map(|b| b.accounts.iter())
        .map(|(number, name)| Payee {
            number: number.clone(),
            name: name.clone(),
            bank: "090823",
        })
        .collect();
    for (number, name) in [
        ("0123456788", "Emeka Nwosu"),
        ("0123456788", "Emeka Nwosu"),
        ("0690000036", "Bisi Alade"),
        ("0690000043", "Sani Bello"),
        ("0000000080", "Nobody Known"),
    ] {
        payees.push(Payee {
            number: number.into(),
            name: name.into(),
            bank: "000013",
        });
    }

    // The concurrent phase.
    let kit = Arc::new(kit);
    let second = match kind {
        StoreKind::Postgres => Some(Arc::new(kit.another_process().await)),
        StoreKind::Sqlite => None,
    };
    let front = Front {
        kit: kit.clone(),
        second: second.clone(),
    };
    let stop = Arc::new(AtomicBool::new(false));
    let mut stores = vec![kit.store.clone()];
    if let Some(second) = &second {
        stores.push(second.api.store().clone());
    }
    let weather = tokio::spawn(weather(
        faults.clone(),
        stores.clone(),
        kit.api.provider().clone(),
        kit.clock.clone(),
        stop.clone(),
        Rng::new(seed, 1),
    ));
    let mut tasks = Vec::new();
    for (n, business) in businesses.iter().enumerate() {
        tasks.push(tokio::spawn(integration_payouts(
            front.clone(),
            model.clone(),
            business.clone(),
            payees.clone(),
            Rng::new(seed, 10 + n as u64),
            24,
        )));
    }
    tasks.push(tokio::spawn(maker(
        front.clone(),
        model.clone(),
        kit.owner_token.clone(),
        businesses[0].accounts[0].clone(),
        payees.clone(),
        Rng::new(seed, 2),
        14,
    )));
    tasks.push(tokio::spawn(checker(
        front.clone(),
        model.clone(),
        checker_token,
        Rng::new(seed, 3),
        24,
    )));
    for task in tasks {
        task.await.expect("a workload task does not panic");
    }
    stop.store(true, Ordering::SeqCst);
    let passes = weather.await.expect("the weather does not panic");

    // The faults stop; what was left unreviewed expires; the worker drains.
    for flag in [
        &faults.down,
        &faults.refuse,
        &faults.timeout_after_submit,
        &faults.status_unknown,
    ] {
        Faults::set(flag, false);
    }
    kit.clock.advance(Duration::hours(73));
    let mut expired = 0;
    loop {
        let now = approvals::expire_due(&kit.store, Environment::Sandbox, &kit.clock)
            .await
            .unwrap();
        if now == 0 {
            break;
        }
        expired += now;
    }
    for round in 0.. {
        assert!(round < 40, "the NIP worker does not drain (seed {seed})");
        kit.clock.advance(Duration::seconds(301));
        nip::process_due(
            &kit.store,
            &**kit.api.provider(),
            &kit.clock,
            Environment::Sandbox,
            100,
        )
        .await
        .unwrap();
        let processing = kit
            .sql("SELECT COUNT(*) FROM transfers WHERE transfer_status = 'processing'")
            .int()
            .await;
        if processing == 0 {
            break;
        }
    }

    // Each idempotency key executed at most once, and every transfer is one an answer named.
    let model = std::mem::take(&mut *model.lock().unwrap());
    for (key, references) in &model.keys {
        assert!(
            references.len() <= 1,
            "key {key} executed {references:?} (seed {seed})"
        );
    }
    let stored = kit.sql("SELECT COUNT(*) FROM transfers").int().await;
    assert_eq!(stored as usize, model.references.len(), "seed {seed}");

    // Every transfer final; the money, business by business.
    let owner_of: BTreeMap<String, String> = businesses
        .iter()
        .flat_map(|b| {
            b.accounts
                .iter()
                .map(|(number, _)| (number.clone(), b.id.clone()))
        })
        .collect();
    let mut expected: BTreeMap<String, i128> = model.credits.clone();
    let mut statuses: BTreeMap<String, usize> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for business in &businesses {
        // Tokens of three days ago have expired: the owner logs in again.
        let token = kit.login(&business.owner_email, OWNER_PASSWORD).await;
        for transfer in transfers_of(&kit, &token).await {
            let reference = transfer["reference_number"].as_str().unwrap().to_owned();
            assert!(model.references.contains(&reference), "{transfer:#}");
            seen.insert(reference);
            let status = transfer["transfer_status"].as_str().unwrap();
            let held = transfer["approval_status"] != "not_required";
            let inter = transfer["transfer_type"] == "inter";
            *statuses
                .entry(format!("{}{status}", if held { "held " } else { "" }))
                .or_default() += 1;
            let allowed: &[&str] = match (held, inter) {
                (false, false) => &["success"],
                (false, true) => &["success", "reversed"],
                (true, false) => &["success", "rejected", "cancelled", "expired"],
                (true, true) => &["success", "reversed", "rejected", "cancelled", "expired"],
            };
            assert!(allowed.contains(&status), "{transfer:#} (seed {seed})");
            if status != "success" {
                continue;
            }
            let amount = kobo_of(&transfer["amount"]);
            let charges = kobo_of(&transfer["fee"]) + kobo_of(&transfer["vat"]);
            *expected.get_mut(&business.id).unwrap() -= amount + charges;
            if !inter {
                assert_eq!(charges, 0);
                let recipient = &owner_of[transfer["beneficiary_account_number"].as_str().unwrap()];
                *expected.get_mut(recipient).unwrap() += amount;
            }
        }
    }
    assert_eq!(seen, model.references, "seed {seed}");
    for business in &businesses {
        let balances = kit
            .sql("SELECT balance FROM accounts WHERE business_id = $1")
            .bind(&business.id)
            .texts()
            .await;
        let actual: i128 = balances
            .iter()
            .map(|balance| balance.parse::<i128>().unwrap())
            .sum();
        assert_eq!(
            actual, expected[&business.id],
            "{} (seed {seed})",
            business.id
        );
    }
    let negative = kit
        .sql("SELECT COUNT(*) FROM accounts WHERE balance < 0")
        .int()
        .await;
    assert_eq!(negative, 0);
    kit.assert_ledger_balances().await;
    // Every account's statements, over its whole history cut into random periods, reconcile.
    for business in &businesses {
        let token = kit.login(&business.owner_email, OWNER_PASSWORD).await;
        let mut accounts = Vec::new();
        for (number, _) in &business.accounts {
            let balance = kit
                .sql("SELECT balance FROM accounts WHERE account_number = $1")
                .bind(number)
                .int()
                .await;
            accounts.push((number.clone(), balance));
        }
        crate::statements::assert_statements_reconcile(&kit, &token, &accounts, first_day, seed)
            .await;
    }
    println!(
        "transfer workload seed {seed}: {} transfers {statuses:?}, {expired} expired, {passes} \
         NIP passes, answers {:?}",
        model.references.len(),
        model.answers
    );
    // Something of each kind happened (a seed where one did not would prove less).
    assert!(
        statuses.keys().any(|s| s.starts_with("held ")),
        "{statuses:?}"
    );
}

on_both_stores!(kind: a_random_transfer_workload_keeps_the_books);
