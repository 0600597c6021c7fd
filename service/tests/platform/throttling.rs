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
    let free = kit
        .api
        .config()
        .login
        .per_address_and_credential
        .free_attempts;
    for attempt in 1..=free {
        let reply = kit.send(login(OWNER, "wrong-password")).await;
        assert_eq!(
            reply.code(),
            Some(ResponseCode::Unauthenticated),
            "attempt {attempt}: {reply:?}"
        );
    }
    // Locked now at this address: even the right password gets 29.
    let reply = kit.send(login(OWNER, OWNER_PASSWORD)).await;
    assert_eq!(reply.status, 429, "{reply:?}");
    reply.expect(ResponseCode::TooManyRequests);
    let retry_after: u64 = reply.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=30).contains(&retry_after), "{retry_after}");

    // From an address that is not failing, the right password gets in: the failures above
    // lock their own address, not the member.
    let elsewhere = IpAddr::V4(Ipv4Addr::new(41, 58, 0, 9));
    kit.send(login(OWNER, OWNER_PASSWORD).from_ip(elsewhere))
        .await
        .expect(ResponseCode::Success);
    // Another member's email from the failing address is not locked (the address allows more).
    let other = kit
        .send(login("someone@adaezefoods.ng", "whatever-password"))
        .await;
    assert_eq!(other.code(), Some(ResponseCode::Unauthenticated));

    // Once the lock has passed (waiting exactly Retry-After), the right password works and
    // forgets the failures: the whole allowance is there again, then the lock.
    kit.clock
        .advance(chrono::Duration::seconds(retry_after as i64));
    kit.login(OWNER, OWNER_PASSWORD).await;
    for _ in 0..free {
        kit.send(login(OWNER, "wrong-password"))
            .await
            .expect(ResponseCode::Unauthenticated);
    }
    kit.send(login(OWNER, OWNER_PASSWORD))
        .await
        .expect(ResponseCode::TooManyRequests);
}

/// Failing on purpose, from many addresses, keeps no one out: the member gets in from an
/// address they used before at once, and from a new one after a short wait (slowed, not
/// locked).
async fn failures_sent_on_purpose_from_elsewhere_lock_no_one_out(kit: TestKit) {
    let slowing = kit.api.config().login.per_credential;
    for n in 0..(slowing.free_attempts + 10) {
        let attacker = IpAddr::V4(Ipv4Addr::new(197, 210, (n / 200) as u8, (n % 200) as u8));
        let reply = kit
            .send(login(OWNER, "wrong-password").from_ip(attacker))
            .await;
        assert!(
            matches!(
                reply.code(),
                Some(ResponseCode::Unauthenticated | ResponseCode::TooManyRequests)
            ),
            "{reply:?}"
        );
    }
    // The kit's owner logged in from CLIENT_IP: that address is known and gets in at once.
    kit.send(login(OWNER, OWNER_PASSWORD))
        .await
        .expect(ResponseCode::Success);
    // A new address waits at most the slowing interval, never a lock.
    let new_address = IpAddr::V4(Ipv4Addr::new(41, 58, 0, 10));
    let reply = kit
        .send(login(OWNER, OWNER_PASSWORD).from_ip(new_address))
        .await;
    if reply.code() == Some(ResponseCode::TooManyRequests) {
        let retry_after: u64 = reply.header("retry-after").unwrap().parse().unwrap();
        assert!(retry_after <= slowing.max_lock_seconds, "{retry_after}");
        kit.clock
            .advance(chrono::Duration::seconds(retry_after as i64));
        kit.send(login(OWNER, OWNER_PASSWORD).from_ip(new_address))
            .await
            .expect(ResponseCode::Success);
    } else {
        reply.expect(ResponseCode::Success);
    }

    // The same for an integration: failures from elsewhere do not stop its own server.
    let token = json!({"client_id": kit.business.client_id,
                       "client_secret": kit.business.client_secret});
    let generate = |body: serde_json::Value| Call::new(Operation::GenerateToken.path(), None, body);
    kit.send(generate(token.clone()))
        .await
        .expect(ResponseCode::Success);
    let wrong = json!({"client_id": kit.business.client_id, "client_secret": "kbs_sandbox_no"});
    let slowing = kit.api.config().token.per_credential;
    for n in 0..(slowing.free_attempts + 10) {
        let attacker = IpAddr::V4(Ipv4Addr::new(102, 88, (n / 200) as u8, (n % 200) as u8));
        kit.send(generate(wrong.clone()).from_ip(attacker)).await;
    }
    kit.send(generate(token))
        .await
        .expect(ResponseCode::Success);
}

async fn one_address_failing_on_many_emails_is_throttled(kit: TestKit) {
    let free = kit.api.config().login.per_address.free_attempts;
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
    let free = kit
        .api
        .config()
        .token
        .per_address_and_credential
        .free_attempts;
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
    let free = kit.api.config().password_change_per_member.free_attempts;
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
    failures_sent_on_purpose_from_elsewhere_lock_no_one_out,
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

/// A client that rotates through the addresses of its IPv6 /64 (as privacy extensions do) is
/// one address to the throttle.
async fn an_ipv6_64_is_one_address(kit: TestKit) {
    let free = kit.api.config().login.per_address.free_attempts;
    for n in 0..free {
        let rotating = IpAddr::from([0x2c0f, 0xf5c0, 1, 2, 0xaaaa, 0, 0, n as u16 + 1]);
        let email = format!("guess{n}@adaezefoods.ng");
        kit.send(login(&email, "wrong-password").from_ip(rotating))
            .await
            .expect(ResponseCode::Unauthenticated);
    }
    let next = IpAddr::from([0x2c0f, 0xf5c0, 1, 2, 0xbbbb, 0, 0, 1]);
    kit.send(login(OWNER, OWNER_PASSWORD).from_ip(next))
        .await
        .expect(ResponseCode::TooManyRequests);
    // Another /64 is another address.
    let neighbour = IpAddr::from([0x2c0f, 0xf5c0, 1, 3, 0, 0, 0, 1]);
    kit.send(login(OWNER, OWNER_PASSWORD).from_ip(neighbour))
        .await
        .expect(ResponseCode::Success);
}

on_both_stores!(an_ipv6_64_is_one_address);
