//! Tenant isolation for accounts, transactions, transfers and approval policies: nothing of
//! one business is visible to, or movable by, another.

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

/// Another business's transfers and accounts, through every transfer and approval operation
/// of both families: its transfer references are not found (`47`), its accounts are no source
/// (`42`), its lists are empty, and nothing of ours moves or changes.
async fn transfers_and_policies_stay_in_their_business(kind: kobo::testkit::StoreKind) {
    let mut config = crate::races::roomy_budget();
    config.otp.issue_limit = 1_000;
    let kit = TestKit::start(kind, config).await;
    let token = kit.integration_token().await;
    let main = kit.business.main_account_number.clone();
    kit.credit(&token, &main, "100000").await;
    kit.op(
        Operation::CreateApprovalPolicy,
        &kit.owner_token,
        json!({"min_amount": "5000"}),
    )
    .await
    .expect(ResponseCode::Success);
    let transfer = |amount: &str| {
        json!({"source_account_number": main, "source_account_name": "Adaeze Foods Ltd",
               "beneficiary_account_number": "0123456788", "beneficiary_account_name": "Emeka Nwosu",
               "bank_code": "000013", "amount": amount, "transfer_type": "inter",
               "reference": format!("OURS-{amount}")})
    };
    let call = |body: serde_json::Value, key: &str| {
        kobo::testkit::Call::new(
            Operation::FundsTransferApi.path(),
            Some(token.as_str()),
            body,
        )
        .header("idempotency-key", key.to_owned())
    };
    let sent = kit
        .send(call(transfer("1000"), "ours-1"))
        .await
        .expect(ResponseCode::Success)
        .clone();
    let held = kit
        .send(call(transfer("6000"), "ours-2"))
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(held["transfer_status"], "pending_approval");
    let before = kit
        .op(Operation::FetchTransfersApi, &token, json!({}))
        .await
        .expect(ResponseCode::Success)
        .clone();

    let (other, other_owner) = kit
        .other_business("Lagos Fresh Produce Ltd", "owner@lagosfresh.ng")
        .await;
    let other_token = kit.integration_token_of(&other).await;
    let other_otp = crate::support::otp(&kit, &other_owner).await;
    let web = other_owner.as_str();
    let api = other_token.as_str();
    let ours = |reference: &serde_json::Value| json!({"reference_number": reference});

    // Our transfers, by Kobo's reference or ours: not found, never shown, never moved.
    let not_found = [
        (
            Operation::GetTransferWeb,
            web,
            ours(&sent["reference_number"]),
        ),
        (
            Operation::GetTransferApi,
            api,
            ours(&held["reference_number"]),
        ),
        (
            Operation::GetTransferApi,
            api,
            json!({"reference": "OURS-1000"}),
        ),
        (
            Operation::GetTransferWeb,
            web,
            json!({"reference": "OURS-6000"}),
        ),
        (
            Operation::ApproveTransfer,
            web,
            json!({"reference_number": held["reference_number"], "otp": other_otp}),
        ),
        (
            Operation::RejectTransfer,
            web,
            json!({"reference_number": held["reference_number"], "reason": "Not ours"}),
        ),
        (
            Operation::CancelTransfer,
            web,
            ours(&held["reference_number"]),
        ),
        // Our policy is ours: theirs does not exist.
        (Operation::GetApprovalPolicy, web, json!({})),
        (
            Operation::UpdateApprovalPolicy,
            web,
            json!({"is_active": false}),
        ),
    ];
    for (operation, token, body) in not_found {
        let reply = kit.op(operation, token, body).await;
        reply.expect(ResponseCode::NotFound);
        assert!(
            !reply.body["message"].as_str().unwrap().contains("Emeka"),
            "{reply:?}"
        );
    }
    // Our accounts are no source of theirs.
    let mut theirs_from_ours = transfer("10");
    theirs_from_ours["reference"] = json!("THEIRS-1");
    let mut web_from_ours = theirs_from_ours.clone();
    web_from_ours.as_object_mut().unwrap().remove("reference");
    web_from_ours["otp"] = json!(crate::support::otp(&kit, &other_owner).await);
    let enquiry = json!({"beneficiary_account_number": "0123456788", "bank_code": "000013",
                         "source_account_number": main});
    let no_source = [
        (Operation::NameEnquiry, api, enquiry.clone(), None),
        (Operation::NameEnquiryWeb, web, enquiry, None),
        (Operation::FundsTransfer, web, web_from_ours, None),
        (
            Operation::FundsTransferApi,
            api,
            theirs_from_ours,
            Some("theirs-1"),
        ),
    ];
    for (operation, token, body, key) in no_source {
        let mut call = kobo::testkit::Call::new(operation.path(), Some(token), body);
        if let Some(key) = key {
            call = call.header("idempotency-key", key.to_owned());
        }
        kit.send(call)
            .await
            .expect(ResponseCode::SourceAccountNotFound);
    }
    // Our transfers are in none of their lists.
    let empty_lists = [
        (Operation::FetchTransfersWeb, web, json!({})),
        (Operation::FetchTransfersApi, api, json!({})),
        (
            Operation::FetchTransfersApi,
            api,
            json!({"filters": {"source_account_number": main}}),
        ),
        (
            Operation::FetchTransfersWeb,
            web,
            json!({"filters": {"reference_number": sent["reference_number"]}}),
        ),
        (
            Operation::FetchTransfersApi,
            api,
            json!({"filters": {"reference": "OURS-6000"}}),
        ),
        (Operation::FetchPendingTransfers, web, json!({})),
        (
            Operation::FetchPendingTransfers,
            web,
            json!({"source_account_number": main}),
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
    // Their client reference is theirs: the same string is free for them.
    let same_reference = json!({"source_account_number": other.main_account_number,
        "source_account_name": "Lagos Fresh Produce Ltd", "beneficiary_account_number": main,
        "beneficiary_account_name": "Adaeze Foods Ltd", "bank_code": "090823",
        "amount": "1", "transfer_type": "intra", "reference": "OURS-1000"});
    kit.credit(&other_token, &other.main_account_number, "10")
        .await;
    let paid = kit
        .send(
            kobo::testkit::Call::new(
                Operation::FundsTransferApi.path(),
                Some(api),
                same_reference.clone(),
            )
            .header("idempotency-key", "ours-1"),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_ne!(paid["id"], sent["id"], "a key is the business's own too");
    // Nothing of ours changed: the same transfers, the held one still held.
    let after = kit
        .op(Operation::FetchTransfersApi, &token, json!({}))
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(after, before);
    kit.op(Operation::GetApprovalPolicy, &kit.owner_token, json!({}))
        .await
        .expect(ResponseCode::Success);
    kit.assert_ledger_balances().await;
}

on_both_stores!(accounts_and_transactions_stay_in_their_business);
on_both_stores!(kind: transfers_and_policies_stay_in_their_business);
