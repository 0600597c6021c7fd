//! Bulk transfers (issue 60, item 1, its first part): a batch is written as it was sent, each
//! item judged by the validation worker as a transfer would be, and nothing moves. Each
//! scenario on both stores, ending with `kobo ledger verify`.

use generated_server::{Operation, ResponseCode};
use kobo::money::bulk::validate;
use kobo::on_both_stores;
use kobo::platform::permissions::VIEWER_ROLE_ID;
use kobo::testkit::{Call, Reply, TestKit};
use serde_json::{json, Value};

use crate::support::{a_transfer_holding, balance};

/// `create_bulk_transfer_api` with the `Idempotency-Key` it requires.
async fn create_api(kit: &TestKit, token: &str, key: &str, body: Value) -> Reply {
    let call = Call::new(Operation::CreateBulkTransferApi.path(), Some(token), body);
    kit.send(call.header("idempotency-key", key.to_owned()))
        .await
}

/// Runs the validation worker until no batch is due.
async fn validate_all(kit: &TestKit) {
    for _ in 0..50 {
        if !validate::work(kit.api.bank(), "test-validator")
            .await
            .unwrap()
        {
            return;
        }
    }
    panic!("the validator was still busy after 50 batches");
}

async fn get(kit: &TestKit, token: &str, id: &str) -> Value {
    kit.op(
        Operation::GetBulkTransfer,
        token,
        json!({"bulk_transfer_id": id}),
    )
    .await
    .expect(ResponseCode::Success)
    .clone()
}

async fn items(kit: &TestKit, token: &str, body: Value) -> Vec<Value> {
    kit.op(Operation::FetchBulkTransferItems, token, body)
        .await
        .expect(ResponseCode::Success)
        .as_array()
        .unwrap()
        .clone()
}

fn id_of(batch: &Value) -> String {
    batch["bulk_transfer_id"].as_str().unwrap().to_owned()
}

/// Every item of a payroll judged as a transfer would be: a Kobo account and a NIP account
/// paid by their details, a saved beneficiary by its id; a wrong name (`49`), an unknown
/// account (`06`), an amount under the minimum (`01`), the source itself (`01`), a reference a
/// transfer already holds (`26`), an account that cannot receive (`83`). The batch is
/// `validating` until the worker ran, then `validated` with its counts and the totals of its
/// valid items; nothing moved; the items are paged in order and by verdict.
async fn a_payroll_is_judged_item_by_item_before_anything_moves(kit: TestKit) {
    let api = kit.integration_token().await;
    kit.credit(&api, "1000000014", "2000000.00").await;
    let (lagos, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "bola.ade@lagosfresh.ng")
        .await;
    let (closed, _) = kit
        .other_business("Kano Grains Ltd", "musa.bello@kanograins.ng")
        .await;
    kit.sql("UPDATE accounts SET status = 'blocked' WHERE account_number = $1")
        .bind(&closed.main_account_number)
        .execute()
        .await;
    let owner = &kit.owner_token;
    let driver = kit
        .op(
            Operation::CreateBeneficiary,
            owner,
            json!({"account_number": "0123456788", "bank_code": "000013",
                   "account_name": "Emeka Nwosu"}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    // A transfer that holds the reference one item asks for.
    a_transfer_holding(&kit, &api, "SALARY-TAKEN").await;
    let before = balance(&kit, "1000000014").await;

    let item = |number: &str, bank: &str, name: &str, amount: &str, reference: &str| {
        json!({"account_number": number, "bank_code": bank, "account_name": name,
               "amount": amount, "reference": reference})
    };
    let batch = kit
        .op(
            Operation::CreateBulkTransfer,
            owner,
            json!({
                "source_account_number": "1000000014", "on_invalid": "skip_invalid",
                "reference": "PAYROLL-2026-12", "narration": "December salaries",
                "items": [
                    item(&lagos.main_account_number, "090823", "LAGOS FRESH produce ltd", "450000", "S-1"),
                    {"beneficiary_id": driver["beneficiary_id"], "amount": "280000.50",
                     "reference": "S-2", "narration": "Driver - December"},
                    item("0690000036", "000013", "Ngozi Eze", "1000", "S-3"),
                    item("0123456799", "000013", "Nobody", "1000", "S-4"),
                    item(&lagos.main_account_number, "090823", "Lagos Fresh Produce Ltd", "0.50", "S-5"),
                    item("1000000014", "090823", "Adaeze Foods Ltd", "1000", "S-6"),
                    item("0123456788", "000013", "Emeka Nwosu", "1000", "SALARY-TAKEN"),
                    item(&closed.main_account_number, "090823", "Kano Grains Ltd", "1000", "S-8"),
                ]
            }),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(batch["status"], "validating");
    assert_eq!(
        batch["counts"],
        json!({"items": 8, "valid": 0, "invalid": 0, "pending": 8,
               "succeeded": 0, "processing": 0, "failed": 0, "reversed": 0})
    );
    assert_eq!(batch["created_via"], "dashboard");
    let id = id_of(&batch);

    validate_all(&kit).await;
    let done = get(&kit, owner, &id).await;
    assert_eq!(done["status"], "validated", "{done:#}");
    assert_eq!(
        done["counts"],
        json!({"items": 8, "valid": 2, "invalid": 6, "pending": 0,
               "succeeded": 0, "processing": 0, "failed": 0, "reversed": 0})
    );
    // 450,000 + 280,000.50, the NIP item's fee (NGN 50.00, over NGN 50,000) and its VAT.
    assert_eq!(
        done["totals"],
        json!({"amount": "730000.50", "fees": "50.00", "vat": "3.75", "total": "730054.25",
               "reserved": "0.00", "released": "0.00"})
    );
    assert!(done["validated_at"].is_string());

    let all = items(
        &kit,
        owner,
        json!({"bulk_transfer_id": id, "page_size": 100}),
    )
    .await;
    assert_eq!(all.len(), 8);
    let verdicts: Vec<(u64, &str, Option<&str>)> = all
        .iter()
        .map(|item| {
            (
                item["index"].as_u64().unwrap(),
                item["validation"].as_str().unwrap(),
                item["refusal_code"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            (0, "valid", None),
            (1, "valid", None),
            (2, "invalid", Some("49")),
            (3, "invalid", Some("06")),
            (4, "invalid", Some("01")),
            (5, "invalid", Some("01")),
            (6, "invalid", Some("26")),
            (7, "invalid", Some("83")),
        ]
    );
    assert_eq!(all[0]["confirmed_name"], "Lagos Fresh Produce Ltd");
    assert_eq!(all[0]["transfer_type"], "intra");
    assert_eq!(all[0]["narration"], "December salaries");
    assert_eq!(all[1]["beneficiary_id"], driver["beneficiary_id"]);
    assert_eq!(all[1]["account_number"], "0123456788");
    assert_eq!(all[1]["narration"], "Driver - December");
    assert_eq!(
        (&all[1]["fee"], &all[1]["vat"]),
        (&json!("50.00"), &json!("3.75"))
    );
    assert_eq!(all[2]["confirmed_name"], "Bisi Alade");
    assert!(all[2]["refusal_message"]
        .as_str()
        .unwrap()
        .contains("Bisi Alade"));
    assert!(all[6]["refusal_message"]
        .as_str()
        .unwrap()
        .contains("SALARY-TAKEN"));
    // Every transfer id is the item's own.
    let ids: std::collections::HashSet<&str> = all
        .iter()
        .map(|item| item["transfer_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 8);

    // By verdict, a page at a time.
    let invalid = json!({"bulk_transfer_id": id, "validation": "invalid", "page_size": 4});
    let first = kit
        .op(Operation::FetchBulkTransferItems, owner, invalid.clone())
        .await;
    let page: Vec<u64> = first
        .expect(ResponseCode::Success)
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["index"].as_u64().unwrap())
        .collect();
    assert_eq!(page, [2, 3, 4, 5]);
    assert_eq!(first.body["pagination"]["has_more"], true);
    let mut next = invalid;
    next["page"] = json!(2);
    let second = items(&kit, owner, next).await;
    let page: Vec<u64> = second
        .iter()
        .map(|i| i["index"].as_u64().unwrap())
        .collect();
    assert_eq!(page, [6, 7]);

    // The business's webhook hears of it once, with the batch as it ended.
    let events = kit
        .op(
            Operation::FetchWebhookEvents,
            owner,
            json!({"filters": {"event_type": "bulk_transfer.validated"}}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    let events = events.as_array().unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["payload"]["data"], done);

    // Nothing moved: the balance is what the one transfer left.
    assert_eq!(balance(&kit, "1000000014").await, before);
    let listed = kit
        .op(
            Operation::FetchBulkTransfersApi,
            &api,
            json!({"status": "validated"}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(id_of(&listed[0]), id);
    kit.assert_ledger_balances().await;
}

/// The request's own rules refuse it whole (`01`, `42`, `47`, `26`, `43`) with nothing written;
/// `refuse_batch` makes a batch with an invalid item `invalid`; a retry with the same key is
/// the same batch; a batch is cancelled until it is authorised, once, and a cancelled batch is
/// not judged; another business sees none of it.
async fn a_batch_is_refused_whole_retried_once_and_cancelled(kit: TestKit) {
    let api = kit.integration_token().await;
    let owner = &kit.owner_token;
    let good = json!({"account_number": "0123456788", "bank_code": "000013",
                      "account_name": "Emeka Nwosu", "amount": "1000"});
    let body = |items: Value| {
        json!({"source_account_number": "1000000014", "on_invalid": "refuse_batch",
               "items": items})
    };
    let refusals = [
        (
            body(json!([{"amount": "1000"}])),
            ResponseCode::InvalidRequest,
        ),
        (
            body(
                json!([{"beneficiary_id": "6a1d2e3f-4b5c-4d6e-9f70-8a9b0c1d2e3f",
                         "account_number": "0123456788", "amount": "1000"}]),
            ),
            ResponseCode::InvalidRequest,
        ),
        (
            body(json!([
                {"account_number": "0123456788", "bank_code": "000013",
                 "account_name": "Emeka Nwosu", "amount": "1000", "reference": "R-1"},
                {"account_number": "0690000036", "bank_code": "000013",
                 "account_name": "Bisi Alade", "amount": "1000", "reference": "R-1"},
            ])),
            ResponseCode::InvalidRequest,
        ),
        (
            body(
                json!([{"beneficiary_id": "6a1d2e3f-4b5c-4d6e-9f70-8a9b0c1d2e3f",
                         "amount": "1000"}]),
            ),
            ResponseCode::NotFound,
        ),
        (
            json!({"source_account_number": "1000000099", "on_invalid": "skip_invalid",
                   "items": [good]}),
            ResponseCode::SourceAccountNotFound,
        ),
    ];
    for (body, code) in refusals {
        let reply = kit
            .op(Operation::CreateBulkTransfer, owner, body.clone())
            .await;
        reply.expect(code);
    }
    let (_, viewer) = kit
        .add_member("ife.ogun@adaezefoods.ng", VIEWER_ROLE_ID)
        .await;
    kit.op(Operation::CreateBulkTransfer, &viewer, body(json!([good])))
        .await
        .expect(ResponseCode::PermissionDenied);
    let written: i64 = kit
        .count(
            "SELECT COUNT(*) FROM bulk_transfers WHERE business_id = $1",
            &kit.business.business_id,
        )
        .await;
    assert_eq!(written, 0);

    // One invalid item, refusing the batch: the batch is invalid.
    let mut refused = body(
        json!([good, {"account_number": "0123456799", "bank_code": "000013",
                                         "account_name": "Nobody", "amount": "1000"}]),
    );
    refused["reference"] = json!("BATCH-1");
    let first = create_api(&kit, &api, "batch-1", refused.clone()).await;
    let batch = first.expect(ResponseCode::Success).clone();
    assert_eq!(batch["created_via"], "integration");
    let again = create_api(&kit, &api, "batch-1", refused.clone()).await;
    assert_eq!(id_of(again.expect(ResponseCode::Success)), id_of(&batch));
    // The batch's reference is its own for ever.
    create_api(&kit, &api, "batch-1-again", refused)
        .await
        .expect(ResponseCode::Duplicate);
    validate_all(&kit).await;
    let judged = get(&kit, owner, &id_of(&batch)).await;
    assert_eq!(judged["status"], "invalid");
    assert_eq!(
        judged["counts"],
        json!({"items": 2, "valid": 1, "invalid": 1, "pending": 0,
               "succeeded": 0, "processing": 0, "failed": 0, "reversed": 0})
    );

    // Cancelled before it is judged: never judged; cancelled once.
    let waiting = kit
        .op(Operation::CreateBulkTransfer, owner, body(json!([good])))
        .await
        .expect(ResponseCode::Success)
        .clone();
    let cancel = json!({"bulk_transfer_id": id_of(&waiting)});
    kit.op(Operation::CancelBulkTransfer, &viewer, cancel.clone())
        .await
        .expect(ResponseCode::PermissionDenied);
    let cancelled = kit
        .op(Operation::CancelBulkTransferApi, &api, cancel.clone())
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(cancelled["status"], "cancelled");
    assert!(cancelled["cancelled_at"].is_string());
    kit.op(Operation::CancelBulkTransfer, owner, cancel)
        .await
        .expect(ResponseCode::InvalidState);
    validate_all(&kit).await;
    let still = items(&kit, owner, json!({"bulk_transfer_id": id_of(&waiting)})).await;
    assert_eq!(still[0]["validation"], "pending");

    // Another business sees none of it.
    let (lagos, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "bola.ade@lagosfresh.ng")
        .await;
    let theirs = kit.integration_token_of(&lagos).await;
    kit.op(
        Operation::GetBulkTransferApi,
        &theirs,
        json!({"bulk_transfer_id": id_of(&batch)}),
    )
    .await
    .expect(ResponseCode::NotFound);
    let listed = kit
        .op(Operation::FetchBulkTransfersApi, &theirs, json!({}))
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert!(listed.as_array().unwrap().is_empty());
    for (action, count) in [("create_bulk_transfer", 2), ("cancel_bulk_transfer", 1)] {
        let audit = kit
            .op(
                Operation::FetchAuditLogs,
                owner,
                json!({"filters": {"action": action}}),
            )
            .await
            .expect(ResponseCode::Success)
            .clone();
        // The integration's creation is audited too (as `integration`): 2 creations in all.
        assert_eq!(
            audit.as_array().unwrap().len(),
            count,
            "{action}: {audit:#}"
        );
    }
    kit.assert_ledger_balances().await;
}

/// An item whose bank cannot be asked now (`80`) stays pending and its batch is taken up again
/// later, the items already judged kept; on the last attempt it is invalid with `80`. A worker
/// that stops mid-batch leaves it to the next once its lease ends.
async fn an_unreachable_bank_is_asked_again_later(kit: TestKit) {
    let owner = &kit.owner_token;
    let batch = kit
        .op(
            Operation::CreateBulkTransfer,
            owner,
            json!({"source_account_number": "1000000014", "on_invalid": "skip_invalid",
            "items": [
                {"account_number": "0123456788", "bank_code": "000013",
                 "account_name": "Emeka Nwosu", "amount": "1000"},
                {"account_number": "0000000080", "bank_code": "000013",
                 "account_name": "Nobody Yet", "amount": "1000"},
            ]}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    let id = id_of(&batch);
    for attempt in 1..=validate::ATTEMPTS_MAX {
        assert!(validate::work(kit.api.bank(), "w").await.unwrap());
        // Not due again until its pause has passed.
        assert!(!validate::work(kit.api.bank(), "w").await.unwrap());
        let now = get(&kit, owner, &id).await;
        if attempt < validate::ATTEMPTS_MAX {
            assert_eq!(now["status"], "validating", "attempt {attempt}");
            let judged = items(&kit, owner, json!({"bulk_transfer_id": id})).await;
            assert_eq!(judged[0]["validation"], "valid");
            assert_eq!(judged[1]["validation"], "pending");
            let pause = validate::retry_after(attempt);
            kit.clock
                .advance(chrono::Duration::from_std(pause).unwrap() + chrono::Duration::seconds(1));
        } else {
            assert_eq!(now["status"], "validated", "{now:#}");
            let judged = items(&kit, owner, json!({"bulk_transfer_id": id})).await;
            assert_eq!(judged[1]["refusal_code"], "80");
        }
    }

    // A lease that ended is taken over: the items are judged by the next worker.
    let second = kit
        .op(
            Operation::CreateBulkTransfer,
            owner,
            json!({"source_account_number": "1000000014", "on_invalid": "skip_invalid",
                   "items": [{"account_number": "0123456788", "bank_code": "000013",
                              "account_name": "Emeka Nwosu", "amount": "1000"}]}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    kit.sql(
        "UPDATE bulk_transfers SET lease_owner = 'stopped', lease_until = next_attempt_at \
         WHERE id = $1",
    )
    .bind(id_of(&second))
    .execute()
    .await;
    kit.clock.advance(chrono::Duration::seconds(1));
    validate_all(&kit).await;
    assert_eq!(
        get(&kit, owner, &id_of(&second)).await["status"],
        "validated"
    );
    kit.assert_ledger_balances().await;
}

/// The largest batch, 5,000 items of about 200 bytes each, fits the 1 MiB body and is judged
/// in passes, every item once, its totals the sum of its items.
async fn the_largest_batch_fits_its_body_and_is_judged_whole(kit: TestKit) {
    let (lagos, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "bola.ade@lagosfresh.ng")
        .await;
    let payments: Vec<Value> = (0..kobo::money::bulk::ITEMS_MAX)
        .map(|n| {
            json!({"account_number": lagos.main_account_number, "bank_code": "090823",
                   "account_name": "Lagos Fresh Produce Ltd", "amount": format!("{}.25", 100 + n),
                   "reference": format!("PAYROLL-2026-12-ITEM-{n:05}"),
                   "narration": "December salary, paid with thanks"})
        })
        .collect();
    let body = json!({"source_account_number": "1000000014", "on_invalid": "refuse_batch",
                      "items": payments});
    assert!(
        body.to_string().len() < 1024 * 1024,
        "{}",
        body.to_string().len()
    );
    let batch = kit
        .op(Operation::CreateBulkTransfer, &kit.owner_token, body)
        .await
        .expect(ResponseCode::Success)
        .clone();
    validate_all(&kit).await;
    let done = get(&kit, &kit.owner_token, &id_of(&batch)).await;
    assert_eq!(done["status"], "validated", "{done:#}");
    assert_eq!(
        done["counts"],
        json!({"items": 5000, "valid": 5000, "invalid": 0, "pending": 0,
               "succeeded": 0, "processing": 0, "failed": 0, "reversed": 0})
    );
    // Σ (100 + n) + 0.25 for n below 5,000: 500,000 + 4,999 × 5,000 / 2 + 1,250.
    assert_eq!(done["totals"]["amount"], "12998750.00");
    let last = items(
        &kit,
        &kit.owner_token,
        json!({"bulk_transfer_id": id_of(&batch), "page": 50, "page_size": 100}),
    )
    .await;
    assert_eq!(last.len(), 100);
    assert_eq!(last[99]["index"], 4999);
    assert_eq!(last[99]["amount"], "5099.25");
    kit.assert_ledger_balances().await;
}

on_both_stores!(
    the_largest_batch_fits_its_body_and_is_judged_whole,
    a_payroll_is_judged_item_by_item_before_anything_moves,
    a_batch_is_refused_whole_retried_once_and_cancelled,
    an_unreachable_bank_is_asked_again_later,
);

/// Four validators, two in each of two processes on one PostgreSQL, take up six batches at
/// once: each batch is taken up by one of them, once (its lease, `SKIP LOCKED`), every item
/// judged, and every batch ends with its counts right.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validators_in_two_processes_take_each_batch_once() {
    let kit = TestKit::postgres().await;
    let second = kit.another_process().await;
    let (lagos, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "bola.ade@lagosfresh.ng")
        .await;
    let mut ids = Vec::new();
    for batch in 0..6 {
        let items: Vec<Value> = (0..300)
            .map(|n| {
                // Every tenth item names the holder otherwise: 30 invalid a batch.
                let name = if n % 10 == 0 {
                    "Someone Else"
                } else {
                    "Lagos Fresh Produce Ltd"
                };
                json!({"account_number": lagos.main_account_number, "bank_code": "090823",
                       "account_name": name, "amount": "100",
                       "reference": format!("RACE-{batch}-{n}")})
            })
            .collect();
        let created = kit
            .op(
                Operation::CreateBulkTransfer,
                &kit.owner_token,
                json!({"source_account_number": "1000000014", "on_invalid": "skip_invalid",
                       "items": items}),
            )
            .await
            .expect(ResponseCode::Success)
            .clone();
        ids.push(id_of(&created));
    }
    let banks = [
        kit.api.shared_bank(),
        kit.api.shared_bank(),
        second.api.shared_bank(),
        second.api.shared_bank(),
    ];
    let workers = banks.into_iter().enumerate().map(|(n, bank)| {
        tokio::spawn(async move {
            let owner = format!("racer-{n}");
            let mut taken = 0;
            while validate::work(&bank, &owner).await.unwrap() {
                taken += 1;
            }
            taken
        })
    });
    let taken: Vec<i64> = futures_util::future::join_all(workers)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(taken.iter().sum::<i64>(), 6, "{taken:?}");
    for id in &ids {
        let batch = get(&kit, &kit.owner_token, id).await;
        assert_eq!(batch["status"], "validated", "{batch:#}");
        assert_eq!(
            batch["counts"],
            json!({"items": 300, "valid": 270, "invalid": 30, "pending": 0,
               "succeeded": 0, "processing": 0, "failed": 0, "reversed": 0})
        );
        assert_eq!(batch["totals"]["amount"], "27000.00");
    }
    let attempts: i64 = kit
        .count(
            "SELECT COALESCE(MAX(attempts), 0) FROM bulk_transfers WHERE business_id = $1",
            &kit.business.business_id,
        )
        .await;
    assert_eq!(attempts, 1, "a batch was taken up twice");
}
