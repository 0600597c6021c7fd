//! Progressive throttling of failed credential checks.

use std::net::{IpAddr, Ipv4Addr};

use generated_server::{Operation, ResponseCode};
use kobo::kernel::config::Config;
use kobo::kernel::config::RequestBudget;
use kobo::on_both_stores;
use kobo::testkit::{Call, StoreKind, TestKit, OWNER_PASSWORD};
use serde_json::json;

const OWNER: &str = "adaeze.okafor@adaezefoods.ng";

fn login(email: &str, password: &str) -> Call<'static> {
    Call::new(
        Operation::Login.path(),
        None,
        json!({"email": email, "password": password}),
    )
}

async fn repeated_failed_logins_are_throttled_with_retry_after(kit: TestKit) {
    let free = kit.api.config().login_per_email.free_failures;
    for attempt in 1..=free {
        let reply = kit.send(login(OWNER, "wrong-password")).await;
        assert_eq!(
            reply.code(),
            Some(ResponseCode::Unauthenticated),
            "attempt {attempt}: {reply:?}"
        );
    }
    // Locked now: even the right password gets 29, from any address.
    let elsewhere = IpAddr::V4(Ipv4Addr::new(41, 58, 0, 9));
    let reply = kit
        .send(login(OWNER, OWNER_PASSWORD).from_ip(elsewhere))
        .await;
    assert_eq!(reply.status, 429, "{reply:?}");
    reply.expect(ResponseCode::TooManyRequests);
    let retry_after: u64 = reply.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=30).contains(&retry_after), "{retry_after}");

    // Another member's email from the same address is not locked (the address allows more).
    let other = kit
        .send(login("someone@adaezefoods.ng", "whatever-password"))
        .await;
    assert_eq!(other.code(), Some(ResponseCode::Unauthenticated));

    // Once the lock has passed (waiting exactly Retry-After), the right password works and
    // clears the count.
    kit.clock
        .advance(chrono::Duration::seconds(retry_after as i64));
    kit.login(OWNER, OWNER_PASSWORD).await;
    let remaining: i64 = kit
        .count(
            "SELECT COUNT(*) FROM throttles WHERE key = $1",
            &kobo::platform::identity::login_email_key(OWNER),
        )
        .await;
    assert_eq!(remaining, 0);

    // Failures after the lock grow the lock: one more failure past the free ones locks again.
    for _ in 0..free {
        kit.send(login(OWNER, "wrong-password"))
            .await
            .expect(ResponseCode::Unauthenticated);
    }
    kit.send(login(OWNER, OWNER_PASSWORD))
        .await
        .expect(ResponseCode::TooManyRequests);
}

async fn one_address_failing_on_many_emails_is_throttled(kit: TestKit) {
    let free = kit.api.config().login_per_address.free_failures;
    let attacker = IpAddr::V4(Ipv4Addr::new(197, 210, 1, 1));
    for n in 0..free {
        let email = format!("guess{n}@adaezefoods.ng");
        let reply = kit
            .send(login(&email, "wrong-password").from_ip(attacker))
            .await;
        assert_eq!(reply.code(), Some(ResponseCode::Unauthenticated));
    }
    let reply = kit
        .send(login(OWNER, OWNER_PASSWORD).from_ip(attacker))
        .await;
    reply.expect(ResponseCode::TooManyRequests);
    // The owner, from their own address, is unaffected.
    kit.login(OWNER, OWNER_PASSWORD).await;
}

async fn wrong_client_secrets_are_throttled(kit: TestKit) {
    let free = kit.api.config().token_per_client.free_failures;
    let body = json!({"client_id": kit.business.client_id, "client_secret": "kbs_sandbox_nope"});
    for _ in 0..free {
        let reply = kit
            .send(Call::new(
                Operation::GenerateToken.path(),
                None,
                body.clone(),
            ))
            .await;
        reply.expect(ResponseCode::Unauthenticated);
    }
    let right = json!({"client_id": kit.business.client_id,
                       "client_secret": kit.business.client_secret});
    let reply = kit
        .send(Call::new(Operation::GenerateToken.path(), None, right))
        .await;
    reply.expect(ResponseCode::TooManyRequests);
    assert!(reply.header("retry-after").is_some());
}

async fn wrong_old_passwords_are_throttled(kit: TestKit) {
    let free = kit.api.config().password_change_per_member.free_failures;
    let body = json!({"old_password": "not-the-password", "new_password": "Suya-And-Zobo-2027",
                      "confirm_password": "Suya-And-Zobo-2027"});
    for _ in 0..free {
        kit.op(Operation::ChangePassword, &kit.owner_token, body.clone())
            .await
            .expect(ResponseCode::OldPasswordIncorrect);
    }
    kit.op(Operation::ChangePassword, &kit.owner_token, body)
        .await
        .expect(ResponseCode::TooManyRequests);
}

on_both_stores!(
    repeated_failed_logins_are_throttled_with_retry_after,
    one_address_failing_on_many_emails_is_throttled,
    wrong_client_secrets_are_throttled,
    wrong_old_passwords_are_throttled,
);

/// Every authenticated request spends its credential's budget: over it, `29` with
/// `Retry-After`, whatever the operation; other credentials are unaffected.
async fn each_credential_has_a_request_budget(kind: StoreKind) {
    let burst = 5;
    let config = Config {
        request_budget: RequestBudget {
            per_minute: std::num::NonZeroU32::new(1).unwrap(),
            burst: std::num::NonZeroU32::new(burst).unwrap(),
        },
        ..Config::default()
    };
    let kit = TestKit::start(kind, config).await;
    let owner = kit.owner_token.clone();
    for call in 1..=burst {
        let reply = kit.op(Operation::GetProfile, &owner, json!({})).await;
        assert_eq!(
            reply.code(),
            Some(ResponseCode::Success),
            "call {call}: {reply:?}"
        );
    }
    let refused = kit.op(Operation::GetProfile, &owner, json!({})).await;
    assert_eq!(refused.status, 429, "{refused:?}");
    refused.expect(ResponseCode::TooManyRequests);
    let retry_after: u64 = refused.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry_after), "{retry_after}");

    // The business's integration client has a budget of its own: its request gets past
    // authentication (whatever the operation then answers).
    let integration = kit.integration_token().await;
    let reply = kit
        .op(Operation::FetchCustomerAccounts, &integration, json!({}))
        .await;
    assert_ne!(
        reply.code(),
        Some(ResponseCode::TooManyRequests),
        "{reply:?}"
    );
    assert_ne!(
        reply.code(),
        Some(ResponseCode::Unauthenticated),
        "{reply:?}"
    );
}

on_both_stores!(kind: each_credential_has_a_request_budget);
