//! The benchmark tools behind `kobo bench`: a bulk-loaded history is a ledger like any other
//! (it verifies, it lists newest first by cursor, later postings come after it, and spread
//! over past months it makes each month's statement), and the in-process ledger loop conserves
//! money.

use chrono::{DateTime, Datelike, FixedOffset, Months, NaiveDate, TimeZone, Utc};
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
        bench::When::Now,
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

/// The instant Lagos day `day` begins.
fn lagos_midnight(day: NaiveDate) -> DateTime<Utc> {
    FixedOffset::east_opt(3600)
        .unwrap()
        .from_local_datetime(&day.and_hms_opt(0, 0, 0).unwrap())
        .unwrap()
        .with_timezone(&Utc)
}

/// `get_account_statement_api` of `account` for `[start, end]`, every page of 100 lines: the
/// figures of its first page (each page repeats them) and every line.
async fn api_statement(
    kit: &TestKit,
    token: &str,
    account: &str,
    (start, end): (NaiveDate, NaiveDate),
) -> (serde_json::Value, Vec<serde_json::Value>) {
    let mut body = json!({"account_number": account, "start_date": start.to_string(),
        "end_date": end.to_string(), "limit": 100});
    let mut figures = None;
    let mut lines = Vec::new();
    loop {
        let reply = kit
            .op(Operation::GetAccountStatementApi, token, body.clone())
            .await;
        let mut data = reply.expect(ResponseCode::Success).clone();
        lines.extend(data["lines"].as_array().unwrap().clone());
        data["lines"] = json!([]);
        assert_eq!(figures.get_or_insert_with(|| data.clone()), &data);
        let pagination = &reply.body["pagination"];
        if pagination["has_more"] != true {
            return (figures.unwrap(), lines);
        }
        body["cursor_created_at"] = pagination["next_cursor_created_at"].clone();
        body["cursor_id"] = pagination["next_cursor_id"].clone();
    }
}

/// `--from`/`--until`: a fresh business's account gets 1,000 credits spread over one past
/// Lagos month and 250 over the next, in several batches each; the second month's statement
/// holds exactly its 250 lines, opening at the first month's 1,000, and the whole ledger
/// verifies. Seeding into the past once the business's ledger is past it is refused and
/// writes nothing; so is a span in the future.
async fn a_history_spread_over_past_months_makes_their_statements(kit: TestKit) {
    let token = kit.integration_token().await;
    let main = kit.business.main_account_number.clone();
    let lagos = FixedOffset::east_opt(3600).unwrap();
    let this_month = kit
        .clock
        .now()
        .with_timezone(&lagos)
        .date_naive()
        .with_day(1)
        .unwrap();
    let first_month = this_month - Months::new(3);
    let second_month = this_month - Months::new(2);
    let after = this_month - Months::new(1);
    let clock = Clock::system();
    let one = Kobo::parse("1.00").unwrap();
    let seed = |count, amount, batch, from, until| {
        let (store, clock, main) = (&kit.store, &clock, &main);
        async move {
            let when = bench::When::Over {
                from: lagos_midnight(from),
                until: lagos_midnight(until),
            };
            bench::seed_credits(store, || clock.now(), main, count, amount, batch, when).await
        }
    };
    let seeded = seed(1_000, one, 300, first_month, second_month)
        .await
        .unwrap();
    assert_eq!(seeded.inserted, 1_000);
    let two = Kobo::parse("2.00").unwrap();
    seed(250, two, 100, second_month, after).await.unwrap();
    assert_eq!(balance(&kit, &main).await, "1500.00");
    kit.assert_ledger_balances().await;

    let last_day = after.pred_opt().unwrap();
    let (figures, lines) = api_statement(&kit, &token, &main, (second_month, last_day)).await;
    assert_eq!(figures["opening_balance"], "1000.00");
    assert_eq!(figures["closing_balance"], "1500.00");
    assert_eq!(figures["total_credits"], "500.00");
    assert_eq!(figures["credit_count"], 250);
    assert_eq!(lines.len(), 250);
    let times: Vec<DateTime<Utc>> = lines
        .iter()
        .map(|line| line["created_at"].as_str().unwrap().parse().unwrap())
        .collect();
    assert!(
        times.windows(2).all(|pair| pair[0] < pair[1]),
        "oldest first"
    );
    assert_eq!(
        times[0],
        lagos_midnight(second_month),
        "the span's first instant"
    );
    assert!(*times.last().unwrap() < lagos_midnight(after));
    // Spread evenly: the month's last line in its last day or so.
    assert!(lagos_midnight(after) - *times.last().unwrap() < chrono::Duration::days(1));
    assert_eq!(lines[0]["balance_after"], "1002.00");
    assert_eq!(lines[249]["balance_after"], "1500.00");
    let (first, lines) = api_statement(
        &kit,
        &token,
        &main,
        (first_month, second_month.pred_opt().unwrap()),
    )
    .await;
    assert_eq!(
        (
            first["opening_balance"].as_str(),
            first["credit_count"].as_u64(),
            lines.len()
        ),
        (Some("0.00"), Some(1_000), 1_000)
    );

    // The ledger is now at the end of the second month: the first month again is refused,
    // and so is a span after now; nothing is written either time.
    let rows = || {
        kit.count(
            "SELECT COUNT(*) FROM transactions WHERE business_id = $1",
            &kit.business.business_id,
        )
    };
    let before = rows().await;
    let refused = seed(10, one, 100, first_month, second_month)
        .await
        .unwrap_err();
    assert_eq!(refused.code(), ResponseCode::InvalidState);
    assert!(
        refused.message().contains("ledger entries up to"),
        "{}",
        refused.message()
    );
    let future = seed(10, one, 100, after, this_month + Months::new(1))
        .await
        .unwrap_err();
    assert_eq!(future.code(), ResponseCode::InvalidRequest);
    assert_eq!(rows().await, before);
    // A span after the history still seeds; the API's credits come after it all, and then
    // no span before them does.
    seed(10, one, 100, after, this_month).await.unwrap();
    kit.credit(&token, &main, "5.00").await;
    let late = seed(10, one, 100, after, this_month).await.unwrap_err();
    assert_eq!(late.code(), ResponseCode::InvalidState);
    assert_eq!(balance(&kit, &main).await, "1515.00");
    kit.assert_ledger_balances().await;
}

on_both_stores!(a_history_spread_over_past_months_makes_their_statements);

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
