//! Races on PostgreSQL with two `kobo` processes (two connection pools) on one database, where
//! transactions truly run in parallel. SQLite serializes writes, so a race that passes there
//! proves nothing: these run on PostgreSQL only.

use std::collections::HashSet;
use std::num::NonZeroU32;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use generated_server::{Operation, ResponseCode};
use kobo::datastore::batch::{self, Batch};
use kobo::datastore::transactions::{self, NewTransaction};
use kobo::kernel::config::{Config, Environment, RequestBudget};
use kobo::kernel::store::Store;
use kobo::money::ledger::{self, Entry, Internal, LedgerAccount, Posting};
use kobo::testkit::{Call, Process, StoreKind, TestKit};
use serde_json::{json, Value};

/// A request budget the scenario's hundreds of calls stay within.
pub fn roomy_budget() -> Config {
    let mut config = Config::new(Environment::Sandbox);
    config.request_budget = RequestBudget {
        per_minute: NonZeroU32::new(1_000_000).unwrap(),
        burst: NonZeroU32::new(100_000).unwrap(),
    };
    config
}

fn count(replies: &[kobo::testkit::Reply], code: ResponseCode) -> usize {
    replies
        .iter()
        .filter(|reply| reply.code() == Some(code))
        .count()
}

async fn balance_of(kit: &TestKit, number: &str) -> String {
    balance_seen_by(kit, &kit.owner_token, number).await
}

/// The balance of `number` as the Dashboard of `owner_token`'s business shows it.
async fn balance_seen_by(kit: &TestKit, owner_token: &str, number: &str) -> String {
    kit.op(
        Operation::GetAccount,
        owner_token,
        json!({"account_number": number}),
    )
    .await
    .expect(ResponseCode::Success)["balance"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn simultaneous_credits_to_one_account_all_count() {
    let kit = TestKit::postgres().await;
    let second = kit.another_process().await;
    let token = kit.integration_token().await;
    let main = kit.business.main_account_number.clone();
    let calls = (0..24)
        .map(|_| {
            Call::new(
                Operation::SimulateInboundTransfer.path(),
                Some(&token),
                json!({"account_number": main, "amount": "1.01"}),
            )
        })
        .collect();
    let replies = kit.race(&[second], calls).await;
    assert_eq!(count(&replies, ResponseCode::Success), 24, "{replies:#?}");
    assert_eq!(balance_of(&kit, &main).await, "24.240000000");
    // One sequence number each, no gap, no repeat.
    let sequences: Vec<i64> = kit
        .sql("SELECT sequence FROM transactions WHERE business_id = $1 ORDER BY sequence")
        .bind(&kit.business.business_id)
        .texts()
        .await
        .iter()
        .map(|sequence| sequence.parse().unwrap())
        .collect();
    assert_eq!(sequences, (1..=24).collect::<Vec<i64>>());
    kit.assert_ledger_balances().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn simultaneous_openings_stop_at_the_account_limit() {
    let mut config = Config::new(Environment::Sandbox);
    config.max_current_accounts = 3;
    let kit = TestKit::start(StoreKind::Postgres, config).await;
    let second = kit.another_process().await;
    let token = kit.integration_token().await;
    let calls = (0..12)
        .map(|_| Call::new(Operation::CreateAccountApi.path(), Some(&token), json!({})))
        .collect();
    let replies = kit.race(&[second], calls).await;
    assert_eq!(count(&replies, ResponseCode::Success), 3, "{replies:#?}");
    assert_eq!(
        count(&replies, ResponseCode::ProviderError),
        9,
        "{replies:#?}"
    );
    // Default names stay distinct: each opening saw the ones before it.
    let names: HashSet<&str> = replies
        .iter()
        .filter_map(|reply| reply.body["data"]["account_name"].as_str())
        .collect();
    assert_eq!(names.len(), 3);
}

/// Debits racing on one balance through the posting path itself, from two processes: the
/// conditional update lets exactly as many through as the balance covers.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn simultaneous_debits_never_overdraw() {
    let kit = TestKit::postgres().await;
    let second = kit.another_process().await;
    let token = kit.integration_token().await;
    let main = kit.business.main_account_number.clone();
    kit.credit(&token, &main, "100.00").await;
    let account_id = kit
        .sql("SELECT id FROM accounts WHERE account_number = $1")
        .bind(&main)
        .text()
        .await;
    let stores = [kit.store.clone(), second.api.store().clone()];
    let barrier = Arc::new(tokio::sync::Barrier::new(10));
    let tasks: Vec<_> = (0..10)
        .map(|i| {
            let store: Store = stores[i % 2].clone();
            let business_id = kit.business.business_id.clone();
            let account_id = account_id.clone();
            let barrier = barrier.clone();
            let clock = kit.clock.clone();
            tokio::spawn(async move {
                barrier.wait().await;
                let mut tx = store.begin().await.unwrap();
                let head = ledger::advance_head(&mut tx, &business_id, clock.now())
                    .await
                    .unwrap();
                let entry = Entry {
                    business_id: &business_id,
                    kind: "test_debit",
                    postings: vec![
                        Posting {
                            account: LedgerAccount::Customer(account_id.clone()),
                            amount: -3_000,
                        },
                        Posting {
                            account: LedgerAccount::Internal(Internal::Fees, Environment::Sandbox),
                            amount: 3_000,
                        },
                    ],
                };
                match ledger::post(&mut tx, &entry, head).await.unwrap() {
                    Ok(entry_id) => {
                        // Its transaction: every change of a balance has one.
                        let mut batch = Batch::new();
                        let debit = NewTransaction {
                            id: uuid::Uuid::new_v4(),
                            business_id: business_id.clone(),
                            account_id: account_id.clone(),
                            entry_id,
                            sequence: head.sequence,
                            reference_number: format!("TST-{}", uuid::Uuid::new_v4().simple()),
                            transaction_type: "debit".into(),
                            category: "fee".into(),
                            status: "success".into(),
                            channel: "internal".into(),
                            amount: 3_000,
                            narration: "A racing debit".into(),
                            session_id: None,
                            originator: None,
                            created_at: head.posted_at,
                            settled: false,
                        };
                        transactions::record_into(&mut batch, debit);
                        batch::run(&mut tx, batch).await.unwrap();
                        tx.commit().await.unwrap();
                        true
                    }
                    Err(_) => {
                        tx.rollback().await.unwrap();
                        false
                    }
                }
            })
        })
        .collect();
    let mut posted = 0;
    for task in tasks {
        posted += usize::from(task.await.unwrap());
    }
    assert_eq!(posted, 3, "100.00 covers three debits of 30.00");
    assert_eq!(balance_of(&kit, &main).await, "10.000000000");
    kit.assert_ledger_balances().await;
}

/// `(created_at, id)` of a listed transaction: the order lists use.
fn key(transaction: &Value) -> (DateTime<Utc>, String) {
    (
        transaction["created_at"].as_str().unwrap().parse().unwrap(),
        transaction["id"].as_str().unwrap().to_owned(),
    )
}

/// How an integration polls: newest first, page by page, until it reaches the newest row it
/// saw last time. Returns the references seen this time.
async fn poll(
    kit: &TestKit,
    token: &str,
    watermark: &mut Option<(DateTime<Utc>, String)>,
) -> Vec<String> {
    let mut seen = Vec::new();
    let mut newest = None;
    let mut body = json!({"limit": 7});
    'pages: loop {
        let reply = kit.op(Operation::FetchTransactionsApi, token, body).await;
        reply.expect(ResponseCode::Success);
        for transaction in reply.body["data"].as_array().unwrap() {
            let at = key(transaction);
            if watermark.as_ref().is_some_and(|mark| at <= *mark) {
                break 'pages;
            }
            newest.get_or_insert_with(|| at.clone());
            seen.push(transaction["reference_number"].as_str().unwrap().to_owned());
        }
        let pagination = &reply.body["pagination"];
        if !pagination["has_more"].as_bool().unwrap() {
            break;
        }
        body = json!({"limit": 7, "cursor_created_at": pagination["next_cursor_created_at"],
                      "cursor_id": pagination["next_cursor_id"]});
    }
    if newest.is_some() {
        *watermark = newest;
    }
    seen
}

/// Credits commit from two processes while a client polls by cursor: the client sees every
/// one, because a business's transactions are listed in the order they commit.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_client_polling_by_cursor_misses_no_credit() {
    let kit = Arc::new(TestKit::start(StoreKind::Postgres, roomy_budget()).await);
    let second = Arc::new(kit.another_process().await);
    let token = kit.integration_token().await;
    let mut accounts = vec![kit.business.main_account_number.clone()];
    for bvn in ["22212345678", "22287654321", "12345671234"] {
        accounts.push(
            kit.op(
                Operation::CreateCustomerAccount,
                &token,
                json!({"bvn": bvn}),
            )
            .await
            .expect(ResponseCode::Success)["account_number"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    let writers: Vec<_> = (0..8)
        .map(|writer| {
            let kit = kit.clone();
            let second: Arc<Process> = second.clone();
            let token = token.clone();
            let account = accounts[writer % accounts.len()].clone();
            tokio::spawn(async move {
                for n in 0..20 {
                    let call = Call::new(
                        Operation::SimulateInboundTransfer.path(),
                        Some(&token),
                        json!({"account_number": account, "amount": format!("{}.{:02}", writer + 1, n)}),
                    );
                    let reply = if writer % 2 == 0 {
                        kit.send(call).await
                    } else {
                        second.send(call).await
                    };
                    reply.expect(ResponseCode::Success);
                }
            })
        })
        .collect();
    let mut watermark = None;
    let mut seen: Vec<String> = Vec::new();
    while !writers.iter().all(|writer| writer.is_finished()) {
        seen.extend(poll(&kit, &token, &mut watermark).await);
    }
    for writer in writers {
        writer.await.unwrap();
    }
    seen.extend(poll(&kit, &token, &mut watermark).await);

    let all = kit
        .sql("SELECT reference_number FROM transactions")
        .texts()
        .await;
    assert_eq!(all.len(), 160);
    let unique: HashSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "a credit was seen twice");
    let missed: Vec<&String> = all.iter().filter(|r| !unique.contains(r)).collect();
    assert!(missed.is_empty(), "the poller missed {missed:?}");
    kit.assert_ledger_balances().await;
}

/// A backlog of postings for one business must not take the pool: each waits for the
/// business's ledger head, and a waiter that held a connection while it waited left none for
/// the other businesses' postings or for anything else. The 10-minute PostgreSQL soak fell
/// behind this way (16 connections, 4 businesses, p50 21.6 s). Waiters now queue in the
/// process before their transaction ([`Store::begin_posting`]).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postings_waiting_for_a_head_leave_the_pool_to_others() {
    let kit = TestKit::postgres().await;
    let business = kit.business.business_id.clone();
    let store = kit.store.clone();
    let now = kit.clock.now();
    // The head is held, as by a payout in progress.
    let mut held = store.begin_posting(&[&business]).await.unwrap();
    let first = ledger::advance_head(&mut held, &business, now)
        .await
        .unwrap();
    // More postings of the business than the pool has connections queue behind it.
    let waiters: Vec<_> = (0..24)
        .map(|_| {
            let store = store.clone();
            let business = business.clone();
            tokio::spawn(async move {
                let mut tx = store.begin_posting(&[&business]).await.unwrap();
                let head = ledger::advance_head(&mut tx, &business, now).await.unwrap();
                tx.commit().await.unwrap();
                head.sequence
            })
        })
        .collect();
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    // Anything else still gets a connection (the pool's acquire timeout is 10 s).
    let answered = store.ping().await.map(|()| 1);
    assert_eq!(
        answered.ok(),
        Some(1),
        "a query beside the queued postings got no connection"
    );
    held.commit().await.unwrap();
    let mut sequences = Vec::new();
    for waiter in waiters {
        sequences.push(waiter.await.unwrap());
    }
    sequences.sort_unstable();
    let expected: Vec<i64> = (first.sequence + 1..=first.sequence + 24).collect();
    assert_eq!(
        sequences, expected,
        "every queued posting took the next place"
    );
}

/// Payouts between two businesses in both directions at once, from two processes. Each takes
/// both businesses' heads (in business-id order), its daily total and both accounts in one
/// statement on PostgreSQL, in the ledger's lock order, so none deadlocks and every one is
/// paid: each side ends where it began, and the ledger balances.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn payouts_both_ways_between_two_businesses_at_once_are_all_paid() {
    let kit = TestKit::start(StoreKind::Postgres, roomy_budget()).await;
    let second = kit.another_process().await;
    let ours = kit.integration_token().await;
    let (other, their_owner) = kit
        .other_business("Lagos Fresh Produce Ltd", "owner@lagosfresh.ng")
        .await;
    let theirs = kit.integration_token_of(&other).await;
    let our_main = kit.business.main_account_number.clone();
    let their_main = other.main_account_number.clone();
    kit.credit(&ours, &our_main, "1000").await;
    kit.credit(&theirs, &their_main, "1000").await;
    let ours_before = balance_of(&kit, &our_main).await;
    let theirs_before = balance_seen_by(&kit, &their_owner, &their_main).await;
    let us = (our_main.as_str(), "Adaeze Foods Ltd");
    let them = (their_main.as_str(), "Lagos Fresh Produce Ltd");
    let calls: Vec<Call> = (0..12)
        .flat_map(|n| {
            [
                both_ways(&ours, us, them, n),
                both_ways(&theirs, them, us, n),
            ]
        })
        .collect();
    let replies = kit.race(&[second], calls).await;
    assert_eq!(count(&replies, ResponseCode::Success), 24, "{replies:#?}");
    assert_eq!(balance_of(&kit, &our_main).await, ours_before);
    let theirs_after = balance_seen_by(&kit, &their_owner, &their_main).await;
    assert_eq!(theirs_after, theirs_before);
    kit.assert_ledger_balances().await;
}

/// An intra-bank payout of NGN 30.00 from `from` to `to` (number, name), under its own key.
fn both_ways<'a>(token: &'a str, from: (&str, &str), to: (&str, &str), n: usize) -> Call<'a> {
    Call::new(
        Operation::FundsTransferApi.path(),
        Some(token),
        json!({
            "source_account_number": from.0,
            "source_account_name": from.1,
            "beneficiary_account_number": to.0,
            "beneficiary_account_name": to.1,
            "bank_code": "090823",
            "amount": "30",
            "narration": "Both ways",
            "transfer_type": "intra",
        }),
    )
    .header("idempotency-key", format!("both-ways-{}-{n}", from.0))
}

/// A salary run: payouts from one account to others of its business, all at once from two
/// processes, more than its balance covers. Each process's queued payouts of the business
/// share a transaction and its `COMMIT` (`kobo_store_postgres::groups`), the refused ones
/// undoing only their own work inside it (and only they setting a savepoint to undo it):
/// exactly as many are paid as the balance covers, every
/// other one is refused and moves nothing, each answer is the one its key replays, the
/// ledger balances with gapless sequences, and fewer commits than payouts were made.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_salary_run_from_one_account_pays_exactly_what_it_covers() {
    let kit = TestKit::start(StoreKind::Postgres, roomy_budget()).await;
    let second = kit.another_process().await;
    let token = kit.integration_token().await;
    let main = kit.business.main_account_number.clone();
    let staff: Vec<String> = (0..3)
        .map(|n| format!("Adaeze Foods Ltd - Staff {n}"))
        .collect();
    let mut payees = Vec::new();
    for name in &staff {
        payees.push(kit.open_account(&token, name).await);
    }
    kit.credit(&token, &main, "1000.00").await;
    let salary = |n: usize| {
        let payee = n % payees.len();
        let to = (payees[payee].as_str(), staff[payee].as_str());
        intra_salary(&token, &main, to, "30", format!("salary-{n}"))
    };
    let replies = kit
        .race(std::slice::from_ref(&second), (0..40).map(salary).collect())
        .await;
    let paid = count(&replies, ResponseCode::Success);
    assert_eq!(
        paid, 33,
        "NGN 1,000.00 covers 33 salaries of 30.00: {replies:#?}"
    );
    for reply in replies
        .iter()
        .filter(|r| r.code() != Some(ResponseCode::Success))
    {
        let status = reply.status.as_u16();
        assert!(status < 500, "a refusal, not a failure: {reply:#?}");
    }
    assert_eq!(balance_of(&kit, &main).await, "10.000000000");
    let mut received = 0.0;
    for payee in &payees {
        received += balance_of(&kit, payee).await.parse::<f64>().unwrap();
    }
    assert_eq!(received, 990.0);
    // Every payment's answer is the one its key replays.
    for (n, reply) in replies.iter().enumerate() {
        if reply.code() == Some(ResponseCode::Success) {
            let again = kit.send(salary(n)).await;
            assert_eq!(again.header("idempotent-replayed"), Some("true"));
            assert_eq!(again.body["data"], reply.body["data"], "salary-{n}");
        }
    }
    kit.assert_ledger_balances().await;
    let (commits, committed) = kit.store.group_commits().await;
    let (theirs, their_committed) = second.api.store().group_commits().await;
    assert!(
        commits + theirs < committed + their_committed,
        "{commits} + {theirs} commits for {committed} + {their_committed} payouts"
    );
    // A group of two or more has a member after one that advanced the head: it knew its
    // places, and wrote its rows and its movement in one statement. What it answered is what
    // was stored: its transfer's time, and its debit's, at the place the head gave it.
    let in_one = kit.store.payouts_foreseen().0 + second.api.store().payouts_foreseen().0;
    assert!(in_one > 0, "no payout was written in one statement");
    // Such a member's statement first checks that it will write everything or nothing, and
    // needs no savepoint: only a member that is refused sets one, to be refused in the two
    // statements.
    let savepoints = kit.store.payout_savepoints() + second.api.store().payout_savepoints();
    let refused = (replies.len() - paid) as u64;
    assert!(
        savepoints <= refused,
        "{savepoints} savepoints for {refused} refusals"
    );
    let mut debits = std::collections::HashMap::new();
    let mut body = json!({"limit": 50});
    loop {
        let page = kit.op(Operation::FetchTransactionsApi, &token, body).await;
        for transaction in page.expect(ResponseCode::Success).as_array().unwrap() {
            let reference = transaction["reference_number"].as_str().unwrap().to_owned();
            debits.insert(reference, transaction["created_at"].clone());
        }
        let pagination = &page.body["pagination"];
        if !pagination["has_more"].as_bool().unwrap() {
            break;
        }
        body = json!({"limit": 50, "cursor_created_at": pagination["next_cursor_created_at"],
                      "cursor_id": pagination["next_cursor_id"]});
    }
    let mut times = Vec::new();
    for reply in replies
        .iter()
        .filter(|r| r.code() == Some(ResponseCode::Success))
    {
        let answered = &reply.body["data"];
        let reference = answered["reference_number"].as_str().unwrap();
        assert_stored_as_answered(&kit, &token, answered).await;
        assert_eq!(
            debits.get(reference),
            Some(&answered["created_at"]),
            "{reference}'s debit"
        );
        times.push(answered["created_at"].as_str().unwrap().to_owned());
    }
    times.sort();
    times.dedup();
    assert_eq!(
        times.len(),
        paid,
        "each payout at a place of its own: {times:?}"
    );
}

/// A business's payouts one after another: each foresees its head where the payout before it
/// left it, and writes everything in one statement. An inbound credit moves the head behind
/// the process's back: the next payout finds it elsewhere, writes nothing in that statement,
/// takes the two, and pays once, at the place the head gave it; the one after it foresees
/// right again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payout_that_finds_its_head_moved_pays_once_in_two_statements() {
    let ledger = own_ledger().await;
    let OwnLedger {
        kit,
        token,
        main,
        payee,
    } = &ledger;
    let pay = |n: usize| ledger.salary(format!("one-by-one-{n}"));
    let mut answers = Vec::new();
    let mut pay_and_count = async |n: usize| {
        let reply = kit.send(pay(n)).await;
        answers.push(reply.expect(ResponseCode::Success).clone());
        kit.store.payouts_foreseen()
    };
    assert_eq!(pay_and_count(0).await, (0, 0), "nothing to foresee from");
    assert_eq!(
        pay_and_count(1).await,
        (1, 0),
        "foreseen where the first left it"
    );
    kit.credit(token, main, "5.00").await;
    assert_eq!(pay_and_count(2).await, (1, 1), "the credit moved the head");
    assert_eq!(pay_and_count(3).await, (2, 1), "foreseen right again");
    for answer in &answers {
        assert_stored_as_answered(kit, token, answer).await;
    }
    assert_eq!(balance_of(kit, main).await, "965.000000000");
    assert_eq!(balance_of(kit, payee).await, "40.000000000");
    kit.assert_ledger_balances().await;
}

/// A group's first payout whose foreseen head is at the sequence foreseen but not at the time
/// (no code moves a head's time alone; here the test does): its statement writes, the payout
/// sees the head elsewhere than its rows say and is undone (`99`, nothing moved), and the
/// guess is forgotten, so the next payout takes the two statements and pays. Before, the wrong
/// guess was kept and every later payout of the business failed the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_head_foreseen_at_the_wrong_time_is_not_foreseen_again() {
    let ledger = own_ledger().await;
    let OwnLedger {
        kit,
        token,
        main,
        payee,
    } = &ledger;
    let pay = |n: usize| ledger.salary(format!("wrong-time-{n}"));
    kit.send(pay(0)).await.expect(ResponseCode::Success);
    kit.send(pay(1)).await.expect(ResponseCode::Success);
    assert_eq!(kit.store.payouts_foreseen(), (1, 0));
    kit.sql(
        "UPDATE ledger_heads SET last_posted_micros = last_posted_micros + 3600000000 \
         WHERE business_id = $1",
    )
    .bind(&kit.business.business_id)
    .execute()
    .await;
    kit.send(pay(2)).await.expect(ResponseCode::InternalError);
    assert_eq!(
        kit.store.payouts_foreseen(),
        (1, 1),
        "the guess counted as missed"
    );
    let answered = kit.send(pay(3)).await.expect(ResponseCode::Success).clone();
    assert_stored_as_answered(kit, token, &answered).await;
    kit.send(pay(4)).await.expect(ResponseCode::Success);
    assert_eq!(
        kit.store.payouts_foreseen(),
        (2, 1),
        "foreseen again from the next"
    );
    assert_eq!(balance_of(kit, main).await, "960.000000000");
    assert_eq!(balance_of(kit, payee).await, "40.000000000");
    kit.assert_ledger_balances().await;
}

/// A business on PostgreSQL paying its own staff account, on its own ledger alone: NGN 1,000
/// in its main account `main`, its integration `token`, the `payee` account (named
/// [`STAFF`]) opened empty.
struct OwnLedger {
    kit: TestKit,
    token: String,
    main: String,
    payee: String,
}

const STAFF: &str = "Adaeze Foods Ltd - Staff";

impl OwnLedger {
    /// A salary of NGN 10 from `main` to `payee`, under Idempotency-Key `key`.
    fn salary(&self, key: String) -> Call<'_> {
        intra_salary(&self.token, &self.main, (&self.payee, STAFF), "10", key)
    }
}

async fn own_ledger() -> OwnLedger {
    let kit = TestKit::start(StoreKind::Postgres, roomy_budget()).await;
    let token = kit.integration_token().await;
    let main = kit.business.main_account_number.clone();
    let payee = kit.open_account(&token, STAFF).await;
    kit.credit(&token, &main, "1000.00").await;
    OwnLedger {
        kit,
        token,
        main,
        payee,
    }
}

/// A salary of `amount` from Adaeze Foods Ltd's `main` account to a Kobo account `to` (its
/// number and name), under Idempotency-Key `key`.
fn intra_salary<'a>(
    token: &'a str,
    main: &str,
    to: (&str, &str),
    amount: &str,
    key: String,
) -> Call<'a> {
    Call::new(
        Operation::FundsTransferApi.path(),
        Some(token),
        json!({
            "source_account_number": main,
            "source_account_name": "Adaeze Foods Ltd",
            "beneficiary_account_number": to.0,
            "beneficiary_account_name": to.1,
            "bank_code": "090823",
            "amount": amount,
            "narration": "Salary",
            "transfer_type": "intra",
        }),
    )
    .header("idempotency-key", key)
}

/// The transfer as stored says it was posted when its payout's answer said.
async fn assert_stored_as_answered(kit: &TestKit, token: &str, answered: &Value) {
    let reference = answered["reference_number"].as_str().unwrap();
    let stored = kit
        .op(
            Operation::GetTransferApi,
            token,
            json!({"reference_number": reference}),
        )
        .await;
    assert_eq!(
        stored.expect(ResponseCode::Success)["created_at"],
        answered["created_at"],
        "{reference}"
    );
}
