//! The benchmark tools behind `kobo bench`: a bulk-loaded history is a ledger like any other
//! (it verifies, it lists newest first by cursor, later postings come after it), and the
//! in-process ledger loop conserves money.

use generated_server::{Operation, ResponseCode};
use kobo::bench;
use kobo::kernel::clock::Clock;
use kobo::money::amount::Kobo;
use kobo::on_both_stores;
use kobo::testkit::TestKit;
use serde_json::json;

use super::support::balance;

async fn a_seeded_history_verifies_and_pages_in_order(kit: TestKit) {
    let token = kit.integration_token().await;
    let main = kit.business.main_account_number.clone();
    kit.credit(&token, &main, "10.00").await;
    let clock = Clock::system();
    // 2,500 credits in batches of 1,000: three transactions, statements of 1,000 rows.
    let seeded = bench::seed_credits(
        &kit.store,
        || clock.now(),
        &main,
        2_500,
        Kobo::parse("1.00").unwrap(),
        1_000,
    )
    .await
    .unwrap();
    assert_eq!(seeded.inserted, 2_500);
    assert_eq!(balance(&kit, &main).await, "2510.00");
    let later = kit.credit(&token, &main, "5.00").await;
    kit.assert_ledger_balances().await;

    // Newest first: the later credit, then the seeded ones by falling sequence, then the
    // first credit; each row once.
    let mut walked = Vec::new();
    let mut body = json!({"limit": 100, "filters": {"account_number": main}});
    loop {
        let reply = kit
            .op(Operation::FetchTransactionsApi, &token, body.clone())
            .await;
        let data = reply.expect(ResponseCode::Success);
        for row in data.as_array().unwrap() {
            walked.push(row["reference_number"].as_str().unwrap().to_owned());
        }
        let pagination = &reply.body["pagination"];
        if !pagination["has_more"].as_bool().unwrap() {
            break;
        }
        body = json!({"limit": 100, "filters": {"account_number": main},
                      "cursor_created_at": pagination["next_cursor_created_at"],
                      "cursor_id": pagination["next_cursor_id"]});
    }
    assert_eq!(walked.len(), 2_502);
    assert_eq!(walked[0], later["reference_number"].as_str().unwrap());
    let mut unique = walked.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), walked.len(), "a row listed twice");
    let sequences: Vec<i64> = kit
        .sql("SELECT sequence FROM transactions WHERE business_id = $1 ORDER BY created_at, id")
        .bind(&kit.business.business_id)
        .texts()
        .await
        .iter()
        .map(|sequence| sequence.parse().unwrap())
        .collect();
    assert!(
        sequences.windows(2).all(|pair| pair[0] < pair[1]),
        "sequence and time disagree"
    );
    // No webhook for history.
    assert_eq!(
        kit.count(
            "SELECT COUNT(*) FROM events WHERE business_id = $1 AND type = 'collection.received'",
            &kit.business.business_id
        )
        .await,
        2
    );
}

on_both_stores!(a_seeded_history_verifies_and_pages_in_order);

async fn the_ledger_loop_moves_money_and_conserves_it(kit: TestKit) {
    let token = kit.integration_token().await;
    let main = kit.business.main_account_number.clone();
    kit.credit(&token, &main, "100.00").await;
    let second = kit.open_account(&token, "Loop").await;
    let clock = Clock::system();
    let made = bench::ledger_loop(
        &kit.store,
        || clock.now(),
        &kit.business.business_id,
        41,
        Kobo::parse("1.00").unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(made, 41);
    // Round robin over two accounts: 21 from main, 20 back.
    assert_eq!(balance(&kit, &main).await, "99.00");
    assert_eq!(balance(&kit, &second).await, "1.00");
    kit.assert_ledger_balances().await;
}

on_both_stores!(the_ledger_loop_moves_money_and_conserves_it);
