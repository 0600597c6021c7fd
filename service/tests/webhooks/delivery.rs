//! Delivery: signed, retried on schedule, recorded, replayable, never held up by another
//! business's endpoint, and shared by several processes without sending an event twice.

use std::collections::BTreeSet;

use chrono::Duration;
use generated_server::{Operation, ResponseCode};
use kobo::on_both_stores;
use kobo::testkit::{Call, StoreKind, TestKit, OWNER_PASSWORD};
use serde_json::{json, Value};

use crate::receiver::{configure, events, verifies, Mode, Receiver};

async fn credit(kit: &TestKit, amount: &str) -> Value {
    let token = kit.integration_token().await;
    kit.credit(&token, &kit.business.main_account_number, amount)
        .await
}

/// The receiver takes this long to answer: the attempt's recorded latency is at least this.
const ANSWERS_AFTER_MS: u64 = 300;

async fn deliveries_are_signed_recorded_and_match_the_log(kit: TestKit) {
    let receiver = Receiver::start().await;
    let secret = configure(&kit, &kit.owner_token, &receiver.url(), json!({})).await;
    let transaction = credit(&kit, "15000.00").await;
    receiver.set(Mode::Slow(ANSWERS_AFTER_MS));
    let started = std::time::Instant::now();
    let attempts = kit.webhooks().deliver_due().await.unwrap();
    let delivering = started.elapsed().as_millis() as i64;
    assert_eq!(attempts, 1);

    let deliveries = receiver.deliveries();
    assert_eq!(deliveries.len(), 1);
    let delivery = &deliveries[0];
    assert_eq!(delivery.path, "/kobo/hooks");
    assert!(verifies(&secret, delivery), "{delivery:?}");
    let event = delivery.event();
    assert_eq!(event["type"], "collection.received");
    assert_eq!(event["id"], delivery.id);
    assert_eq!(
        event["data"]["reference_number"],
        transaction["reference_number"]
    );
    assert_eq!(event["data"]["amount"], "15000.00");

    let log = events(&kit, &kit.owner_token, json!({})).await;
    let entry = log.iter().find(|e| e["id"] == delivery.id).unwrap();
    assert_eq!(entry["status"], "delivered");
    assert_eq!(entry["attempts"], 1);
    assert_eq!(entry["remaining_attempts"], 0);
    assert_eq!(entry["last_response_status"], 204);
    assert_eq!(entry["next_attempt_at"], Value::Null);
    assert_eq!(entry["payload"], event, "the log shows the exact body sent");
    let attempt = &entry["attempt_log"][0];
    assert_eq!(attempt["response_status"], 204);
    assert_eq!(attempt["error"], Value::Null);
    // The latency recorded is the exchange's: no less than the receiver took to answer, no
    // more than the whole delivery pass took.
    let latency = attempt["latency_ms"].as_i64().unwrap();
    assert!(
        latency >= ANSWERS_AFTER_MS as i64 && latency <= delivering,
        "latency {latency} ms, the receiver answered after {ANSWERS_AFTER_MS} ms, the pass took {delivering} ms"
    );

    // Nothing is due any more: a second pass sends nothing.
    assert_eq!(kit.webhooks().deliver_due().await.unwrap(), 0);
    assert_eq!(receiver.deliveries().len(), 1);
}

async fn a_failing_endpoint_is_retried_on_schedule_then_fails_and_replays(kit: TestKit) {
    let receiver = Receiver::start().await;
    configure(&kit, &kit.owner_token, &receiver.url(), json!({})).await;
    receiver.set(Mode::Status(500));
    credit(&kit, "100.00").await;
    let webhooks = kit.webhooks();
    let schedule = &kit.api.config().webhooks.retry_delays;
    assert_eq!(webhooks.deliver_due().await.unwrap(), 1);
    // The schedule spans days: a Dashboard token lasts 12 hours, so log in afresh each time.
    let owner = || kit.login(&kit.business.owner_email, OWNER_PASSWORD);
    for (i, delay) in schedule.iter().enumerate() {
        let entry = events(&kit, &owner().await, json!({})).await[0].clone();
        assert_eq!(entry["status"], "pending", "after attempt {}", i + 1);
        assert_eq!(entry["remaining_attempts"], 10 - (i + 1));
        // The next attempt is due after the schedule's delay, within its jitter.
        let last: chrono::DateTime<chrono::Utc> =
            entry["last_attempt_at"].as_str().unwrap().parse().unwrap();
        let next: chrono::DateTime<chrono::Utc> =
            entry["next_attempt_at"].as_str().unwrap().parse().unwrap();
        let wait = (next - last).num_milliseconds();
        let nominal = delay.as_millis() as i64;
        assert!(
            wait >= nominal * 9 / 10 - 1 && wait <= nominal * 11 / 10 + 1,
            "attempt {}: waits {wait} ms, nominal {nominal}",
            i + 1
        );
        // Not before it is due.
        assert_eq!(webhooks.deliver_due().await.unwrap(), 0);
        kit.clock
            .advance(Duration::milliseconds(nominal * 11 / 10 + 10));
        assert_eq!(webhooks.deliver_due().await.unwrap(), 1);
    }
    let owner_token = owner().await;
    let entry = events(&kit, &owner_token, json!({})).await[0].clone();
    assert_eq!(entry["status"], "failed");
    assert_eq!(entry["attempts"], 10);
    assert_eq!(entry["remaining_attempts"], 0);
    assert_eq!(entry["next_attempt_at"], Value::Null);
    assert_eq!(entry["last_response_status"], 500);
    assert!(entry["last_error"].as_str().unwrap().contains("HTTP 500"));
    assert_eq!(entry["attempt_log"].as_array().unwrap().len(), 10);
    assert_eq!(
        entry["attempt_log"][0]["response_body"],
        "{\"error\":\"status 500 on purpose\"}"
    );
    assert_eq!(webhooks.deliver_due().await.unwrap(), 0, "failed is final");

    // Replay: a fresh budget, due now; the fixed endpoint gets the same webhook-id.
    receiver.set(Mode::Ok);
    let id = entry["id"].as_str().unwrap();
    let replayed = kit
        .op(
            Operation::ReplayWebhookEvent,
            &owner_token,
            json!({"event_id": id}),
        )
        .await;
    let replayed = replayed.expect(ResponseCode::Success);
    assert_eq!(replayed["status"], "pending");
    assert_eq!(replayed["remaining_attempts"], 10);
    assert_eq!(replayed["attempts"], 10);
    // A second replay while queued is refused.
    kit.op(
        Operation::ReplayWebhookEvent,
        &owner_token,
        json!({"event_id": id}),
    )
    .await
    .expect(ResponseCode::InvalidState);
    assert_eq!(webhooks.deliver_due().await.unwrap(), 1);
    let entry = events(&kit, &owner_token, json!({})).await[0].clone();
    assert_eq!(entry["status"], "delivered");
    assert_eq!(entry["attempts"], 11);
    let counts = receiver.counts();
    assert_eq!(counts.len(), 1, "one event, one webhook-id");
    assert_eq!(counts[id], 11);
}

async fn a_receiver_down_for_a_while_gets_every_event_once_by_id(kit: TestKit) {
    let receiver = Receiver::start().await;
    configure(&kit, &kit.owner_token, &receiver.url(), json!({})).await;
    receiver.set(Mode::Status(503));
    let token = kit.integration_token().await;
    let mut references = BTreeSet::new();
    for i in 0..12 {
        let credit = kit
            .credit(
                &token,
                &kit.business.main_account_number,
                &format!("{}.00", 100 + i),
            )
            .await;
        references.insert(credit["reference_number"].as_str().unwrap().to_owned());
    }
    let webhooks = kit.webhooks();
    assert_eq!(webhooks.deliver_due().await.unwrap(), 12);
    kit.clock.advance(Duration::seconds(6));
    assert_eq!(webhooks.deliver_due().await.unwrap(), 12);
    // Back up: the next retries deliver everything.
    receiver.set(Mode::Ok);
    kit.clock.advance(Duration::minutes(6));
    assert_eq!(webhooks.deliver_due().await.unwrap(), 12);
    let delivered: BTreeSet<String> = receiver
        .deliveries()
        .iter()
        .map(|d| {
            d.event()["data"]["reference_number"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(delivered, references, "every event arrived");
    let counts = receiver.counts();
    assert_eq!(counts.len(), 12);
    assert!(counts.values().all(|&n| n == 3), "{counts:?}");
    let log = events(&kit, &kit.owner_token, json!({"status": "delivered"})).await;
    assert_eq!(log.len(), 12);
}

async fn a_hanging_endpoint_does_not_hold_up_another_business(kit: TestKit) {
    let slow = Receiver::start().await;
    let fast = Receiver::start().await;
    configure(&kit, &kit.owner_token, &slow.url(), json!({})).await;
    let (other, other_owner) = kit
        .other_business("Lagos Fresh Produce", "bola@lagosfresh.ng")
        .await;
    configure(&kit, &other_owner, &fast.url(), json!({})).await;
    slow.set(Mode::Hang);
    let token = kit.integration_token().await;
    for _ in 0..6 {
        kit.credit(&token, &kit.business.main_account_number, "10.00")
            .await;
    }
    let other_token = kit.integration_token_of(&other).await;
    kit.credit(&other_token, &other.main_account_number, "20.00")
        .await;

    let webhooks = kit.webhooks();
    let mut tasks = tokio::task::JoinSet::new();
    let pass = webhooks.pass(&mut tasks).await.unwrap();
    // The slow endpoint gets at most its per-endpoint bound; the other business its event.
    let per_endpoint = kit.api.config().webhooks.per_endpoint;
    assert_eq!(pass.claimed, per_endpoint + 1);
    fast.wait_for(1).await;
    slow.wait_for(per_endpoint).await;
    assert_eq!(
        slow.deliveries().len(),
        per_endpoint,
        "bounded per endpoint"
    );
    // While they hang, a second pass claims nothing more for the slow endpoint.
    let again = webhooks.pass(&mut tasks).await.unwrap();
    assert_eq!(again.claimed, 0);
    slow.set(Mode::Ok);
    slow.release();
    while tasks.join_next().await.is_some() {}
    assert_eq!(webhooks.deliver_due().await.unwrap(), 6 - per_endpoint);
    assert_eq!(slow.counts().len(), 6);
}

/// An event of a business with no active endpoint is recorded `skipped`, not queued for a
/// dispatcher pass to skip: that update per event left a dead entry in the due-events index
/// each time, and on PostgreSQL between vacuums every pass scanned them all (38 ms a pass after
/// 90,000 payouts; a 10-minute soak fell behind).
async fn an_event_with_no_endpoint_is_recorded_skipped_not_queued(kit: TestKit) {
    let integration = kit.integration_token().await;
    kit.credit(&integration, &kit.business.main_account_number, "75.00")
        .await;
    let entry = events(&kit, &kit.owner_token, json!({})).await[0].clone();
    assert_eq!(entry["status"], "skipped", "{entry}");
    assert_eq!(
        kit.count(
            "SELECT COUNT(*) FROM events WHERE business_id = $1 AND next_attempt_at IS NOT NULL",
            &kit.business.business_id,
        )
        .await,
        0
    );
}

async fn events_before_the_endpoint_are_skipped_and_replayable(kit: TestKit) {
    let integration = kit.integration_token().await;
    kit.credit(&integration, &kit.business.main_account_number, "75.00")
        .await;
    let receiver = Receiver::start().await;
    configure(&kit, &kit.owner_token, &receiver.url(), json!({})).await;
    kit.webhooks().deliver_due().await.unwrap();
    assert!(receiver.deliveries().is_empty());
    let entry = events(&kit, &kit.owner_token, json!({})).await[0].clone();
    assert_eq!(entry["status"], "skipped");
    kit.op(
        Operation::ReplayWebhookEvent,
        &kit.owner_token,
        json!({"event_id": entry["id"]}),
    )
    .await
    .expect(ResponseCode::Success);
    kit.webhooks().deliver_due().await.unwrap();
    assert_eq!(receiver.deliveries().len(), 1);
    assert_eq!(receiver.deliveries()[0].event()["data"]["amount"], "75.00");
}

/// A process that dies mid-attempt leaves its lease to run out; then another sends the event
/// again: at least once on the wire, once by `webhook-id` for a receiver that de-duplicates.
async fn an_attempt_cut_off_by_a_crash_is_sent_again_after_its_lease(kit: TestKit) {
    let receiver = Receiver::start().await;
    configure(&kit, &kit.owner_token, &receiver.url(), json!({})).await;
    receiver.set(Mode::Hang);
    credit(&kit, "42.00").await;
    let mut tasks = tokio::task::JoinSet::new();
    let crashed = kit.webhooks();
    assert_eq!(crashed.pass(&mut tasks).await.unwrap().claimed, 1);
    receiver.wait_for(1).await;
    tasks.abort_all(); // the process is gone: no outcome recorded
    drop(crashed);
    receiver.set(Mode::Ok);
    receiver.release();
    let survivor = kit.webhooks();
    assert_eq!(survivor.deliver_due().await.unwrap(), 0, "leased: not yet");
    kit.clock.advance(Duration::seconds(61));
    assert_eq!(survivor.deliver_due().await.unwrap(), 1);
    let counts = receiver.counts();
    assert_eq!(counts.len(), 1);
    assert_eq!(counts.values().next(), Some(&2));
    let entry = events(&kit, &kit.owner_token, json!({})).await[0].clone();
    assert_eq!(entry["status"], "delivered");
    assert_eq!(entry["attempts"], 1, "the cut-off attempt left no record");
}

async fn a_paused_endpoint_skips_and_replays_after_resuming(kit: TestKit) {
    let receiver = Receiver::start().await;
    configure(&kit, &kit.owner_token, &receiver.url(), json!({})).await;
    let integration = kit.integration_token().await;
    let paused = kit
        .op(
            Operation::UpdateWebhookConfiguration,
            &integration,
            json!({"is_active": false}),
        )
        .await;
    assert_eq!(paused.expect(ResponseCode::Success)["is_active"], false);
    kit.credit(&integration, &kit.business.main_account_number, "50.00")
        .await;
    kit.webhooks().deliver_due().await.unwrap();
    assert!(receiver.deliveries().is_empty());
    let entry = events(&kit, &kit.owner_token, json!({})).await[0].clone();
    assert_eq!(entry["status"], "skipped");
    let id = entry["id"].as_str().unwrap().to_owned();
    let replay = json!({"event_id": id});
    kit.op(
        Operation::ReplayWebhookEvent,
        &kit.owner_token,
        replay.clone(),
    )
    .await
    .expect(ResponseCode::InvalidState);
    kit.op(Operation::TestWebhook, &kit.owner_token, json!({}))
        .await
        .expect(ResponseCode::InvalidState);
    kit.op(
        Operation::UpdateWebhookConfiguration,
        &integration,
        json!({"is_active": true}),
    )
    .await
    .expect(ResponseCode::Success);
    kit.op(Operation::ReplayWebhookEvent, &kit.owner_token, replay)
        .await
        .expect(ResponseCode::Success);
    kit.webhooks().deliver_due().await.unwrap();
    assert_eq!(receiver.counts().get(&id), Some(&1));
}

async fn redirects_are_not_followed(kit: TestKit) {
    let receiver = Receiver::start().await;
    configure(&kit, &kit.owner_token, &receiver.url(), json!({})).await;
    receiver.set(Mode::Redirect);
    credit(&kit, "10.00").await;
    kit.webhooks().deliver_due().await.unwrap();
    let entry = events(&kit, &kit.owner_token, json!({})).await[0].clone();
    assert_eq!(entry["status"], "pending");
    assert_eq!(entry["last_response_status"], 302);
    assert!(
        entry["last_error"]
            .as_str()
            .unwrap()
            .contains("redirects are not followed"),
        "{entry}"
    );
}

async fn rotation_signs_with_both_secrets_until_the_overlap_ends(kit: TestKit) {
    let receiver = Receiver::start().await;
    let old = configure(&kit, &kit.owner_token, &receiver.url(), json!({})).await;
    let rotate = || {
        Call::new(
            Operation::RotateWebhookSecret.path(),
            Some(&kit.owner_token),
            json!({}),
        )
        .header("idempotency-key", "rotate-2026-11-23")
    };
    let first = kit.send(rotate()).await;
    let new = first.expect(ResponseCode::Success)["secret"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(new, old);
    // A retry after a lost answer gets the same secret, not a second rotation.
    let retry = kit.send(rotate()).await;
    assert_eq!(retry.expect(ResponseCode::Success)["secret"], new.as_str());
    assert_eq!(retry.header("idempotent-replayed"), Some("true"));

    kit.op(Operation::TestWebhook, &kit.owner_token, json!({}))
        .await
        .expect(ResponseCode::Success);
    kit.webhooks().deliver_due().await.unwrap();
    let during = receiver.deliveries()[0].clone();
    assert_eq!(
        during.signature.split(' ').count(),
        2,
        "{}",
        during.signature
    );
    assert!(verifies(&new, &during));
    assert!(verifies(&old, &during));
    assert_eq!(during.event()["type"], "webhook.test");
    assert_eq!(during.event()["data"]["requested_by"], "Adaeze Okafor");

    kit.clock
        .advance(Duration::hours(24) + Duration::seconds(1));
    let owner = kit.login(&kit.business.owner_email, OWNER_PASSWORD).await;
    kit.op(Operation::TestWebhook, &owner, json!({}))
        .await
        .expect(ResponseCode::Success);
    kit.webhooks().deliver_due().await.unwrap();
    let after = receiver.deliveries()[1].clone();
    assert_eq!(after.signature.split(' ').count(), 1);
    assert!(verifies(&new, &after));
    assert!(!verifies(&old, &after));
}

async fn subscriptions_choose_the_kinds(kit: TestKit) {
    let receiver = Receiver::start().await;
    configure(
        &kit,
        &kit.owner_token,
        &receiver.url(),
        json!({"event_types": ["account.created"]}),
    )
    .await;
    credit(&kit, "10.00").await;
    kit.op(
        Operation::CreateAccountWeb,
        &kit.owner_token,
        json!({"account_name": "Operations"}),
    )
    .await
    .expect(ResponseCode::Success);
    kit.op(Operation::TestWebhook, &kit.owner_token, json!({}))
        .await
        .expect(ResponseCode::Success);
    kit.webhooks().deliver_due().await.unwrap();
    let kinds: BTreeSet<String> = receiver
        .deliveries()
        .iter()
        .map(|d| d.event()["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        kinds,
        BTreeSet::from(["account.created".to_owned(), "webhook.test".to_owned()])
    );
    let skipped = events(&kit, &kit.owner_token, json!({"status": "skipped"})).await;
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0]["event_type"], "collection.received");
}

async fn an_account_status_change_is_an_event(kit: TestKit) {
    let receiver = Receiver::start().await;
    configure(&kit, &kit.owner_token, &receiver.url(), json!({})).await;
    kobo::money::accounts::change_status(
        &kit.store,
        &kit.clock,
        &kit.business.main_account_number,
        generated_server::models::AccountStatus::Blocked,
        "Suspected fraud, under review",
    )
    .await
    .unwrap();
    kit.webhooks().deliver_due().await.unwrap();
    let event = receiver.deliveries()[0].event();
    assert_eq!(event["type"], "account.status_changed");
    assert_eq!(event["data"]["previous_status"], "active");
    assert_eq!(event["data"]["account"]["status"], "blocked");
    assert_eq!(event["data"]["reason"], "Suspected fraud, under review");
}

on_both_stores!(config: crate::local_development() =>
    deliveries_are_signed_recorded_and_match_the_log,
    a_failing_endpoint_is_retried_on_schedule_then_fails_and_replays,
    a_receiver_down_for_a_while_gets_every_event_once_by_id,
    a_hanging_endpoint_does_not_hold_up_another_business,
    a_paused_endpoint_skips_and_replays_after_resuming,
    events_before_the_endpoint_are_skipped_and_replayable,
    an_event_with_no_endpoint_is_recorded_skipped_not_queued,
    an_attempt_cut_off_by_a_crash_is_sent_again_after_its_lease,
    redirects_are_not_followed,
    rotation_signs_with_both_secrets_until_the_overlap_ends,
    subscriptions_choose_the_kinds,
    an_account_status_change_is_an_event,
);

/// Two processes (two pools) pass over the same due events at once: on PostgreSQL they truly
/// run in parallel, and every event is still sent exactly once.
async fn two_processes_never_send_an_event_twice(kind: StoreKind) {
    let mut config = crate::local_development();
    config.webhooks.per_endpoint = 64;
    let kit = TestKit::start(kind, config).await;
    let receiver = Receiver::start().await;
    configure(&kit, &kit.owner_token, &receiver.url(), json!({})).await;
    let token = kit.integration_token().await;
    for _ in 0..40 {
        kit.credit(&token, &kit.business.main_account_number, "1.00")
            .await;
    }
    let other = kit.another_process().await;
    let (mine, theirs) = (kit.webhooks(), other.webhooks());
    let (a, b) = tokio::join!(mine.deliver_due(), theirs.deliver_due());
    assert_eq!(a.unwrap() + b.unwrap(), 40);
    let counts = receiver.counts();
    assert_eq!(counts.len(), 40);
    assert!(counts.values().all(|&n| n == 1), "{counts:?}");
}

on_both_stores!(kind: two_processes_never_send_an_event_twice);
