//! Current accounts, the main pool account, lookups and the business-inactive rule.

use generated_server::{Operation, ResponseCode};
use kobo::kernel::config::Config;
use kobo::money::nuban;
use kobo::on_both_stores;
use kobo::testkit::{Call, StoreKind, TestKit};
use serde_json::json;

async fn a_new_business_has_its_main_pool_account(kit: TestKit) {
    let token = kit.integration_token().await;
    let data = kit
        .op(Operation::FetchCustomerAccounts, &token, json!({}))
        .await
        .expect(ResponseCode::Success)
        .clone();
    let accounts = data.as_array().unwrap();
    assert_eq!(accounts.len(), 1, "{data:#}");
    let main = &accounts[0];
    assert_eq!(
        main["account_number"],
        kit.business.main_account_number.as_str()
    );
    assert_eq!(main["account_type"], "pool");
    assert_eq!(main["balance"], "0.000000000");
    assert_eq!(main["last_balance_update"], json!(null));
    assert_eq!(main["parent_account_number"], json!(null));
    let detail = kit
        .op(
            Operation::GetAccount,
            &kit.owner_token,
            json!({"account_class": "primary"}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(detail["account_number"], main["account_number"]);
    assert_eq!(detail["customer"], json!(null));
    kit.assert_ledger_balances().await;
}

async fn current_accounts_open_under_the_main_account(kit: TestKit) {
    let token = kit.integration_token().await;
    let named = kit
        .op(
            Operation::CreateAccountApi,
            &token,
            json!({"account_name": "  Adaeze Foods Ltd - Operations "}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(named["account_name"], "Adaeze Foods Ltd - Operations");
    assert_eq!(named["account_type"], "current");
    assert_eq!(named["status"], "active");
    assert_eq!(named["balance"], "0.000000000");
    assert_eq!(named["last_balance_update"], json!(null));
    assert_eq!(
        named["parent_account_number"],
        kit.business.main_account_number.as_str()
    );
    let number = named["account_number"].as_str().unwrap();
    assert!(nuban::is_valid(nuban::BANK_CODE, number), "{number}");

    let defaulted = kit
        .op(Operation::CreateAccountWeb, &kit.owner_token, json!({}))
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(defaulted["account_name"], "Adaeze Foods Ltd - Current 2");
    assert_ne!(defaulted["account_number"], named["account_number"]);

    // Each creation is an event, and the Dashboard one is in the audit log.
    assert_eq!(
        kit.count(
            "SELECT COUNT(*) FROM events WHERE business_id = $1 AND type = 'account.created'",
            &kit.business.business_id
        )
        .await,
        2
    );
    let audit = kit
        .op(
            Operation::FetchAuditLogs,
            &kit.owner_token,
            json!({"filters": {"action": "create_account"}}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(audit.as_array().unwrap().len(), 2, "{audit:#}");

    // Lookups by number, type and class.
    let found = kit
        .op(
            Operation::GetAccount,
            &kit.owner_token,
            json!({"account_number": number}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(found["account_class"], "secondary");
    assert_eq!(found["id"], named["id"]);
    let newest_normal = kit
        .op(
            Operation::GetAccount,
            &kit.owner_token,
            json!({"account_type": "normal", "account_class": "secondary"}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(
        newest_normal["id"], defaulted["id"],
        "the most recent match"
    );
    for missing in [
        json!({"account_number": "1999999991"}),
        json!({"account_type": "savings"}),
        json!({"account_type": "virtual"}),
        json!({"status": "closed"}),
    ] {
        kit.op(Operation::GetAccount, &kit.owner_token, missing)
            .await
            .expect(ResponseCode::AccountNotFound);
    }
    // Blank names are refused.
    kit.op(
        Operation::CreateAccountApi,
        &token,
        json!({"account_name": "   "}),
    )
    .await
    .expect(ResponseCode::InvalidRequest);
    kit.assert_ledger_balances().await;
}

async fn the_account_limit_answers_83(kind: StoreKind) {
    let config = Config {
        max_current_accounts: 2,
        ..Config::default()
    };
    let kit = TestKit::start(kind, config).await;
    let token = kit.integration_token().await;
    for _ in 0..2 {
        kit.op(Operation::CreateAccountApi, &token, json!({}))
            .await
            .expect(ResponseCode::Success);
    }
    let refused = kit
        .op(Operation::CreateAccountWeb, &kit.owner_token, json!({}))
        .await;
    refused.expect(ResponseCode::ProviderError);
    assert!(
        refused.body["message"]
            .as_str()
            .unwrap()
            .contains("2 current accounts"),
        "{refused:#?}"
    );
}

async fn an_inactive_business_reads_but_cannot_open_accounts(kit: TestKit) {
    let token = kit.integration_token().await;
    let customer = kit
        .op(
            Operation::CreateCustomerAccount,
            &token,
            json!({"bvn": "22212345678"}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    kit.credit(&token, customer["account_number"].as_str().unwrap(), "100")
        .await;
    kobo::operator::businesses::set_status(
        &kit.store,
        &kit.clock,
        &kit.business.business_id,
        false,
    )
    .await
    .unwrap();

    for (operation, token) in [
        (Operation::CreateAccountApi, token.as_str()),
        (Operation::CreateAccountWeb, kit.owner_token.as_str()),
        (Operation::FetchTransactionsApi, token.as_str()),
        (Operation::FetchSettlementTransactionsApi, token.as_str()),
    ] {
        kit.op(operation, token, json!({}))
            .await
            .expect(ResponseCode::BusinessInactive);
    }
    kit.op(
        Operation::CreateCustomerAccount,
        &token,
        json!({"nin": "70123456789"}),
    )
    .await
    .expect(ResponseCode::BusinessInactive);
    // Nor does it pay out.
    let payout = json!({
        "source_account_number": "1000000014",
        "source_account_name": "Adaeze Foods Ltd",
        "beneficiary_account_number": "0123456788",
        "beneficiary_account_name": "Emeka Nwosu",
        "bank_code": "000013",
        "amount": "10",
        "transfer_type": "inter",
    });
    kit.send(
        Call::new(Operation::FundsTransferApi.path(), Some(&token), payout)
            .header("idempotency-key", "while-suspended"),
    )
    .await
    .expect(ResponseCode::BusinessInactive);
    // Members still log in and read.
    let owner = kit
        .login(
            "adaeze.okafor@adaezefoods.ng",
            kobo::testkit::OWNER_PASSWORD,
        )
        .await;
    for (operation, token) in [
        (Operation::FetchCustomerAccounts, token.as_str()),
        (Operation::GetAccount, owner.as_str()),
        (Operation::FetchTransactionsWeb, owner.as_str()),
        (Operation::FetchSettlementTransactionsWeb, owner.as_str()),
        (Operation::FetchAccountCollections, owner.as_str()),
        (Operation::FetchAccountSummaries, owner.as_str()),
        (Operation::GetTotalAccountMetrics, owner.as_str()),
    ] {
        kit.op(operation, token, json!({}))
            .await
            .expect(ResponseCode::Success);
    }
    // Activated again, it opens accounts.
    kobo::operator::businesses::set_status(&kit.store, &kit.clock, &kit.business.business_id, true)
        .await
        .unwrap();
    kit.op(Operation::CreateAccountApi, &token, json!({}))
        .await
        .expect(ResponseCode::Success);
    kit.assert_ledger_balances().await;
}

async fn a_retried_creation_opens_one_account(kit: TestKit) {
    let token = kit.integration_token().await;
    let call = || {
        Call::new(
            Operation::CreateAccountApi.path(),
            Some(&token),
            json!({"account_name": "Payroll"}),
        )
        .header("idempotency-key", "3f0c1b2a-payroll")
    };
    let first = kit.send(call()).await;
    let second = kit.send(call()).await;
    assert_eq!(
        first.expect(ResponseCode::Success),
        second.expect(ResponseCode::Success)
    );
    assert_eq!(second.header("idempotent-replayed"), Some("true"));
    assert_eq!(
        kit.count(
            "SELECT COUNT(*) FROM accounts WHERE business_id = $1 AND account_type = 'current'",
            &kit.business.business_id
        )
        .await,
        1
    );
}

on_both_stores!(
    a_new_business_has_its_main_pool_account,
    current_accounts_open_under_the_main_account,
    an_inactive_business_reads_but_cannot_open_accounts,
    a_retried_creation_opens_one_account,
);
on_both_stores!(kind: the_account_limit_answers_83);
