//! Money coming in (`simulate_inbound_transfer`) and the aggregates computed from it.

use generated_server::{Operation, ResponseCode};
use kobo::kernel::config::{Config, Environment};
use kobo::on_both_stores;
use kobo::testkit::{Call, StoreKind, TestKit};
use serde_json::{json, Value};

use super::support;

async fn customer(kit: &TestKit, token: &str, bvn: &str) -> String {
    kit.op(Operation::CreateCustomerAccount, token, json!({"bvn": bvn}))
        .await
        .expect(ResponseCode::Success)["account_number"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// NGN 150.50 from Emeka Nwosu at Guaranty Trust Bank into `account_number`, as the provider
/// notifies it under NIP session `session`.
fn notified(session: &str, account_number: &str) -> kobo::money::inbound::InboundCredit {
    kobo::money::inbound::InboundCredit {
        session_id: Some(session.into()),
        account_number: account_number.into(),
        amount: kobo::money::amount::Kobo::parse("150.50").unwrap(),
        narration: "Order 2077".into(),
        originator: kobo::money::transactions::Originator {
            account_number: "0123456788".into(),
            account_name: "Emeka Nwosu".into(),
            bank_code: "000013".into(),
            bank_name: "Guaranty Trust Bank".into(),
        },
        environment: Environment::Sandbox,
    }
}

async fn an_inbound_credit_is_a_full_posting(kit: TestKit) {
    let token = kit.integration_token().await;
    let number = customer(&kit, &token, "22212345678").await;
    let credited = kit
        .op(
            Operation::SimulateInboundTransfer,
            &token,
            json!({"account_number": number, "amount": "15000", "sender_account_number": "0123456788",
                   "sender_account_name": "Emeka Nwosu", "sender_bank_code": "000013",
                   "narration": "Payment for order 1042"}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(credited["amount"], "15000.00");
    assert_eq!(credited["transaction_type"], "credit");
    assert_eq!(credited["transaction_category"], "collection");
    assert_eq!(credited["status"], "success");
    assert_eq!(credited["channel"], "nip");
    assert_eq!(credited["remarks"], "Payment for order 1042");
    assert_eq!(credited["account_name"], "Chinedu Obi");
    assert_eq!(credited["originator_account_number"], "0123456788");
    assert_eq!(credited["originator_account_name"], "Emeka Nwosu");
    assert_eq!(credited["originator_bank_code"], "000013");
    assert_eq!(credited["originator_bank_name"], "Guaranty Trust Bank");
    let session = credited["session_id"].as_str().unwrap();
    assert!(
        session.len() == 30 && session.starts_with("000013"),
        "{session}"
    );
    assert!(credited["reference_number"]
        .as_str()
        .unwrap()
        .starts_with("COL-"));

    // The account's balance moved, to the kobo, with nine digits.
    let detail = kit
        .op(
            Operation::GetAccount,
            &kit.owner_token,
            json!({"account_number": number}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(detail["balance"], "15000.000000000");
    assert_eq!(detail["last_balance_update"], credited["created_at"]);

    // A second credit, from Access Bank, with no narration of its own. (A Kobo account is
    // no simulated sender: money between Kobo accounts moves by funds_transfer.)
    let second = kit
        .op(
            Operation::SimulateInboundTransfer,
            &token,
            json!({"account_number": number, "amount": "0.5", "sender_bank_code": "000014",
                   "sender_account_number": "0044000018", "sender_account_name": "Lagos Fresh Produce Ltd"}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(second["channel"], "nip");
    assert!(second["session_id"].as_str().unwrap().starts_with("000014"));
    assert_eq!(second["originator_bank_name"], "Access Bank");
    assert_eq!(second["amount"], "0.50");
    assert_eq!(second["remarks"], "Transfer from Lagos Fresh Produce Ltd");

    // Listed as transactions and settlements, in both shapes.
    let listed = kit
        .op(Operation::FetchTransactionsApi, &token, json!({}))
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(listed, json!([second, credited]));
    let settlements = kit
        .op(Operation::FetchSettlementTransactionsApi, &token, json!({}))
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(settlements, listed);
    let web = kit
        .op(
            Operation::FetchSettlementTransactionsWeb,
            &kit.owner_token,
            json!({}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(web[1]["reference"], credited["reference_number"]);
    assert_eq!(web[1]["settlement_date"], credited["created_at"]);
    assert_eq!(web[1]["amount"], "15000.00");

    // Aggregates.
    let collections = kit
        .op(
            Operation::FetchAccountCollections,
            &kit.owner_token,
            json!({"account_number": number}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(collections[0]["total_collections"], 2);
    assert_eq!(collections[0]["total_collection_amount"], "15000.50");
    assert_eq!(
        collections[0]["last_transaction_date"],
        second["created_at"]
    );
    let summaries = kit
        .op(
            Operation::FetchAccountSummaries,
            &kit.owner_token,
            json!({}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    let summary = summaries
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["account_number"] == number.as_str())
        .unwrap();
    assert_eq!(summary["total_transactions"], 2);
    assert_eq!(summary["total_transfers"], 0);
    assert_eq!(summary["total_transfer_amount"], "0.00");
    let metrics = kit
        .op(
            Operation::GetTotalAccountMetrics,
            &kit.owner_token,
            json!({}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(
        metrics,
        json!({"total_active_accounts": 2, "total_inactive_accounts": 0, "total_virtual_accounts": 1,
               "total_volume_collected": "15000.50", "total_business_balance": "15000.500000000"})
    );
    let fast = kit
        .op(
            Operation::GetTotalAccountMetrics,
            &kit.owner_token,
            json!({"ignore_count": true}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(fast["total_active_accounts"], json!(null));
    assert_eq!(fast["total_business_balance"], "15000.500000000");

    // Events and audit entries, one per credit.
    assert_eq!(
        kit.count(
            "SELECT COUNT(*) FROM events WHERE business_id = $1 AND type = 'collection.received'",
            &kit.business.business_id
        )
        .await,
        2
    );
    assert_eq!(
        kit.count(
            "SELECT COUNT(*) FROM audit_logs WHERE business_id = $1 AND action = 'receive_inbound_transfer'",
            &kit.business.business_id
        )
        .await,
        2
    );
    let report = kit.assert_ledger_balances().await;
    assert_eq!(report.journal_entries, 2);
    assert_eq!(report.postings, 4);
    assert_eq!(report.ledger_total, "0.00");
}

async fn a_retried_credit_posts_once(kit: TestKit) {
    let token = kit.integration_token().await;
    let main = kit.business.main_account_number.clone();
    let call = || {
        Call::new(
            Operation::SimulateInboundTransfer.path(),
            Some(&token),
            json!({"account_number": main, "amount": "250.25"}),
        )
        .header("idempotency-key", "credit-1")
    };
    let first = kit.send(call()).await.expect(ResponseCode::Success).clone();
    let again = kit.send(call()).await;
    assert_eq!(again.expect(ResponseCode::Success), &first);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    let other_body = kit
        .send(
            Call::new(
                Operation::SimulateInboundTransfer.path(),
                Some(&token),
                json!({"account_number": main, "amount": "250.26"}),
            )
            .header("idempotency-key", "credit-1"),
        )
        .await;
    other_body.expect(ResponseCode::IdempotencyKeyReused);
    let report = kit.assert_ledger_balances().await;
    assert_eq!(report.journal_entries, 1);
}

async fn bad_credits_are_refused(kit: TestKit) {
    let token = kit.integration_token().await;
    let main = kit.business.main_account_number.clone();
    let send = |body: Value| kit.op(Operation::SimulateInboundTransfer, &token, body);
    send(json!({"account_number": "1999999991", "amount": "1"}))
        .await
        .expect(ResponseCode::AccountNotFound);
    for amount in ["0", "0.00", "-5", "1.234", "1e5", "1000000000000000"] {
        send(json!({"account_number": main, "amount": amount}))
            .await
            .expect(ResponseCode::InvalidRequest);
    }
    kit.sql("UPDATE accounts SET status = 'blocked' WHERE account_number = $1")
        .bind(&main)
        .execute()
        .await;
    send(json!({"account_number": main, "amount": "1"}))
        .await
        .expect(ResponseCode::InvalidState);
    kit.assert_ledger_balances().await;
}

/// An inbound credit needs its account able to receive when the money moves, not only when
/// it was looked up: an account closed meanwhile (the close committed while the credit waited
/// for the account's row) refuses it, and keeps its zero balance. On PostgreSQL it used to
/// take the credit, leaving money in a closed account.
async fn a_credit_to_an_account_closed_meanwhile_is_refused(kit: TestKit) {
    let token = kit.integration_token().await;
    let number = customer(&kit, &token, "22212345678").await;
    let mut closing = kit.store.begin().await.unwrap();
    kit.sql("UPDATE accounts SET status = 'closed' WHERE account_number = $1")
        .bind(&number)
        .execute_in(&mut closing)
        .await;
    let credit = kit.op(
        Operation::SimulateInboundTransfer,
        &token,
        json!({"account_number": number, "amount": "150"}),
    );
    let (reply, ()) = tokio::join!(credit, async {
        support::until_a_statement_waits(&kit).await;
        closing.commit().await.unwrap();
    });
    reply.expect(ResponseCode::InvalidState);
    let message = reply.body["message"].as_str().unwrap_or_default();
    assert!(message.contains("cannot receive funds"), "{message}");
    assert_eq!(support::balance(&kit, &number).await, "0.00");
    let report = kit.assert_ledger_balances().await;
    assert_eq!(report.journal_entries, 0);
}

/// One key sent at once by many (from two processes on PostgreSQL): the credit claims its key
/// with its answer at the end of its transaction, so every send but one finds it taken, rolls
/// back and replays the first one's answer. One credit, one entry, the exact balance.
async fn one_credit_key_sent_at_once_credits_once(kind: StoreKind) {
    let kit = TestKit::start(kind, crate::races::roomy_budget()).await;
    let mut processes = Vec::new();
    if kind == StoreKind::Postgres {
        processes.push(kit.another_process().await);
    }
    let token = kit.integration_token().await;
    let main = kit.business.main_account_number.clone();
    let calls = (0..12)
        .map(|_| {
            Call::new(
                Operation::SimulateInboundTransfer.path(),
                Some(&token),
                json!({"account_number": main, "amount": "75.50"}),
            )
            .header("idempotency-key", "one-credit")
        })
        .collect();
    let replies = kit.race(&processes, calls).await;
    for reply in &replies {
        assert_eq!(
            reply.expect(ResponseCode::Success),
            replies[0].expect(ResponseCode::Success)
        );
    }
    let replayed = replies
        .iter()
        .filter(|r| r.header("idempotent-replayed") == Some("true"))
        .count();
    assert_eq!(replayed, 11, "{replies:#?}");
    assert_eq!(support::balance(&kit, &main).await, "75.50");
    let report = kit.assert_ledger_balances().await;
    assert_eq!(report.journal_entries, 1);
}

/// A NIP session booked before, notified again with another amount or into another account,
/// is a discrepancy, not a repeat: refused `48` with both sides, nothing booked, never
/// acknowledged as booked (it used to be: the second credit was silently dropped). The same
/// notification again is still the booked one.
async fn a_booked_session_notified_with_other_money_is_refused(kit: TestKit) {
    use kobo::money::amount::Kobo;
    use kobo::money::inbound::{book_notified, Booked, InboundCredit};
    let token = kit.integration_token().await;
    let number = customer(&kit, &token, "22212345678").await;
    let main = kit.business.main_account_number.clone();
    let credit = notified("000013261127101500123456789099", &number);
    let Booked::Now(id) = book_notified(&kit.store, &kit.clock, &credit)
        .await
        .unwrap()
    else {
        panic!("the first notification books the credit");
    };
    let more = InboundCredit {
        amount: Kobo::parse("1500.50").unwrap(),
        ..credit.clone()
    };
    let elsewhere = InboundCredit {
        account_number: main.clone(),
        ..credit.clone()
    };
    for other in [&more, &elsewhere] {
        let refused = book_notified(&kit.store, &kit.clock, other)
            .await
            .unwrap_err();
        assert_eq!(refused.code(), ResponseCode::InvalidState);
        let message = refused.message();
        assert!(
            message.contains(&id) && message.contains("150.50") && message.contains(&number),
            "{message}"
        );
    }
    assert_eq!(
        book_notified(&kit.store, &kit.clock, &credit)
            .await
            .unwrap(),
        Booked::Before(id)
    );
    assert_eq!(support::balance(&kit, &number).await, "150.50");
    assert_eq!(support::balance(&kit, &main).await, "0.00");
    let report = kit.assert_ledger_balances().await;
    assert_eq!(report.journal_entries, 1);
}

async fn production_has_no_simulation(kind: StoreKind) {
    let kit = TestKit::start(kind, Config::new(Environment::Production)).await;
    let token = kit.integration_token().await;
    kit.op(
        Operation::SimulateInboundTransfer,
        &token,
        json!({"account_number": kit.business.main_account_number, "amount": "1"}),
    )
    .await
    .expect(ResponseCode::UnknownOperation);
}

/// The largest amount the spec allows, many times over: no sum overflows, every digit exact.
async fn the_largest_amounts_add_up_exactly(kit: TestKit) {
    let token = kit.integration_token().await;
    let largest = "999999999999999.99";
    let mut numbers = vec![kit.business.main_account_number.clone()];
    for _ in 0..9 {
        numbers.push(
            kit.op(Operation::CreateAccountApi, &token, json!({}))
                .await
                .expect(ResponseCode::Success)["account_number"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    for number in &numbers {
        for _ in 0..10 {
            kit.credit(&token, number, largest).await;
        }
    }
    // Ten of the largest amounts is as much as one account may hold: one kobo more is refused.
    kit.op(
        Operation::SimulateInboundTransfer,
        &token,
        json!({"account_number": numbers[0], "amount": "0.11"}),
    )
    .await
    .expect(ResponseCode::InvalidState);
    let detail = kit
        .op(
            Operation::GetAccount,
            &kit.owner_token,
            json!({"account_number": numbers[0]}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(detail["balance"], "9999999999999999.900000000");
    // A hundred of them: 10^19 kobo, past what a 64-bit integer holds.
    let metrics = kit
        .op(
            Operation::GetTotalAccountMetrics,
            &kit.owner_token,
            json!({}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(
        metrics["total_business_balance"],
        "99999999999999999.000000000"
    );
    assert_eq!(metrics["total_volume_collected"], "99999999999999999.00");
    let collections = kit
        .op(
            Operation::FetchAccountCollections,
            &kit.owner_token,
            json!({"account_number": numbers[0]}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(
        collections[0]["total_collection_amount"],
        "9999999999999999.90"
    );
    let report = kit.assert_ledger_balances().await;
    assert_eq!(report.ledger_total, "0.00");
}

/// Issue 28, item 9. The simulated sender is another bank's customer: a Kobo account (bank code
/// `090823`, Acme's own number and any name) is refused, since money between Kobo accounts
/// comes from real transfers. A sender name of spaces only, or a name or narration with
/// control, line-break or bidirectional characters, is refused rather than stored.
async fn the_simulated_sender_is_outside_kobo_and_named(kit: TestKit) {
    let token = kit.integration_token().await;
    let main = kit.business.main_account_number.clone();
    let (other, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "owner@lagosfresh.ng")
        .await;
    let send = |body: Value| kit.op(Operation::SimulateInboundTransfer, &token, body);
    let refused = send(json!({"account_number": main, "amount": "1",
                              "sender_bank_code": "090823",
                              "sender_account_number": other.main_account_number,
                              "sender_account_name": "Lagos Fresh Produce Ltd"}))
    .await;
    refused.expect(ResponseCode::InvalidRequest);
    assert!(
        refused.body["message"]
            .as_str()
            .unwrap()
            .starts_with("`sender_bank_code`"),
        "{refused:?}"
    );
    let refusals = [
        ("sender_account_name", "   "),
        ("sender_account_name", "Emeka\r\nNwosu"),
        ("sender_account_name", "\u{202E}akemE"),
        ("sender_account_name", "Emeka\u{200B}"),
        ("narration", "Invoice 42\r\nPaid"),
        ("narration", "Invoice \u{202E}24"),
        ("narration", "Invoice\t42"),
    ];
    for (field, text) in refusals {
        let mut body = json!({"account_number": main, "amount": "1"});
        body[field] = json!(text);
        let refused = send(body).await;
        refused.expect(ResponseCode::InvalidRequest);
        let message = refused.body["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("`{field}`")),
            "{text:?}: {message}"
        );
    }
    let credit = send(json!({"account_number": main, "amount": "1",
                             "sender_account_name": "  Emeka Nwosu ",
                             "narration": " Invoice 42: 50% paid "}))
    .await
    .expect(ResponseCode::Success)
    .clone();
    assert_eq!(credit["originator_account_name"], "Emeka Nwosu");
    assert_eq!(credit["remarks"], "Invoice 42: 50% paid");
    let transactions: i64 = kit
        .count(
            "SELECT COUNT(*) FROM transactions WHERE business_id = $1",
            &kit.business.business_id,
        )
        .await;
    assert_eq!(transactions, 1);
    kit.assert_ledger_balances().await;
}

/// A provider notifies one NIP session eight times at once (issue 32): one credit, booked once,
/// whoever wins; the others are told it was booked before. On PostgreSQL the eight run in
/// parallel on their own connections, and the unique index decides.
async fn a_notified_session_is_booked_once_however_many_race(kit: TestKit) {
    use kobo::money::inbound::{book_notified, Booked};
    let token = kit.integration_token().await;
    let number = customer(&kit, &token, "22212345678").await;
    let credit = notified("000013261127101500123456789012", &number);
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let (store, clock, credit) = (kit.store.clone(), kit.clock.clone(), credit.clone());
            tokio::spawn(async move { book_notified(&store, &clock, &credit).await })
        })
        .collect();
    let mut booked = Vec::new();
    for task in tasks {
        booked.push(task.await.unwrap().unwrap());
    }
    let now: Vec<_> = booked
        .iter()
        .filter(|b| matches!(b, Booked::Now(_)))
        .collect();
    assert_eq!(now.len(), 1, "{booked:?}");
    let Booked::Now(id) = now[0] else {
        unreachable!()
    };
    assert!(
        booked
            .iter()
            .all(|b| b == now[0] || b == &Booked::Before(id.clone())),
        "{booked:?}"
    );
    assert_eq!(support::balance(&kit, &number).await, "150.50");
    let credits = kit
        .sql("SELECT count(*) FROM transactions WHERE session_id = $1")
        .bind("000013261127101500123456789012")
        .int()
        .await;
    assert_eq!(credits, 1);
    kit.assert_ledger_balances().await;
}

on_both_stores!(
    a_notified_session_is_booked_once_however_many_race,
    the_simulated_sender_is_outside_kobo_and_named,
    an_inbound_credit_is_a_full_posting,
    a_retried_credit_posts_once,
    bad_credits_are_refused,
    the_largest_amounts_add_up_exactly,
    a_credit_to_an_account_closed_meanwhile_is_refused,
    a_booked_session_notified_with_other_money_is_refused,
);
on_both_stores!(kind: production_has_no_simulation, one_credit_key_sent_at_once_credits_once);
