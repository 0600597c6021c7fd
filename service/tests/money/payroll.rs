//! Bulk transfers authorised and paid (issue 60): one OTP bound to the batch authorises it,
//! its whole total reserved at once; the executor pays each valid item as a transfer of its
//! own, with every rule checked again as it moves; what the items do not spend comes back in
//! one credit; `bulk_transfer.completed` once every item has its outcome. An approval policy
//! holds the batch whole for a checker. Each scenario on both stores, ending with
//! `kobo ledger verify`.

use std::sync::Arc;

use generated_server::{Operation, ResponseCode};
use kobo::kernel::config::Environment;
use kobo::money::bulk::{authorise, execute, validate};
use kobo::money::nip;
use kobo::on_both_stores;
use kobo::operator::businesses;
use kobo::provider::faults::{FaultRates, Faults, FaultyProvider};
use kobo::provider::sandbox::SandboxProvider;
use kobo::provider::{
    AccountOpening, BankInfo, BoxFuture, CoreBanking, Holder, IdentityNumbers, NipOutcome,
    NipTransfer, ProviderError, VerifiedIdentity,
};
use kobo::testkit::{Call, Reply, StoreKind, TestKit, OWNER_PASSWORD};
use serde_json::{json, Value};

use crate::support::{a_transfer_holding, approval_kit, balance, otp, payout_body};

/// Runs the validation worker, the executor and the NIP worker until none has work.
pub async fn run_workers(kit: &TestKit) {
    for _ in 0..200 {
        let validated = validate::work(kit.api.bank(), "test-worker").await.unwrap();
        let executed = execute::work(kit.api.bank(), "test-worker").await.unwrap();
        let pass = nip::process_due(
            &kit.store,
            &**kit.api.provider(),
            &kit.clock,
            Environment::Sandbox,
            50,
        )
        .await
        .unwrap();
        if !validated && !executed && pass.settled + pass.reversed == 0 {
            // A batch waiting for NIP is looked at again after a pause: move past it.
            kit.clock.advance(chrono::Duration::seconds(3));
            if !execute::work(kit.api.bank(), "test-worker").await.unwrap() {
                return;
            }
        }
    }
    panic!("the workers were still busy after 200 rounds");
}

pub(crate) async fn get(kit: &TestKit, id: &str) -> Value {
    kit.op(
        Operation::GetBulkTransfer,
        &kit.owner_token,
        json!({"bulk_transfer_id": id}),
    )
    .await
    .expect(ResponseCode::Success)
    .clone()
}

/// The items of batch `id` as the owner reads them (up to 100), in order.
pub(crate) async fn items_of(kit: &TestKit, id: &str) -> Vec<Value> {
    kit.op(
        Operation::FetchBulkTransferItems,
        &kit.owner_token,
        json!({"bulk_transfer_id": id, "page_size": 100}),
    )
    .await
    .expect(ResponseCode::Success)
    .as_array()
    .expect("a page of items")
    .clone()
}

/// `batch` authorised by its owner with a bound OTP and paid by the workers: as it then stands,
/// `completed`.
async fn authorised_and_paid(kit: &TestKit, batch: &Value) -> Value {
    let code = bound_otp(kit, &kit.owner_token, batch).await;
    authorise(kit, &kit.owner_token, batch, &code)
        .await
        .expect(ResponseCode::Success);
    run_workers(kit).await;
    let done = get(kit, batch["bulk_transfer_id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed", "{done:#}");
    done
}

/// A validated batch of `items` from the main account, `skip_invalid`.
async fn validated(kit: &TestKit, reference: &str, items: Vec<Value>) -> Value {
    validated_as(kit, batch_body(reference, items)).await
}

/// What [`validated`] asks for: `items` from the main account, `skip_invalid`.
pub(crate) fn batch_body(reference: &str, items: Vec<Value>) -> Value {
    json!({"source_account_number": "1000000014", "on_invalid": "skip_invalid",
           "reference": reference, "narration": "December salaries", "items": items})
}

/// The batch `body` asks for, written by the owner and validated.
pub(crate) async fn validated_as(kit: &TestKit, body: Value) -> Value {
    let batch = kit
        .op(Operation::CreateBulkTransfer, &kit.owner_token, body)
        .await
        .expect(ResponseCode::Success)
        .clone();
    let id = batch["bulk_transfer_id"].as_str().unwrap().to_owned();
    for _ in 0..20 {
        validate::work(kit.api.bank(), "test-worker").await.unwrap();
    }
    let done = get(kit, &id).await;
    assert_eq!(done["status"], "validated", "{done:#}");
    done
}

pub(crate) fn item(number: &str, bank: &str, name: &str, amount: &str) -> Value {
    json!({"account_number": number, "bank_code": bank, "account_name": name, "amount": amount})
}

/// A bound OTP of the member behind `token` for `batch`.
pub(crate) async fn bound_otp(kit: &TestKit, token: &str, batch: &Value) -> String {
    kit.op(
        Operation::GenerateBulkTransferOtp,
        token,
        json!({"bulk_transfer_id": batch["bulk_transfer_id"]}),
    )
    .await
    .expect(ResponseCode::Success)["otp"]
        .as_str()
        .unwrap()
        .to_owned()
}

pub(crate) async fn authorise(kit: &TestKit, token: &str, batch: &Value, otp: &str) -> Reply {
    kit.op(
        Operation::AuthorizeBulkTransfer,
        token,
        json!({"bulk_transfer_id": batch["bulk_transfer_id"], "total": batch["totals"]["total"],
               "item_count": batch["counts"]["valid"], "otp": otp}),
    )
    .await
}

/// A payroll of two Kobo accounts and a NIP account (and one invalid item, skipped) is
/// authorised once with an OTP bound to it: an unbound OTP or one whose batch's total is
/// misread is refused; the whole total is reserved in one debit; a second authorisation is
/// `48`. Each valid item is paid as a transfer with the item's id (the NIP one settles at
/// NIP); the batch completes with its counts and `bulk_transfer.completed` once.
async fn a_payroll_is_authorised_once_and_paid_item_by_item(kit: TestKit) {
    let api = kit.integration_token().await;
    kit.credit(&api, "1000000014", "1000000.00").await;
    let (lagos, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "bola.ade@lagosfresh.ng")
        .await;
    let owner = kit.owner_token.clone();
    let batch = validated(
        &kit,
        "PAYROLL-2026-12",
        vec![
            item(
                &lagos.main_account_number,
                "090823",
                "Lagos Fresh Produce Ltd",
                "450000",
            ),
            item("0123456788", "000013", "Emeka Nwosu", "280000.50"),
            item("0123456799", "000013", "Nobody", "1000"),
        ],
    )
    .await;
    assert_eq!(batch["totals"]["total"], "730054.25");

    // An OTP from generate_otp authorises no batch; a bound one, only with the batch's figures.
    let plain = otp(&kit, &owner).await;
    authorise(&kit, &owner, &batch, &plain)
        .await
        .expect(ResponseCode::InvalidOtp);
    let code = bound_otp(&kit, &owner, &batch).await;
    let mut misread = batch.clone();
    misread["totals"]["total"] = json!("730000.00");
    authorise(&kit, &owner, &misread, &code)
        .await
        .expect(ResponseCode::InvalidRequest);
    let authorised = authorise(&kit, &owner, &batch, &code)
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(authorised["status"], "executing");
    assert_eq!(authorised["totals"]["reserved"], "730054.25");
    assert_eq!(balance(&kit, "1000000014").await, "269945.75");
    // Authorised: no second OTP for it, no second authorisation.
    kit.op(
        Operation::GenerateBulkTransferOtp,
        &owner,
        json!({"bulk_transfer_id": batch["bulk_transfer_id"]}),
    )
    .await
    .expect(ResponseCode::InvalidState);
    authorise(&kit, &owner, &batch, &code)
        .await
        .expect(ResponseCode::InvalidState);

    run_workers(&kit).await;
    let id = batch["bulk_transfer_id"].as_str().unwrap();
    let done = get(&kit, id).await;
    assert_eq!(done["status"], "completed", "{done:#}");
    assert_eq!(
        done["counts"],
        json!({"items": 3, "valid": 2, "invalid": 1, "pending": 0, "succeeded": 2,
               "processing": 0, "failed": 0, "reversed": 0})
    );
    assert_eq!(done["totals"]["released"], "0.00");
    assert!(done["completed_at"].is_string());
    assert_eq!(balance(&kit, "1000000014").await, "269945.75");
    assert_eq!(balance(&kit, &lagos.main_account_number).await, "450000.00");
    let items = items_of(&kit, id).await;
    let outcomes: Vec<&str> = items
        .iter()
        .map(|i| i["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["success", "success", "unpaid"]);
    // Each paid item is a transfer with the item's id.
    for paid in &items[..2] {
        let transfer = kit
            .op(
                Operation::GetTransferApi,
                &api,
                json!({"reference_number": paid["reference_number"]}),
            )
            .await
            .expect(ResponseCode::Success)
            .clone();
        assert_eq!(transfer["id"], paid["transfer_id"]);
        assert_eq!(transfer["transfer_status"], "success");
    }
    let business = &kit.business.business_id;
    let completed = "SELECT COUNT(*) FROM events WHERE business_id = $1 \
                     AND type = 'bulk_transfer.completed'";
    assert_eq!(kit.count(completed, business).await, 1);

    // The results file, the same through the Dashboard and the integration: a line an item.
    let results = results_of(&kit, &api, id).await;
    assert_eq!(results, results_of(&kit, &owner, id).await);
    assert_eq!(
        results[0],
        "index,account_number,bank_code,bank_name,account_name,confirmed_name,amount,fee,vat,\
         narration,reference,validation,refusal_code,refusal_message,outcome,transfer_id,\
         reference_number,failure_code,failure_message"
    );
    assert_eq!(results.len(), 4, "{results:#?}");
    for (line, item) in results[1..3].iter().zip(&items) {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells.len(), 19, "{line}");
        assert_eq!(cells[0], item["index"].to_string());
        assert_eq!(cells[6], item["amount"].as_str().unwrap());
        assert_eq!(cells[11], item["validation"].as_str().unwrap());
        assert_eq!(cells[14], item["outcome"].as_str().unwrap());
        assert_eq!(cells[15], item["transfer_id"].as_str().unwrap());
        assert_eq!(cells[16], item["reference_number"].as_str().unwrap_or(""));
    }
    assert!(
        results[2].contains(",280000.50,50.00,3.75,December salaries,"),
        "{results:#?}"
    );
    // The invalid item: its verdict and why (a message may hold commas: quoted), never paid.
    assert!(
        results[3].starts_with("2,0123456799,000013,"),
        "{}",
        results[3]
    );
    assert!(results[3].contains(",Nobody,"), "{}", results[3]);
    let unpaid = format!(",unpaid,{},,,", items[2]["transfer_id"].as_str().unwrap());
    assert!(results[3].ends_with(&unpaid), "{}", results[3]);
    kit.assert_ledger_balances().await;
}

/// The lines of batch `id`'s results file, downloaded with `token` (a Dashboard session's or
/// integration credentials').
async fn results_of(kit: &TestKit, token: &str, id: &str) -> Vec<String> {
    use base64::Engine;
    let operation = if token == kit.owner_token {
        Operation::DownloadBulkTransferResults
    } else {
        Operation::DownloadBulkTransferResultsApi
    };
    let file = kit
        .op(operation, token, json!({"bulk_transfer_id": id}))
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(file["content_type"], "text/csv; charset=utf-8");
    assert_eq!(
        file["file_name"],
        "bulk-transfer-PAYROLL-2026-12-results.csv"
    );
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(file["content_base64"].as_str().unwrap())
        .unwrap();
    assert_eq!(file["size_bytes"], bytes.len());
    let text = String::from_utf8(bytes).unwrap();
    assert!(text.ends_with("\r\n"));
    text.trim_end().split("\r\n").map(str::to_owned).collect()
}

/// The approval policy holds a batch whole, reserved: its maker cannot approve it (`43`), a
/// checker approves with an OTP bound to it. A recipient blocked meanwhile fails its item
/// when it is to be paid (`48`), and what it did not spend comes back in one credit. A held
/// batch rejected, and one cancelled, give back their whole reservation; one the account
/// cannot cover is refused (`83`) with nothing reserved.
async fn a_held_payroll_is_approved_rejected_or_cancelled(kind: StoreKind) {
    let (kit, checker) = approval_kit(kind, "1000000.00", "100").await;
    let owner = kit.owner_token.clone();
    let (lagos, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "bola.ade@lagosfresh.ng")
        .await;
    let (kano, _) = kit
        .other_business("Kano Grains Ltd", "musa.bello@kanograins.ng")
        .await;
    let batch = validated(
        &kit,
        "PAYROLL-A",
        vec![
            item(
                &lagos.main_account_number,
                "090823",
                "Lagos Fresh Produce Ltd",
                "100000",
            ),
            item(
                &kano.main_account_number,
                "090823",
                "Kano Grains Ltd",
                "50000",
            ),
        ],
    )
    .await;
    let code = bound_otp(&kit, &owner, &batch).await;
    let held = authorise(&kit, &owner, &batch, &code)
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(held["status"], "pending_approval");
    assert_eq!(balance(&kit, "1000000014").await, "850000.00");
    let id = batch["bulk_transfer_id"].clone();
    let mine = bound_otp(&kit, &owner, &batch).await;
    kit.op(
        Operation::ApproveBulkTransfer,
        &owner,
        json!({"bulk_transfer_id": id, "otp": mine}),
    )
    .await
    .expect(ResponseCode::PermissionDenied);
    let plain = otp(&kit, &checker).await;
    kit.op(
        Operation::ApproveBulkTransfer,
        &checker,
        json!({"bulk_transfer_id": id, "otp": plain}),
    )
    .await
    .expect(ResponseCode::InvalidOtp);
    kit.sql("UPDATE accounts SET status = 'blocked' WHERE account_number = $1")
        .bind(&kano.main_account_number)
        .execute()
        .await;
    let theirs = bound_otp(&kit, &checker, &batch).await;
    let approved = kit
        .op(
            Operation::ApproveBulkTransfer,
            &checker,
            json!({"bulk_transfer_id": id, "otp": theirs}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(approved["status"], "executing");
    assert!(approved["reviewed_by"].is_string());
    // A checker, who cannot read the team, sees who made it by name.
    assert_eq!(approved["created_by_name"], approved["authorised_by_name"]);
    assert!(approved["authorised_by_name"].is_string());
    assert!(approved["reviewed_by_name"].is_string());
    assert_ne!(approved["reviewed_by_name"], approved["authorised_by_name"]);
    run_workers(&kit).await;
    let done = get(&kit, id.as_str().unwrap()).await;
    assert_eq!(done["status"], "completed", "{done:#}");
    assert_eq!(done["counts"]["succeeded"], 1);
    assert_eq!(done["counts"]["failed"], 1);
    assert_eq!(done["totals"]["released"], "50000.00");
    assert_eq!(balance(&kit, "1000000014").await, "900000.00");
    assert_eq!(balance(&kit, &kano.main_account_number).await, "0.00");
    let items = items_of(&kit, id.as_str().unwrap()).await;
    assert_eq!(items[1]["outcome"], "failed");
    assert_eq!(items[1]["failure_code"], "83", "{items:#?}");

    // Rejected, then cancelled: the reservation comes back whole.
    for (reference, end) in [("PAYROLL-B", "reject"), ("PAYROLL-C", "cancel")] {
        let other = validated(
            &kit,
            reference,
            vec![item(
                &lagos.main_account_number,
                "090823",
                "Lagos Fresh Produce Ltd",
                "200000",
            )],
        )
        .await;
        let code = bound_otp(&kit, &owner, &other).await;
        authorise(&kit, &owner, &other, &code)
            .await
            .expect(ResponseCode::Success);
        assert_eq!(balance(&kit, "1000000014").await, "700000.00");
        let id = other["bulk_transfer_id"].clone();
        let ended = if end == "reject" {
            kit.op(
                Operation::RejectBulkTransfer,
                &checker,
                json!({"bulk_transfer_id": id, "reason": "Not this month"}),
            )
            .await
        } else {
            kit.op(
                Operation::CancelBulkTransfer,
                &owner,
                json!({"bulk_transfer_id": id}),
            )
            .await
        }
        .expect(ResponseCode::Success)
        .clone();
        assert_eq!(ended["totals"]["released"], "200000.00");
        assert_eq!(balance(&kit, "1000000014").await, "900000.00");
    }

    // More than the account holds: nothing reserved, still validated.
    let big = validated(
        &kit,
        "PAYROLL-D",
        vec![item(
            &lagos.main_account_number,
            "090823",
            "Lagos Fresh Produce Ltd",
            "950000",
        )],
    )
    .await;
    let code = bound_otp(&kit, &owner, &big).await;
    authorise(&kit, &owner, &big, &code)
        .await
        .expect(ResponseCode::ProviderError);
    assert_eq!(balance(&kit, "1000000014").await, "900000.00");
    assert_eq!(
        get(&kit, big["bulk_transfer_id"].as_str().unwrap()).await["status"],
        "validated"
    );

    // Held and not reviewed for 72 hours: expired, the reservation back; no approval after.
    let late = validated(
        &kit,
        "PAYROLL-E",
        vec![item(
            &lagos.main_account_number,
            "090823",
            "Lagos Fresh Produce Ltd",
            "300000",
        )],
    )
    .await;
    let code = bound_otp(&kit, &owner, &late).await;
    let held = authorise(&kit, &owner, &late, &code)
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert!(held["expires_at"].is_string(), "{held:#}");
    assert_eq!(balance(&kit, "1000000014").await, "600000.00");
    kit.clock.advance(chrono::Duration::hours(73));
    let checker = kit
        .login(crate::support::CHECKER, kobo::testkit::MEMBER_PASSWORD)
        .await;
    let late_id = late["bulk_transfer_id"].clone();
    kit.op(
        Operation::ApproveBulkTransfer,
        &checker,
        json!({"bulk_transfer_id": late_id, "otp": "123456"}),
    )
    .await
    .expect(ResponseCode::InvalidState);
    assert_eq!(authorise::expire_due(kit.api.bank()).await.unwrap(), 1);
    let expired = kit
        .op(
            Operation::GetBulkTransfer,
            &checker,
            json!({"bulk_transfer_id": late_id}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(expired["status"], "expired", "{expired:#}");
    assert_eq!(expired["totals"]["released"], "300000.00");
    assert_eq!(balance(&kit, "1000000014").await, "900000.00");
    assert_eq!(authorise::expire_due(kit.api.bank()).await.unwrap(), 0);
    kit.assert_ledger_balances().await;
}

on_both_stores!(a_payroll_is_authorised_once_and_paid_item_by_item);

/// Items are paid `ITEMS_PER_COMMIT` to a commit; a run in which one item is refused writes
/// nothing and pays its items one by one, so the refused one fails alone: a recipient blocked
/// after validation (`83`), a reference taken by a transfer after validation (`26`). Items to
/// another business and to the payer's own account take their places in both ledgers.
async fn a_run_with_a_refused_item_pays_the_others_and_fails_that_one(kit: TestKit) {
    let api = kit.integration_token().await;
    kit.credit(&api, "1000000014", "1000000.00").await;
    let own = kit.open_account(&api, "Adaeze Foods Float").await;
    let (lagos, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "bola.ade@lagosfresh.ng")
        .await;
    let lagos_api = kit.integration_token_of(&lagos).await;
    let blocked = kit.open_account(&lagos_api, "Lagos Fresh Payroll").await;
    // Three runs: the first with a refused item, the second whole, the third with a taken
    // reference.
    let run = execute::ITEMS_PER_COMMIT;
    let count = 2 * run + 8;
    let (refused_at, taken_at) = (5, 2 * run + 3);
    let items: Vec<Value> = (0..count)
        .map(|i| {
            let (number, name) = if i == refused_at {
                (
                    blocked.as_str(),
                    "Lagos Fresh Produce Ltd - Lagos Fresh Payroll",
                )
            } else if i % 10 == 7 {
                (own.as_str(), "Adaeze Foods Ltd - Adaeze Foods Float")
            } else {
                (
                    lagos.main_account_number.as_str(),
                    "Lagos Fresh Produce Ltd",
                )
            };
            let mut item = item(number, "090823", name, &format!("{}.25", 100 + i));
            item["reference"] = json!(format!("RUN-{i}"));
            item
        })
        .collect();
    let batch = validated(&kit, "PAYROLL-RUNS", items).await;
    assert_eq!(batch["counts"]["valid"], count, "{batch:#}");
    kit.sql("UPDATE accounts SET status = 'blocked' WHERE account_number = $1")
        .bind(&blocked)
        .execute()
        .await;
    a_transfer_holding(&kit, &api, &format!("RUN-{taken_at}")).await;
    let done = authorised_and_paid(&kit, &batch).await;
    let id = batch["bulk_transfer_id"].as_str().unwrap();
    assert_eq!(done["counts"]["succeeded"], count - 2, "{done:#}");
    assert_eq!(done["counts"]["failed"], 2, "{done:#}");
    let items = items_of(&kit, id).await;
    assert_eq!(items.len(), count);
    for (i, item) in items.iter().enumerate() {
        let expected = match i {
            i if i == refused_at => ("failed", json!("83")),
            i if i == taken_at => ("failed", json!("26")),
            _ => ("success", Value::Null),
        };
        assert_eq!(
            (
                item["outcome"].as_str().unwrap(),
                item["failure_code"].clone()
            ),
            expected,
            "item {i}: {item:#}"
        );
    }
    // What the two failed items reserved came back; every other item arrived.
    let to_own: usize = (0..count)
        .filter(|i| i % 10 == 7 && *i != refused_at && *i != taken_at)
        .map(|i| 10_025 + 100 * i)
        .sum();
    let to_own = format!("{}.{:02}", to_own / 100, to_own % 100);
    assert_eq!(balance(&kit, &own).await, to_own);
    assert_eq!(balance(&kit, &blocked).await, "0.00");
    let transfers = "SELECT COUNT(*) FROM transfers WHERE business_id = $1 \
                     AND reference LIKE 'RUN-%'";
    assert_eq!(
        kit.count(transfers, &kit.business.business_id).await,
        count as i64 - 1
    );
    // On PostgreSQL, each transaction's rows carry its id: the whole run was one, each item of
    // a run with a refusal one of its own.
    if kit.kind == StoreKind::Postgres {
        let mut transactions = Vec::new();
        for i in 0..count {
            let xmin = kit
                .sql("SELECT xmin::text FROM transfers WHERE reference = $1 AND amount > 1000")
                .bind(format!("RUN-{i}"))
                .optional_text()
                .await;
            transactions.push(xmin);
        }
        let distinct = |range: std::ops::Range<usize>| {
            let ids: std::collections::BTreeSet<_> = transactions[range].iter().flatten().collect();
            ids.len()
        };
        assert_eq!(distinct(run..2 * run), 1, "{transactions:?}");
        assert_eq!(distinct(0..run), run - 1, "{transactions:?}");
        assert_eq!(distinct(2 * run..count), 7, "{transactions:?}");
    }
    kit.assert_ledger_balances().await;
}

on_both_stores!(a_run_with_a_refused_item_pays_the_others_and_fails_that_one);

/// Items a run pays after the day's limit was spent elsewhere (the batch fitted it when it was
/// authorised; payouts spent it since): the run goes one by one, the items within the limit are
/// paid and the others fail `83`, their money released.
async fn items_past_the_days_limit_fail_and_the_others_are_paid(kit: TestKit) {
    let api = kit.integration_token().await;
    kit.credit(&api, "1000000014", "100000.00").await;
    let business = kit.business.business_id.clone();
    businesses::set_daily_transfer_limit(&kit.store, &business, Some(200_000))
        .await
        .unwrap();
    let (lagos, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "bola.ade@lagosfresh.ng")
        .await;
    let to = lagos.main_account_number.clone();
    let items = (0..10)
        .map(|_| item(&to, "090823", "Lagos Fresh Produce Ltd", "100"))
        .collect();
    let batch = validated(&kit, "PAYROLL-LIMIT", items).await;
    let code = bound_otp(&kit, &kit.owner_token, &batch).await;
    authorise(&kit, &kit.owner_token, &batch, &code)
        .await
        .expect(ResponseCode::Success);
    // NGN 1,250 of the day's 2,000 spent by a payout: 750 are left for the batch's 1,000.
    let call = Call::new(
        Operation::FundsTransferApi.path(),
        Some(&api),
        payout_body(&to, "Lagos Fresh Produce Ltd", "090823", "1250"),
    );
    kit.send(call.header("idempotency-key", "spends-the-day".to_owned()))
        .await
        .expect(ResponseCode::Success);
    run_workers(&kit).await;

    let id = batch["bulk_transfer_id"].as_str().unwrap();
    let done = get(&kit, id).await;
    assert_eq!(done["status"], "completed", "{done:#}");
    assert_eq!(done["counts"]["succeeded"], 7, "{done:#}");
    assert_eq!(done["counts"]["failed"], 3, "{done:#}");
    let items = items_of(&kit, id).await;
    let codes: Vec<&Value> = items.iter().map(|item| &item["failure_code"]).collect();
    let over = json!("83");
    assert_eq!(codes[..7], [&Value::Null; 7], "{items:#?}");
    assert_eq!(codes[7..], [&over; 3], "{items:#?}");
    assert_eq!(balance(&kit, &to).await, "1950.00");
    kit.assert_ledger_balances().await;
}

on_both_stores!(items_past_the_days_limit_fail_and_the_others_are_paid);

/// A provider whose accounts change holder on command: `name_enquiry` then answers `renamed`
/// for every account at another bank, and counts its calls.
struct Renaming {
    inner: SandboxProvider,
    renamed: std::sync::Mutex<Option<String>>,
    enquiries: std::sync::atomic::AtomicUsize,
}

impl CoreBanking for Renaming {
    fn banks(&self) -> Vec<BankInfo> {
        self.inner.banks()
    }

    fn name_enquiry<'a>(
        &'a self,
        bank_code: &'a str,
        account_number: &'a str,
    ) -> BoxFuture<'a, Result<Option<Holder>, ProviderError>> {
        Box::pin(async move {
            self.enquiries
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let renamed = self.renamed.lock().unwrap().clone();
            let found = self.inner.name_enquiry(bank_code, account_number).await?;
            Ok(found.map(|holder| match renamed {
                Some(name) => Holder {
                    account_name: name,
                    ..holder
                },
                None => holder,
            }))
        })
    }

    fn screen_transfer<'a>(
        &'a self,
        transfer: &'a NipTransfer,
    ) -> BoxFuture<'a, Result<(), ProviderError>> {
        self.inner.screen_transfer(transfer)
    }

    fn submit_transfer<'a>(
        &'a self,
        transfer: &'a NipTransfer,
    ) -> BoxFuture<'a, Result<NipOutcome, ProviderError>> {
        self.inner.submit_transfer(transfer)
    }

    fn transfer_status<'a>(
        &'a self,
        transfer: &'a NipTransfer,
    ) -> BoxFuture<'a, Result<NipOutcome, ProviderError>> {
        self.inner.transfer_status(transfer)
    }

    fn verify_identity<'a>(
        &'a self,
        numbers: &'a IdentityNumbers,
    ) -> BoxFuture<'a, Result<VerifiedIdentity, ProviderError>> {
        self.inner.verify_identity(numbers)
    }

    fn open_account<'a>(
        &'a self,
        opening: &'a AccountOpening<'a>,
    ) -> BoxFuture<'a, Result<(), ProviderError>> {
        self.inner.open_account(opening)
    }
}

/// The holder confirmed at validation is the one paid: a Kobo account renamed since fails its
/// item `49` (the holder is read at every payment); at another bank, a name enquired more than
/// `NAME_FRESH_FOR` ago (a batch held for approval, approved a day later) is enquired again,
/// and an account whose holder changed fails `49`. Their money is released; the rest is paid.
async fn a_holder_changed_since_validation_is_not_paid(mut kit: TestKit) {
    let renaming = Arc::new(Renaming {
        inner: SandboxProvider::new(kit.clock.clone()),
        renamed: std::sync::Mutex::new(None),
        enquiries: std::sync::atomic::AtomicUsize::new(0),
    });
    kit.use_provider(renaming.clone());
    let api = kit.integration_token().await;
    kit.credit(&api, "1000000014", "100000.00").await;
    let (lagos, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "bola.ade@lagosfresh.ng")
        .await;
    let lagos_api = kit.integration_token_of(&lagos).await;
    let payroll = kit.open_account(&lagos_api, "Payroll").await;
    let items = vec![
        item(
            &payroll,
            "090823",
            "Lagos Fresh Produce Ltd - Payroll",
            "100",
        ),
        item(
            &lagos.main_account_number,
            "090823",
            "Lagos Fresh Produce Ltd",
            "200",
        ),
        item("0123456788", "000013", "Emeka Nwosu", "300"),
    ];
    let fresh = validated(&kit, "PAYROLL-FRESH", items.clone()).await;
    let stale = validated(&kit, "PAYROLL-STALE", items).await;
    // The Kobo account is renamed; the other bank's account changes holder.
    kit.sql("UPDATE accounts SET account_name = 'Kano Traders' WHERE account_number = $1")
        .bind(&payroll)
        .execute()
        .await;
    *renaming.renamed.lock().unwrap() = Some("Musa Danjuma".to_owned());
    let before = renaming.enquiries.load(std::sync::atomic::Ordering::SeqCst);
    // Paid at once: the other bank's name, enquired minutes ago, is not asked again.
    let done = authorised_and_paid(&kit, &fresh).await;
    assert_eq!(
        renaming.enquiries.load(std::sync::atomic::Ordering::SeqCst),
        before
    );
    let outcomes = |items: Vec<Value>| -> Vec<(Value, Value)> {
        items
            .into_iter()
            .map(|item| (item["outcome"].clone(), item["failure_code"].clone()))
            .collect()
    };
    let id = fresh["bulk_transfer_id"].as_str().unwrap();
    assert_eq!(
        outcomes(items_of(&kit, id).await),
        [
            (json!("failed"), json!("49")),
            (json!("success"), Value::Null),
            (json!("success"), Value::Null),
        ],
        "{done:#}"
    );
    // Paid 25 hours after its names were enquired: the other bank is asked again.
    kit.clock.advance(chrono::Duration::hours(25));
    let email = kit.business.owner_email.clone();
    kit.owner_token = kit.login(&email, OWNER_PASSWORD).await;
    let done = authorised_and_paid(&kit, &stale).await;
    let id = stale["bulk_transfer_id"].as_str().unwrap();
    let items = items_of(&kit, id).await;
    assert_eq!(
        outcomes(items.clone()),
        [
            (json!("failed"), json!("49")),
            (json!("success"), Value::Null),
            (json!("failed"), json!("49")),
        ],
        "{done:#}"
    );
    assert!(
        items[2]["failure_message"]
            .as_str()
            .unwrap()
            .contains("Musa Danjuma"),
        "{items:#?}"
    );
    assert_eq!(balance(&kit, &payroll).await, "0.00");
    assert_eq!(balance(&kit, &lagos.main_account_number).await, "400.00");
    kit.assert_ledger_balances().await;
}

on_both_stores!(a_holder_changed_since_validation_is_not_paid);

/// A run stops preparing its items once that took `PREPARING_MAX` (here a provider that takes
/// 0.7 s to screen each inter-bank item): the items prepared so far are one run, the rest the
/// next, so the lease (15 s, renewed at each commit) never runs out while 32 slow items are
/// screened.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_run_of_slowly_screened_items_is_cut_before_its_lease_ends() {
    let mut kit = TestKit::postgres().await;
    let api = kit.integration_token().await;
    kit.credit(&api, "1000000014", "100000.00").await;
    let items = (0..7)
        .map(|i| {
            item(
                "0123456788",
                "000013",
                "Emeka Nwosu",
                &format!("{}", 100 + i),
            )
        })
        .collect();
    let batch = validated(&kit, "PAYROLL-SLOW", items).await;
    let rates = FaultRates {
        latency: std::time::Duration::from_millis(700),
        seed: Some(7),
        ..FaultRates::default()
    };
    kit.use_provider(Arc::new(FaultyProvider {
        inner: Arc::new(SandboxProvider::new(kit.clock.clone())),
        faults: Arc::new(Faults::random(rates, 7)),
    }));
    let code = bound_otp(&kit, &kit.owner_token, &batch).await;
    authorise(&kit, &kit.owner_token, &batch, &code)
        .await
        .expect(ResponseCode::Success);
    assert!(execute::work(kit.api.bank(), "test-worker").await.unwrap());
    // 0.7 s an item: at most five prepared before 3 s have passed (fewer on a slow machine),
    // then the rest.
    let transactions = kit
        .sql(
            "SELECT xmin::text FROM transfers WHERE business_id = $1 AND transfer_type = 'inter' \
             ORDER BY amount",
        )
        .bind(kit.business.business_id.clone())
        .texts()
        .await;
    assert_eq!(transactions.len(), 7, "{transactions:?}");
    let runs: Vec<usize> = transactions
        .chunk_by(|a, b| a == b)
        .map(|run| run.len())
        .collect();
    assert!(
        runs.len() >= 2 && runs.iter().all(|run| *run <= 5),
        "{runs:?}: {transactions:?}"
    );
    kit.assert_ledger_balances().await;
}

on_both_stores!(kind: a_held_payroll_is_approved_rejected_or_cancelled);

/// `authorize_bulk_transfer_api` answers a retry under its key with the first answer.
async fn an_integration_authorises_with_its_key(kit: TestKit) {
    let api = kit.integration_token().await;
    kit.credit(&api, "1000000014", "10000.00").await;
    let batch = validated(
        &kit,
        "API-1",
        vec![item("0123456788", "000013", "Emeka Nwosu", "1000")],
    )
    .await;
    let body = json!({"bulk_transfer_id": batch["bulk_transfer_id"],
                      "total": batch["totals"]["total"], "item_count": 1});
    let send = || {
        Call::new(
            Operation::AuthorizeBulkTransferApi.path(),
            Some(&api),
            body.clone(),
        )
        .header("idempotency-key", "authorise-api-1".to_owned())
    };
    let first = kit.send(send()).await.expect(ResponseCode::Success).clone();
    let replay = kit.send(send()).await.expect(ResponseCode::Success).clone();
    assert_eq!(first, replay);
    assert_eq!(balance(&kit, "1000000014").await, "8989.25");
    run_workers(&kit).await;
    let done = get(&kit, batch["bulk_transfer_id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed");
    assert_eq!(done["authorised_by"], "integration");
    kit.assert_ledger_balances().await;
}

on_both_stores!(an_integration_authorises_with_its_key);

/// The integration's authorisation of `batch` under `key`.
fn authorise_call<'a>(api: &'a str, batch: &Value, key: String) -> Call<'a> {
    Call::new(
        Operation::AuthorizeBulkTransferApi.path(),
        Some(api),
        json!({"bulk_transfer_id": batch["bulk_transfer_id"],
               "total": batch["totals"]["total"], "item_count": batch["counts"]["valid"]}),
    )
    .header("idempotency-key", key)
}

/// Ten authorisations of one batch at once, under ten keys, through two processes on
/// PostgreSQL: one reserves, the others are told it is no longer `validated` (`48`); the
/// account is debited once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn simultaneous_authorisations_of_one_batch_reserve_once() {
    let kit = TestKit::start(StoreKind::Postgres, crate::races::roomy_budget()).await;
    let second = kit.another_process().await;
    let api = kit.integration_token().await;
    kit.credit(&api, "1000000014", "100000.00").await;
    let batch = validated(
        &kit,
        "RACE-AUTH",
        vec![item("0123456788", "000013", "Emeka Nwosu", "30000")],
    )
    .await;
    let calls = (0..10)
        .map(|n| authorise_call(&api, &batch, format!("authorise-{n}")))
        .collect();
    let replies = kit.race(std::slice::from_ref(&second), calls).await;
    let codes: Vec<_> = replies.iter().map(Reply::code).collect();
    let won = codes
        .iter()
        .filter(|c| **c == Some(ResponseCode::Success))
        .count();
    assert_eq!(won, 1, "{replies:#?}");
    assert!(codes
        .iter()
        .all(|c| matches!(c, Some(ResponseCode::Success | ResponseCode::InvalidState))));
    // NGN 30,000 and the NIP fee (25.00) with its VAT (1.88), once.
    assert_eq!(balance(&kit, "1000000014").await, "69973.12");
    kit.assert_ledger_balances().await;
}

/// A held batch approved by the checker while its maker cancels it, through two processes:
/// one of them wins; a cancelled batch gives its reservation back once, an approved one is
/// paid; never both.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_approval_racing_a_cancel_ends_the_batch_one_way() {
    let (kit, checker) = approval_kit(StoreKind::Postgres, "1000000.00", "100").await;
    let second = kit.another_process().await;
    let (lagos, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "bola.ade@lagosfresh.ng")
        .await;
    for round in 0..4 {
        let batch = validated(
            &kit,
            &format!("RACE-HOLD-{round}"),
            vec![item(
                &lagos.main_account_number,
                "090823",
                "Lagos Fresh Produce Ltd",
                "1000",
            )],
        )
        .await;
        let code = bound_otp(&kit, &kit.owner_token, &batch).await;
        authorise(&kit, &kit.owner_token, &batch, &code)
            .await
            .expect(ResponseCode::Success);
        let theirs = bound_otp(&kit, &checker, &batch).await;
        let id = batch["bulk_transfer_id"].clone();
        let approve = Call::new(
            Operation::ApproveBulkTransfer.path(),
            Some(&checker),
            json!({"bulk_transfer_id": id, "otp": theirs}),
        );
        let cancel = Call::new(
            Operation::CancelBulkTransfer.path(),
            Some(&kit.owner_token),
            json!({"bulk_transfer_id": id}),
        );
        let replies = kit
            .race(std::slice::from_ref(&second), vec![approve, cancel])
            .await;
        let won: Vec<bool> = replies
            .iter()
            .map(|r| r.code() == Some(ResponseCode::Success))
            .collect();
        assert_eq!(won.iter().filter(|w| **w).count(), 1, "{replies:#?}");
        assert!(replies.iter().all(|r| matches!(
            r.code(),
            Some(ResponseCode::Success | ResponseCode::InvalidState)
        )));
        run_workers(&kit).await;
        let done = get(&kit, id.as_str().unwrap()).await;
        if won[0] {
            assert_eq!(done["status"], "completed", "{done:#}");
            assert_eq!(done["totals"]["released"], "0.00");
        } else {
            assert_eq!(done["status"], "cancelled", "{done:#}");
            assert_eq!(done["totals"]["released"], "1000.00");
        }
    }
    // Whatever won each round, the money adds up: paid to Lagos or back home.
    let paid: f64 = balance(&kit, &lagos.main_account_number)
        .await
        .parse()
        .unwrap();
    let home: f64 = balance(&kit, "1000000014").await.parse().unwrap();
    assert_eq!(paid + home, 1_000_000.0);
    kit.assert_ledger_balances().await;
}

/// A batch authorised while single payouts from the same account race it over the same
/// funds, through two processes: the account never goes below zero, and what left it is
/// exactly what was paid or reserved.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_batch_and_single_payouts_over_the_same_funds_never_overdraw() {
    let kit = TestKit::start(StoreKind::Postgres, crate::races::roomy_budget()).await;
    let second = kit.another_process().await;
    let api = kit.integration_token().await;
    let (lagos, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "bola.ade@lagosfresh.ng")
        .await;
    kit.credit(&api, "1000000014", "100000.00").await;
    let items = (0..6)
        .map(|_| {
            item(
                &lagos.main_account_number,
                "090823",
                "Lagos Fresh Produce Ltd",
                "10000",
            )
        })
        .collect();
    let batch = validated(&kit, "RACE-FUNDS", items).await;
    let mut calls = vec![authorise_call(&api, &batch, "authorise-funds".to_owned())];
    for n in 0..8 {
        calls.push(
            Call::new(
                Operation::FundsTransferApi.path(),
                Some(&api),
                json!({"source_account_number": "1000000014",
                       "source_account_name": "Adaeze Foods Ltd",
                       "beneficiary_account_number": lagos.main_account_number,
                       "beneficiary_account_name": "Lagos Fresh Produce Ltd",
                       "bank_code": "090823", "amount": "10000", "transfer_type": "intra"}),
            )
            .header("idempotency-key", format!("single-{n}")),
        );
    }
    let replies = kit.race(std::slice::from_ref(&second), calls).await;
    assert!(
        replies.iter().all(|r| r.status.as_u16() < 500),
        "{replies:#?}"
    );
    let batch_won = replies[0].code() == Some(ResponseCode::Success);
    let singles = replies[1..]
        .iter()
        .filter(|r| r.code() == Some(ResponseCode::Success))
        .count();
    run_workers(&kit).await;
    // NGN 100,000 covers ten payments of 10,000: the batch's six (if it was reserved) and the
    // singles that found money left.
    let spent = singles * 10_000 + if batch_won { 60_000 } else { 0 };
    assert!(spent <= 100_000, "{spent}: {replies:#?}");
    let home: f64 = balance(&kit, "1000000014").await.parse().unwrap();
    assert_eq!(home, 100_000.0 - spent as f64);
    let lagos_got: f64 = balance(&kit, &lagos.main_account_number)
        .await
        .parse()
        .unwrap();
    assert_eq!(lagos_got, spent as f64);
    kit.assert_ledger_balances().await;
}

/// Three batches of 60 items paid by four executors in two processes on PostgreSQL, their
/// leases taken from each other all along (each is made to end at once): every item is paid
/// exactly once, each batch's reservation is all spent, the counts are right.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn executors_whose_leases_are_taken_over_pay_each_item_once() {
    let kit = TestKit::start(StoreKind::Postgres, crate::races::roomy_budget()).await;
    let second = kit.another_process().await;
    let api = kit.integration_token().await;
    let (lagos, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "bola.ade@lagosfresh.ng")
        .await;
    kit.credit(&api, "1000000014", "100000.00").await;
    let mut ids = Vec::new();
    for n in 0..3 {
        let items = (0..60)
            .map(|_| {
                item(
                    &lagos.main_account_number,
                    "090823",
                    "Lagos Fresh Produce Ltd",
                    "100",
                )
            })
            .collect();
        let batch = validated(&kit, &format!("RACE-EXEC-{n}"), items).await;
        kit.send(authorise_call(&api, &batch, format!("exec-{n}")))
            .await
            .expect(ResponseCode::Success);
        ids.push(batch["bulk_transfer_id"].as_str().unwrap().to_owned());
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let thief = {
        let (kit_sql, stop) = (kit.store.postgres_pool().unwrap().clone(), stop.clone());
        tokio::spawn(async move {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // Unprepared, as the kit's own SQL: through a transaction pooler (CI's PgBouncer
                // rerun) a prepared statement is not kept from one transaction to the next.
                sqlx::raw_sql(
                    "UPDATE bulk_transfers SET lease_until = created_at WHERE status = 'executing'",
                )
                .execute(&kit_sql)
                .await
                .unwrap();
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
        })
    };
    let banks = [
        kit.api.shared_bank(),
        kit.api.shared_bank(),
        second.api.shared_bank(),
        second.api.shared_bank(),
    ];
    let workers = banks.into_iter().enumerate().map(|(n, bank)| {
        tokio::spawn(async move {
            let owner = format!("executor-{n}");
            let mut idle = 0;
            while idle < 20 {
                if execute::work(&bank, &owner).await.unwrap() {
                    idle = 0;
                } else {
                    idle += 1;
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                }
            }
        })
    });
    for worker in futures_util::future::join_all(workers).await {
        worker.unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    thief.await.unwrap();
    for id in &ids {
        let done = get(&kit, id).await;
        assert_eq!(done["status"], "completed", "{done:#}");
        assert_eq!(done["counts"]["succeeded"], 60, "{done:#}");
        assert_eq!(done["totals"]["released"], "0.00");
    }
    let paid = kit
        .count(
            "SELECT COUNT(*) FROM transfers WHERE business_id = $1",
            &kit.business.business_id,
        )
        .await;
    assert_eq!(paid, 180);
    assert_eq!(balance(&kit, &lagos.main_account_number).await, "18000.00");
    assert_eq!(balance(&kit, "1000000014").await, "82000.00");
    kit.assert_ledger_balances().await;
}
