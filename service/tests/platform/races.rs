//! Races on PostgreSQL, where transactions truly run in parallel: many calls at once, spread
//! over two `kobo` processes (two connection pools) on one database. SQLite serializes
//! writes, so these run on PostgreSQL only: there a lost race would show.

use generated_server::{Operation, ResponseCode};
use kobo::platform::permissions::VIEWER_ROLE_ID;
use kobo::testkit::{Call, TestKit, MEMBER_PASSWORD};
use serde_json::{json, Value};

/// Calls at once in each race.
const RACERS: usize = 16;

fn count(replies: &[kobo::testkit::Reply], code: ResponseCode) -> usize {
    replies
        .iter()
        .filter(|reply| reply.code() == Some(code))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_invitation_accepted_at_once_by_many_activates_one_member_once() {
    let kit = TestKit::postgres().await;
    let second = kit.another_process().await;
    kit.invite(
        &kit.owner_token,
        "ife.olawale@adaezefoods.ng",
        VIEWER_ROLE_ID,
    )
    .await;
    let token = kit.invitation_token("ife.olawale@adaezefoods.ng").await;
    let body = json!({"token": token, "password": MEMBER_PASSWORD,
                      "confirm_password": MEMBER_PASSWORD});
    let calls = (0..RACERS)
        .map(|_| Call::new(Operation::AcceptInvite.path(), None, body.clone()))
        .collect();
    let replies = kit.race(&[second], calls).await;
    assert_eq!(count(&replies, ResponseCode::Success), 1, "{replies:#?}");
    assert_eq!(
        count(&replies, ResponseCode::Unauthenticated),
        RACERS - 1,
        "{replies:#?}"
    );
    // One audit entry for the one acceptance.
    let audit = kit
        .op(Operation::FetchAuditLogs, &kit.owner_token, json!({}))
        .await;
    let entries = audit.expect(ResponseCode::Success).as_array().unwrap();
    let accepted = |entry: &&Value| entry["action"] == "accept_invite";
    assert_eq!(entries.iter().filter(accepted).count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_idempotency_key_sent_at_once_by_many_executes_once() {
    let kit = TestKit::postgres().await;
    let second = kit.another_process().await;
    let body = json!({"name": "Treasury Analyst", "permission_codes": ["account.view"]});
    let calls = (0..RACERS)
        .map(|_| {
            Call::new(
                Operation::CreateRole.path(),
                Some(&kit.owner_token),
                body.clone(),
            )
            .header("idempotency-key", "payroll-2026-11")
        })
        .collect();
    let replies = kit.race(&[second], calls).await;
    // Each call either replays the one execution or is told it is still in progress.
    let executed: Vec<_> = replies
        .iter()
        .filter(|reply| reply.header("idempotent-replayed") == Some("false"))
        .collect();
    assert_eq!(executed.len(), 1, "{replies:#?}");
    let role = executed[0].expect(ResponseCode::Success);
    for reply in &replies {
        match reply.code() {
            Some(ResponseCode::Success) => assert_eq!(&reply.body["data"], role),
            Some(ResponseCode::IdempotencyKeyInProgress) => {}
            other => panic!("unexpected {other:?}: {reply:#?}"),
        }
    }
    let roles = kit
        .op(Operation::FetchRoles, &kit.owner_token, json!({}))
        .await;
    let roles = roles.expect(ResponseCode::Success).as_array().unwrap();
    let named = |role: &&Value| role["name"] == "Treasury Analyst";
    assert_eq!(roles.iter().filter(named).count(), 1);
}
