//! Exports (issue 61): files written in the background, a part at a time. Each category is
//! written whole and equals what a download of the same period holds; a writer stopped at any
//! moment (its task aborted, as a process killed) leaves the export to the next one, which
//! resumes after the last committed part, so the file is the same with no part missing or
//! twice; two processes' writers share the waiting exports and write each once; an export
//! taken up too many times fails with `export.failed`, a ready one expires; and every refusal
//! of the API. On both stores (`kobo::on_both_stores!`).

use std::time::Duration as StdDuration;

use base64::Engine;
use chrono::{Duration, FixedOffset, NaiveDate};
use generated_server::{Operation, ResponseCode};
use kobo::datastore::exports as stored;
use kobo::money::exports::writer::{self, Sizes};
use kobo::on_both_stores;
use kobo::testkit::{StoreKind, TestKit};
use serde_json::{json, Value};

use crate::races::roomy_budget;
use crate::support::{otp, payout_body};

/// Small reads and parts: a short history makes many parts.
const SMALL: Sizes = Sizes {
    rows_per_read: 4,
    part_bytes: 600,
};

fn lagos_today(kit: &TestKit) -> NaiveDate {
    kit.clock
        .now()
        .with_timezone(&FixedOffset::east_opt(3600).unwrap())
        .date_naive()
}

/// A business with a history on its main account: 24 credits and 4 payouts to another
/// business (debits on the main account, credits on the other's).
async fn history(kind: StoreKind) -> (TestKit, String) {
    let mut config = roomy_budget();
    config.otp.issue_limit = 1_000;
    let kit = TestKit::start(kind, config).await;
    let token = kit.integration_token().await;
    let main = kit.business.main_account_number.clone();
    for n in 1..=24 {
        kit.credit(&token, &main, &format!("{n}000.{:02}", n * 3 % 100))
            .await;
    }
    let (other, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "owner@lagosfresh.ng")
        .await;
    for amount in ["1500", "2750.50", "300", "99.99"] {
        let mut body = payout_body(&other.main_account_number, &other.name, "090823", amount);
        body["source_account_number"] = json!(main);
        body["otp"] = json!(otp(&kit, &kit.owner_token).await);
        kit.op(Operation::FundsTransfer, &kit.owner_token, body)
            .await
            .expect(ResponseCode::Success);
    }
    (kit, main)
}

fn decode(data: &Value) -> Vec<u8> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data["content_base64"].as_str().unwrap())
        .unwrap();
    assert_eq!(bytes.len() as u64, data["size_bytes"].as_u64().unwrap());
    bytes
}

async fn create(kit: &TestKit, token: &str, body: Value) -> Value {
    kit.op(Operation::CreateExport, token, body)
        .await
        .expect(ResponseCode::Success)
        .clone()
}

async fn get(kit: &TestKit, id: &Value) -> Value {
    kit.op(
        Operation::GetExport,
        &kit.owner_token,
        json!({"export_id": id}),
    )
    .await
    .expect(ResponseCode::Success)
    .clone()
}

/// Every part of a ready export, joined, through `download_export`.
async fn downloaded(kit: &TestKit, export: &Value) -> Vec<u8> {
    assert_eq!(export["status"], "ready", "{export:#}");
    let parts = export["parts"].as_u64().unwrap();
    let mut file = Vec::new();
    for part in 1..=parts {
        let reply = kit
            .op(
                Operation::DownloadExport,
                &kit.owner_token,
                json!({"export_id": export["export_id"], "part": part}),
            )
            .await;
        let data = reply.expect(ResponseCode::Success);
        assert_eq!(data["part"], part);
        assert_eq!(data["parts"], parts);
        assert_eq!(data["file_name"], export["file_name"]);
        file.extend(decode(data));
    }
    assert_eq!(file.len() as u64, export["size_bytes"].as_u64().unwrap());
    file
}

/// The synchronous download of the same statement, in `format`.
async fn statement_file(
    kit: &TestKit,
    main: &str,
    days: (NaiveDate, NaiveDate),
    format: &str,
) -> Vec<u8> {
    let reply = kit
        .op(
            Operation::DownloadAccountStatement,
            &kit.owner_token,
            json!({"account_number": main, "start_date": days.0.to_string(),
                "end_date": days.1.to_string(), "format": format}),
        )
        .await;
    decode(reply.expect(ResponseCode::Success))
}

/// The lines of an XML file that do not name the moment it was written.
fn without_times(file: &[u8]) -> Vec<String> {
    String::from_utf8(file.to_vec())
        .unwrap()
        .lines()
        .filter(|line| {
            !["DTSERVER", "CreDtTm", "MsgId"]
                .iter()
                .any(|tag| line.contains(tag))
        })
        .map(str::to_owned)
        .collect()
}

/// Writes every waiting export with `sizes`, as one worker.
async fn write_all(kit: &TestKit, owner: &str, sizes: Sizes) {
    while writer::work_with(kit.api.bank(), owner, sizes)
        .await
        .unwrap()
    {}
}

/// Each category, written in many parts, is what a download of the period holds; the export's
/// figures, events and refusals are as documented.
async fn exports_are_the_downloads_written_in_parts(kind: StoreKind) {
    let (kit, main) = history(kind).await;
    let owner = kit.owner_token.clone();
    let today = lagos_today(&kit);
    let days = (today - Duration::days(1), today);
    let period = |category: &str| {
        json!({"category": category, "account_number": main,
            "start_date": days.0.to_string(), "end_date": days.1.to_string()})
    };
    // Asked for after the history, so it holds all of it.
    kit.clock.advance(Duration::seconds(1));
    let csv = create(&kit, &owner, period("account_statement_csv")).await;
    assert_eq!(csv["status"], "pending");
    assert_eq!(csv["parts"], 0);
    let ofx = create(&kit, &owner, period("account_statement_ofx")).await;
    let camt = create(&kit, &owner, period("account_statement_camt053")).await;
    // A fourth while three are unfinished: 48.
    let busy = kit
        .op(Operation::CreateExport, &owner, period("transaction_csv"))
        .await;
    busy.expect(ResponseCode::InvalidState);
    // Not ready yet: 48.
    kit.op(
        Operation::DownloadExport,
        &owner,
        json!({"export_id": csv["export_id"]}),
    )
    .await
    .expect(ResponseCode::InvalidState);

    write_all(&kit, "worker", SMALL).await;
    let csv = get(&kit, &csv["export_id"]).await;
    assert!(csv["parts"].as_u64().unwrap() > 3, "{csv:#}");
    assert_eq!(csv["row_count"], 28);
    assert!(csv["expires_at"].is_string());
    let file = downloaded(&kit, &csv).await;
    assert_eq!(file, statement_file(&kit, &main, days, "csv").await);
    for (export, format) in [(&ofx, "ofx"), (&camt, "camt053")] {
        let export = get(&kit, &export["export_id"]).await;
        let file = downloaded(&kit, &export).await;
        assert_eq!(
            without_times(&file),
            without_times(&statement_file(&kit, &main, days, format).await),
            "{format}"
        );
    }

    // The business's transactions: every account's, each row led by its account's number.
    let token = kit.integration_token().await;
    let all = kit
        .op(
            Operation::CreateExportApi,
            &token,
            json!({"category": "transaction_csv", "start_date": days.0.to_string(),
                "end_date": days.1.to_string()}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(all["account_number"], Value::Null);
    write_all(&kit, "worker", SMALL).await;
    let all = get(&kit, &all["export_id"]).await;
    let text = String::from_utf8(downloaded(&kit, &all).await).unwrap();
    let rows: Vec<&str> = text.split("\r\n").filter(|row| !row.is_empty()).collect();
    assert!(rows[0].starts_with("account_number,date_lagos,"));
    let statement = String::from_utf8(statement_file(&kit, &main, days, "csv").await).unwrap();
    let on_main: Vec<String> = rows[1..]
        .iter()
        .filter_map(|row| row.strip_prefix(&format!("{main},")).map(str::to_owned))
        .collect();
    let statement_rows: Vec<&str> = statement
        .split("\r\n")
        .skip(1)
        .filter(|r| !r.is_empty())
        .collect();
    assert_eq!(on_main, statement_rows, "the main account's rows, in order");

    // Listed newest first, filtered by status; each ready one announced.
    let listed = kit
        .op(
            Operation::FetchExports,
            &owner,
            json!({"status": "ready", "limit": 2}),
        )
        .await;
    let data = listed
        .expect(ResponseCode::Success)
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(data.len(), 2);
    assert_eq!(data[0]["export_id"], all["export_id"]);
    assert_eq!(listed.body["pagination"]["has_more"], true);
    let events = kit
        .op(
            Operation::FetchWebhookEvents,
            &owner,
            json!({"filters": {"event_type": "export.ready"}, "limit": 10}),
        )
        .await;
    let events = events
        .expect(ResponseCode::Success)
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(events.len(), 4);
    assert_eq!(events[0]["payload"]["data"]["export_id"], all["export_id"]);
    assert_eq!(events[0]["payload"]["data"]["status"], "ready");

    // Refusals.
    let part_past =
        json!({"export_id": csv["export_id"], "part": csv["parts"].as_u64().unwrap() + 1});
    kit.op(Operation::DownloadExport, &owner, part_past)
        .await
        .expect(ResponseCode::InvalidRequest);
    let unknown = json!({"export_id": uuid::Uuid::new_v4()});
    kit.op(Operation::GetExport, &owner, unknown)
        .await
        .expect(ResponseCode::NotFound);
    let (other, other_owner) = kit
        .other_business("Ikeja Motors Ltd", "owner@ikejamotors.ng")
        .await;
    kit.op(
        Operation::GetExport,
        &other_owner,
        json!({"export_id": csv["export_id"]}),
    )
    .await
    .expect(ResponseCode::NotFound);
    let mut elsewhere = period("account_statement_csv");
    elsewhere["account_number"] = json!(other.main_account_number);
    kit.op(Operation::CreateExport, &owner, elsewhere)
        .await
        .expect(ResponseCode::AccountNotFound);
    let mut no_account = period("account_statement_ofx");
    no_account.as_object_mut().unwrap().remove("account_number");
    kit.op(Operation::CreateExport, &owner, no_account)
        .await
        .expect(ResponseCode::InvalidRequest);
    let long = json!({"category": "transaction_csv", "start_date": "2024-01-01",
        "end_date": "2025-01-01"});
    kit.op(Operation::CreateExport, &owner, long)
        .await
        .expect(ResponseCode::InvalidRequest);

    // Kept for 7 days, then expired: its parts deleted.
    kit.clock.advance(Duration::days(8));
    assert!(writer::expire_due(kit.api.bank()).await.unwrap() >= 4);
    let owner = kit
        .login(&kit.business.owner_email, kobo::testkit::OWNER_PASSWORD)
        .await;
    let expired = kit
        .op(
            Operation::GetExport,
            &owner,
            json!({"export_id": csv["export_id"]}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(expired["status"], "expired");
    kit.op(
        Operation::DownloadExport,
        &owner,
        json!({"export_id": csv["export_id"]}),
    )
    .await
    .expect(ResponseCode::InvalidState);
    assert_eq!(
        kit.count(
            "SELECT count(*) FROM export_parts WHERE export_id = $1",
            csv["export_id"].as_str().unwrap()
        )
        .await,
        0
    );
    kit.assert_ledger_balances().await;
}

/// A writer stopped at any moment (its task aborted mid-part, as a killed process) leaves the
/// export `running` under its lease; once the lease ends the next writer resumes after the
/// last committed part, and the file is the one an uninterrupted writer writes. An export
/// taken up more than three times fails, with `export.failed`.
async fn a_stopped_writer_is_resumed_and_the_file_is_whole(kind: StoreKind) {
    let (kit, main) = history(kind).await;
    let owner = kit.owner_token.clone();
    let today = lagos_today(&kit);
    let period = |category: &str| {
        json!({"category": category, "account_number": main,
            "start_date": today.to_string(), "end_date": today.to_string()})
    };
    // A statement (resumed through its check) and the account's transactions (resumed after
    // the cursor alone).
    for category in ["account_statement_camt053", "transaction_csv"] {
        let body = period(category);
        kit.clock.advance(Duration::seconds(1));
        let whole = create(&kit, &owner, body.clone()).await;
        write_all(&kit, "steady", SMALL).await;
        let whole = get(&kit, &whole["export_id"]).await;
        let expected = downloaded(&kit, &whole).await;

        let export = create(&kit, &owner, body.clone()).await;
        let id = export["export_id"].as_str().unwrap().to_owned();
        // Stopped twice, each after it wrote at least one more part.
        for stop in 1..=2 {
            let before = kit
                .count("SELECT parts FROM exports WHERE id = $1", &id)
                .await;
            let bank = kit.api.shared_bank();
            let task = tokio::spawn(async move {
                writer::work_with(&bank, &format!("doomed-{stop}"), SMALL).await
            });
            while kit
                .count("SELECT parts FROM exports WHERE id = $1", &id)
                .await
                <= before
                && !task.is_finished()
            {
                tokio::time::sleep(StdDuration::from_millis(1)).await;
            }
            task.abort();
            let _ = task.await;
            // As a killed process's: its transaction ended, its locks gone.
            kit.until_aborted_transactions_end().await;
            let now = get(&kit, &json!(id)).await;
            assert_eq!(now["status"], "running", "{now:#}");
            // Under its lease no other writer takes it up.
            let eager = writer::work_with(kit.api.bank(), "eager", SMALL)
                .await
                .unwrap();
            assert!(!eager, "taken up under another's lease");
            kit.clock.advance(Duration::seconds(61));
        }
        write_all(&kit, "heir", SMALL).await;
        let resumed = get(&kit, &json!(id)).await;
        assert_eq!(resumed["status"], "ready", "{resumed:#}");
        assert_eq!(resumed["row_count"], whole["row_count"]);
        assert_eq!(
            without_times(&downloaded(&kit, &resumed).await),
            without_times(&expected)
        );
        assert_eq!(
            kit.count(
                "SELECT count(*) FROM export_parts WHERE export_id = $1",
                &id
            )
            .await,
            resumed["parts"].as_i64().unwrap()
        );
    }
    let body = period("account_statement_camt053");

    // Taken up four times without finishing: failed, its parts deleted, announced.
    let doomed = create(&kit, &owner, body).await;
    let doomed_id = doomed["export_id"].as_str().unwrap().to_owned();
    for attempt in 0..3 {
        let mut tx = kit.store.begin().await.unwrap();
        let now = kit.clock.now();
        let claimed = stored::claim(
            &mut tx,
            &format!("lost-{attempt}"),
            now,
            now + Duration::seconds(60),
        )
        .await
        .unwrap()
        .expect("the export waits");
        tx.commit().await.unwrap();
        assert_eq!(claimed.id.to_string(), doomed_id);
        kit.clock.advance(Duration::seconds(61));
    }
    write_all(&kit, "last", SMALL).await;
    let failed = get(&kit, &json!(doomed_id)).await;
    assert_eq!(failed["status"], "failed", "{failed:#}");
    assert!(failed["failure_reason"]
        .as_str()
        .unwrap()
        .contains("interrupted 3 times"));
    let events = kit
        .op(
            Operation::FetchWebhookEvents,
            &owner,
            json!({"filters": {"event_type": "export.failed"}}),
        )
        .await;
    let events = events
        .expect(ResponseCode::Success)
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(events.len(), 1);
    assert_eq!(
        events[0]["payload"]["data"]["export_id"],
        doomed_id.as_str()
    );
    kit.assert_ledger_balances().await;
}

/// Two processes' writers take up the same waiting exports at once: each export is written
/// by one of them, whole, its parts numbered 1 to `parts` once each.
async fn two_writers_share_the_exports(kind: StoreKind) {
    let (kit, main) = history(kind).await;
    let owner = kit.owner_token.clone();
    let today = lagos_today(&kit);
    kit.clock.advance(Duration::seconds(1));
    let mut ids = Vec::new();
    for category in [
        "account_statement_csv",
        "account_statement_ofx",
        "transaction_csv",
    ] {
        let body = json!({"category": category, "account_number": main,
            "start_date": today.to_string(), "end_date": today.to_string()});
        ids.push(create(&kit, &owner, body).await["export_id"].clone());
    }
    let second = kit.another_process().await;
    let (a, b) = (kit.api.shared_bank(), second.api.shared_bank());
    let one =
        tokio::spawn(async move { while writer::work_with(&a, "one", SMALL).await.unwrap() {} });
    let two =
        tokio::spawn(async move { while writer::work_with(&b, "two", SMALL).await.unwrap() {} });
    one.await.unwrap();
    two.await.unwrap();
    for id in ids {
        let export = get(&kit, &id).await;
        assert_eq!(export["row_count"], 28, "{export:#}");
        let file = downloaded(&kit, &export).await;
        assert!(!file.is_empty());
        assert_eq!(
            kit.count(
                "SELECT count(*) FROM export_parts WHERE export_id = $1",
                id.as_str().unwrap()
            )
            .await,
            export["parts"].as_i64().unwrap()
        );
    }
}

on_both_stores!(kind: exports_are_the_downloads_written_in_parts, a_stopped_writer_is_resumed_and_the_file_is_whole, two_writers_share_the_exports);
