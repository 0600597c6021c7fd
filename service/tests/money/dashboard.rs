//! The Dashboard at a real business's scale (issue 59), on the API's side: a customer's account
//! found by a part of its name among a thousand, the money in and out per day, the held
//! payments a checker decides on (who made them, what the account keeps) and the emails that
//! tell the approvers and the maker, and the audit log naming what it acted on.

use generated_server::{Operation, ResponseCode};
use kobo::on_both_stores;
use kobo::operator::demo_scale;
use kobo::testkit::{StoreKind, TestKit};
use serde_json::{json, Value};

use crate::support::{approval_kit, otp, payout_body, CHECKER};

/// Defect 1: a business with more than 100 accounts could not find its main account, nor a
/// customer's among its thousand.
async fn a_customer_account_is_found_by_a_part_of_its_name_or_number_among_a_thousand(
    kit: TestKit,
) {
    let (store, clock) = (&kit.store, &kit.clock);
    let business = &kit.business.business_id;
    let opened = demo_scale::seed_customer_accounts(store, clock, business, 1_000)
        .await
        .unwrap();
    assert_eq!(opened, 1_000);
    // A second start finds them all and opens none.
    let again = demo_scale::seed_customer_accounts(store, clock, business, 1_000)
        .await
        .unwrap();
    assert_eq!(again, 0);
    let find = async |body: Value| {
        kit.op(Operation::FetchAccountSummaries, &kit.owner_token, body)
            .await
            .expect(ResponseCode::Success)
            .clone()
    };
    let name = demo_scale::customer_name(14);
    assert_eq!(name, "Obinna Adebayo");
    let found = find(json!({"account_type": "virtual", "search": "obinna ADE"})).await;
    let found = found.as_array().unwrap();
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0]["account_name"], name);
    let number = found[0]["account_number"].as_str().unwrap().to_owned();
    // By a part of its number, and with the other filters.
    let by_number = find(json!({"search": &number[2..]})).await;
    let by_number = by_number.as_array().unwrap();
    assert!(by_number.iter().all(|account| account["account_number"]
        .as_str()
        .unwrap()
        .contains(&number[2..])));
    assert!(by_number
        .iter()
        .any(|account| account["account_number"] == number.as_str()));
    let none = find(json!({"search": "obinna", "account_type": "normal"})).await;
    assert_eq!(none.as_array().unwrap().len(), 0);
    // The business's own accounts apart from its customers': the main account is there.
    let own = find(json!({"account_type": "normal", "is_available": true})).await;
    assert!(own
        .as_array()
        .unwrap()
        .iter()
        .any(|account| account["account_class"] == "primary"));
    // A search pages as every list: thirty Obinnas, two pages of twenty.
    let first = kit
        .op(
            Operation::FetchAccountSummaries,
            &kit.owner_token,
            json!({"search": "Obinna", "limit": 20}),
        )
        .await;
    let page = first
        .expect(ResponseCode::Success)
        .as_array()
        .unwrap()
        .len();
    assert_eq!(page, 20);
    let pagination = &first.body["pagination"];
    assert_eq!(pagination["has_more"], true);
    let rest = find(json!({"search": "Obinna", "limit": 20,
        "cursor_created_at": pagination["next_cursor_created_at"],
        "cursor_id": pagination["next_cursor_id"]}))
    .await;
    assert_eq!(rest.as_array().unwrap().len(), 5, "25 Obinnas among 1,000");
    // `%` and `_` are what they are, not patterns.
    assert_eq!(
        find(json!({"search": "%"})).await.as_array().unwrap().len(),
        0
    );
}

/// The overview's chart: money in and out per day, every day present.
async fn the_cash_flow_counts_each_days_money_in_and_out(kind: StoreKind) {
    let (kit, _) = approval_kit(kind, "100000", "1000000").await;
    let code = otp(&kit, &kit.owner_token).await;
    let mut body = payout_body("0123456788", "Emeka Nwosu", "000013", "2500");
    body["otp"] = json!(code);
    kit.op(Operation::FundsTransfer, &kit.owner_token, body)
        .await
        .expect(ResponseCode::Success);
    let flow = kit
        .op(Operation::GetCashFlow, &kit.owner_token, json!({"days": 7}))
        .await
        .expect(ResponseCode::Success)
        .clone();
    let days = flow["days"].as_array().unwrap();
    assert_eq!(days.len(), 7);
    let today = kit.clock.now().date_naive().to_string();
    assert_eq!(flow["end_date"], today.as_str());
    let last = &days[6];
    assert_eq!(last["date"], today.as_str());
    assert_eq!(last["money_in"], "100000.00");
    assert_eq!(last["credits"], 1);
    // The amount, its fee (10.00) and its VAT (0.75).
    assert_eq!(last["money_out"], "2510.75");
    assert_eq!(last["debits"], 2);
    assert_eq!(flow["money_in"], "100000.00");
    assert_eq!(days[0]["money_in"], "0.00");
    // One account's, by its number; a number the business does not have is `44`.
    let main = kit
        .op(
            Operation::GetCashFlow,
            &kit.owner_token,
            json!({"account_number": "1000000014"}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(main["days"].as_array().unwrap().len(), 30);
    assert_eq!(main["money_out"], "2510.75");
    kit.op(
        Operation::GetCashFlow,
        &kit.owner_token,
        json!({"account_number": "3000000018"}),
    )
    .await
    .expect(ResponseCode::AccountNotFound);
}

/// Defect 5: the checker could not see who made a payment, nobody was told it waited, and its
/// maker was not told what became of it.
async fn a_held_payment_tells_its_approvers_and_its_decision_tells_its_maker(kind: StoreKind) {
    let (kit, checker) = approval_kit(kind, "100000", "1000").await;
    // A member who may approve but not see accounts: told too, shown no balance.
    let approver_only = kit
        .create_role("Approver only", &["transfer.view", "transfer.approve"])
        .await;
    let (_, limited) = kit
        .add_member("bola.approver@adaezefoods.ng", &approver_only)
        .await;
    let hold = async |amount: &str, narration: &str| {
        let code = otp(&kit, &kit.owner_token).await;
        let mut body = payout_body("0123456788", "Emeka Nwosu", "000013", amount);
        body["otp"] = json!(code);
        body["narration"] = json!(narration);
        kit.op(Operation::FundsTransfer, &kit.owner_token, body)
            .await
            .expect(ResponseCode::Success)
            .clone()
    };
    let held = hold("5000", "Supplier invoice 1042").await;
    let reference = held["reference_number"].as_str().unwrap().to_owned();
    let told = kit.outbox(CHECKER).await;
    let told = told
        .iter()
        .find(|mail| mail.subject.contains("waits for your approval"))
        .expect("the checker is told");
    assert_eq!(
        told.subject,
        "A payment of NGN 5,000.00 to Emeka Nwosu waits for your approval"
    );
    assert!(told
        .body
        .contains("Adaeze Okafor asked to pay NGN 5,000.00 to Emeka Nwosu"));
    assert!(told.body.contains("Supplier invoice 1042"));
    assert!(told.body.contains(&reference));
    assert!(told.body.contains("approvals"));
    assert!(kit
        .outbox("bola.approver@adaezefoods.ng")
        .await
        .iter()
        .any(|mail| mail.subject.contains("waits for your approval")));
    assert!(
        !kit.outbox("adaeze.okafor@adaezefoods.ng")
            .await
            .iter()
            .any(|mail| mail.subject.contains("waits for your approval")),
        "the maker is not asked to approve"
    );

    // What a checker decides on: the maker, the narration, the balance once approved.
    let pending = kit
        .op(Operation::FetchPendingTransfers, &checker, json!({}))
        .await
        .expect(ResponseCode::Success)
        .clone();
    let item = &pending[0];
    assert_eq!(item["reference_number"], reference.as_str());
    assert_eq!(item["initiated_by_name"], "Adaeze Okafor");
    assert_eq!(item["narration"], "Supplier invoice 1042");
    assert_eq!(item["source_account_name"], "Adaeze Foods Ltd");
    // 100,000 less 5,000, its fee of 10.00 and VAT of 0.75, already set aside.
    assert_eq!(item["source_account_balance"], "94989.250000000");
    assert_eq!(item["reviewed_by_name"], Value::Null);
    let hidden = kit
        .op(Operation::FetchPendingTransfers, &limited, json!({}))
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(hidden[0]["source_account_balance"], Value::Null);

    let code = otp(&kit, &checker).await;
    kit.op(
        Operation::ApproveTransfer,
        &checker,
        json!({"reference_number": reference, "otp": code}),
    )
    .await
    .expect(ResponseCode::Success);
    let approved = kit.outbox("adaeze.okafor@adaezefoods.ng").await;
    let approved = approved
        .iter()
        .find(|mail| mail.subject.contains("was approved"))
        .expect("the maker is told");
    assert_eq!(
        approved.subject,
        "Your payment of NGN 5,000.00 to Emeka Nwosu was approved"
    );
    assert!(approved.body.contains("Tunde Bakare approved your payment"));
    assert!(approved.body.contains(&format!("transfers/{reference}")));
    let receipt = kit
        .op(
            Operation::GetTransferWeb,
            &kit.owner_token,
            json!({"reference_number": reference}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(receipt["initiated_by_name"], "Adaeze Okafor");
    assert_eq!(receipt["reviewed_by_name"], "Tunde Bakare");

    let second = hold("3000", "Deposit for stall").await;
    kit.op(
        Operation::RejectTransfer,
        &checker,
        json!({"reference_number": second["reference_number"], "reason": "Wrong supplier"}),
    )
    .await
    .expect(ResponseCode::Success);
    let rejected = kit.outbox("adaeze.okafor@adaezefoods.ng").await;
    let rejected = rejected
        .iter()
        .find(|mail| mail.subject.contains("was rejected"))
        .expect("the maker is told of the rejection");
    assert!(rejected.body.contains("Their reason: Wrong supplier"));
    kit.assert_ledger_balances().await;
}

/// Defect 14: the audit log showed ids where people know references and names.
async fn the_audit_log_names_what_its_entries_acted_on(kind: StoreKind) {
    let (kit, _) = approval_kit(kind, "100000", "1000000").await;
    let code = otp(&kit, &kit.owner_token).await;
    let mut body = payout_body("0123456788", "Emeka Nwosu", "000013", "2500");
    body["otp"] = json!(code);
    let paid = kit
        .op(Operation::FundsTransfer, &kit.owner_token, body)
        .await
        .expect(ResponseCode::Success)
        .clone();
    let entries = kit
        .op(
            Operation::FetchAuditLogs,
            &kit.owner_token,
            json!({"filters": {"action": "funds_transfer"}}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(entries[0]["target_type"], "transfer");
    assert_eq!(entries[0]["target_name"], paid["reference_number"]);
    let members = kit
        .op(
            Operation::FetchAuditLogs,
            &kit.owner_token,
            json!({"filters": {"action": "add_member"}}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(
        members[0]["target_name"],
        format!("Tunde Bakare <{CHECKER}>").as_str()
    );
}

on_both_stores!(a_customer_account_is_found_by_a_part_of_its_name_or_number_among_a_thousand);
on_both_stores!(kind:
    the_cash_flow_counts_each_days_money_in_and_out,
    a_held_payment_tells_its_approvers_and_its_decision_tells_its_maker,
    the_audit_log_names_what_its_entries_acted_on,
);
