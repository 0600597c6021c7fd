//! Defects found by probing the platform from outside, one regression scenario each (the
//! concurrency ones are in `races.rs`, on PostgreSQL).

use generated_server::{Operation, ResponseCode};
use kobo::kernel::config::{Config, Environment};
use kobo::on_both_stores;
use kobo::platform::permissions::{ADMIN_ROLE_ID, VIEWER_ROLE_ID};
use kobo::testkit::{Call, StoreKind, TestKit, MEMBER_PASSWORD, OWNER_PASSWORD};
use serde_json::{json, Value};

const OWNER: &str = "adaeze.okafor@adaezefoods.ng";

fn invite(email: &str, role_id: &str) -> Value {
    json!({"email": email, "first_name": "Ife", "last_name": "Olawale", "role_id": role_id})
}

fn accept(token: &str, password: &str) -> Call<'static> {
    Call::new(
        Operation::AcceptInvite.path(),
        None,
        json!({"token": token, "password": password, "confirm_password": password}),
    )
}

fn login(body: Value) -> Call<'static> {
    Call::new(Operation::Login.path(), None, body)
}

/// Deactivating a member whose invitation is pending revokes the invitation (before, the
/// answer was "Member updated", and the invitee accepted and logged in).
async fn deactivating_a_pending_member_revokes_the_invitation(kit: TestKit) {
    let ife = "ife.olawale@adaezefoods.ng";
    let member_id = kit.invite(&kit.owner_token, ife, VIEWER_ROLE_ID).await;
    let token = kit.invitation_token(ife).await;
    let reply = kit
        .op(
            Operation::UpdateMember,
            &kit.owner_token,
            json!({"member_id": member_id, "is_active": false}),
        )
        .await;
    let member = reply.expect(ResponseCode::Success);
    assert_eq!(member["is_active"], false);
    assert_eq!(member["invitation_status"], "expired");
    kit.send(accept(&token, MEMBER_PASSWORD))
        .await
        .expect(ResponseCode::Unauthenticated);
    let audit = kit
        .op(Operation::FetchAuditLogs, &kit.owner_token, json!({}))
        .await;
    let entries = audit
        .expect(ResponseCode::Success)
        .as_array()
        .unwrap()
        .clone();
    assert!(
        entries
            .iter()
            .any(|entry| entry["action"] == "deactivate_member"
                && entry["target_id"] == member_id.as_str()),
        "{entries:#?}"
    );
    // Resending invites them again.
    kit.op(
        Operation::ResendInvite,
        &kit.owner_token,
        json!({"member_id": member_id}),
    )
    .await
    .expect(ResponseCode::Success);
    let token = kit.invitation_token(ife).await;
    kit.send(accept(&token, MEMBER_PASSWORD))
        .await
        .expect(ResponseCode::Success);
}

/// add_member told one business that an address was "already in use on Kobo" (which login
/// hides), and a pending invitation from one business blocked every other from inviting that
/// person for ever. Now a person may belong to several businesses.
async fn another_business_neither_learns_of_nor_blocks_an_address(kit: TestKit) {
    let (_, lagos) = kit
        .other_business("Lagos Fresh Produce Ltd", "owner@lagosfresh.ng")
        .await;
    // Adaeze Foods' owner is invited to Lagos Fresh like anyone else.
    kit.op(Operation::AddMember, &lagos, invite(OWNER, VIEWER_ROLE_ID))
        .await
        .expect(ResponseCode::Success);
    // A pending invitation of Adaeze Foods does not block Lagos Fresh.
    let tunde = "tunde@example.ng";
    kit.op(
        Operation::AddMember,
        &kit.owner_token,
        invite(tunde, VIEWER_ROLE_ID),
    )
    .await
    .expect(ResponseCode::Success);
    let adaeze_token = kit.invitation_token(tunde).await;
    kit.op(Operation::AddMember, &lagos, invite(tunde, VIEWER_ROLE_ID))
        .await
        .expect(ResponseCode::Success);
    let lagos_token = kit.invitation_token(tunde).await;
    assert_ne!(adaeze_token, lagos_token);

    // Two memberships with their own passwords: the password chooses the business.
    kit.send(accept(&adaeze_token, "Adaeze-Password-1"))
        .await
        .expect(ResponseCode::Success);
    kit.send(accept(&lagos_token, "Lagos-Password-22"))
        .await
        .expect(ResponseCode::Success);
    let business_of = |reply: &kobo::testkit::Reply| {
        reply.expect(ResponseCode::Success)["member"]["email"].clone()
    };
    let adaeze = kit
        .send(login(
            json!({"email": tunde, "password": "Adaeze-Password-1"}),
        ))
        .await;
    assert_eq!(business_of(&adaeze), tunde);
    let token = adaeze.body["data"]["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let profile = kit.op(Operation::GetProfile, &token, json!({})).await;
    assert_eq!(
        profile.expect(ResponseCode::Success)["business"]["name"],
        "Adaeze Foods Ltd"
    );
    let lagos_login = kit
        .send(login(
            json!({"email": tunde, "password": "Lagos-Password-22"}),
        ))
        .await;
    let token = lagos_login.expect(ResponseCode::Success)["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let profile = kit.op(Operation::GetProfile, &token, json!({})).await;
    assert_eq!(
        profile.expect(ResponseCode::Success)["business"]["name"],
        "Lagos Fresh Produce Ltd"
    );
}

/// The same password for two memberships: login asks which business.
async fn one_password_for_two_businesses_needs_business_id(kit: TestKit) {
    let (lagos_business, lagos) = kit
        .other_business("Lagos Fresh Produce Ltd", "owner@lagosfresh.ng")
        .await;
    let tunde = "tunde@example.ng";
    for token in [&kit.owner_token, &lagos] {
        kit.op(Operation::AddMember, token, invite(tunde, VIEWER_ROLE_ID))
            .await
            .expect(ResponseCode::Success);
        let invitation = kit.invitation_token(tunde).await;
        kit.send(accept(&invitation, MEMBER_PASSWORD))
            .await
            .expect(ResponseCode::Success);
    }
    let ambiguous = kit
        .send(login(json!({"email": tunde, "password": MEMBER_PASSWORD})))
        .await;
    ambiguous.expect(ResponseCode::InvalidRequest);
    assert!(
        ambiguous.body["message"]
            .as_str()
            .unwrap()
            .starts_with("`business_id`"),
        "{ambiguous:?}"
    );
    let chosen = kit
        .send(login(json!({"email": tunde, "password": MEMBER_PASSWORD,
                           "business_id": lagos_business.business_id})))
        .await;
    let token = chosen.expect(ResponseCode::Success)["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let profile = kit.op(Operation::GetProfile, &token, json!({})).await;
    assert_eq!(
        profile.expect(ResponseCode::Success)["business"]["id"],
        lagos_business.business_id.as_str()
    );
}

/// `member.manage` or `role.manage` alone granted everything: a member could give themselves
/// the Admin role or add `credential.manage` to their own role.
async fn no_one_grants_a_permission_they_do_not_hold(kit: TestKit) {
    let lead_role = kit
        .create_role(
            "Team Lead",
            &["member.manage", "member.view", "role.manage"],
        )
        .await;
    let (lead_id, lead) = kit.add_member("lead@adaezefoods.ng", &lead_role).await;
    let refused = |reply: kobo::testkit::Reply| {
        reply.expect(ResponseCode::PermissionDenied);
        reply.body["message"].as_str().unwrap().to_owned()
    };
    // Themselves to Admin.
    let message = refused(
        kit.op(
            Operation::UpdateMember,
            &lead,
            json!({"member_id": lead_id, "role_id": ADMIN_ROLE_ID}),
        )
        .await,
    );
    assert!(message.starts_with("You cannot grant "), "{message}");
    // Someone else as Admin.
    refused(
        kit.op(
            Operation::AddMember,
            &lead,
            invite("x@adaezefoods.ng", ADMIN_ROLE_ID),
        )
        .await,
    );
    // A new role with a permission they lack.
    let message = refused(
        kit.op(
            Operation::CreateRole,
            &lead,
            json!({"name": "Keys", "permission_codes": ["credential.manage"]}),
        )
        .await,
    );
    assert_eq!(
        message,
        "You cannot grant credential.manage: your role does not hold it"
    );
    // Their own role, even with permissions they hold.
    refused(
        kit.op(
            Operation::UpdateRole,
            &lead,
            json!({"role_id": lead_role, "permission_codes": ["member.manage", "credential.manage"]}),
        )
        .await,
    );
    refused(
        kit.op(
            Operation::UpdateRole,
            &lead,
            json!({"role_id": lead_role, "description": "mine"}),
        )
        .await,
    );
    // Within what they hold, all of it works.
    let helper = kit
        .op(
            Operation::CreateRole,
            &lead,
            json!({"name": "Helper", "permission_codes": ["member.view"]}),
        )
        .await;
    let helper = helper.expect(ResponseCode::Success)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    kit.op(
        Operation::AddMember,
        &lead,
        invite("h@adaezefoods.ng", &helper),
    )
    .await
    .expect(ResponseCode::Success);
    // The owner holds everything.
    kit.op(
        Operation::UpdateRole,
        &kit.owner_token,
        json!({"role_id": lead_role, "permission_codes": ["credential.manage"]}),
    )
    .await
    .expect(ResponseCode::Success);
}

/// Names took control characters, CR/LF and bidi overrides verbatim into emails, and a
/// Cyrillic "Оwner" sat beside the built-in Owner.
async fn names_refuse_controls_and_look_alikes(kit: TestKit) {
    for (first_name, last_name, field) in [
        ("Ife\r\nBcc: all@example.ng", "Olawale", "first_name"),
        ("Ife", "\u{202E}ewalO", "last_name"),
        ("Ife\u{0}", "Olawale", "first_name"),
    ] {
        let reply = kit
            .op(
                Operation::AddMember,
                &kit.owner_token,
                json!({"email": "ife@adaezefoods.ng", "first_name": first_name,
                       "last_name": last_name, "role_id": VIEWER_ROLE_ID}),
            )
            .await;
        reply.expect(ResponseCode::InvalidRequest);
        let message = reply.body["message"].as_str().unwrap();
        assert!(message.starts_with(&format!("`{field}`")), "{message}");
    }
    let look_alike = kit
        .op(
            Operation::CreateRole,
            &kit.owner_token,
            json!({"name": "\u{41E}wner", "permission_codes": ["account.view"]}),
        )
        .await;
    look_alike.expect(ResponseCode::Duplicate);
    let full_width = kit
        .op(
            Operation::CreateRole,
            &kit.owner_token,
            json!({"name": "ＶＩＥＷＥＲ", "permission_codes": ["account.view"]}),
        )
        .await;
    full_width.expect(ResponseCode::Duplicate);
    let bidi = kit
        .op(
            Operation::CreateRole,
            &kit.owner_token,
            json!({"name": "Ad\u{202E}nim", "permission_codes": ["account.view"]}),
        )
        .await;
    bidi.expect(ResponseCode::InvalidRequest);
    // The owner is unaffected by any of it.
    kit.login(OWNER, OWNER_PASSWORD).await;
}

/// PostgreSQL answered `96` for `\u0000` in any string (SQLite stored it): every control
/// character is refused at the edge, the same on both stores, with the field named.
async fn control_characters_are_refused_alike_on_both_stores(kit: TestKit) {
    let cases = [
        (
            Operation::CreateRole,
            Some(kit.owner_token.as_str()),
            json!({"name": "Audit\u{0}or", "permission_codes": ["audit_log.view"]}),
            "`name`",
        ),
        (
            Operation::FetchAuditLogs,
            Some(kit.owner_token.as_str()),
            json!({"search": "\u{0}"}),
            "`search`",
        ),
        (
            Operation::FetchActivityLogs,
            Some(kit.owner_token.as_str()),
            json!({"search": "x\u{1b}[2J"}),
            "`search`",
        ),
        (
            Operation::GenerateToken,
            None,
            json!({"client_id": "kb_sandbox_\u{0}", "client_secret": "x"}),
            "`client_id`",
        ),
    ];
    for (operation, token, body, field) in cases {
        let reply = kit.send(Call::new(operation.path(), token, body)).await;
        reply.expect(ResponseCode::InvalidRequest);
        assert_eq!(
            reply.body["message"],
            format!("{field}: must not contain control characters"),
            "{}",
            operation.id()
        );
    }
}

/// Validation errors echoed the rejected value whole, passwords included (a 900 KB password
/// came back as a 900 KB error).
async fn validation_errors_do_not_echo_what_was_sent(kit: TestKit) {
    let password = "Hunter2-Secret-".repeat(60_000);
    let reply = kit
        .send(login(json!({"email": OWNER, "password": password})))
        .await;
    reply.expect(ResponseCode::InvalidRequest);
    assert_eq!(
        reply.body["message"],
        "`password`: must be at most 128 characters"
    );
    let reply = kit
        .op(
            Operation::FetchMembers,
            &kit.owner_token,
            json!({"page": 1.5}),
        )
        .await;
    reply.expect(ResponseCode::InvalidRequest);
    assert_eq!(reply.body["message"], "`page`: must be an integer");
    // `1.0` is an integer to JSON Schema but not to the model: the field is still named.
    let reply = kit
        .op(
            Operation::FetchMembers,
            &kit.owner_token,
            json!({"page": 1.0}),
        )
        .await;
    reply.expect(ResponseCode::InvalidRequest);
    assert_eq!(reply.body["message"], "`page`: must be a whole number");
}

/// Issue 28, item 8. A key given twice in a JSON body was accepted, the last one winning
/// (`{"amount":"1.00","amount":"9000.00"}` moved 9,000.00): gateways and logs that keep the
/// first read another request than the bank executed. Refused with `01` naming the key, at
/// any depth. A body declared in any charset but UTF-8 is refused too (`07`).
async fn a_key_twice_or_a_charset_not_utf8_is_refused(kit: TestKit) {
    let path = Operation::FetchMembers.path();
    let raw = |text: &str| Call::raw(path, Some(&kit.owner_token), text);
    let reply = kit.send(raw(r#"{"page": 1, "page": 2}"#)).await;
    reply.expect(ResponseCode::InvalidRequest);
    assert_eq!(
        reply.body["message"],
        "`page`: given twice in the request body"
    );
    let reply = kit
        .send(raw(
            r#"{"filters": {"start_date": "2026-01-01", "start_date": "2026-02-01"}}"#,
        ))
        .await;
    reply.expect(ResponseCode::InvalidRequest);
    assert_eq!(
        reply.body["message"],
        "`filters.start_date`: given twice in the request body"
    );
    // The same key in two objects is no duplicate.
    kit.send(raw(
        r#"{"filters": {"start_date": "2026-01-01"}, "page": 1}"#,
    ))
    .await
    .expect(ResponseCode::Success);

    // The payout the issue found: refused, and nothing moves.
    let token = kit.integration_token().await;
    kit.credit(&token, "1000000014", "10000").await;
    let payout = r#"{"source_account_number": "1000000014", "source_account_name": "Adaeze Foods Ltd",
        "beneficiary_account_number": "0123456788", "beneficiary_account_name": "Emeka Nwosu",
        "bank_code": "000013", "transfer_type": "inter", "amount": "1.00", "amount": "9000.00"}"#;
    let reply = kit
        .send(
            Call::raw(Operation::FundsTransferApi.path(), Some(&token), payout)
                .header("idempotency-key", "twice"),
        )
        .await;
    reply.expect(ResponseCode::InvalidRequest);
    assert_eq!(
        reply.body["message"],
        "`amount`: given twice in the request body"
    );
    let transfers = kit
        .count(
            "SELECT COUNT(*) FROM transfers WHERE business_id = $1",
            &kit.business.business_id,
        )
        .await;
    assert_eq!(transfers, 0);

    // Charsets: UTF-8 in any spelling, or none; nothing else.
    for content_type in [
        "application/json",
        "application/json; charset=utf-8",
        "application/json;charset=UTF-8",
        "application/json; charset=\"utf-8\"",
    ] {
        kit.send(raw(r#"{"page": 1}"#).header("content-type", content_type))
            .await
            .expect(ResponseCode::Success);
    }
    for content_type in [
        "application/json; charset=utf-16",
        "application/json; charset=latin1",
        "application/json; charset=",
    ] {
        let reply = kit
            .send(raw(r#"{"page": 1}"#).header("content-type", content_type))
            .await;
        reply.expect(ResponseCode::UnsupportedMediaType);
        let message = reply.body["message"].as_str().unwrap();
        assert!(message.contains("UTF-8"), "{content_type}: {message}");
    }
}

/// Issue 56, item 2 (issue 28, item 10 before it). Sandbox and production never share money,
/// so a database serves one environment: a production server does not start on the database
/// a sandbox server opened (recorded at its first start), and the sandbox's businesses,
/// credentials and tokens go on working on the sandbox's servers. A process of the other
/// environment that got in anyway (started before the record: the refusal is at start)
/// still refuses the sandbox's credentials and tokens (`41`).
async fn a_database_serves_one_environment(kind: StoreKind) {
    let kit = TestKit::start(kind, Config::new(Environment::Sandbox)).await;
    let store = kobo::kernel::store::Store::connect(kit.url())
        .await
        .unwrap();
    let refused = kobo::KoboApi::open(
        store,
        Config::new(Environment::Production),
        kit.clock.clone(),
        kit.api.tokens().clone(),
    )
    .await
    .err()
    .expect("a production server on a sandbox database");
    let refused = format!("{refused:#}");
    assert!(
        refused.contains("serves the sandbox environment, not production"),
        "{refused}"
    );
    let production = kit
        .another_process_with(Config::new(Environment::Production))
        .await;
    let token_request = json!({"client_id": kit.business.client_id,
                               "client_secret": kit.business.client_secret});
    let reply = production
        .send(Call::new(
            Operation::GenerateToken.path(),
            None,
            token_request.clone(),
        ))
        .await;
    reply.expect(ResponseCode::Unauthenticated);
    let reply = production
        .send(login(json!({"email": OWNER, "password": OWNER_PASSWORD})))
        .await;
    reply.expect(ResponseCode::Unauthenticated);
    // Tokens the sandbox issued (the processes share the token key) are refused too.
    let integration = kit.integration_token().await;
    production
        .send(Call::new(
            Operation::FetchCustomerAccounts.path(),
            Some(&integration),
            json!({}),
        ))
        .await
        .expect(ResponseCode::Unauthenticated);
    production
        .send(Call::new(
            Operation::GetProfile.path(),
            Some(&kit.owner_token),
            json!({}),
        ))
        .await
        .expect(ResponseCode::Unauthenticated);
    // The sandbox server serves them as before, and another sandbox server starts.
    kit.send(Call::new(
        Operation::GenerateToken.path(),
        None,
        token_request,
    ))
    .await
    .expect(ResponseCode::Success);
    kit.op(Operation::GetProfile, &kit.owner_token, json!({}))
        .await
        .expect(ResponseCode::Success);
    let store = kobo::kernel::store::Store::connect(kit.url())
        .await
        .unwrap();
    kobo::KoboApi::open(
        store,
        Config::new(Environment::Sandbox),
        kit.clock.clone(),
        kit.api.tokens().clone(),
    )
    .await
    .expect("a second sandbox server");
}

/// A database written before environments were recorded takes its businesses': one that
/// holds businesses of both (the defect of issue 56) is refused to every server, with what to
/// do.
async fn a_database_with_both_environments_businesses_is_refused(kind: StoreKind) {
    let kit = TestKit::start(kind, Config::new(Environment::Sandbox)).await;
    // As an older release left it: a production business beside the sandbox's, no record.
    kit.sql("DELETE FROM deployment").execute().await;
    kit.sql("UPDATE businesses SET client_id = 'kb_live_' || substr(client_id, 12)")
        .execute()
        .await;
    kit.other_business("Chika Stores Ltd", "chika@chikastores.ng")
        .await;
    for environment in [Environment::Sandbox, Environment::Production] {
        let store = kobo::kernel::store::Store::connect(kit.url())
            .await
            .unwrap();
        let refused = kobo::KoboApi::open(
            store,
            Config::new(environment),
            kit.clock.clone(),
            kit.api.tokens().clone(),
        )
        .await
        .err()
        .expect("a database of both environments");
        let refused = format!("{refused:#}");
        assert!(
            refused.contains("businesses of both environments (1 sandbox, 1 production)"),
            "{refused}"
        );
    }
}

on_both_stores!(
    kind: a_database_serves_one_environment,
    a_database_with_both_environments_businesses_is_refused
);

on_both_stores!(
    a_key_twice_or_a_charset_not_utf8_is_refused,
    control_characters_are_refused_alike_on_both_stores,
    validation_errors_do_not_echo_what_was_sent,
    deactivating_a_pending_member_revokes_the_invitation,
    another_business_neither_learns_of_nor_blocks_an_address,
    one_password_for_two_businesses_needs_business_id,
    no_one_grants_a_permission_they_do_not_hold,
    names_refuse_controls_and_look_alikes,
);
