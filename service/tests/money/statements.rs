//! Account statements (issue 61): the balances at the ends of a period, its totals and each
//! line's running balance, read from the ledger's running balances, reconcile whatever
//! happened. [`assert_statements_reconcile`] checks them on an account's whole history, cut
//! into random periods and paged at random sizes: it runs after the random transfer workload
//! (`transfer_workload.rs`: payouts intra and over NIP, reversals, holds approved, rejected,
//! cancelled and expired, concurrent on PostgreSQL) and after the scenarios below.

use chrono::{Duration, FixedOffset, NaiveDate};
use generated_server::{Operation, ResponseCode};
use kobo::kernel::config::Environment;
use kobo::money::nip;
use kobo::on_both_stores;
use kobo::testkit::{StoreKind, TestKit, OWNER_PASSWORD};
use serde_json::{json, Value};

use crate::support::{approval_kit, otp, payout_body};

/// Kobo of an amount as the API writes it (`"1234.56"`).
fn kobo(amount: &Value) -> i64 {
    let text = amount
        .as_str()
        .unwrap_or_else(|| panic!("{amount} is no amount"));
    let (naira, kobo) = text.split_once('.').unwrap();
    assert_eq!(kobo.len(), 2, "{text}");
    naira.parse::<i64>().unwrap() * 100 + kobo.parse::<i64>().unwrap()
}

/// The bytes of a downloaded file (`FileContent`), checked against its `size_bytes`.
fn file(data: &Value) -> Vec<u8> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data["content_base64"].as_str().unwrap())
        .unwrap();
    assert_eq!(bytes.len() as u64, data["size_bytes"].as_u64().unwrap());
    bytes
}

/// The Lagos day of now on the kit's clock.
fn lagos_today(kit: &TestKit) -> NaiveDate {
    let lagos = FixedOffset::east_opt(3600).unwrap();
    kit.clock.now().with_timezone(&lagos).date_naive()
}

/// A statement of `account` for `[start, end]`, every page of it read at `limit` lines a page:
/// its first page's figures and every line. Each page repeats the period's figures.
pub async fn statement(
    kit: &TestKit,
    token: &str,
    account: &str,
    (start, end): (NaiveDate, NaiveDate),
    limit: u64,
) -> (Value, Vec<Value>) {
    let mut body = json!({"account_number": account, "start_date": start.to_string(),
        "end_date": end.to_string(), "limit": limit});
    let mut first: Option<Value> = None;
    let mut lines = Vec::new();
    loop {
        let reply = kit
            .op(Operation::GetAccountStatement, token, body.clone())
            .await;
        let data = reply.expect(ResponseCode::Success).clone();
        let page = data["lines"].as_array().unwrap().clone();
        assert!(page.len() as u64 <= limit);
        lines.extend(page);
        let mut figures = data.clone();
        figures["lines"] = json!([]);
        match &first {
            Some(first) => assert_eq!(first, &figures, "every page carries the same figures"),
            None => first = Some(figures),
        }
        let pagination = &reply.body["pagination"];
        if pagination["has_more"] != true {
            break;
        }
        body["cursor_created_at"] = pagination["next_cursor_created_at"].clone();
        body["cursor_id"] = pagination["next_cursor_id"].clone();
    }
    (first.unwrap(), lines)
}

/// A statement's figures reconcile: each line's running balance is the one before (the first:
/// the opening balance) moved by its amount, the last is the closing balance, and the totals
/// and counts are its lines'. Returns the opening and closing balances.
fn assert_reconciles(figures: &Value, lines: &[Value]) -> (i64, i64) {
    let opening = kobo(&figures["opening_balance"]);
    let closing = kobo(&figures["closing_balance"]);
    let (mut credited, mut debited, mut credits, mut debits) = (0, 0, 0, 0);
    let mut running = opening;
    let mut previous: Option<(String, String)> = None;
    for line in lines {
        let amount = kobo(&line["amount"]);
        if line["transaction_type"] == "credit" {
            running += amount;
            credited += amount;
            credits += 1;
        } else {
            running -= amount;
            debited += amount;
            debits += 1;
        }
        assert_eq!(kobo(&line["balance_after"]), running, "{line:#}");
        assert!(running >= 0, "{line:#}");
        let key = (
            line["created_at"].as_str().unwrap().to_owned(),
            line["id"].as_str().unwrap().to_owned(),
        );
        if let Some(previous) = &previous {
            let at = |text: &str| chrono::DateTime::parse_from_rfc3339(text).unwrap();
            assert!(
                (at(&previous.0), &previous.1) < (at(&key.0), &key.1),
                "oldest first: {previous:?} then {key:?}"
            );
        }
        previous = Some(key);
    }
    assert_eq!(running, closing, "{figures:#}");
    assert_eq!(kobo(&figures["total_credits"]), credited, "{figures:#}");
    assert_eq!(kobo(&figures["total_debits"]), debited, "{figures:#}");
    assert_eq!(figures["credit_count"], credits);
    assert_eq!(figures["debit_count"], debits);
    (opening, closing)
}

/// Every account of `accounts` (numbers, with their balances now), from `first_day` to today
/// cut into consecutive periods at random days, each read at a random page size: every
/// statement reconciles, each period opens at the balance the one before closed at, the
/// first opens at zero and the last closes at the account's balance. `seed` picks the cuts.
pub async fn assert_statements_reconcile(
    kit: &TestKit,
    token: &str,
    accounts: &[(String, i64)],
    first_day: NaiveDate,
    seed: u64,
) {
    let today = lagos_today(kit);
    let mut state = seed | 1;
    let mut next = move |below: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % below
    };
    for (account, balance) in accounts {
        let (whole, all_lines) = statement(kit, token, account, (first_day, today), 100).await;
        let (opening, closing) = assert_reconciles(&whole, &all_lines);
        assert_eq!(opening, 0, "{account} opens its history at zero");
        assert_eq!(closing, *balance, "{account} closes at its balance");
        let mut start = first_day;
        let mut carried = 0;
        let mut seen = 0;
        while start <= today {
            let days = (today - start).num_days() as u64;
            let end = start + Duration::days(next(days + 1) as i64);
            let limit = 1 + next(7);
            let (figures, lines) = statement(kit, token, account, (start, end), limit).await;
            let (opening, closing) = assert_reconciles(&figures, &lines);
            assert_eq!(
                opening, carried,
                "{account} {start}: opens where the last closed"
            );
            carried = closing;
            seen += lines.len();
            start = end + Duration::days(1);
        }
        assert_eq!(carried, *balance, "{account}");
        assert_eq!(
            seen,
            all_lines.len(),
            "{account}: the periods hold every line once"
        );
    }
}

/// Every way money moves on an account, on both stores: credits in, an intra-bank payout, an
/// inter-bank one settled and one reversed (its `REV-` credit), and holds rejected and
/// cancelled, each given back with its `REV-` credit of amount, fee and VAT; the account's
/// statement shows each and reconciles, over one period or many.
async fn a_statement_shows_every_movement_and_reconciles(kind: StoreKind) {
    let (kit, checker) = approval_kit(kind, "500000", "20000").await;
    let owner = kit.owner_token.clone();
    let main = kit.business.main_account_number.clone();
    let first_day = lagos_today(&kit);
    let (other, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "owner@lagosfresh.ng")
        .await;
    // Under the policy's minimum: executed at once. Emeka's bank credits, Bisi's fails.
    let pays = [
        payout_body(&other.main_account_number, &other.name, "090823", "1500"),
        payout_body("0123456788", "Emeka Nwosu", "000013", "2500"),
        payout_body("0690000036", "Bisi Alade", "000013", "3000"),
    ];
    for body in pays {
        let mut body = body;
        body["source_account_number"] = json!(main);
        body["otp"] = json!(otp(&kit, &owner).await);
        kit.op(Operation::FundsTransfer, &owner, body)
            .await
            .expect(ResponseCode::Success);
    }
    // Two held (over the minimum): one rejected by the checker, one cancelled by its maker.
    let mut held = Vec::new();
    for amount in ["25000", "30000"] {
        let mut body = payout_body("0123456788", "Emeka Nwosu", "000013", amount);
        body["source_account_number"] = json!(main);
        body["otp"] = json!(otp(&kit, &owner).await);
        let transfer = kit
            .op(Operation::FundsTransfer, &owner, body)
            .await
            .expect(ResponseCode::Success)
            .clone();
        assert_eq!(transfer["transfer_status"], "pending_approval");
        held.push(transfer);
    }
    kit.op(
        Operation::RejectTransfer,
        &checker,
        json!({"reference_number": held[0]["reference_number"], "reason": "Not this month"}),
    )
    .await
    .expect(ResponseCode::Success);
    let cancelled = kit
        .op(
            Operation::CancelTransfer,
            &owner,
            json!({"reference_number": held[1]["reference_number"]}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    let rev = format!(
        "REV-{}",
        &held[1]["reference_number"].as_str().unwrap()[4..]
    );
    assert_eq!(cancelled["reversal_reference_number"], rev.as_str());
    // The NIP worker settles Emeka's and reverses Bisi's.
    for _ in 0..3 {
        kit.clock.advance(Duration::seconds(301));
        nip::process_due(
            &kit.store,
            &**kit.api.provider(),
            &kit.clock,
            Environment::Sandbox,
            100,
        )
        .await
        .unwrap();
    }
    // The next day (a fresh token: the last has expired), one more payout.
    kit.clock.advance(Duration::days(1));
    let owner = kit.login(&kit.business.owner_email, OWNER_PASSWORD).await;
    let mut body = payout_body(&other.main_account_number, &other.name, "090823", "700.25");
    body["source_account_number"] = json!(main);
    body["otp"] = json!(otp(&kit, &owner).await);
    kit.op(Operation::FundsTransfer, &owner, body)
        .await
        .expect(ResponseCode::Success);

    let balance = kobo(&json!(crate::support::balance(&kit, &main).await));
    let (figures, lines) =
        statement(&kit, &owner, &main, (first_day, lagos_today(&kit)), 100).await;
    assert_reconciles(&figures, &lines);
    assert_eq!(kobo(&figures["closing_balance"]), balance);
    let line = |reference: &str| {
        lines
            .iter()
            .find(|line| line["reference_number"] == reference)
            .unwrap_or_else(|| panic!("no line {reference}: {lines:#?}"))
            .clone()
    };
    // Each hold's debit failed and its credit gave back amount, fee and VAT.
    for transfer in &held {
        let reference = transfer["reference_number"].as_str().unwrap();
        let debit = line(reference);
        assert_eq!(debit["status"], "failed");
        let credit = line(&format!("REV-{}", &reference[4..]));
        assert_eq!(credit["transaction_type"], "credit");
        assert_eq!(credit["transaction_category"], "reversal");
        assert_eq!(
            kobo(&credit["amount"]),
            kobo(&transfer["amount"]) + kobo(&transfer["fee"]) + kobo(&transfer["vat"])
        );
    }
    assert!(
        lines.iter().any(|line| line["status"] == "reversed"),
        "{lines:#?}"
    );
    assert_statements_reconcile(&kit, &owner, &[(main.clone(), balance)], first_day, 7).await;

    // The same period as files (`.ci/statements` reads each back with outside parsers): the
    // CSV has a row per line with its running balance; each file is what its type says.
    let period = json!({"account_number": main, "start_date": first_day.to_string(),
        "end_date": lagos_today(&kit).to_string()});
    let download = |format: &str| {
        let mut body = period.clone();
        body["format"] = json!(format);
        kit.op(Operation::DownloadAccountStatement, &owner, body)
    };
    let csv = file(download("csv").await.expect(ResponseCode::Success));
    let rows: Vec<&str> = std::str::from_utf8(&csv).unwrap().split("\r\n").collect();
    assert_eq!(
        rows.len(),
        lines.len() + 2,
        "a header, the lines, the last CRLF"
    );
    for (row, line) in rows[1..].iter().zip(&lines) {
        let reference = line["reference_number"].as_str().unwrap();
        assert!(row.contains(reference), "{row}");
        assert!(
            row.contains(line["balance_after"].as_str().unwrap()),
            "{row} {line}"
        );
    }
    for (format, starts) in [("pdf", "%PDF-1.4"), ("ofx", "<?xml"), ("camt053", "<?xml")] {
        let bytes = file(download(format).await.expect(ResponseCode::Success));
        assert!(bytes.starts_with(starts.as_bytes()), "{format}");
    }
    // The account's transactions as a list's CSV: the same rows, oldest first, each led by its
    // account's number.
    let listed = kit
        .op(
            Operation::DownloadTransactionsWeb,
            &owner,
            json!({"filters": {"account_number": main}}),
        )
        .await;
    let listed = file(listed.expect(ResponseCode::Success));
    let listed: Vec<&str> = std::str::from_utf8(&listed)
        .unwrap()
        .split("\r\n")
        .collect();
    assert!(
        listed[0].starts_with("account_number,date_lagos,"),
        "{}",
        listed[0]
    );
    assert_eq!(listed.len(), lines.len() + 2);
    for (row, line) in listed[1..].iter().zip(&lines) {
        assert!(row.starts_with(&format!("{main},")), "{row}");
        assert!(
            row.contains(line["reference_number"].as_str().unwrap()),
            "{row}"
        );
    }
    let receipt = kit
        .op(
            Operation::DownloadTransferReceipt,
            &owner,
            json!({"reference_number": held[1]["reference_number"]}),
        )
        .await;
    let receipt = file(receipt.expect(ResponseCode::Success));
    let text = String::from_utf8_lossy(&receipt);
    assert!(text.starts_with("%PDF-1.4"));
    assert!(text.contains(held[1]["reference_number"].as_str().unwrap()));

    // What a period asks for is checked.
    let today = lagos_today(&kit).to_string();
    for (body, field) in [
        (
            json!({"account_number": main, "start_date": today, "end_date": "2026-01-01"}),
            "start_date",
        ),
        (
            json!({"account_number": main, "start_date": "2024-01-01", "end_date": "2025-01-01"}),
            "end_date",
        ),
        (
            json!({"account_number": main, "start_date": today, "end_date": today, "limit": 101}),
            "limit",
        ),
    ] {
        let reply = kit.op(Operation::GetAccountStatement, &owner, body).await;
        reply.expect(ResponseCode::InvalidRequest);
        let message = reply.body["message"].as_str().unwrap();
        assert!(message.contains(field), "{message}");
    }
    let elsewhere = json!({"account_number": other.main_account_number, "start_date": today,
        "end_date": today});
    kit.op(Operation::GetAccountStatement, &owner, elsewhere)
        .await
        .expect(ResponseCode::AccountNotFound);
    kit.assert_ledger_balances().await;
}

on_both_stores!(kind: a_statement_shows_every_movement_and_reconciles);
