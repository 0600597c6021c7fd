//! The webhook operations and every documented refusal.

use generated_server::{Operation, ResponseCode};
use kobo::on_both_stores;
use kobo::platform::permissions::VIEWER_ROLE_ID;
use kobo::testkit::{Call, TestKit};
use serde_json::{json, Value};

use crate::receiver::{configure, events};

const URL: &str = "http://127.0.0.1:9/kobo";

async fn the_configuration_is_created_once_read_and_changed(kit: TestKit) {
    // Nothing yet: every operation that needs a configuration says so.
    let owner = &kit.owner_token;
    let integration = kit.integration_token().await;
    kit.op(Operation::GetWebhookConfiguration, owner, json!({}))
        .await
        .expect(ResponseCode::NotFound);
    kit.op(Operation::RotateWebhookSecret, owner, json!({}))
        .await
        .expect(ResponseCode::NotFound);
    kit.op(Operation::TestWebhook, owner, json!({}))
        .await
        .expect(ResponseCode::NotFound);
    kit.op(
        Operation::UpdateWebhookConfiguration,
        &integration,
        json!({"is_active": false}),
    )
    .await
    .expect(ResponseCode::NotFound);

    let created = kit
        .op(
            Operation::WebhookConfiguration,
            owner,
            json!({"url": URL, "ip_whitelist": ["127.0.0.1", "10.0.0.0/8"]}),
        )
        .await;
    let created = created.expect(ResponseCode::Success).clone();
    assert!(created["secret"].as_str().unwrap().starts_with("whsec_"));
    assert_eq!(created["is_active"], true);
    assert_eq!(created["event_types"], json!([]));
    kit.op(Operation::WebhookConfiguration, owner, json!({"url": URL}))
        .await
        .expect(ResponseCode::Duplicate);

    let read = kit
        .op(Operation::GetWebhookConfiguration, owner, json!({}))
        .await;
    let read = read.expect(ResponseCode::Success).clone();
    assert_eq!(read.get("secret"), None, "the secret is shown once");
    assert_eq!(read["ip_whitelist"], json!(["127.0.0.1", "10.0.0.0/8"]));

    // Only the fields sent change; pausing keeps the whitelist.
    let paused = kit
        .op(
            Operation::UpdateWebhookConfiguration,
            &integration,
            json!({"is_active": false}),
        )
        .await;
    let paused = paused.expect(ResponseCode::Success).clone();
    assert_eq!(paused["is_active"], false);
    assert_eq!(paused["ip_whitelist"], read["ip_whitelist"]);
    assert_eq!(paused["url"], URL);
    let moved = kit
        .op(
            Operation::UpdateWebhookConfiguration,
            &integration,
            json!({"url": "http://127.0.0.1:9/v2", "ip_whitelist": [], "event_types": ["transfer.success"]}),
        )
        .await;
    let moved = moved.expect(ResponseCode::Success).clone();
    assert_eq!(moved["url"], "http://127.0.0.1:9/v2");
    assert_eq!(moved["ip_whitelist"], json!([]));
    assert_eq!(moved["event_types"], json!(["transfer.success"]));
    assert_eq!(moved["is_active"], false);

    // The audit log has the Dashboard actions.
    let audit = kit.op(Operation::FetchAuditLogs, owner, json!({})).await;
    let actions: Vec<Value> = audit
        .expect(ResponseCode::Success)
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["action"].clone())
        .collect();
    assert!(
        actions.contains(&json!("create_webhook_configuration")),
        "{actions:?}"
    );
}

async fn bad_input_is_refused_with_01(kit: TestKit) {
    let owner = &kit.owner_token;
    for body in [
        json!({"url": "ftp://hooks.example.ng/"}),
        json!({"url": "http://user:secret@127.0.0.1/"}),
        json!({"url": URL, "ip_whitelist": ["not-an-address"]}),
        json!({"url": URL, "ip_whitelist": ["10.0.0.0/40"]}),
        json!({"url": URL, "ip_whitelist": ["127.0.0.1", "127.0.0.1"]}),
        json!({"url": URL, "event_types": ["no.such.kind"]}),
        json!({}),
    ] {
        let reply = kit
            .op(Operation::WebhookConfiguration, owner, body.clone())
            .await;
        reply.expect(ResponseCode::InvalidRequest);
        assert!(
            !reply.body["message"].as_str().unwrap().is_empty(),
            "{body}: {}",
            reply.body
        );
    }
    configure(&kit, owner, URL, json!({})).await;
    let integration = kit.integration_token().await;
    for body in [json!({}), json!({"ip_whitelist": ["999.1.1.1"]})] {
        kit.op(Operation::UpdateWebhookConfiguration, &integration, body)
            .await
            .expect(ResponseCode::InvalidRequest);
    }
    for body in [json!({"event_id": "not-a-uuid"}), json!({})] {
        kit.op(Operation::ReplayWebhookEvent, owner, body)
            .await
            .expect(ResponseCode::InvalidRequest);
    }
    kit.op(
        Operation::FetchWebhookEvents,
        owner,
        json!({"filters": {"start_date": "2026-11-05", "end_date": "2026-11-01"}}),
    )
    .await
    .expect(ResponseCode::InvalidRequest);
    kit.op(
        Operation::FetchWebhookEvents,
        owner,
        json!({"cursor_id": "e5f6a7b8-c9d0-4e1f-8a2b-3c4d5e6f7a01"}),
    )
    .await
    .expect(ResponseCode::InvalidRequest);
}

async fn the_creation_is_idempotent(kit: TestKit) {
    let call = || {
        Call::new(
            Operation::WebhookConfiguration.path(),
            Some(&kit.owner_token),
            json!({"url": URL}),
        )
        .header("idempotency-key", "hooks-1")
    };
    let first = kit.send(call()).await;
    let again = kit.send(call()).await;
    assert_eq!(
        first.expect(ResponseCode::Success)["secret"],
        again.expect(ResponseCode::Success)["secret"]
    );
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
}

async fn the_log_filters_and_pages(kit: TestKit) {
    configure(&kit, &kit.owner_token, URL, json!({})).await;
    let token = kit.integration_token().await;
    for _ in 0..5 {
        kit.credit(&token, &kit.business.main_account_number, "1.00")
            .await;
    }
    for _ in 0..2 {
        kit.op(Operation::TestWebhook, &kit.owner_token, json!({}))
            .await
            .expect(ResponseCode::Success);
    }
    let all = events(&kit, &kit.owner_token, json!({})).await;
    assert_eq!(all.len(), 7);
    let tests = events(
        &kit,
        &kit.owner_token,
        json!({"event_type": "webhook.test"}),
    )
    .await;
    assert_eq!(tests.len(), 2);
    assert_eq!(tests[0]["status"], "pending");
    assert_eq!(tests[0]["remaining_attempts"], 10);
    let mut seen = Vec::new();
    let mut body = json!({"limit": 3});
    loop {
        let page = kit
            .op(
                Operation::FetchWebhookEvents,
                &kit.owner_token,
                body.clone(),
            )
            .await;
        assert_eq!(page.code(), Some(ResponseCode::Success));
        for entry in page.body["data"].as_array().unwrap() {
            seen.push(entry["id"].clone());
        }
        let pagination = &page.body["pagination"];
        if pagination["has_more"] == false {
            break;
        }
        body = json!({
            "limit": 3,
            "cursor_created_at": pagination["next_cursor_created_at"],
            "cursor_id": pagination["next_cursor_id"],
        });
    }
    let ids: Vec<Value> = all.iter().map(|e| e["id"].clone()).collect();
    assert_eq!(seen, ids, "pages walk the log newest first, each once");
}

async fn another_business_sees_and_replays_nothing(kit: TestKit) {
    configure(&kit, &kit.owner_token, URL, json!({})).await;
    let token = kit.integration_token().await;
    kit.credit(&token, &kit.business.main_account_number, "1.00")
        .await;
    let mine = events(&kit, &kit.owner_token, json!({})).await;
    let (_, other_owner) = kit
        .other_business("Lagos Fresh Produce", "bola@lagosfresh.ng")
        .await;
    assert!(events(&kit, &other_owner, json!({})).await.is_empty());
    kit.op(
        Operation::ReplayWebhookEvent,
        &other_owner,
        json!({"event_id": mine[0]["id"]}),
    )
    .await
    .expect(ResponseCode::NotFound);
    kit.op(Operation::GetWebhookConfiguration, &other_owner, json!({}))
        .await
        .expect(ResponseCode::NotFound);
}

async fn events_are_kept_30_days_unless_still_queued(kit: TestKit) {
    configure(&kit, &kit.owner_token, URL, json!({})).await;
    kit.op(Operation::TestWebhook, &kit.owner_token, json!({}))
        .await
        .expect(ResponseCode::Success);
    let token = kit.integration_token().await;
    kit.credit(&token, &kit.business.main_account_number, "1.00")
        .await;
    // The test event is delivered... as far as the log knows (marked by hand); the credit's
    // event is still queued.
    kit.sql("UPDATE events SET delivery_status = 'delivered' WHERE type = 'webhook.test'")
        .execute()
        .await;
    kit.clock.advance(chrono::Duration::days(31));
    let purged = kobo::platform::housekeeping::purge_expired(&kit.store, kit.clock.now())
        .await
        .unwrap();
    assert_eq!(purged.webhook_events, 1);
    let left = kit
        .count(
            "SELECT COUNT(*) FROM events WHERE business_id = $1",
            &kit.business.business_id,
        )
        .await;
    assert_eq!(
        left, 1,
        "the queued event stays until it is delivered or fails"
    );
}

/// The Dashboard twin changes, pauses and resumes the endpoint as the integration twin does,
/// audited as the member; each refusal is the integration twin's; a role without
/// `webhook.manage` gets `43`.
async fn members_change_pause_and_resume_the_endpoint(kit: TestKit) {
    let manager_role = kit
        .create_role("Webhook manager", &["webhook.manage"])
        .await;
    let (manager_id, manager) = kit
        .add_member("bola.ade@adaezefoods.ng", &manager_role)
        .await;
    let (_, viewer) = kit
        .add_member("ife.olawale@adaezefoods.ng", VIEWER_ROLE_ID)
        .await;
    let integration = kit.integration_token().await;
    let both = async |body: Value| {
        let web = kit
            .op(
                Operation::UpdateWebhookConfigurationWeb,
                &manager,
                body.clone(),
            )
            .await;
        let api = kit
            .op(Operation::UpdateWebhookConfiguration, &integration, body)
            .await;
        (web, api)
    };
    let (web, api) = both(json!({"is_active": false})).await;
    web.expect(ResponseCode::NotFound);
    api.expect(ResponseCode::NotFound);
    assert_eq!(web.body["message"], api.body["message"]);
    configure(&kit, &kit.owner_token, URL, json!({})).await;

    // Each change, then what the test event says: refused while paused, sent once resumed.
    for (change, field, test_event) in [
        (
            json!({"is_active": false}),
            "is_active",
            ResponseCode::InvalidState,
        ),
        (
            json!({"is_active": true}),
            "is_active",
            ResponseCode::Success,
        ),
        (
            json!({"url": "http://127.0.0.1:9/v2"}),
            "url",
            ResponseCode::Success,
        ),
        (
            json!({"event_types": ["webhook.test"]}),
            "event_types",
            ResponseCode::Success,
        ),
        (
            json!({"ip_whitelist": ["127.0.0.1"]}),
            "ip_whitelist",
            ResponseCode::Success,
        ),
    ] {
        let changed = kit
            .op(
                Operation::UpdateWebhookConfigurationWeb,
                &manager,
                change.clone(),
            )
            .await;
        let changed = changed.expect(ResponseCode::Success).clone();
        assert_eq!(changed[field], change[field], "{change}");
        let read = kit
            .op(
                Operation::GetWebhookConfiguration,
                &kit.owner_token,
                json!({}),
            )
            .await;
        assert_eq!(read.expect(ResponseCode::Success), &changed);
        kit.op(Operation::TestWebhook, &kit.owner_token, json!({}))
            .await
            .expect(test_event);
    }

    for body in [
        json!({}),
        json!({"ip_whitelist": ["999.1.1.1"]}),
        json!({"url": "http://10.0.0.7/kobo"}),
        json!({"event_types": ["no.such.kind"]}),
    ] {
        let (web, api) = both(body.clone()).await;
        web.expect(ResponseCode::InvalidRequest);
        api.expect(ResponseCode::InvalidRequest);
        assert_eq!(web.body["message"], api.body["message"], "{body}");
    }
    kit.op(
        Operation::UpdateWebhookConfigurationWeb,
        &viewer,
        json!({"is_active": false}),
    )
    .await
    .expect(ResponseCode::PermissionDenied);

    // Five changes by the member, none by anyone else.
    let audit = kit
        .op(
            Operation::FetchAuditLogs,
            &kit.owner_token,
            json!({"filters": {"action": "update_webhook_configuration"}}),
        )
        .await;
    let users: Vec<Value> = audit
        .expect(ResponseCode::Success)
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["user_id"].clone())
        .collect();
    assert_eq!(users, vec![json!(manager_id); 5]);
}

on_both_stores!(config: crate::local_development() =>
    members_change_pause_and_resume_the_endpoint,
    events_are_kept_30_days_unless_still_queued,
    the_configuration_is_created_once_read_and_changed,
    bad_input_is_refused_with_01,
    the_creation_is_idempotent,
    the_log_filters_and_pages,
    another_business_sees_and_replays_nothing,
);
