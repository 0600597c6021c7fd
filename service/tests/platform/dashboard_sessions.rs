//! The Dashboard's sessions and invitations as a real business needs them (issue 59): a
//! session left alone ends after thirty minutes without a request (defect 15), and an
//! invitation link is read, naming the business and the role, before a password is asked for
//! (defect 13).

use chrono::Duration;
use generated_server::{Operation, ResponseCode};
use kobo::on_both_stores;
use kobo::platform::permissions::CHECKER_ROLE_ID;
use kobo::testkit::{TestKit, MEMBER_PASSWORD, OWNER_PASSWORD};
use serde_json::json;

/// Every request restarts the idle time, within the token's twelve hours; thirty minutes
/// without one end the session.
async fn a_dashboard_session_ends_after_thirty_minutes_without_a_request(kit: TestKit) {
    let body = json!({"email": "adaeze.okafor@adaezefoods.ng", "password": OWNER_PASSWORD});
    let (status, answer) = kit.call_public(Operation::Login.path(), body).await;
    assert_eq!(status, 200, "{answer:#}");
    let login = &answer["data"];
    assert_eq!(login["idle_expires_in"], 1800);
    assert_eq!(login["expires_in"], 43200);
    let token = login["access_token"].as_str().unwrap().to_owned();
    let profile = async || kit.op(Operation::GetProfile, &token, json!({})).await;
    // Busy for two hours, a request every twenty minutes: never idle that long.
    for _ in 0..6 {
        kit.clock.advance(Duration::minutes(20));
        profile().await.expect(ResponseCode::Success);
    }
    kit.clock.advance(Duration::minutes(29));
    profile().await.expect(ResponseCode::Success);
    kit.clock.advance(Duration::minutes(31));
    profile().await.expect(ResponseCode::Unauthenticated);
    // Integration tokens have no idle timeout: their hour is theirs.
    let api = kit.integration_token().await;
    kit.clock.advance(Duration::minutes(45));
    kit.op(Operation::FetchCustomerAccounts, &api, json!({}))
        .await
        .expect(ResponseCode::Success);
}

/// The invitation page reads the link first; a used link is refused at once.
async fn an_invitation_is_read_before_a_password_is_asked_for(kit: TestKit) {
    kit.invite(
        &kit.owner_token,
        "ngozi.eze@adaezefoods.ng",
        CHECKER_ROLE_ID,
    )
    .await;
    let mail = kit.outbox("ngozi.eze@adaezefoods.ng").await;
    let mail = mail.last().expect("the invitation email");
    assert!(
        !mail.body.contains("POST") && !mail.body.contains("/api/"),
        "the invitation email asks for no HTTP request: {}",
        mail.body
    );
    let token = kit.invitation_token("ngozi.eze@adaezefoods.ng").await;
    let read = kit
        .call_public(Operation::GetInvitation.path(), json!({"token": token}))
        .await;
    assert_eq!(read.0, 200, "{:#}", read.1);
    let invitation = &read.1["data"];
    assert_eq!(invitation["business_name"], "Adaeze Foods Ltd");
    assert_eq!(invitation["role_name"], "Checker");
    assert_eq!(invitation["email"], "ngozi.eze@adaezefoods.ng");
    let names = invitation["permission_names"].as_array().unwrap();
    assert!(
        names.iter().any(|name| name == "Approve transfers"),
        "{names:?}"
    );
    // Reading it did not use it up.
    let accepted = kit
        .call_public(
            Operation::AcceptInvite.path(),
            json!({"token": token, "password": MEMBER_PASSWORD, "confirm_password": MEMBER_PASSWORD}),
        )
        .await;
    assert_eq!(accepted.0, 200, "{:#}", accepted.1);
    let used = kit
        .call_public(Operation::GetInvitation.path(), json!({"token": token}))
        .await;
    assert_eq!(used.0, 401);
    assert_eq!(used.1["response_code"], "41");
    let unknown = kit
        .call_public(
            Operation::GetInvitation.path(),
            json!({"token": "inv_not-a-token"}),
        )
        .await;
    assert_eq!(unknown.1["response_code"], "41");
}

on_both_stores!(
    a_dashboard_session_ends_after_thirty_minutes_without_a_request,
    an_invitation_is_read_before_a_password_is_asked_for,
);
