//! The names other people read (issue 28, item 4). A name a business gives one of its
//! accounts may not hold control or bidirectional characters, and the name anyone else sees
//! of a Kobo account (name enquiry, a transfer's beneficiary, the originator of an intra-bank
//! credit, `collection.received`) is the holder's: the owning business's registered name, then
//! ` - ` and the account's own name, unless the account's name is the business's name or
//! already starts with it and ` - `. One business can never pose as another.

use generated_server::{Operation, ResponseCode};
use kobo::on_both_stores;
use kobo::testkit::{Call, TestKit};
use serde_json::{json, Value};

use crate::support::otp;

async fn enquire(kit: &TestKit, token: &str, source: &str, number: &str) -> Value {
    kit.op(
        Operation::NameEnquiry,
        token,
        json!({"beneficiary_account_number": number, "bank_code": "090823",
               "source_account_number": source}),
    )
    .await
    .expect(ResponseCode::Success)
    .clone()
}

async fn create_account(kit: &TestKit, token: &str, name: &str) -> kobo::testkit::Reply {
    kit.op(
        Operation::CreateAccountApi,
        token,
        json!({"account_name": name}),
    )
    .await
}

/// Control characters, line breaks, tabs and bidirectional controls are refused in every
/// account name a business gives, and in the simulator's sender name.
async fn account_names_refuse_controls(kit: TestKit) {
    let token = kit.integration_token().await;
    for name in [
        "Payroll\r\nBcc: x",
        "Pay\troll",
        "\u{202E}llorya",
        "Pay\u{200B}roll",
    ] {
        let refused = create_account(&kit, &token, name).await;
        refused.expect(ResponseCode::InvalidRequest);
        let message = refused.body["message"].as_str().unwrap();
        assert!(message.starts_with("`account_name`"), "{message}");
        let web = kit
            .op(
                Operation::CreateAccountWeb,
                &kit.owner_token,
                json!({"account_name": name}),
            )
            .await;
        web.expect(ResponseCode::InvalidRequest);
    }
    let customer = kit
        .op(
            Operation::CreateCustomerAccount,
            &token,
            json!({"bvn": "22212345678", "account_name": "Chinedu \u{202E}ibO"}),
        )
        .await;
    customer.expect(ResponseCode::InvalidRequest);
    assert!(customer.body["message"]
        .as_str()
        .unwrap()
        .starts_with("`account_name`"));
    let accounts: i64 = kit
        .count(
            "SELECT COUNT(*) FROM accounts WHERE business_id = $1",
            &kit.business.business_id,
        )
        .await;
    assert_eq!(accounts, 1, "only the main account");
}

/// "Bolt Ltd", as Acme (here Adaeze Foods) names one of its accounts, reaches Bolt as
/// "Adaeze Foods Ltd - Bolt Ltd": in Bolt's name enquiry, in Bolt's transaction list and in
/// Bolt's `collection.received` after a transfer from it. A virtual account shows its
/// business too; a name that already carries the business's is shown as it is.
async fn other_businesses_see_the_holders_name(kit: TestKit) {
    let token = kit.integration_token().await;
    let (bolt, bolt_owner) = kit.other_business("Bolt Ltd", "owner@bolt.ng").await;
    let bolt_token = kit.integration_token_of(&bolt).await;
    let posing = create_account(&kit, &token, "Bolt Ltd")
        .await
        .expect(ResponseCode::Success)
        .clone();
    // The business itself sees the name it chose.
    assert_eq!(posing["account_name"], "Bolt Ltd");
    let posing_number = posing["account_number"].as_str().unwrap().to_owned();
    let found = enquire(&kit, &bolt_token, &bolt.main_account_number, &posing_number).await;
    assert_eq!(found["account_name"], "Adaeze Foods Ltd - Bolt Ltd");

    // A name that carries the business's already, and the main account, are shown as they are.
    let payroll = create_account(&kit, &token, "Adaeze Foods Ltd - Payroll")
        .await
        .expect(ResponseCode::Success)["account_number"]
        .as_str()
        .unwrap()
        .to_owned();
    let found = enquire(&kit, &bolt_token, &bolt.main_account_number, &payroll).await;
    assert_eq!(found["account_name"], "Adaeze Foods Ltd - Payroll");
    let found = enquire(
        &kit,
        &bolt_token,
        &bolt.main_account_number,
        &kit.business.main_account_number,
    )
    .await;
    assert_eq!(found["account_name"], "Adaeze Foods Ltd");

    // A virtual account: the business, then its customer.
    let chinedu = kit
        .op(
            Operation::CreateCustomerAccount,
            &token,
            json!({"bvn": "22212345678"}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(chinedu["account_name"], "Chinedu Obi");
    let chinedu_number = chinedu["account_number"].as_str().unwrap().to_owned();
    let found = enquire(
        &kit,
        &bolt_token,
        &bolt.main_account_number,
        &chinedu_number,
    )
    .await;
    assert_eq!(found["account_name"], "Adaeze Foods Ltd - Chinedu Obi");

    // Paying it takes the name the enquiry gave; the account's own name alone does not match.
    kit.credit(&bolt_token, &bolt.main_account_number, "1000")
        .await;
    let pay = |name: &str, key: &str| {
        Call::new(
            Operation::FundsTransferApi.path(),
            Some(&bolt_token),
            json!({"source_account_number": bolt.main_account_number,
                   "source_account_name": "Bolt Ltd",
                   "beneficiary_account_number": chinedu_number,
                   "beneficiary_account_name": name, "bank_code": "090823",
                   "amount": "100", "transfer_type": "intra"}),
        )
        .header("idempotency-key", key.to_owned())
    };
    kit.send(pay("Chinedu Obi", "k-1"))
        .await
        .expect(ResponseCode::BeneficiaryNameMismatch);
    let paid = kit
        .send(pay("Adaeze Foods Ltd - Chinedu Obi", "k-2"))
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(
        paid["beneficiary_account_name"],
        "Adaeze Foods Ltd - Chinedu Obi"
    );

    // Paid from the posing account, Bolt sees who paid it.
    kit.credit(&token, &posing_number, "500").await;
    let code = otp(&kit, &kit.owner_token).await;
    kit.op(
        Operation::FundsTransfer,
        &kit.owner_token,
        json!({"source_account_number": posing_number, "source_account_name": "Bolt Ltd",
               "beneficiary_account_number": bolt.main_account_number,
               "beneficiary_account_name": "Bolt Ltd", "bank_code": "090823",
               "amount": "250", "transfer_type": "intra", "otp": code}),
    )
    .await
    .expect(ResponseCode::Success);
    let listed = kit
        .op(
            Operation::FetchTransactionsApi,
            &bolt_token,
            json!({"filters": {"transaction_type": "credit", "transaction_category": "collection",
                               "channel": "intra"}}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    let credit = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["amount"] == "250.00")
        .unwrap_or_else(|| panic!("{listed:#}"))
        .clone();
    assert_eq!(
        credit["originator_account_name"],
        "Adaeze Foods Ltd - Bolt Ltd"
    );
    let narration = credit["remarks"].as_str().unwrap_or_default();
    assert!(!narration.ends_with("from Bolt Ltd"), "{narration}");
    let event = kit
        .sql(
            "SELECT payload FROM events WHERE business_id = $1 \
             AND type = 'collection.received' ORDER BY created_at DESC LIMIT 1",
        )
        .bind(&bolt.business_id)
        .text()
        .await;
    let event: Value = serde_json::from_str(&event).unwrap();
    assert_eq!(
        event["originator_account_name"], "Adaeze Foods Ltd - Bolt Ltd",
        "{event:#}"
    );
    // Bolt's owner reads the same in the Dashboard.
    let web = kit
        .op(
            Operation::FetchTransactionsWeb,
            &bolt_owner,
            json!({"filters": {"transaction_type": "credit"}}),
        )
        .await;
    web.expect(ResponseCode::Success);
    kit.assert_ledger_balances().await;
}

on_both_stores!(
    account_names_refuse_controls,
    other_businesses_see_the_holders_name,
);
