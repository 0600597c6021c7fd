//! `Idempotency-Key` on add_member and create_role.

use generated_server::{Operation, ResponseCode};
use kobo::on_both_stores;
use kobo::platform::idempotency::{self, Claim};
use kobo::platform::permissions::VIEWER_ROLE_ID;
use kobo::testkit::{Call, TestKit};
use serde_json::{json, Value};

fn create_role<'a>(kit: &'a TestKit, key: &str, body: Value) -> Call<'a> {
    Call::new(Operation::CreateRole.path(), Some(&kit.owner_token), body)
        .header("idempotency-key", key)
}

async fn a_retry_replays_the_first_answer(kit: TestKit) {
    let body = json!({"name": "Treasury Analyst", "permission_codes": ["account.view"]});
    let first = kit.send(create_role(&kit, "key-1", body.clone())).await;
    let role = first.expect(ResponseCode::Success).clone();
    assert_eq!(first.header("idempotent-replayed"), Some("false"));

    // The same body with its fields in another order is the same request.
    let reordered = json!({"permission_codes": ["account.view"], "name": "Treasury Analyst"});
    let retry = kit.send(create_role(&kit, "key-1", reordered)).await;
    assert_eq!(retry.header("idempotent-replayed"), Some("true"));
    assert_eq!(retry.expect(ResponseCode::Success), &role);
    // One role and one audit entry: the retry executed nothing.
    let roles = kit
        .op(Operation::FetchRoles, &kit.owner_token, json!({}))
        .await;
    let named = |role: &&Value| role["name"] == "Treasury Analyst";
    let roles = roles.expect(ResponseCode::Success).as_array().unwrap();
    assert_eq!(roles.iter().filter(named).count(), 1);
    let audit = kit
        .op(Operation::FetchAuditLogs, &kit.owner_token, json!({}))
        .await;
    let entries = audit.expect(ResponseCode::Success).as_array().unwrap();
    let created = |entry: &&Value| entry["action"] == "create_role";
    assert_eq!(entries.iter().filter(created).count(), 1);

    // Another key is another request: the name is taken now.
    kit.send(create_role(&kit, "key-2", body.clone()))
        .await
        .expect(ResponseCode::Duplicate);
    // Without a key there is no replay either.
    kit.op(Operation::CreateRole, &kit.owner_token, body)
        .await
        .expect(ResponseCode::Duplicate);
}

async fn the_same_key_with_another_body_is_refused(kit: TestKit) {
    let body = json!({"name": "Auditor", "permission_codes": ["audit_log.view"]});
    kit.send(create_role(&kit, "key-1", body))
        .await
        .expect(ResponseCode::Success);
    let other = json!({"name": "Auditor", "permission_codes": ["member.view"]});
    let reply = kit.send(create_role(&kit, "key-1", other)).await;
    assert_eq!(reply.status, 422);
    reply.expect(ResponseCode::IdempotencyKeyReused);
}

async fn a_failed_request_leaves_no_claim(kit: TestKit) {
    let invalid = json!({"name": "Viewer", "permission_codes": ["account.view"]});
    kit.send(create_role(&kit, "key-1", invalid))
        .await
        .expect(ResponseCode::Duplicate);
    // The key is free for a corrected request.
    let fixed = json!({"name": "Reader", "permission_codes": ["account.view"]});
    kit.send(create_role(&kit, "key-1", fixed))
        .await
        .expect(ResponseCode::Success);
}

async fn invitations_replay_without_sending_twice(kit: TestKit) {
    let body = json!({"email": "ife.olawale@adaezefoods.ng", "first_name": "Ife",
                      "last_name": "Olawale", "role_id": VIEWER_ROLE_ID});
    let call = || {
        Call::new(
            Operation::AddMember.path(),
            Some(&kit.owner_token),
            body.clone(),
        )
        .header("idempotency-key", "0f8c2a54-7c1e-4f57-9a8b-2d6e3f1c9b70")
    };
    kit.send(call()).await.expect(ResponseCode::Success);
    let retry = kit.send(call()).await;
    assert_eq!(retry.expect(ResponseCode::Success), &json!({}));
    assert_eq!(retry.header("idempotent-replayed"), Some("true"));
    assert_eq!(kit.outbox("ife.olawale@adaezefoods.ng").await.len(), 1);
}

/// Keys are per business and operation; a claim committed without an answer is in progress.
async fn keys_are_scoped_and_in_progress_claims_answer_28(kit: TestKit) {
    let (other, other_token) = kit
        .other_business("Lagos Fresh Produce Ltd", "owner@lagosfresh.ng")
        .await;
    let body = json!({"name": "Auditor", "permission_codes": ["audit_log.view"]});
    kit.send(create_role(&kit, "shared-key", body.clone()))
        .await
        .expect(ResponseCode::Success);
    let theirs = kit
        .send(
            Call::new(Operation::CreateRole.path(), Some(&other_token), body)
                .header("idempotency-key", "shared-key"),
        )
        .await;
    assert_eq!(theirs.header("idempotent-replayed"), Some("false"));
    theirs.expect(ResponseCode::Success);

    let hash = idempotency::request_hash(&json!({"x": 1})).unwrap();
    let mut tx = kit.store.begin().await.unwrap();
    let claim = idempotency::claim_key(
        &mut tx,
        kit.clock.now(),
        &other.business_id,
        Operation::AddMember,
        "slow-key",
        &hash,
    )
    .await
    .unwrap();
    assert!(matches!(claim, Claim::New(_)));
    tx.commit().await.unwrap();
    let mut tx = kit.store.begin().await.unwrap();
    let error = idempotency::claim_key(
        &mut tx,
        kit.clock.now(),
        &other.business_id,
        Operation::AddMember,
        "slow-key",
        &hash,
    )
    .await
    .unwrap_err();
    assert_eq!(error.code(), ResponseCode::IdempotencyKeyInProgress);
    drop(tx);
    // A day later the keys have expired and are purged.
    kit.clock.advance(
        chrono::Duration::hours(idempotency::RETENTION_HOURS) + chrono::Duration::seconds(1),
    );
    let purged = idempotency::purge_expired(&kit.store, kit.clock.now()).await;
    assert_eq!(purged.unwrap(), 3);
}

on_both_stores!(
    a_retry_replays_the_first_answer,
    the_same_key_with_another_body_is_refused,
    a_failed_request_leaves_no_claim,
    invitations_replay_without_sending_twice,
    keys_are_scoped_and_in_progress_claims_answer_28,
);
