//! Transaction and settlement lists: every filter, both paging styles, exact cursors.

use chrono::Duration;
use generated_server::{Operation, ResponseCode};
use kobo::on_both_stores;
use kobo::testkit::{Call, TestKit};
use serde_json::{json, Value};

/// Tokens of the integration and of the owner, taken after the clock moved.
struct Tokens {
    integration: String,
    owner: String,
}

/// Credits on three days: returns the transactions, oldest first, and fresh tokens (the
/// clock moved three days on).
async fn history(kit: &TestKit) -> (String, String, Vec<Value>, Tokens) {
    let mut token = kit.integration_token().await;
    let main = kit.business.main_account_number.clone();
    let virtual_number = kit
        .op(
            Operation::CreateCustomerAccount,
            &token,
            json!({"bvn": "22212345678"}),
        )
        .await
        .expect(ResponseCode::Success)["account_number"]
        .as_str()
        .unwrap()
        .to_owned();
    // The virtual account is paid by another Kobo business (intra-bank), the main account
    // over NIP (simulated).
    let (payer, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "owner@lagosfresh.ng")
        .await;
    let mut payer_token = kit.integration_token_of(&payer).await;
    kit.credit(&payer_token, &payer.main_account_number, "1000")
        .await;
    let mut made = Vec::new();
    for day in 0..3 {
        let narration = |i: usize| format!("Order {day}{i} 50%_off");
        made.push(
            kit.op(
                Operation::SimulateInboundTransfer,
                &token,
                json!({"account_number": main, "amount": format!("{}.0", 100 + day),
                       "narration": narration(0), "sender_bank_code": "000013"}),
            )
            .await
            .expect(ResponseCode::Success)
            .clone(),
        );
        let payout = json!({"source_account_number": payer.main_account_number,
            "source_account_name": "Lagos Fresh Produce Ltd",
            "beneficiary_account_number": virtual_number,
            "beneficiary_account_name": "Adaeze Foods Ltd - Chinedu Obi", "bank_code": "090823",
            "transfer_type": "intra", "amount": format!("{}.1", 100 + day),
            "narration": narration(1)});
        kit.send(
            Call::new(
                Operation::FundsTransferApi.path(),
                Some(&payer_token),
                payout,
            )
            .header("idempotency-key", format!("history-{day}")),
        )
        .await
        .expect(ResponseCode::Success);
        let newest = kit
            .op(Operation::FetchTransactionsApi, &token, json!({"limit": 1}))
            .await
            .expect(ResponseCode::Success)[0]
            .clone();
        assert_eq!(newest["channel"], "intra", "{newest:#}");
        made.push(newest);
        kit.clock.advance(Duration::days(1));
        token = kit.integration_token().await;
        payer_token = kit.integration_token_of(&payer).await;
    }
    let owner = kit
        .login(
            "adaeze.okafor@adaezefoods.ng",
            kobo::testkit::OWNER_PASSWORD,
        )
        .await;
    let tokens = Tokens {
        integration: token,
        owner,
    };
    (main, virtual_number, made, tokens)
}

fn refs(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|t| t["reference_number"].as_str().unwrap())
        .collect()
}

fn day_of(transaction: &Value) -> String {
    transaction["created_at"].as_str().unwrap()[..10].to_owned()
}

async fn every_filter_narrows_the_list(kit: TestKit) {
    let (main, virtual_number, made, tokens) = history(&kit).await;
    let token = tokens.integration.clone();
    let newest_first: Vec<&str> = made
        .iter()
        .rev()
        .map(|t| t["reference_number"].as_str().unwrap())
        .collect();
    let list = |filters: Value| {
        let token = token.clone();
        let kit = &kit;
        async move {
            kit.op(
                Operation::FetchTransactionsApi,
                &token,
                json!({"filters": filters}),
            )
            .await
            .expect(ResponseCode::Success)
            .clone()
        }
    };
    assert_eq!(refs(&list(json!({})).await), newest_first);
    let by_account = list(json!({"account_number": virtual_number})).await;
    assert_eq!(refs(&by_account).len(), 3);
    // Counted from the rows themselves: a day may start between two credits.
    let first_day = day_of(&made[0]);
    let second_day = day_of(&made[2]);
    let on = |day: &str| made.iter().filter(|t| day_of(t) == day).count();
    let from = |day: &str| made.iter().filter(|t| day_of(t).as_str() >= day).count();
    let until = |day: &str| made.iter().filter(|t| day_of(t).as_str() <= day).count();
    assert_eq!(
        refs(&list(json!({"date": first_day})).await).len(),
        on(&first_day)
    );
    assert_eq!(
        refs(&list(json!({"start_date": second_day})).await).len(),
        from(&second_day)
    );
    assert_eq!(
        refs(&list(json!({"end_date": first_day})).await).len(),
        until(&first_day)
    );
    // The single day wins over the range.
    assert_eq!(
        refs(&list(json!({"date": first_day, "start_date": second_day})).await).len(),
        on(&first_day)
    );
    assert_eq!(
        refs(&list(json!({"reference_number": made[3]["reference_number"]})).await),
        vec![made[3]["reference_number"].as_str().unwrap()]
    );
    assert_eq!(refs(&list(json!({"channel": "intra"})).await).len(), 3);
    assert_eq!(
        refs(&list(json!({"channel": "nip", "account_number": main})).await).len(),
        3
    );
    assert_eq!(
        refs(&list(json!({"transaction_category": "collection"})).await).len(),
        6
    );
    assert_eq!(
        refs(&list(json!({"transaction_category": "transfer"})).await).len(),
        0
    );
    assert_eq!(
        refs(&list(json!({"transaction_type": "debit"})).await).len(),
        0
    );
    assert_eq!(refs(&list(json!({"status": "success"})).await).len(), 6);
    // Search is a case-insensitive substring, wildcards taken literally.
    assert_eq!(refs(&list(json!({"search": "ORDER 1"})).await).len(), 2);
    // Funds transfers keep NIP's characters only ("Order 01 50 _off"): `50%_OFF` taken as
    // a pattern would match those too.
    assert_eq!(refs(&list(json!({"search": "50%_OFF"})).await).len(), 3);
    assert_eq!(refs(&list(json!({"search": "50%x"})).await).len(), 0);
    let reference = made[4]["reference_number"].as_str().unwrap().to_lowercase();
    assert_eq!(refs(&list(json!({"search": reference})).await).len(), 1);

    // The Dashboard list has the same filters (minus the integration-only ones).
    let web = kit
        .op(
            Operation::FetchTransactionsWeb,
            &tokens.owner,
            json!({"filters": {"account_number": main, "start_date": second_day}}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    let expected = made
        .iter()
        .filter(|t| t["account_number"] == main.as_str() && day_of(t) >= second_day)
        .count();
    assert_eq!(refs(&web).len(), expected);
    assert_eq!(web[0]["narration"], made[4]["remarks"]);
    // Settlements by account, date and reference.
    let settled = kit
        .op(
            Operation::FetchSettlementTransactionsWeb,
            &tokens.owner,
            json!({"filters": {"account_number": virtual_number, "end_date": first_day}}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    let expected: Vec<&Value> = made
        .iter()
        .rev()
        .filter(|t| t["account_number"] == virtual_number.as_str() && day_of(t) <= first_day)
        .map(|t| &t["reference_number"])
        .collect();
    let settled_refs: Vec<&Value> = settled
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["reference"])
        .collect();
    assert_eq!(settled_refs, expected);
    let by_reference = kit
        .op(
            Operation::FetchSettlementTransactionsApi,
            &token,
            json!({"filters": {"reference": made[5]["reference_number"]}}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(by_reference, json!([made[5]]));

    // Malformed and conflicting fields name themselves.
    for (body, field) in [
        (
            json!({"filters": {"start_date": second_day, "end_date": first_day}}),
            "`filters.start_date`",
        ),
        (json!({"limit": 10, "page_size": 30}), "`page_size`"),
        (
            json!({"page": 2, "cursor_created_at": made[0]["created_at"], "cursor_id": made[0]["id"]}),
            "`page`",
        ),
        (json!({"cursor_id": made[0]["id"]}), "`cursor_created_at`"),
    ] {
        let reply = kit.op(Operation::FetchTransactionsApi, &token, body).await;
        reply.expect(ResponseCode::InvalidRequest);
        assert!(
            reply.body["message"].as_str().unwrap().starts_with(field),
            "{reply:#?}"
        );
    }
    kit.assert_ledger_balances().await;
}

async fn both_paging_styles_walk_every_row_once(kit: TestKit) {
    let (_, _, made, tokens) = history(&kit).await;
    let token = tokens.integration.clone();
    let all: Vec<String> = made
        .iter()
        .rev()
        .map(|t| t["reference_number"].as_str().unwrap().to_owned())
        .collect();

    // Keyset: two per page.
    let mut walked = Vec::new();
    let mut body = json!({"limit": 2});
    loop {
        let reply = kit
            .op(Operation::FetchTransactionsApi, &token, body.clone())
            .await;
        reply.expect(ResponseCode::Success);
        // A page asked by cursor has no number; the first one is page 1.
        let expected_page = if body.get("cursor_id").is_some() {
            json!(null)
        } else {
            json!(1)
        };
        assert_eq!(reply.body["pagination"]["page"], expected_page);
        walked.extend(refs(&reply.body["data"]).into_iter().map(str::to_owned));
        let pagination = &reply.body["pagination"];
        if !pagination["has_more"].as_bool().unwrap() {
            assert_eq!(pagination["next_cursor_id"], json!(null));
            break;
        }
        body = json!({"limit": 2, "cursor_created_at": pagination["next_cursor_created_at"],
                      "cursor_id": pagination["next_cursor_id"]});
    }
    assert_eq!(walked, all);

    // Numbered: page_size 4, pages 1 and 2.
    let mut numbered = Vec::new();
    for page in 1..=2 {
        let reply = kit
            .op(
                Operation::FetchTransactionsWeb,
                &tokens.owner,
                json!({"page": page, "page_size": 4}),
            )
            .await;
        reply.expect(ResponseCode::Success);
        assert_eq!(reply.body["pagination"]["page"], json!(page));
        assert_eq!(reply.body["pagination"]["page_size"], json!(4));
        assert_eq!(reply.body["pagination"]["has_more"], json!(page == 1));
        numbered.extend(refs(&reply.body["data"]).into_iter().map(str::to_owned));
    }
    assert_eq!(numbered, all);

    // Accounts page by cursor too.
    let first = kit
        .op(
            Operation::FetchCustomerAccounts,
            &token,
            json!({"limit": 1}),
        )
        .await;
    first.expect(ResponseCode::Success);
    let pagination = &first.body["pagination"];
    assert_eq!(pagination["has_more"], json!(true));
    let second = kit
        .op(
            Operation::FetchCustomerAccounts,
            &token,
            json!({"limit": 1, "cursor_created_at": pagination["next_cursor_created_at"],
                   "cursor_id": pagination["next_cursor_id"]}),
        )
        .await;
    second.expect(ResponseCode::Success);
    assert_eq!(second.body["data"][0]["account_type"], "pool");
    assert_eq!(second.body["pagination"]["has_more"], json!(false));
}

on_both_stores!(
    every_filter_narrows_the_list,
    both_paging_styles_walk_every_row_once
);
