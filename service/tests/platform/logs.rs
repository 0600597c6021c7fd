//! Activity logs (integration calls) and audit logs (Dashboard actions).

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use generated_server::{Operation, ResponseCode};
use kobo::on_both_stores;
use kobo::platform::permissions::VIEWER_ROLE_ID;
use kobo::testkit::{Call, StoreKind, TestKit, OWNER_PASSWORD};
use serde_json::{json, Value};

use crate::child::Server;

const OWNER: &str = "adaeze.okafor@adaezefoods.ng";

async fn activity(kit: &TestKit, body: Value) -> (Vec<Value>, Value) {
    let reply = kit
        .op(Operation::FetchActivityLogs, &kit.owner_token, body)
        .await;
    let data = reply
        .expect(ResponseCode::Success)
        .as_array()
        .unwrap()
        .clone();
    (data, reply.body["pagination"].clone())
}

async fn audit(kit: &TestKit, body: Value) -> (Vec<Value>, Value) {
    let reply = kit
        .op(Operation::FetchAuditLogs, &kit.owner_token, body)
        .await;
    let data = reply
        .expect(ResponseCode::Success)
        .as_array()
        .unwrap()
        .clone();
    (data, reply.body["pagination"].clone())
}

async fn every_integration_call_is_an_activity_entry(kit: TestKit) {
    let token = kit.integration_token().await;
    let from = IpAddr::V4(Ipv4Addr::new(102, 89, 34, 99));
    // fetch_banks succeeds; a schema violation is a 400.
    let banks = kit
        .send(Call::new(Operation::FetchBanks.path(), Some(&token), json!({})).from_ip(from))
        .await;
    let bad = kit
        .send(
            Call::new(
                Operation::NameEnquiry.path(),
                Some(&token),
                json!({"account_number": "12"}),
            )
            .header("x-request-id", "req-bad-1"),
        )
        .await;
    assert_eq!(bad.status, 400);
    // Dashboard calls and unauthenticated integration calls are not activity.
    kit.op(Operation::FetchRoles, &kit.owner_token, json!({}))
        .await
        .expect(ResponseCode::Success);
    kit.send(Call::new(
        Operation::FetchBanks.path(),
        Some("garbage"),
        json!({}),
    ))
    .await
    .expect(ResponseCode::Unauthenticated);

    let (entries, pagination) = activity(&kit, json!({})).await;
    // generate_token (public: it logs itself), fetch_banks, name_enquiry.
    assert_eq!(entries.len(), 3, "{entries:#?}");
    assert_eq!(pagination["has_more"], false);
    assert_eq!(pagination["page_size"], 100);
    let newest = &entries[0];
    assert_eq!(newest["endpoint"], Operation::NameEnquiry.path());
    assert_eq!(newest["method"], "POST");
    assert_eq!(newest["response_code"], 400);
    assert_eq!(newest["status"], "error");
    assert_eq!(newest["message"], bad.body["message"]);
    assert_eq!(newest["request_id"], "req-bad-1");
    let middle = &entries[1];
    assert_eq!(middle["endpoint"], Operation::FetchBanks.path());
    assert_eq!(middle["response_code"], banks.status.as_u16());
    assert_eq!(middle["ip_address"], "102.89.34.99");
    assert_eq!(middle["request_id"], banks.header("x-request-id").unwrap());
    let oldest = &entries[2];
    assert_eq!(oldest["endpoint"], Operation::GenerateToken.path());
    assert_eq!(oldest["response_code"], 200);
    assert_eq!(oldest["status"], "success");
    assert_eq!(
        oldest["message"],
        Operation::GenerateToken.success_message()
    );

    // Filters and search.
    let only = |body: Value| {
        let kit = &kit;
        async move { activity(kit, body).await.0.len() }
    };
    assert_eq!(only(json!({"filters": {"response_code": 400}})).await, 1);
    // generate_token and fetch_banks succeed.
    assert_eq!(only(json!({"filters": {"status": "success"}})).await, 2);
    assert_eq!(only(json!({"filters": {"method": "GET"}})).await, 0);
    assert_eq!(
        only(json!({"filters": {"endpoint": Operation::FetchBanks.path()}})).await,
        1
    );
    assert_eq!(only(json!({"search": "NAME_ENQUIRY"})).await, 1);
    assert_eq!(only(json!({"search": "102.89.34.99"})).await, 1);
    assert_eq!(only(json!({"search": "%"})).await, 0);
    let today = chrono::Utc::now().date_naive();
    let yesterday = today.pred_opt().unwrap();
    assert_eq!(
        only(json!({"start_date": today, "end_date": today})).await,
        3
    );
    assert_eq!(only(json!({"end_date": yesterday})).await, 0);
    let inverted = kit
        .op(
            Operation::FetchActivityLogs,
            &kit.owner_token,
            json!({"start_date": today, "end_date": yesterday}),
        )
        .await;
    inverted.expect(ResponseCode::InvalidRequest);
}

/// The activity log commits entries in groups; every call that is not a listing, however many
/// arrive at once and on however many processes, still finds its own entry, once, as soon as
/// it is answered.
async fn simultaneous_integration_calls_are_each_logged_once(kit: TestKit) {
    let token = kit.integration_token().await;
    let second = kit.another_process().await;
    let ids: Vec<String> = (0..60).map(|n| format!("req-group-{n:02}")).collect();
    let calls = ids
        .iter()
        .map(|id| {
            Call::new(Operation::FetchBanks.path(), Some(&token), json!({}))
                .header("x-request-id", id.clone())
        })
        .collect();
    let replies = kit.race(&[second], calls).await;
    for reply in &replies {
        reply.expect(ResponseCode::Success);
    }
    let (entries, pagination) = activity(
        &kit,
        json!({"filters": {"endpoint": Operation::FetchBanks.path()}}),
    )
    .await;
    assert_eq!(pagination["has_more"], false);
    let logged: Vec<&str> = entries
        .iter()
        .map(|entry| entry["request_id"].as_str().unwrap())
        .collect();
    assert_eq!(logged.len(), ids.len(), "{logged:?}");
    let distinct: HashSet<&str> = logged.iter().copied().collect();
    let expected: HashSet<&str> = ids.iter().map(String::as_str).collect();
    assert_eq!(distinct, expected);
}

/// A payout through integration credentials writes its activity entry in its own
/// transaction: the entry commits with the transfer (its time is the transfer's; on
/// PostgreSQL the transfer's row carries it), and the answer waits for no second commit.
/// Every call still has one entry: the payout, its replay (a call of its own, answered from
/// the stored answer) and a refused payout (logged as answered).
async fn a_payouts_activity_entry_commits_with_it(kit: TestKit) {
    let token = kit.integration_token().await;
    kit.credit(&token, "1000000014", "100").await;
    let to = paid_business(&kit).await;
    let payout = |amount: &str, key: &str, request_id: &str| {
        let mut body = intra_payout(&to, amount);
        body["narration"] = json!("activity in the batch");
        Call::new(Operation::FundsTransferApi.path(), Some(&token), body)
            .header("idempotency-key", key.to_owned())
            .header("x-request-id", request_id.to_owned())
    };
    let from = IpAddr::V4(Ipv4Addr::new(102, 89, 34, 51));
    let paid = kit
        .send(payout("30", "act-1", "req-payout-1").from_ip(from))
        .await;
    let transfer_id = paid.expect(ResponseCode::Success)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let replay = kit.send(payout("30", "act-1", "req-payout-2")).await;
    replay.expect(ResponseCode::Success);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    let refused = kit.send(payout("1000", "act-2", "req-payout-3")).await;
    refused.expect(ResponseCode::ProviderError);

    let (entries, _) = activity(
        &kit,
        json!({"filters": {"endpoint": Operation::FundsTransferApi.path()}}),
    )
    .await;
    let of = |request_id: &str| -> Vec<&Value> {
        entries
            .iter()
            .filter(|entry| entry["request_id"] == request_id)
            .collect()
    };
    for (request_id, status, code) in [
        ("req-payout-1", "success", 200),
        ("req-payout-2", "success", 200),
        ("req-payout-3", "error", refused.status.as_u16()),
    ] {
        let found = of(request_id);
        assert_eq!(found.len(), 1, "{request_id}: {entries:#?}");
        assert_eq!(found[0]["status"], status, "{request_id}");
        assert_eq!(found[0]["response_code"], code, "{request_id}");
    }
    assert_eq!(entries.len(), 3, "{entries:#?}");
    let first = of("req-payout-1")[0];
    assert_eq!(
        first["message"],
        Operation::FundsTransferApi.success_message()
    );
    assert_eq!(first["ip_address"], "102.89.34.51");

    // Written with the transfer: at its time, by its transaction (on PostgreSQL, by its row
    // itself: the transfer carries its payout's activity entry, migration 0026).
    let (entry, transfer) = match kit.kind {
        StoreKind::Postgres => (
            "SELECT COUNT(*)::text FROM activity_logs WHERE request_id = $1",
            "SELECT CASE call_request_id WHEN 'req-payout-1' THEN '0' END FROM transfers \
             WHERE id = $1::uuid",
        ),
        // SQLite has no transaction ids: the time must do.
        StoreKind::Sqlite => (
            "SELECT created_at FROM activity_logs WHERE request_id = $1",
            "SELECT created_at FROM transfers WHERE id = $1",
        ),
    };
    assert_eq!(
        kit.sql(entry).bind("req-payout-1").text().await,
        kit.sql(transfer).bind(transfer_id.as_str()).text().await
    );
}

/// On PostgreSQL a payout's audit entry, and an integration payout's activity entry, are its
/// transfer's row (migration 0026): no row of `audit_logs` or `activity_logs` is written for
/// them, and the logs list them as they listed the rows (as SQLite, which writes the rows,
/// lists them), in order among the others, each entry once whatever the page size.
async fn a_payouts_log_entries_are_its_transfer(kit: TestKit) {
    let token = kit.integration_token().await;
    kit.credit(&token, "1000000014", "1000").await;
    let body = intra_payout(&paid_business(&kit).await, "10");
    let rows = "SELECT (SELECT COUNT(*) FROM audit_logs) * 1000 + \
        (SELECT COUNT(*) FROM activity_logs WHERE endpoint = $1)";
    let path = Operation::FundsTransferApi.path();
    let before = kit.sql(rows).bind(path).int().await;
    let mut made = Vec::new();
    for n in 0..3 {
        let call = Call::new(path, Some(&token), body.clone())
            .header("idempotency-key", format!("carried-{n}"))
            .header("x-request-id", format!("req-carried-{n}"));
        let transfer = kit.send(call).await;
        made.push(transfer.expect(ResponseCode::Success)["id"].clone());
        // A Dashboard action between them: an audit row.
        kit.op(
            Operation::CreateRole,
            &kit.owner_token,
            json!({"name": format!("Clerk {n}"), "permission_codes": ["transaction.view"]}),
        )
        .await
        .expect(ResponseCode::Success);
    }
    // The owner's own payout, with an OTP: audited as the owner, no activity.
    let mut dashboard = body.clone();
    dashboard["otp"] = json!(otp_of(&kit).await);
    let by_owner = kit
        .op(Operation::FundsTransfer, &kit.owner_token, dashboard)
        .await
        .expect(ResponseCode::Success)["id"]
        .clone();
    // Three roles audited; on SQLite each payout's entries are rows too.
    let rows_of_payouts = match kit.kind {
        StoreKind::Postgres => 0,
        StoreKind::Sqlite => 4 * 1000 + 3,
    };
    assert_eq!(
        kit.sql(rows).bind(path).int().await,
        before + 3 * 1000 + rows_of_payouts,
    );

    let (audited, _) = audit(&kit, json!({"filters": {"action": "funds_transfer"}})).await;
    assert_eq!(audited.len(), 4, "{audited:#?}");
    let of_owner = &audited[0];
    assert_eq!(of_owner["target_id"], by_owner);
    assert_eq!(of_owner["target_type"], "transfer");
    assert_eq!(
        of_owner["user"],
        "Adaeze Okafor <adaeze.okafor@adaezefoods.ng>"
    );
    assert_eq!(of_owner["user_id"], kit.business.owner_id.as_str());
    assert_eq!(of_owner["response_code"], 200);
    for (entry, id) in audited[1..].iter().zip(made.iter().rev()) {
        assert_eq!(&entry["target_id"], id);
        assert_eq!(entry["user"], "Integration credentials");
        assert_eq!(entry["user_id"], Value::Null);
    }
    let (active, _) = activity(&kit, json!({"filters": {"endpoint": path}})).await;
    let requests: Vec<&str> = active
        .iter()
        .map(|entry| entry["request_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        requests,
        ["req-carried-2", "req-carried-1", "req-carried-0"]
    );
    assert_eq!(
        active[0]["message"],
        Operation::FundsTransferApi.success_message()
    );
    assert_eq!(active[0]["status"], "success");

    // Pages of one or two, by cursor, give the whole log once and in order: the carried
    // entries among the rows.
    let (whole, _) = audit(&kit, json!({})).await;
    assert!(whole.len() >= 8, "{whole:#?}");
    for limit in [1, 2] {
        let mut paged = Vec::new();
        let mut body = json!({"limit": limit});
        for _ in 0..whole.len() + 1 {
            let (page, pagination) = audit(&kit, body.clone()).await;
            paged.extend(page);
            if pagination["has_more"] != true {
                break;
            }
            body["cursor_created_at"] = pagination["next_cursor_created_at"].clone();
            body["cursor_id"] = pagination["next_cursor_id"].clone();
        }
        assert_eq!(paged, whole, "pages of {limit}");
    }
}

/// The main account of a second business, Lagos Fresh Produce Ltd, made for the test.
async fn paid_business(kit: &TestKit) -> String {
    let (other, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "owner@lagosfresh.ng")
        .await;
    other.main_account_number
}

/// An intra-bank payout of `amount` from Adaeze Foods' main account to Lagos Fresh Produce's
/// account `to`, without an OTP.
fn intra_payout(to: &str, amount: &str) -> Value {
    json!({
        "source_account_number": "1000000014",
        "source_account_name": "Adaeze Foods Ltd",
        "beneficiary_account_number": to,
        "beneficiary_account_name": "Lagos Fresh Produce Ltd",
        "bank_code": "090823",
        "amount": amount,
        "transfer_type": "intra",
    })
}

async fn otp_of(kit: &TestKit) -> String {
    kit.op(Operation::GenerateOtp, &kit.owner_token, json!({}))
        .await
        .expect(ResponseCode::Success)["otp"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// generate_token is public, so it records its own calls: a wrong secret for a real client is
/// that business's activity; an unknown client_id belongs to no business and is not logged.
async fn refused_token_requests_of_a_known_client_are_activity(kit: TestKit) {
    let token_request = |client_id: &str| {
        Call::new(
            Operation::GenerateToken.path(),
            None,
            json!({"client_id": client_id, "client_secret": "kbs_sandbox_wrong"}),
        )
    };
    kit.send(token_request(&kit.business.client_id))
        .await
        .expect(ResponseCode::Unauthenticated);
    kit.send(token_request("kb_sandbox_000000000000"))
        .await
        .expect(ResponseCode::Unauthenticated);
    let (entries, _) = activity(&kit, json!({})).await;
    assert_eq!(entries.len(), 1, "{entries:#?}");
    assert_eq!(entries[0]["endpoint"], Operation::GenerateToken.path());
    assert_eq!(entries[0]["response_code"], 401);
    assert_eq!(entries[0]["status"], "error");
    assert_eq!(entries[0]["message"], "Invalid client_id or client_secret");
}

async fn dashboard_actions_are_audited(kit: TestKit) {
    // A failed login of an existing member is audited; of an unknown email it is not.
    for email in [OWNER, "nobody@adaezefoods.ng"] {
        kit.send(Call::new(
            Operation::Login.path(),
            None,
            json!({"email": email, "password": "wrong-password"}),
        ))
        .await
        .expect(ResponseCode::Unauthenticated);
    }
    let member_id = kit
        .invite(
            &kit.owner_token,
            "ife.olawale@adaezefoods.ng",
            VIEWER_ROLE_ID,
        )
        .await;
    let role_id = kit.create_role("Auditor", &["audit_log.view"]).await;
    kit.op(Operation::RegenerateSecret, &kit.owner_token, json!({}))
        .await
        .expect(ResponseCode::Success);
    // A refused action is not an entry.
    kit.op(
        Operation::UpdateRole,
        &kit.owner_token,
        json!({"role_id": kobo::platform::permissions::OWNER_ROLE_ID, "name": "Boss"}),
    )
    .await
    .expect(ResponseCode::InvalidState);

    let (entries, _) = audit(&kit, json!({})).await;
    let actions: Vec<(&str, i64)> = entries
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap(),
                e["response_code"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        actions,
        [
            ("regenerate_secret", 200),
            ("create_role", 200),
            ("add_member", 200),
            ("login", 401),
            ("login", 200),
        ]
    );
    let owner_id = kit.member_id(OWNER).await;
    let add = &entries[2];
    assert_eq!(add["user"], "Adaeze Okafor <adaeze.okafor@adaezefoods.ng>");
    assert_eq!(add["user_id"], owner_id.as_str());
    assert_eq!(add["target_type"], "member");
    assert_eq!(add["target_id"], member_id.as_str());
    assert_eq!(entries[1]["target_id"], role_id.as_str());
    let today = chrono::Utc::now().date_naive().to_string();
    assert_eq!(add["start_date"], today.as_str());
    assert_eq!(add["end_date"], today.as_str());
    assert_eq!(add["ip_address"], "102.89.34.17");

    let count = |body: Value| {
        let kit = &kit;
        async move { audit(kit, body).await.0.len() }
    };
    assert_eq!(count(json!({"filters": {"action": "login"}})).await, 2);
    assert_eq!(count(json!({"filters": {"user_id": owner_id}})).await, 5);
    assert_eq!(
        count(json!({"filters": {"user_id": uuid::Uuid::new_v4()}})).await,
        0
    );
    assert_eq!(count(json!({"search": "ADAEZE OKAFOR"})).await, 5);
    assert_eq!(count(json!({"search": "secret"})).await, 1);
    assert_eq!(
        count(json!({"filters": {"start_date": today, "end_date": today}})).await,
        5
    );

    // Logout and password changes are audited too.
    let second = kit.login(OWNER, OWNER_PASSWORD).await;
    kit.op(Operation::Logout, &second, json!({}))
        .await
        .expect(ResponseCode::Success);
    let (entries, _) = audit(&kit, json!({"limit": 2})).await;
    assert_eq!(entries[0]["action"], "logout");
    assert_eq!(entries[1]["action"], "login");
}

/// Keyset paging returns every entry exactly once even when entries are written between
/// page fetches.
async fn keyset_pages_are_exact_under_concurrent_inserts(kit: TestKit) {
    let token = kit.integration_token().await;
    let call = || kit.op(Operation::FetchBanks, &token, json!({}));
    for _ in 0..7 {
        call().await;
    }
    let mut seen = Vec::new();
    let mut cursor: Option<(Value, Value)> = None;
    let mut pages = 0;
    loop {
        let mut body = json!({"limit": 3});
        if let Some((at, id)) = &cursor {
            body["cursor_created_at"] = at.clone();
            body["cursor_id"] = id.clone();
        }
        let (entries, pagination) = activity(&kit, body).await;
        assert!(entries.len() <= 3);
        seen.extend(entries.iter().map(|e| e["id"].as_str().unwrap().to_owned()));
        pages += 1;
        // Newer entries arrive while the client pages through older ones.
        call().await;
        if pagination["has_more"] == false {
            assert!(pagination["next_cursor_id"].is_null());
            break;
        }
        let last = entries.last().unwrap();
        assert_eq!(pagination["next_cursor_id"], last["id"]);
        cursor = Some((
            pagination["next_cursor_created_at"].clone(),
            pagination["next_cursor_id"].clone(),
        ));
    }
    assert_eq!(pages, 3);
    let unique: HashSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "duplicates: {seen:?}");
    assert_eq!(
        seen.len(),
        8,
        "the 8 entries present when paging began: the token grant and 7 calls"
    );

    // The same walk over the audit log, with entries added between pages.
    for n in 0..4 {
        kit.create_role(&format!("Role {n}"), &["account.view"])
            .await;
    }
    let (first, pagination) = audit(&kit, json!({"limit": 2})).await;
    kit.create_role("Late", &["account.view"]).await;
    let (second, _) = audit(
        &kit,
        json!({"limit": 10, "cursor_created_at": pagination["next_cursor_created_at"],
               "cursor_id": pagination["next_cursor_id"]}),
    )
    .await;
    let ids: Vec<&Value> = first.iter().chain(&second).map(|e| &e["id"]).collect();
    // 4 create_role + the kit's login, no duplicates, nothing of the late role.
    assert_eq!(ids.len(), 5);
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 5);
}

async fn cursor_fields_come_together(kit: TestKit) {
    let now = chrono::Utc::now().to_rfc3339();
    for (operation, body, field) in [
        (
            Operation::FetchActivityLogs,
            json!({"cursor_created_at": now}),
            "`cursor_id`",
        ),
        (
            Operation::FetchAuditLogs,
            json!({"cursor_id": uuid::Uuid::new_v4()}),
            "`cursor_created_at`",
        ),
    ] {
        let reply = kit.op(operation, &kit.owner_token, body).await;
        assert_eq!(reply.status, 400);
        reply.expect(ResponseCode::InvalidRequest);
        assert!(
            reply.body["message"].as_str().unwrap().starts_with(field),
            "{reply:?}"
        );
    }
}

/// Holds the activity log's table against every insert, from any process, until the
/// transaction returned is rolled back.
async fn hold_the_activity_log(kit: &TestKit) -> kobo::kernel::store::Tx {
    let mut tx = kit.store.begin().await.unwrap();
    let hold = match kit.kind {
        // A write statement takes SQLite's write lock, whatever it matches.
        StoreKind::Sqlite => "DELETE FROM activity_logs WHERE 1 = 0",
        StoreKind::Postgres => "LOCK TABLE activity_logs IN SHARE MODE",
    };
    kit.sql(hold).execute_in(&mut tx).await;
    tx
}

/// A listing changes nothing, so it is answered before its activity entry is committed; the
/// process that answered it still reads the entry (a read of the log waits for its queue),
/// and a graceful stop writes what is queued before the process exits. Each step is made to
/// fail if the entry were on the answer's path or left behind: the log's table is held
/// against inserts while the listings are answered.
async fn a_listings_entry_commits_after_its_answer_and_at_a_graceful_stop(kit: TestKit) {
    let listing = Operation::FetchTransactionsApi;
    let entries_of_listings = "SELECT COUNT(*) FROM activity_logs WHERE endpoint = $1";
    // In this process.
    let token = kit.integration_token().await;
    let held = hold_the_activity_log(&kit).await;
    let answered =
        tokio::time::timeout(Duration::from_secs(10), kit.op(listing, &token, json!({})))
            .await
            .expect("a listing is answered while its entry cannot be written");
    answered.expect(ResponseCode::Success);
    let release = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        held.rollback().await.unwrap();
        Instant::now()
    };
    let read = async {
        let (entries, _) = activity(&kit, json!({"filters": {"endpoint": listing.path()}})).await;
        (entries, Instant::now())
    };
    let ((entries, read_at), released_at) = tokio::join!(read, release);
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert!(
        read_at >= released_at,
        "the read did not wait for the queued entry"
    );

    // In another process, stopped while its entries are queued.
    let mut server = Server::start(&kit).await;
    let token = server.integration_token(&kit);
    let held = hold_the_activity_log(&kit).await;
    for _ in 0..5 {
        let reply = server.post(listing, Some(&token), &json!({}));
        assert_eq!(reply["response_code"], "00", "{reply}");
    }
    let stopping = tokio::task::spawn_blocking(move || server.stop());
    tokio::time::sleep(Duration::from_millis(300)).await;
    held.rollback().await.unwrap();
    let stopped = stopping.await.unwrap();
    assert!(stopped.success(), "{stopped:?}");
    assert_eq!(kit.count(entries_of_listings, listing.path()).await, 6);
}

on_both_stores!(
    a_payouts_log_entries_are_its_transfer,
    a_payouts_activity_entry_commits_with_it,
    simultaneous_integration_calls_are_each_logged_once,
    a_listings_entry_commits_after_its_answer_and_at_a_graceful_stop,
    refused_token_requests_of_a_known_client_are_activity,
    every_integration_call_is_an_activity_entry,
    dashboard_actions_are_audited,
    keyset_pages_are_exact_under_concurrent_inserts,
    cursor_fields_come_together,
);
