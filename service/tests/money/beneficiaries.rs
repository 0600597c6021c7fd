//! Saved beneficiaries (issue 60, item 2): an account is saved once after a name enquiry, found
//! again by a search, paid by its id from either family (`pay_beneficiary`, which is
//! `funds_transfer` under its checks), and deleted. Each scenario on both stores, ending with
//! `kobo ledger verify`.

use generated_server::{Operation, ResponseCode};
use kobo::on_both_stores;
use kobo::platform::permissions::VIEWER_ROLE_ID;
use kobo::testkit::{Call, TestKit};
use serde_json::{json, Value};

use crate::support::{balance, otp};

/// `pay_beneficiary_api` with the `Idempotency-Key` it requires.
async fn pay_api(kit: &TestKit, token: &str, key: &str, body: Value) -> kobo::testkit::Reply {
    let call = Call::new(Operation::PayBeneficiaryApi.path(), Some(token), body);
    kit.send(call.header("idempotency-key", key.to_owned()))
        .await
}

async fn save(kit: &TestKit, token: &str, body: Value) -> kobo::testkit::Reply {
    kit.op(Operation::CreateBeneficiary, token, body).await
}

async fn list(kit: &TestKit, token: &str, body: Value) -> Vec<Value> {
    kit.op(Operation::FetchBeneficiaries, token, body)
        .await
        .expect(ResponseCode::Success)
        .as_array()
        .unwrap()
        .clone()
}

fn id_of(value: &Value) -> String {
    value["beneficiary_id"].as_str().unwrap().to_owned()
}

/// Saving looks the account up and checks the name; the same account saved again (from
/// either family) is the same beneficiary, refreshed; search, the bank filter and paging find
/// them; another business sees none of them; a Viewer lists but cannot save or delete; a
/// deletion is final and audited.
async fn an_account_is_saved_once_and_found_again(kit: TestKit) {
    let api = kit.integration_token().await;
    let (lagos, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "bola.ade@lagosfresh.ng")
        .await;
    let supplier = save(
        &kit,
        &kit.owner_token,
        json!({"account_number": lagos.main_account_number, "bank_code": "090823",
               "account_name": "LAGOS FRESH  produce ltd", "nickname": "Produce supplier"}),
    )
    .await
    .expect(ResponseCode::Success)
    .clone();
    // The holder's name as the bank gives it, not as it was typed.
    assert_eq!(supplier["account_name"], "Lagos Fresh Produce Ltd");
    assert_eq!(supplier["bank_name"], "Kobo Microfinance Bank");
    assert_eq!(supplier["transfer_type"], "intra");
    let driver = kit
        .op(
            Operation::CreateBeneficiaryApi,
            &api,
            json!({"account_number": "0123456788", "bank_code": "000013",
                   "account_name": "Emeka Nwosu"}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(driver["transfer_type"], "inter");
    assert_eq!(driver["created_by"], "integration");
    assert!(driver["nickname"].is_null());

    // Saved again: the same one, its nickname replaced only when one is sent.
    let again = kit
        .op(
            Operation::CreateBeneficiaryApi,
            &api,
            json!({"account_number": lagos.main_account_number, "bank_code": "090823",
                   "account_name": "Lagos Fresh Produce Ltd"}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(id_of(&again), id_of(&supplier));
    assert_eq!(again["nickname"], "Produce supplier");
    assert_eq!(again["created_at"], supplier["created_at"]);
    let renamed = save(
        &kit,
        &kit.owner_token,
        json!({"account_number": "0123456788", "bank_code": "000013",
               "account_name": "Emeka Nwosu", "nickname": "Driver"}),
    )
    .await
    .expect(ResponseCode::Success)
    .clone();
    assert_eq!(id_of(&renamed), id_of(&driver));
    assert_eq!(renamed["nickname"], "Driver");

    // Refusals: the name, the account, the body; nothing saved by any.
    let wrong = save(
        &kit,
        &kit.owner_token,
        json!({"account_number": "0123456788", "bank_code": "000013",
               "account_name": "Chinedu Eze"}),
    )
    .await;
    wrong.expect(ResponseCode::BeneficiaryNameMismatch);
    assert!(wrong.body["message"]
        .as_str()
        .unwrap()
        .contains("Emeka Nwosu"));
    save(
        &kit,
        &kit.owner_token,
        json!({"account_number": "0123456799", "bank_code": "000013",
               "account_name": "Nobody"}),
    )
    .await
    .expect(ResponseCode::BeneficiaryAccountNotFound);
    save(
        &kit,
        &kit.owner_token,
        json!({"account_number": "12345", "bank_code": "000013", "account_name": "Nobody"}),
    )
    .await
    .expect(ResponseCode::InvalidRequest);
    let saved: i64 = kit
        .count(
            "SELECT COUNT(*) FROM beneficiaries WHERE business_id = $1",
            &kit.business.business_id,
        )
        .await;
    assert_eq!(saved, 2);

    // Found by the holder's name, the nickname, the number; by bank; a page at a time.
    let owner = &kit.owner_token;
    for search in ["FRESH", "supplier", &lagos.main_account_number[4..]] {
        let found = list(&kit, owner, json!({"search": search})).await;
        assert_eq!(found.len(), 1, "{search}: {found:?}");
        assert_eq!(id_of(&found[0]), id_of(&supplier));
    }
    // `%` and `_` are text, not wildcards.
    assert!(list(&kit, owner, json!({"search": "%"})).await.is_empty());
    let gtb = list(&kit, owner, json!({"bank_code": "000013"})).await;
    assert_eq!(gtb.len(), 1);
    assert_eq!(id_of(&gtb[0]), id_of(&driver));
    let first = kit
        .op(Operation::FetchBeneficiaries, owner, json!({"limit": 1}))
        .await;
    let page = first.expect(ResponseCode::Success).as_array().unwrap();
    // Newest first.
    assert_eq!(id_of(&page[0]), id_of(&driver));
    let pagination = &first.body["pagination"];
    assert_eq!(pagination["has_more"], true);
    let next = list(
        &kit,
        owner,
        json!({"limit": 1, "cursor_created_at": pagination["next_cursor_created_at"],
               "cursor_id": pagination["next_cursor_id"]}),
    )
    .await;
    assert_eq!(next.len(), 1);
    assert_eq!(id_of(&next[0]), id_of(&supplier));

    // Another business sees none of them and cannot delete them.
    let lagos_token = kit.integration_token_of(&lagos).await;
    let theirs = kit
        .op(Operation::FetchBeneficiariesApi, &lagos_token, json!({}))
        .await;
    assert!(theirs
        .expect(ResponseCode::Success)
        .as_array()
        .unwrap()
        .is_empty());
    kit.op(
        Operation::DeleteBeneficiaryApi,
        &lagos_token,
        json!({"beneficiary_id": id_of(&driver)}),
    )
    .await
    .expect(ResponseCode::NotFound);

    // A Viewer reads the list, and may not change it.
    let (_, viewer) = kit
        .add_member("ife.ogun@adaezefoods.ng", VIEWER_ROLE_ID)
        .await;
    assert_eq!(list(&kit, &viewer, json!({})).await.len(), 2);
    save(
        &kit,
        &viewer,
        json!({"account_number": "0123456788", "bank_code": "000013",
               "account_name": "Emeka Nwosu"}),
    )
    .await
    .expect(ResponseCode::PermissionDenied);
    kit.op(
        Operation::DeleteBeneficiary,
        &viewer,
        json!({"beneficiary_id": id_of(&driver)}),
    )
    .await
    .expect(ResponseCode::PermissionDenied);

    // Deleted: answered as it was, then gone.
    let deleted = kit
        .op(
            Operation::DeleteBeneficiary,
            owner,
            json!({"beneficiary_id": id_of(&driver)}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(deleted["nickname"], "Driver");
    kit.op(
        Operation::DeleteBeneficiary,
        owner,
        json!({"beneficiary_id": id_of(&driver)}),
    )
    .await
    .expect(ResponseCode::NotFound);
    assert_eq!(list(&kit, owner, json!({})).await.len(), 1);
    for (action, count) in [("create_beneficiary", 4), ("delete_beneficiary", 1)] {
        let audit = kit
            .op(
                Operation::FetchAuditLogs,
                owner,
                json!({"filters": {"action": action}}),
            )
            .await
            .expect(ResponseCode::Success)
            .clone();
        assert_eq!(
            audit.as_array().unwrap().len(),
            count,
            "{action}: {audit:#}"
        );
    }
    kit.assert_ledger_balances().await;
}

/// A saved beneficiary is paid by its id, from either family, as `funds_transfer` pays: the
/// money moves once per key, a holder renamed since it was saved is refused with nothing
/// debited, an unknown id is `47`, and a retry after the beneficiary was deleted still
/// answers the transfer its first attempt made.
async fn a_saved_beneficiary_is_paid_by_its_id(kit: TestKit) {
    let api = kit.integration_token().await;
    kit.credit(&api, "1000000014", "200000.00").await;
    let (lagos, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "bola.ade@lagosfresh.ng")
        .await;
    let owner = &kit.owner_token;
    let supplier = id_of(
        save(
            &kit,
            owner,
            json!({"account_number": lagos.main_account_number, "bank_code": "090823",
                   "account_name": "Lagos Fresh Produce Ltd"}),
        )
        .await
        .expect(ResponseCode::Success),
    );
    let driver = id_of(
        save(
            &kit,
            owner,
            json!({"account_number": "0123456788", "bank_code": "000013",
                   "account_name": "Emeka Nwosu"}),
        )
        .await
        .expect(ResponseCode::Success),
    );

    // The Dashboard pays the supplier with an OTP: settled at once.
    let code = otp(&kit, owner).await;
    let paid = kit
        .op(
            Operation::PayBeneficiary,
            owner,
            json!({"beneficiary_id": supplier, "source_account_number": "1000000014",
                   "amount": "50000", "narration": "Ofada rice", "otp": code}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(paid["transfer_status"], "success");
    assert_eq!(paid["beneficiary_account_name"], "Lagos Fresh Produce Ltd");
    assert_eq!(paid["initiated_via"], "dashboard");
    assert_eq!(balance(&kit, &lagos.main_account_number).await, "50000.00");
    assert_eq!(balance(&kit, "1000000014").await, "150000.00");

    // The integration pays the driver over NIP, with a key; the retry is the same transfer.
    let pay_driver = |key: &'static str| {
        Call::new(
            Operation::PayBeneficiaryApi.path(),
            Some(&api),
            json!({"beneficiary_id": driver, "source_account_number": "1000000014",
                   "amount": "25000", "reference": "DRIVER-DEC"}),
        )
        .header("idempotency-key", key)
    };
    let first = kit.send(pay_driver("driver-december")).await;
    let first = first.expect(ResponseCode::Success).clone();
    assert_eq!(first["transfer_status"], "processing");
    assert_eq!(first["fee"], "25.00");
    assert_eq!(first["reference"], "DRIVER-DEC");
    // 25,000 + 25.00 fee + 1.88 VAT.
    assert_eq!(balance(&kit, "1000000014").await, "124973.12");
    // Deleted meanwhile: the retry still answers the first attempt's transfer.
    kit.op(
        Operation::DeleteBeneficiaryApi,
        &api,
        json!({"beneficiary_id": driver}),
    )
    .await
    .expect(ResponseCode::Success);
    let retry = kit.send(pay_driver("driver-december")).await;
    assert_eq!(retry.header("idempotent-replayed"), Some("true"));
    assert_eq!(retry.expect(ResponseCode::Success), &first);
    // A new attempt to the deleted one is `47`, nothing debited.
    kit.send(pay_driver("driver-december-2"))
        .await
        .expect(ResponseCode::NotFound);
    // No key at all is `01`; a key and an id never saved, `47`.
    let unknown = json!({"beneficiary_id": "00000000-0000-4000-8000-000000000000",
                         "source_account_number": "1000000014", "amount": "10"});
    kit.op(Operation::PayBeneficiaryApi, &api, unknown.clone())
        .await
        .expect(ResponseCode::InvalidRequest);
    kit.send(
        Call::new(Operation::PayBeneficiaryApi.path(), Some(&api), unknown)
            .header("idempotency-key", "unknown"),
    )
    .await
    .expect(ResponseCode::NotFound);

    // The holder is named otherwise than when it was saved: refused, nothing moves.
    kit.sql("UPDATE beneficiaries SET account_name = 'Lagos Fresh Ltd' WHERE id = $1")
        .bind(supplier.as_str())
        .execute()
        .await;
    let refused = pay_api(
        &kit,
        &api,
        "attempt-1",
        json!({"beneficiary_id": supplier, "source_account_number": "1000000014",
                   "amount": "100"}),
    )
    .await;
    refused.expect(ResponseCode::BeneficiaryNameMismatch);
    assert!(refused.body["message"]
        .as_str()
        .unwrap()
        .contains("Lagos Fresh Produce Ltd"));
    // Saved again, it is paid.
    save(
        &kit,
        owner,
        json!({"account_number": lagos.main_account_number, "bank_code": "090823",
               "account_name": "Lagos Fresh Produce Ltd"}),
    )
    .await
    .expect(ResponseCode::Success);
    // The rules of a transfer hold: not from another business's account, not to the source
    // itself, not over the balance.
    let driver_again = id_of(
        save(
            &kit,
            owner,
            json!({"account_number": "0123456788", "bank_code": "000013",
                   "account_name": "Emeka Nwosu"}),
        )
        .await
        .expect(ResponseCode::Success),
    );
    pay_api(
        &kit,
        &api,
        "attempt-2",
        json!({"beneficiary_id": driver_again, "source_account_number": lagos.main_account_number,
               "amount": "100"}),
    )
    .await
    .expect(ResponseCode::SourceAccountNotFound);
    // Nor to the source account itself.
    let own = id_of(
        save(
            &kit,
            owner,
            json!({"account_number": "1000000014", "bank_code": "090823",
                   "account_name": "Adaeze Foods Ltd"}),
        )
        .await
        .expect(ResponseCode::Success),
    );
    let to_itself = pay_api(
        &kit,
        &api,
        "to-itself",
        json!({"beneficiary_id": own, "source_account_number": "1000000014", "amount": "100"}),
    )
    .await;
    to_itself.expect(ResponseCode::InvalidRequest);
    pay_api(
        &kit,
        &api,
        "attempt-3",
        json!({"beneficiary_id": supplier, "source_account_number": "1000000014",
               "amount": "500000"}),
    )
    .await
    .expect(ResponseCode::ProviderError);
    let paid = pay_api(
        &kit,
        &api,
        "attempt-4",
        json!({"beneficiary_id": supplier, "source_account_number": "1000000014",
                   "amount": "100.50"}),
    )
    .await
    .expect(ResponseCode::Success)
    .clone();
    assert_eq!(paid["transfer_status"], "success");
    assert_eq!(balance(&kit, &lagos.main_account_number).await, "50100.50");
    assert_eq!(balance(&kit, "1000000014").await, "124872.62");
    kit.assert_ledger_balances().await;
}

/// The store keeps at most `max` of a business: a new account past it is refused, an account
/// already saved is still refreshed (the API's bound is `beneficiaries::KEPT_MAX`).
async fn a_full_business_saves_no_new_account(kit: TestKit) {
    use kobo::datastore::beneficiaries::{self, NewBeneficiary};
    let new = |number: &str| NewBeneficiary {
        id: uuid::Uuid::new_v4(),
        business_id: kit.business.business_id.clone(),
        bank_code: "000013".to_owned(),
        bank_name: "Guaranty Trust Bank".to_owned(),
        account_number: number.to_owned(),
        account_name: "Emeka Nwosu".to_owned(),
        nickname: None,
        created_by: "integration".to_owned(),
        now: kobo::kernel::store::as_stored(kit.clock.now()),
    };
    let mut tx = kit.store.begin().await.unwrap();
    let first = beneficiaries::save(&mut tx, &new("0123456788"), 2)
        .await
        .unwrap();
    let second = beneficiaries::save(&mut tx, &new("0123456789"), 2)
        .await
        .unwrap();
    assert!(first.is_some() && second.is_some());
    let third = beneficiaries::save(&mut tx, &new("0123456787"), 2)
        .await
        .unwrap();
    assert_eq!(third, None);
    let again = beneficiaries::save(&mut tx, &new("0123456788"), 2)
        .await
        .unwrap();
    assert_eq!(again.map(|row| row.id), first.map(|row| row.id));
    tx.commit().await.unwrap();
    let saved: i64 = kit
        .count(
            "SELECT COUNT(*) FROM beneficiaries WHERE business_id = $1",
            &kit.business.business_id,
        )
        .await;
    assert_eq!(saved, 2);
    kit.assert_ledger_balances().await;
}

on_both_stores!(
    an_account_is_saved_once_and_found_again,
    a_saved_beneficiary_is_paid_by_its_id,
    a_full_business_saves_no_new_account,
);

/// Twelve saves of one account at once, from two processes on one PostgreSQL, and twelve of
/// two others: one beneficiary for each account, every answer a success naming its
/// account's one id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simultaneous_saves_of_one_account_make_one_beneficiary() {
    let kit = TestKit::postgres().await;
    let second = kit.another_process().await;
    let token = kit.integration_token().await;
    // The sandbox's documented holders at another bank.
    let holders = [
        ("0123456788", "Emeka Nwosu"),
        ("0690000036", "Bisi Alade"),
        ("0690000043", "Sani Bello"),
    ];
    let calls = (0..24)
        .map(|i| {
            // Half to one account, the rest spread over the two others.
            let (number, name) = if i % 2 == 0 {
                holders[0]
            } else {
                holders[1 + i % 4 / 2]
            };
            Call::new(
                Operation::CreateBeneficiaryApi.path(),
                Some(&token),
                json!({"account_number": number, "bank_code": "000013", "account_name": name}),
            )
        })
        .collect();
    let replies = kit.race(&[second], calls).await;
    let mut ids = std::collections::BTreeMap::new();
    for reply in &replies {
        let saved = reply.expect(ResponseCode::Success);
        let number = saved["account_number"].as_str().unwrap().to_owned();
        let id = id_of(saved);
        assert_eq!(ids.entry(number).or_insert_with(|| id.clone()), &id);
    }
    assert_eq!(ids.len(), 3);
    let saved: i64 = kit
        .count(
            "SELECT COUNT(*) FROM beneficiaries WHERE business_id = $1",
            &kit.business.business_id,
        )
        .await;
    assert_eq!(saved, 3);
}
