//! Tokens and sessions: every token is backed by a session row checked on each request.

use generated_server::{Operation, ResponseCode, TokenFamily};
use kobo::on_both_stores;
use kobo::platform::permissions::VIEWER_ROLE_ID;
use kobo::testkit::{Call, TestKit, OWNER_PASSWORD};
use serde_json::json;

use crate::child::Server;

const OWNER: &str = "adaeze.okafor@adaezefoods.ng";

async fn profile_code(kit: &TestKit, token: &str) -> Option<ResponseCode> {
    kit.op(Operation::GetProfile, token, json!({})).await.code()
}

async fn login_returns_a_working_dashboard_token(kit: TestKit) {
    let reply = kit
        .send(Call::new(
            Operation::Login.path(),
            None,
            json!({"email": "Adaeze.Okafor@AdaezeFoods.ng", "password": OWNER_PASSWORD}),
        ))
        .await;
    let data = reply.expect(ResponseCode::Success);
    assert_eq!(data["token_type"], "Bearer");
    assert_eq!(data["expires_in"], 43200);
    assert_eq!(data["member"]["email"], OWNER);
    assert_eq!(data["member"]["role_name"], "Owner");
    assert!(data["member"]["last_login"].is_string());
    let codes = data["permission_codes"].as_array().unwrap();
    assert_eq!(codes.len(), generated_server::Permission::ALL.len());
    assert_eq!(codes[0], "self.manage");

    let token = data["access_token"].as_str().unwrap();
    let profile = kit.op(Operation::GetProfile, token, json!({})).await;
    let profile = profile.expect(ResponseCode::Success);
    assert_eq!(profile["member"]["email"], OWNER);
    assert_eq!(profile["role"]["name"], "Owner");
    assert_eq!(profile["business"]["name"], "Adaeze Foods Ltd");
    assert_eq!(profile["business"]["status"], "active");
    assert_eq!(profile["business"]["environment"], "sandbox");
    assert_eq!(profile["business"]["id"], kit.business.business_id.as_str());
}

async fn wrong_credentials_all_get_the_same_41(kit: TestKit) {
    kit.invite(&kit.owner_token, "pending@adaezefoods.ng", VIEWER_ROLE_ID)
        .await;
    let attempts = [
        json!({"email": OWNER, "password": "wrong-password"}),
        json!({"email": "nobody@adaezefoods.ng", "password": OWNER_PASSWORD}),
        json!({"email": "pending@adaezefoods.ng", "password": OWNER_PASSWORD}),
    ];
    let mut messages = Vec::new();
    for body in attempts {
        let reply = kit
            .send(Call::new(Operation::Login.path(), None, body))
            .await;
        assert_eq!(reply.status, 401);
        reply.expect(ResponseCode::Unauthenticated);
        messages.push(reply.body["message"].clone());
    }
    assert!(messages.iter().all(|m| *m == messages[0]), "{messages:?}");
    assert_eq!(messages[0], "Invalid email or password");
}

async fn logout_revokes_that_session_at_once(kit: TestKit) {
    let other = kit.login(OWNER, OWNER_PASSWORD).await;
    kit.op(Operation::Logout, &kit.owner_token, json!({}))
        .await
        .expect(ResponseCode::Success);
    assert_eq!(
        profile_code(&kit, &kit.owner_token).await,
        Some(ResponseCode::Unauthenticated)
    );
    let again = kit.op(Operation::Logout, &kit.owner_token, json!({})).await;
    assert_eq!(again.status, 401);
    // The member's other session is untouched.
    assert_eq!(
        profile_code(&kit, &other).await,
        Some(ResponseCode::Success)
    );
}

async fn change_password_revokes_every_session_including_the_current_one(kit: TestKit) {
    let second = kit.login(OWNER, OWNER_PASSWORD).await;
    let change = |old: &str, new: &str, confirm: &str| json!({"old_password": old, "new_password": new, "confirm_password": confirm});
    let cases = [
        (
            change("wrong-password", "Suya-And-Zobo-2027", "Suya-And-Zobo-2027"),
            ResponseCode::OldPasswordIncorrect,
            "",
        ),
        (
            change(OWNER_PASSWORD, "Suya-And-Zobo-2027", "Suya-And-Zobo-2028"),
            ResponseCode::InvalidRequest,
            "`confirm_password`",
        ),
        (
            change(OWNER_PASSWORD, OWNER_PASSWORD, OWNER_PASSWORD),
            ResponseCode::InvalidRequest,
            "`new_password`",
        ),
    ];
    for (body, code, field) in cases {
        let reply = kit
            .op(Operation::ChangePassword, &kit.owner_token, body)
            .await;
        assert_eq!(reply.code(), Some(code), "{reply:?}");
        assert!(
            reply.body["message"].as_str().unwrap().starts_with(field),
            "{reply:?}"
        );
    }
    // Nothing changed so far: both sessions still work.
    assert_eq!(
        profile_code(&kit, &second).await,
        Some(ResponseCode::Success)
    );

    kit.op(
        Operation::ChangePassword,
        &kit.owner_token,
        change(OWNER_PASSWORD, "Suya-And-Zobo-2027", "Suya-And-Zobo-2027"),
    )
    .await
    .expect(ResponseCode::Success);
    assert_eq!(
        profile_code(&kit, &kit.owner_token).await,
        Some(ResponseCode::Unauthenticated)
    );
    assert_eq!(
        profile_code(&kit, &second).await,
        Some(ResponseCode::Unauthenticated)
    );
    let old = kit
        .send(Call::new(
            Operation::Login.path(),
            None,
            json!({"email": OWNER, "password": OWNER_PASSWORD}),
        ))
        .await;
    old.expect(ResponseCode::Unauthenticated);
    let new = kit.login(OWNER, "Suya-And-Zobo-2027").await;
    assert_eq!(profile_code(&kit, &new).await, Some(ResponseCode::Success));
}

async fn a_token_of_the_other_family_is_refused(kit: TestKit) {
    let integration = kit.integration_token().await;
    let on_dashboard = kit.op(Operation::GetProfile, &integration, json!({})).await;
    assert_eq!(on_dashboard.status, 401);
    on_dashboard.expect(ResponseCode::Unauthenticated);
    let on_integration = kit
        .op(Operation::FetchBanks, &kit.owner_token, json!({}))
        .await;
    assert_eq!(on_integration.status, 401);
    on_integration.expect(ResponseCode::Unauthenticated);
    // The integration token itself works where it belongs.
    let fetch = kit.op(Operation::FetchBanks, &integration, json!({})).await;
    fetch.expect(ResponseCode::Success);
}

async fn garbage_forged_and_expired_tokens_get_41(kit: TestKit) {
    let claims = kit
        .api
        .tokens()
        .verify(&kit.owner_token, kit.clock.now())
        .unwrap();
    let mut tampered = kit.owner_token.clone();
    tampered.insert(tampered.len() - 3, 'x');
    let foreign_key = kobo::platform::tokens::TokenKeys::random().sign(&claims);
    let unknown_session = kit.forge_token(
        &uuid::Uuid::new_v4().to_string(),
        &claims.bid,
        TokenFamily::Dashboard,
    );
    let mut expired = claims.clone();
    expired.exp = chrono::Utc::now().timestamp() - 5;
    let expired = kit.api.tokens().sign(&expired);
    for token in [
        "garbage",
        &tampered,
        &foreign_key,
        &unknown_session,
        &expired,
    ] {
        let reply = kit.op(Operation::GetProfile, token, json!({})).await;
        assert_eq!(reply.status, 401, "{token}");
        reply.expect(ResponseCode::Unauthenticated);
    }
    // A session past its expiry refuses its token even though the JWT is still valid.
    kit.clock.advance(chrono::Duration::seconds(
        kit.api.config().dashboard_token_ttl_seconds as i64 + 1,
    ));
    assert_eq!(
        profile_code(&kit, &kit.owner_token).await,
        Some(ResponseCode::Unauthenticated)
    );
    // No token at all.
    let reply = kit
        .send(Call::new(Operation::GetProfile.path(), None, json!({})))
        .await;
    reply.expect(ResponseCode::Unauthenticated);
}

async fn a_deactivated_members_tokens_stop_working(kit: TestKit) {
    let (member_id, token) = kit
        .add_member("tunde.bakare@adaezefoods.ng", VIEWER_ROLE_ID)
        .await;
    assert_eq!(
        profile_code(&kit, &token).await,
        Some(ResponseCode::Success)
    );
    kit.op(
        Operation::UpdateMember,
        &kit.owner_token,
        json!({"member_id": member_id, "is_active": false}),
    )
    .await
    .expect(ResponseCode::Success);
    assert_eq!(
        profile_code(&kit, &token).await,
        Some(ResponseCode::Unauthenticated)
    );
    // Reactivated, the old token stays dead but the password works again.
    kit.op(
        Operation::UpdateMember,
        &kit.owner_token,
        json!({"member_id": member_id, "is_active": true}),
    )
    .await
    .expect(ResponseCode::Success);
    assert_eq!(
        profile_code(&kit, &token).await,
        Some(ResponseCode::Unauthenticated)
    );
    let fresh = kit
        .login(
            "tunde.bakare@adaezefoods.ng",
            kobo::testkit::MEMBER_PASSWORD,
        )
        .await;
    assert_eq!(
        profile_code(&kit, &fresh).await,
        Some(ResponseCode::Success)
    );
}

async fn integration_credentials_give_tokens_until_the_secret_is_regenerated(kit: TestKit) {
    let token = kit.integration_token().await;
    let wrong = kit
        .send(Call::new(
            Operation::GenerateToken.path(),
            None,
            json!({"client_id": kit.business.client_id, "client_secret": "kbs_sandbox_wrong"}),
        ))
        .await;
    assert_eq!(wrong.status, 401);
    assert_eq!(wrong.body["message"], "Invalid client_id or client_secret");

    let reply = kit
        .op(Operation::RegenerateSecret, &kit.owner_token, json!({}))
        .await;
    let data = reply.expect(ResponseCode::Success).clone();
    assert_eq!(data["client_id"], kit.business.client_id.as_str());
    let secret = data["client_secret"].as_str().unwrap();
    assert!(secret.starts_with("kbs_sandbox_"));
    assert_ne!(secret, kit.business.client_secret);

    // The old token and the old secret are dead; the new secret works.
    let fetch = kit.op(Operation::FetchBanks, &token, json!({})).await;
    fetch.expect(ResponseCode::Unauthenticated);
    let old = kit
        .send(Call::new(
            Operation::GenerateToken.path(),
            None,
            json!({"client_id": kit.business.client_id, "client_secret": kit.business.client_secret}),
        ))
        .await;
    old.expect(ResponseCode::Unauthenticated);
    let new = kit
        .send(Call::new(
            Operation::GenerateToken.path(),
            None,
            json!({"client_id": kit.business.client_id, "client_secret": secret}),
        ))
        .await;
    assert_eq!(new.expect(ResponseCode::Success)["expires_in"], 3600);
    // The stored secret is a hash, never the secret.
    let stored: i64 = kit
        .count(
            "SELECT COUNT(*) FROM businesses WHERE client_secret_hash = $1",
            secret,
        )
        .await;
    assert_eq!(stored, 0);
}

on_both_stores!(
    login_returns_a_working_dashboard_token,
    wrong_credentials_all_get_the_same_41,
    logout_revokes_that_session_at_once,
    change_password_revokes_every_session_including_the_current_one,
    a_token_of_the_other_family_is_refused,
    garbage_forged_and_expired_tokens_get_41,
    a_deactivated_members_tokens_stop_working,
    integration_credentials_give_tokens_until_the_secret_is_regenerated,
);

/// Sessions are checked without a read of the database (each process keeps those it has
/// read), yet a revocation made by another process is refused here within a second: the kit's
/// process changes the owner's password (every session revoked), then an operator revokes a
/// session by hand, while `kobo serve` on the same database holds the sessions in its cache.
async fn another_processs_revocation_is_refused_within_a_second(kit: TestKit) {
    let server = Server::start(&kit).await;
    let token = server.login(OWNER_PASSWORD);
    for _ in 0..3 {
        assert_eq!(server.profile_code(&token), "00");
    }
    let new_password = "Suya-And-Zobo-2027";
    kit.op(
        Operation::ChangePassword,
        &kit.owner_token,
        json!({"old_password": OWNER_PASSWORD, "new_password": new_password,
               "confirm_password": new_password}),
    )
    .await
    .expect(ResponseCode::Success);
    let after = server.refuses_after(&token).await;
    assert!(
        after <= std::time::Duration::from_secs(1),
        "refused after {after:?}"
    );

    let token = server.login(new_password);
    for _ in 0..3 {
        assert_eq!(server.profile_code(&token), "00");
    }
    kit.sql("UPDATE sessions SET revoked_at = created_at WHERE revoked_at IS NULL")
        .execute()
        .await;
    let after = server.refuses_after(&token).await;
    assert!(
        after <= std::time::Duration::from_secs(1),
        "refused after {after:?}"
    );
}

on_both_stores!(another_processs_revocation_is_refused_within_a_second);

/// The whole answer of `get_profile`, which must succeed.
async fn profile(kit: &TestKit, token: &str) -> serde_json::Value {
    let reply = kit.op(Operation::GetProfile, token, json!({})).await;
    reply.expect(ResponseCode::Success);
    reply.body
}

/// `get_profile` answers from the session it authenticated and reads nothing of its own: with
/// `members` renamed away it answers as before. A change made in this process shows at once: a
/// second login moves the member's `last_login`, which the first session's profile shows on its
/// next request.
async fn the_profile_comes_with_the_session_and_follows_each_change(kit: TestKit) {
    profile(&kit, &kit.owner_token).await;
    // The cache is used once this process has read the generation (every 200 ms).
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let before = profile(&kit, &kit.owner_token).await;
    // Not `execute`: a change by hand counts as one to what authentication reads.
    let rename = async |statement: &str| {
        let mut tx = kit.store.begin().await.unwrap();
        kit.sql(statement).execute_in(&mut tx).await;
        tx.commit().await.unwrap();
    };
    rename("ALTER TABLE members RENAME TO members_aside").await;
    let aside = kit
        .op(Operation::GetProfile, &kit.owner_token, json!({}))
        .await;
    rename("ALTER TABLE members_aside RENAME TO members").await;
    aside.expect(ResponseCode::Success);
    assert_eq!(aside.body, before);

    kit.clock.advance(chrono::Duration::minutes(5));
    let second = kit.login(OWNER, OWNER_PASSWORD).await;
    let after = profile(&kit, &kit.owner_token).await;
    assert_ne!(
        after["data"]["member"]["last_login"],
        before["data"]["member"]["last_login"]
    );
    assert_eq!(after, profile(&kit, &second).await);
}

on_both_stores!(the_profile_comes_with_the_session_and_follows_each_change);

/// A change to what a profile shows made by another process (the operator's hand on the
/// database, another server's login) shows in this server's answers within a second, though
/// it keeps each profile with its session.
async fn another_processs_profile_change_shows_within_a_second(kit: TestKit) {
    let server = Server::start(&kit).await;
    let token = server.login(OWNER_PASSWORD);
    let before = server.profile(&token);
    assert_eq!(before["response_code"], "00", "{before}");
    for _ in 0..3 {
        assert_eq!(server.profile(&token), before);
    }
    kit.sql("UPDATE businesses SET name = 'Adaeze Foods Limited'")
        .execute()
        .await;
    let after = server
        .profile_changes_after(&token, |profile| {
            profile["data"]["business"]["name"] == "Adaeze Foods Limited"
        })
        .await;
    assert!(
        after <= std::time::Duration::from_secs(1),
        "shown after {after:?}"
    );

    kit.clock.advance(chrono::Duration::minutes(5));
    let elsewhere = kit.login(OWNER, OWNER_PASSWORD).await;
    let expected = profile(&kit, &elsewhere).await["data"]["member"]["last_login"].clone();
    assert_ne!(expected, before["data"]["member"]["last_login"]);
    let after = server
        .profile_changes_after(&token, |profile| {
            profile["data"]["member"]["last_login"] == expected
        })
        .await;
    assert!(
        after <= std::time::Duration::from_secs(1),
        "shown after {after:?}"
    );
}

on_both_stores!(another_processs_profile_change_shows_within_a_second);

/// The operator's command line deactivates the business while two processes (the test's and
/// `kobo serve`) keep an integration session of it: both refuse what an inactive business may not
/// do (`60`, here reading transactions over the integration API, decided from the session as
/// kept) within a second.
async fn the_operators_deactivation_reaches_every_process_within_a_second(kit: TestKit) {
    let server = Server::start(&kit).await;
    // Each process signs with its own key (its data directory's).
    let token_here = kit.integration_token().await;
    let token = server.integration_token(&kit);
    let read = json!({"limit": 1});
    let here = async || {
        kit.op(Operation::FetchTransactionsApi, &token_here, read.clone())
            .await
            .code()
    };
    let there = || {
        server.post(Operation::FetchTransactionsApi, Some(&token), &read)["response_code"].clone()
    };
    assert_eq!(here().await, Some(ResponseCode::Success));
    assert_eq!(there(), "00");
    // Both caches in use (each process reads the generation every 200 ms).
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(here().await, Some(ResponseCode::Success));
    assert_eq!(there(), "00");

    let data_dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_kobo"))
        .args(["business", "deactivate", &kit.business.business_id])
        .env("KOBO_DATABASE_URL", kit.url())
        .env("KOBO_DATA_DIR", data_dir.path())
        .env("RUST_LOG", "warn")
        .output()
        .expect("kobo business deactivate runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let started = std::time::Instant::now();
    let (mut refused_here, mut refused_there) = (None, None);
    while started.elapsed() < std::time::Duration::from_secs(5)
        && (refused_here.is_none() || refused_there.is_none())
    {
        if refused_here.is_none() && here().await == Some(ResponseCode::BusinessInactive) {
            refused_here = Some(started.elapsed());
        }
        if refused_there.is_none() && there() == "60" {
            refused_there = Some(started.elapsed());
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    for (process, refused) in [
        ("this process", refused_here),
        ("kobo serve", refused_there),
    ] {
        let refused = refused.unwrap_or_else(|| panic!("{process} still serves after 5 s"));
        assert!(
            refused <= std::time::Duration::from_secs(1),
            "{process} refused after {refused:?}"
        );
    }
}

on_both_stores!(the_operators_deactivation_reaches_every_process_within_a_second);
