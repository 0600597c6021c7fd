//! Customers' virtual accounts: identity verification through the provider, the sandbox's
//! documented test table, one account per identity, and BVN/NIN kept out of every answer,
//! log and table.

use std::sync::Arc;

use generated_server::{Operation, ResponseCode};
use kobo::on_both_stores;
use kobo::operator::businesses;
use kobo::platform::permissions::VIEWER_ROLE_ID;
use kobo::provider::faults::{Faults, FaultyProvider};
use kobo::provider::sandbox::SandboxProvider;
use kobo::testkit::{Call, TestKit};
use serde_json::{json, Value};

async fn create(kit: &TestKit, token: &str, body: Value) -> kobo::testkit::Reply {
    kit.op(Operation::CreateCustomerAccount, token, body).await
}

async fn identities_follow_the_sandbox_table(kit: TestKit) {
    let token = kit.integration_token().await;
    let chinedu = create(
        &kit,
        &token,
        json!({"email": "chinedu.obi@example.ng", "phone": "08031234567", "bvn": "22212345678",
               "metadata": {"customer_ref": "CUST-00042"}}),
    )
    .await
    .expect(ResponseCode::Success)
    .clone();
    assert_eq!(chinedu["account_name"], "Chinedu Obi");
    assert_eq!(chinedu["account_type"], "virtual");
    assert_eq!(chinedu["status"], "active");
    assert_eq!(chinedu["balance"], "0.000000000");
    assert_eq!(chinedu["last_balance_update"], json!(null));
    assert_eq!(
        chinedu["parent_account_number"],
        kit.business.main_account_number.as_str()
    );
    assert!(chinedu["account_number"].as_str().unwrap().starts_with('2'));

    // The NIN row of the table, a chosen name, no email or phone (optional, as in the source).
    let funke = create(
        &kit,
        &token,
        json!({"nin": "70123456789", "account_name": "Funke's Store"}),
    )
    .await
    .expect(ResponseCode::Success)
    .clone();
    assert_eq!(funke["account_name"], "Funke's Store");
    // Any other number: a derived name.
    let other = create(&kit, &token, json!({"bvn": "12345671234"}))
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(other["account_name"], "Test Customer 1234");

    // Lookups show the customer, never the number.
    let detail = kit
        .op(
            Operation::GetAccount,
            &kit.owner_token,
            json!({"account_number": chinedu["account_number"]}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(
        detail["customer"],
        json!({"email": "chinedu.obi@example.ng", "phone": "08031234567",
               "verified_identities": ["bvn"], "metadata": {"customer_ref": "CUST-00042"}})
    );
    let funke_detail = kit
        .op(
            Operation::GetAccount,
            &kit.owner_token,
            json!({"account_number": funke["account_number"]}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(funke_detail["customer"]["email"], json!(null));
    assert_eq!(
        funke_detail["customer"]["verified_identities"],
        json!(["nin"])
    );

    // Failures of the table: 83, 80; and 02 without a number.
    let refused = create(&kit, &token, json!({"bvn": "22212345683"})).await;
    refused.expect(ResponseCode::ProviderError);
    assert_eq!(
        refused.body["message"],
        "Identity verification failed for BVN 222*****683"
    );
    create(&kit, &token, json!({"nin": "12345678980"}))
        .await
        .expect(ResponseCode::ProviderUnavailable);
    create(&kit, &token, json!({"email": "a@b.ng"}))
        .await
        .expect(ResponseCode::IdentityNumberMissing);
    // BVN and NIN of two different people.
    create(
        &kit,
        &token,
        json!({"bvn": "22287654321", "nin": "70198765432"}),
    )
    .await
    .expect(ResponseCode::ProviderError);

    // One account per identity in a business: by BVN, and by NIN sent beside a new BVN.
    let duplicate = create(&kit, &token, json!({"bvn": "22212345678"})).await;
    duplicate.expect(ResponseCode::Duplicate);
    assert_eq!(
        duplicate.body["message"],
        format!(
            "This BVN already has account {} in this business",
            chinedu["account_number"].as_str().unwrap()
        )
    );
    create(
        &kit,
        &token,
        json!({"bvn": "11111111111", "nin": "70123456789"}),
    )
    .await
    .expect(ResponseCode::Duplicate);

    // Nothing anywhere keeps the numbers (activity entries included: they commit after
    // their answers).
    kit.api.flush_activity_log().await;
    for table in [
        "customers",
        "accounts",
        "audit_logs",
        "activity_logs",
        "events",
    ] {
        let sql = format!("SELECT * FROM {table}");
        for row in kit.sql(&sql).rows().await {
            for text in row {
                let text = text.unwrap_or_default();
                for number in ["22212345678", "70123456789", "12345671234", "22212345683"] {
                    assert!(!text.contains(number), "{table} keeps {number}: {text}");
                }
            }
        }
    }
    kit.assert_ledger_balances().await;
}

async fn a_virtual_account_links_to_a_chosen_parent(kit: TestKit) {
    let token = kit.integration_token().await;
    let current = kit
        .op(Operation::CreateAccountApi, &token, json!({}))
        .await
        .expect(ResponseCode::Success)
        .clone();
    let child = create(
        &kit,
        &token,
        json!({"bvn": "22287654321", "parent_account_number": current["account_number"]}),
    )
    .await
    .expect(ResponseCode::Success)
    .clone();
    assert_eq!(child["parent_account_number"], current["account_number"]);
    // A virtual account is no parent; an unknown number neither.
    for parent in [child["account_number"].clone(), json!("1999999991")] {
        create(
            &kit,
            &token,
            json!({"nin": "70198765432", "parent_account_number": parent}),
        )
        .await
        .expect(ResponseCode::AccountNotFound);
    }
    // Collections filter by parent.
    let under = kit
        .op(
            Operation::FetchAccountCollections,
            &kit.owner_token,
            json!({"parent_account_number": current["account_number"]}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    let numbers: Vec<&Value> = under
        .as_array()
        .unwrap()
        .iter()
        .map(|account| &account["account_number"])
        .collect();
    assert_eq!(numbers, vec![&child["account_number"]]);
}

async fn provider_failures_are_80_and_83_and_leave_nothing(mut kit: TestKit) {
    let token = kit.integration_token().await;
    let faults = Arc::new(Faults::default());
    kit.use_provider(Arc::new(FaultyProvider {
        inner: Arc::new(SandboxProvider::new(kit.clock.clone())),
        faults: faults.clone(),
    }));
    Faults::set(&faults.down, true);
    create(&kit, &token, json!({"bvn": "22212345678"}))
        .await
        .expect(ResponseCode::ProviderUnavailable);
    kit.op(Operation::CreateAccountApi, &token, json!({}))
        .await
        .expect(ResponseCode::ProviderUnavailable);
    Faults::set(&faults.down, false);
    Faults::set(&faults.refuse, true);
    kit.op(Operation::CreateAccountWeb, &kit.owner_token, json!({}))
        .await
        .expect(ResponseCode::ProviderError);
    assert_eq!(
        kit.count(
            "SELECT COUNT(*) FROM accounts WHERE business_id = $1",
            &kit.business.business_id
        )
        .await,
        1,
        "only the main pool account"
    );
    assert_eq!(
        kit.count(
            "SELECT COUNT(*) FROM events WHERE business_id = $1",
            &kit.business.business_id
        )
        .await,
        0
    );
}

/// The Dashboard twin opens a customer's account as the integration does, as the member: the
/// audit entry names them and `account.created` is emitted. Each refusal is the integration
/// twin's, code and message; a role without `account.create` gets `43`.
async fn members_open_customer_accounts_as_the_integration_does(kit: TestKit) {
    let opener_role = kit.create_role("Account opener", &["account.create"]).await;
    let (opener_id, opener) = kit
        .add_member("bola.ade@adaezefoods.ng", &opener_role)
        .await;
    let (_, viewer) = kit
        .add_member("ife.olawale@adaezefoods.ng", VIEWER_ROLE_ID)
        .await;
    let integration = kit.integration_token().await;
    let web = async |token: &str, body: Value, key: &str| {
        let call = Call::new(
            Operation::CreateCustomerAccountWeb.path(),
            Some(token),
            body,
        );
        kit.send(call.header("idempotency-key", key)).await
    };

    let amaka = web(&opener, json!({"bvn": "22287654321"}), "amaka").await;
    let amaka = amaka.expect(ResponseCode::Success).clone();
    assert_eq!(amaka["account_name"], "Amaka Nwosu");
    assert_eq!(amaka["account_type"], "virtual");
    let replay = web(&opener, json!({"bvn": "22287654321"}), "amaka").await;
    assert_eq!(replay.expect(ResponseCode::Success), &amaka);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    web(&opener, json!({"bvn": "22212345678"}), "amaka")
        .await
        .expect(ResponseCode::IdempotencyKeyReused);

    let audit = kit
        .op(
            Operation::FetchAuditLogs,
            &kit.owner_token,
            json!({"filters": {"action": "create_customer_account"}}),
        )
        .await;
    let audit = audit.expect(ResponseCode::Success).clone();
    assert_eq!(audit.as_array().unwrap().len(), 1, "{audit}");
    assert_eq!(audit[0]["user_id"], opener_id.as_str());
    assert_eq!(audit[0]["target_id"], amaka["id"]);
    let events = kit
        .op(
            Operation::FetchWebhookEvents,
            &kit.owner_token,
            json!({"filters": {"event_type": "account.created"}}),
        )
        .await;
    let events = events.expect(ResponseCode::Success).clone();
    assert_eq!(
        events[0]["payload"]["data"]["account_number"],
        amaka["account_number"]
    );

    // The same refusal from both twins, whichever opened the identity.
    for (body, code) in [
        (json!({"bvn": "22287654321"}), ResponseCode::Duplicate),
        (
            json!({"email": "amaka@example.ng"}),
            ResponseCode::IdentityNumberMissing,
        ),
        (json!({"bvn": "22212345683"}), ResponseCode::ProviderError),
        (
            json!({"nin": "12345678980"}),
            ResponseCode::ProviderUnavailable,
        ),
        (
            json!({"bvn": "12345671234", "parent_account_number": amaka["account_number"]}),
            ResponseCode::AccountNotFound,
        ),
        (json!({"bvn": "2228765432"}), ResponseCode::InvalidRequest),
    ] {
        let from_web = kit
            .op(Operation::CreateCustomerAccountWeb, &opener, body.clone())
            .await;
        let from_api = create(&kit, &integration, body.clone()).await;
        from_web.expect(code);
        from_api.expect(code);
        assert_eq!(from_web.body["message"], from_api.body["message"], "{body}");
    }
    kit.op(
        Operation::CreateCustomerAccountWeb,
        &viewer,
        json!({"bvn": "22212345678"}),
    )
    .await
    .expect(ResponseCode::PermissionDenied);
    businesses::set_status(&kit.store, &kit.clock, &kit.business.business_id, false)
        .await
        .unwrap();
    kit.op(
        Operation::CreateCustomerAccountWeb,
        &opener,
        json!({"bvn": "22212345678"}),
    )
    .await
    .expect(ResponseCode::BusinessInactive);
    assert_eq!(
        kit.count(
            "SELECT COUNT(*) FROM accounts WHERE business_id = $1 AND account_type = 'virtual'",
            &kit.business.business_id
        )
        .await,
        1,
        "only Amaka's"
    );
}

on_both_stores!(
    identities_follow_the_sandbox_table,
    a_virtual_account_links_to_a_chosen_parent,
    provider_failures_are_80_and_83_and_leave_nothing,
    members_open_customer_accounts_as_the_integration_does,
);

/// One customer's opening under one key, sent at once by many from two processes: one account
/// is opened, and every answer is that account (`00`) or says the key is in progress (`28`),
/// never that the customer already has an account (`26`): a retry that finds the account its
/// own first send just opened gets the first send's answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_opening_key_sent_at_once_opens_one_account() {
    let kit = TestKit::postgres().await;
    let second = kit.another_process().await;
    let token = kit.integration_token().await;
    let body = json!({"email": "chinedu.obi@example.ng", "bvn": "22212345678"});
    let calls = (0..10)
        .map(|_| {
            kobo::testkit::Call::new(
                Operation::CreateCustomerAccount.path(),
                Some(&token),
                body.clone(),
            )
            .header("idempotency-key", "open-chinedu")
        })
        .collect();
    let replies = kit.race(&[second], calls).await;
    let opened: Vec<&Value> = replies
        .iter()
        .filter(|r| r.code() == Some(ResponseCode::Success))
        .map(|r| &r.body["data"])
        .collect();
    assert!(!opened.is_empty(), "{replies:#?}");
    for reply in &replies {
        match reply.code() {
            Some(ResponseCode::Success) => assert_eq!(reply.body["data"], *opened[0]),
            Some(ResponseCode::IdempotencyKeyInProgress) => {}
            other => panic!("unexpected {other:?}: {reply:#?}"),
        }
    }
    assert_eq!(
        kit.count(
            "SELECT COUNT(*) FROM customers WHERE business_id = $1",
            &kit.business.business_id
        )
        .await,
        1
    );
}
