//! Tenant isolation for accounts and transactions: nothing of one business is visible to, or
//! movable by, another.

use generated_server::{Operation, ResponseCode};
use kobo::on_both_stores;
use kobo::testkit::TestKit;
use serde_json::json;

async fn accounts_and_transactions_stay_in_their_business(kit: TestKit) {
    let token = kit.integration_token().await;
    let ours = kit
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
    let credit = kit.credit(&token, &ours, "500").await;

    let (other, other_owner) = kit
        .other_business("Lagos Fresh Produce Ltd", "owner@lagosfresh.ng")
        .await;
    let other_token = kit.integration_token_of(&other).await;
    // The same BVN may open an account in another business.
    kit.op(
        Operation::CreateCustomerAccount,
        &other_token,
        json!({"bvn": "22212345678"}),
    )
    .await
    .expect(ResponseCode::Success);

    let not_found = [
        (
            Operation::GetAccount,
            other_owner.as_str(),
            json!({"account_number": ours}),
        ),
        (
            Operation::SimulateInboundTransfer,
            other_token.as_str(),
            json!({"account_number": ours, "amount": "1"}),
        ),
        (
            Operation::CreateCustomerAccount,
            other_token.as_str(),
            json!({"nin": "70123456789", "parent_account_number": kit.business.main_account_number}),
        ),
    ];
    for (operation, token, body) in not_found {
        kit.op(operation, token, body)
            .await
            .expect(ResponseCode::AccountNotFound);
    }
    let empty_lists = [
        (
            Operation::FetchTransactionsApi,
            other_token.as_str(),
            json!({"filters": {"account_number": ours}}),
        ),
        (
            Operation::FetchTransactionsWeb,
            other_owner.as_str(),
            json!({"filters": {"reference_number": credit["reference_number"]}}),
        ),
        (
            Operation::FetchSettlementTransactionsApi,
            other_token.as_str(),
            json!({"filters": {"account_number": ours}}),
        ),
        (
            Operation::FetchAccountCollections,
            other_owner.as_str(),
            json!({"account_number": ours}),
        ),
        (
            Operation::FetchAccountSummaries,
            other_owner.as_str(),
            json!({"account_number": ours}),
        ),
    ];
    for (operation, token, body) in empty_lists {
        let data = kit
            .op(operation, token, body)
            .await
            .expect(ResponseCode::Success)
            .clone();
        assert_eq!(data, json!([]), "{operation:?}");
    }
    // Nothing of ours moved.
    let ours_now = kit
        .op(
            Operation::GetAccount,
            &kit.owner_token,
            json!({"account_number": ours}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(ours_now["balance"], "500.000000000");
    let our_transactions = kit
        .op(Operation::FetchTransactionsApi, &token, json!({}))
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(our_transactions, json!([credit]));
    // The other business's totals are its own.
    let metrics = kit
        .op(Operation::GetTotalAccountMetrics, &other_owner, json!({}))
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(metrics["total_business_balance"], "0.000000000");
    assert_eq!(metrics["total_volume_collected"], "0.00");
    let listed = kit
        .op(Operation::FetchCustomerAccounts, &other_token, json!({}))
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert!(listed
        .as_array()
        .unwrap()
        .iter()
        .all(|account| account["account_number"] != ours.as_str()));
    kit.assert_ledger_balances().await;
}

on_both_stores!(accounts_and_transactions_stay_in_their_business);
