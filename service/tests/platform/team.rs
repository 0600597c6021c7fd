//! Members and invitations.

use generated_server::{Operation, ResponseCode};
use kobo::on_both_stores;
use kobo::platform::permissions::{
    ADMIN_ROLE_ID, CHECKER_ROLE_ID, MAKER_ROLE_ID, OWNER_ROLE_ID, VIEWER_ROLE_ID,
};
use kobo::testkit::{Call, TestKit, MEMBER_PASSWORD, OWNER_PASSWORD};
use serde_json::{json, Value};

const OWNER: &str = "adaeze.okafor@adaezefoods.ng";
const IFE: &str = "ife.olawale@adaezefoods.ng";

fn accept(token: &str, password: &str) -> Call<'static> {
    Call::new(
        Operation::AcceptInvite.path(),
        None,
        json!({"token": token, "password": password, "confirm_password": password}),
    )
}

async fn members(kit: &TestKit, token: &str, body: Value) -> Vec<Value> {
    let reply = kit.op(Operation::FetchMembers, token, body).await;
    reply
        .expect(ResponseCode::Success)
        .as_array()
        .unwrap()
        .clone()
}

async fn an_invitation_is_emailed_accepted_and_then_logs_in(kit: TestKit) {
    let reply = kit
        .op(
            Operation::AddMember,
            &kit.owner_token,
            json!({"email": "Ife.Olawale@AdaezeFoods.ng", "first_name": "Ife",
                   "last_name": "Olawale", "role_id": VIEWER_ROLE_ID}),
        )
        .await;
    assert_eq!(reply.expect(ResponseCode::Success), &json!({}));
    assert_eq!(reply.body["message"], "Invitation sent");

    // Pending, inactive, listed.
    let listed = members(&kit, &kit.owner_token, json!({})).await;
    let ife = listed.iter().find(|m| m["email"] == IFE).expect("listed");
    assert_eq!(ife["invitation_status"], "pending");
    assert_eq!(ife["is_active"], false);
    assert_eq!(ife["role_name"], "Viewer");
    assert!(ife["last_login"].is_null());

    // The email is in the outbox with a token; only its hash is stored.
    let mail = kit.outbox(IFE).await;
    assert_eq!(mail.len(), 1);
    assert!(mail[0].subject.contains("Adaeze Foods Ltd"));
    let token = kit.invitation_token(IFE).await;
    let stored: i64 = kit
        .count(
            "SELECT COUNT(*) FROM invitations WHERE token_hash = $1",
            &token,
        )
        .await;
    assert_eq!(stored, 0);

    // Pending members cannot log in.
    let early = kit
        .send(Call::new(
            Operation::Login.path(),
            None,
            json!({"email": IFE, "password": MEMBER_PASSWORD}),
        ))
        .await;
    early.expect(ResponseCode::Unauthenticated);

    // Field rules first, then the token.
    let mismatch = kit
        .send(Call::new(
            Operation::AcceptInvite.path(),
            None,
            json!({"token": token, "password": MEMBER_PASSWORD, "confirm_password": "other-one"}),
        ))
        .await;
    mismatch.expect(ResponseCode::InvalidRequest);
    assert!(mismatch.body["message"]
        .as_str()
        .unwrap()
        .starts_with("`confirm_password`"));

    let accepted = kit.send(accept(&token, MEMBER_PASSWORD)).await;
    let member = accepted.expect(ResponseCode::Success);
    assert_eq!(member["email"], IFE);
    assert_eq!(member["is_active"], true);
    assert_eq!(member["invitation_status"], "accepted");

    // Single use.
    let again = kit.send(accept(&token, MEMBER_PASSWORD)).await;
    assert_eq!(again.status, 401);
    again.expect(ResponseCode::Unauthenticated);

    let viewer = kit.login(IFE, MEMBER_PASSWORD).await;
    let profile = kit.op(Operation::GetProfile, &viewer, json!({})).await;
    assert_eq!(
        profile.expect(ResponseCode::Success)["role"]["name"],
        "Viewer"
    );
}

async fn invitation_tokens_expire_and_are_replaced_by_resending(kit: TestKit) {
    let member_id = kit.invite(&kit.owner_token, IFE, VIEWER_ROLE_ID).await;
    let first = kit.invitation_token(IFE).await;
    kit.op(
        Operation::ResendInvite,
        &kit.owner_token,
        json!({"member_id": member_id}),
    )
    .await
    .expect(ResponseCode::Success);
    let second = kit.invitation_token(IFE).await;
    assert_ne!(first, second);
    assert_eq!(kit.outbox(IFE).await.len(), 2);
    kit.send(accept(&first, MEMBER_PASSWORD))
        .await
        .expect(ResponseCode::Unauthenticated);

    // Three days later the invitation shows as expired and its token no longer works (the
    // owner's session has ended too: they log in again).
    kit.clock.advance(chrono::Duration::seconds(
        kit.api.config().invitation_ttl_seconds as i64 + 1,
    ));
    let owner = kit.login(OWNER, OWNER_PASSWORD).await;
    let listed = members(&kit, &owner, json!({})).await;
    let ife = listed.iter().find(|m| m["email"] == IFE).unwrap();
    assert_eq!(ife["invitation_status"], "expired");
    kit.send(accept(&second, MEMBER_PASSWORD))
        .await
        .expect(ResponseCode::Unauthenticated);
    kit.send(accept("inv_never-issued", MEMBER_PASSWORD))
        .await
        .expect(ResponseCode::Unauthenticated);

    // Resending gives a working token again.
    kit.op(
        Operation::ResendInvite,
        &owner,
        json!({"member_id": member_id}),
    )
    .await
    .expect(ResponseCode::Success);
    let third = kit.invitation_token(IFE).await;
    kit.send(accept(&third, MEMBER_PASSWORD))
        .await
        .expect(ResponseCode::Success);

    // Accepted: resending is refused, and unknown members are 47.
    kit.op(
        Operation::ResendInvite,
        &owner,
        json!({"member_id": member_id}),
    )
    .await
    .expect(ResponseCode::InvalidState);
    kit.op(
        Operation::ResendInvite,
        &owner,
        json!({"member_id": uuid::Uuid::new_v4()}),
    )
    .await
    .expect(ResponseCode::NotFound);
}

async fn invitations_are_refused_for_taken_emails_unknown_roles_and_owner_by_non_owners(
    kit: TestKit,
) {
    let invite = |email: &str, role: &str| json!({"email": email, "first_name": "Ife", "last_name": "Olawale", "role_id": role});
    let duplicate = kit
        .op(
            Operation::AddMember,
            &kit.owner_token,
            invite(OWNER, VIEWER_ROLE_ID),
        )
        .await;
    assert_eq!(duplicate.status, 409);
    duplicate.expect(ResponseCode::Duplicate);
    assert_eq!(
        duplicate.body["message"],
        "adaeze.okafor@adaezefoods.ng is already a member of this business"
    );
    kit.op(
        Operation::AddMember,
        &kit.owner_token,
        invite(IFE, &uuid::Uuid::new_v4().to_string()),
    )
    .await
    .expect(ResponseCode::NotFound);

    let (_, admin) = kit.add_member("admin@adaezefoods.ng", ADMIN_ROLE_ID).await;
    let refused = kit
        .op(Operation::AddMember, &admin, invite(IFE, OWNER_ROLE_ID))
        .await;
    assert_eq!(refused.status, 403);
    refused.expect(ResponseCode::PermissionDenied);
    // Nothing was written for the refused invitations.
    assert_eq!(kit.outbox(IFE).await.len(), 0);
    let listed = members(&kit, &kit.owner_token, json!({})).await;
    assert!(
        listed.iter().all(|member| member["email"] != IFE),
        "{listed:?}"
    );
    // The owner may invite an owner; the admin may invite anyone else.
    kit.op(Operation::AddMember, &admin, invite(IFE, MAKER_ROLE_ID))
        .await
        .expect(ResponseCode::Success);
    kit.op(
        Operation::AddMember,
        &kit.owner_token,
        invite("second.owner@adaezefoods.ng", OWNER_ROLE_ID),
    )
    .await
    .expect(ResponseCode::Success);
}

async fn the_last_active_owner_stays(kit: TestKit) {
    let owner_id = kit.member_id(OWNER).await;
    let update = |body: Value| kit.op(Operation::UpdateMember, &kit.owner_token, body);
    // Not oneself, and not the last owner.
    let myself = update(json!({"member_id": owner_id, "is_active": false})).await;
    assert_eq!(myself.status, 409);
    myself.expect(ResponseCode::InvalidState);
    let demote = update(json!({"member_id": owner_id, "role_id": ADMIN_ROLE_ID})).await;
    demote.expect(ResponseCode::InvalidState);
    assert_eq!(
        demote.body["message"],
        "The business must keep at least one active Owner"
    );
    update(json!({"member_id": owner_id}))
        .await
        .expect(ResponseCode::InvalidRequest);

    // With a second owner, the first may step down to Admin.
    let (second_id, second) = kit
        .add_member("second.owner@adaezefoods.ng", MAKER_ROLE_ID)
        .await;
    update(json!({"member_id": second_id, "role_id": OWNER_ROLE_ID}))
        .await
        .expect(ResponseCode::Success);
    let stepped = update(json!({"member_id": owner_id, "role_id": ADMIN_ROLE_ID})).await;
    assert_eq!(stepped.expect(ResponseCode::Success)["role_name"], "Admin");
    // Now the second owner is the last one: the former owner (an Admin) cannot touch them.
    let by_admin = kit
        .op(
            Operation::UpdateMember,
            &kit.owner_token,
            json!({"member_id": second_id, "is_active": false}),
        )
        .await;
    by_admin.expect(ResponseCode::PermissionDenied);
    let by_self = kit
        .op(
            Operation::UpdateMember,
            &second,
            json!({"member_id": second_id, "role_id": ADMIN_ROLE_ID}),
        )
        .await;
    by_self.expect(ResponseCode::InvalidState);
    let owners = members(
        &kit,
        &kit.owner_token,
        json!({"filters": {"role_id": OWNER_ROLE_ID, "is_active": true}}),
    )
    .await;
    assert_eq!(owners.len(), 1, "{owners:?}");
}

async fn only_owners_grant_or_remove_the_owner_role(kit: TestKit) {
    let (admin_id, admin) = kit.add_member("admin@adaezefoods.ng", ADMIN_ROLE_ID).await;
    let (maker_id, _) = kit.add_member("maker@adaezefoods.ng", MAKER_ROLE_ID).await;
    let owner_id = kit.member_id(OWNER).await;
    kit.op(
        Operation::UpdateMember,
        &admin,
        json!({"member_id": maker_id, "role_id": OWNER_ROLE_ID}),
    )
    .await
    .expect(ResponseCode::PermissionDenied);
    kit.op(
        Operation::UpdateMember,
        &admin,
        json!({"member_id": admin_id, "role_id": OWNER_ROLE_ID}),
    )
    .await
    .expect(ResponseCode::PermissionDenied);
    kit.op(
        Operation::UpdateMember,
        &admin,
        json!({"member_id": owner_id, "is_active": false}),
    )
    .await
    .expect(ResponseCode::PermissionDenied);
    // The admin manages non-owners freely.
    let changed = kit
        .op(
            Operation::UpdateMember,
            &admin,
            json!({"member_id": maker_id, "role_id": CHECKER_ROLE_ID}),
        )
        .await;
    assert_eq!(
        changed.expect(ResponseCode::Success)["role_name"],
        "Checker"
    );
}

async fn pending_members_cannot_be_activated_and_unknown_ids_are_47(kit: TestKit) {
    let pending = kit.invite(&kit.owner_token, IFE, VIEWER_ROLE_ID).await;
    kit.op(
        Operation::UpdateMember,
        &kit.owner_token,
        json!({"member_id": pending, "is_active": true}),
    )
    .await
    .expect(ResponseCode::InvalidState);
    kit.op(
        Operation::UpdateMember,
        &kit.owner_token,
        json!({"member_id": uuid::Uuid::new_v4(), "is_active": false}),
    )
    .await
    .expect(ResponseCode::NotFound);
    kit.op(
        Operation::UpdateMember,
        &kit.owner_token,
        json!({"member_id": pending, "role_id": uuid::Uuid::new_v4()}),
    )
    .await
    .expect(ResponseCode::NotFound);
}

async fn a_role_change_applies_from_the_next_request(kit: TestKit) {
    let (member_id, token) = kit.add_member(IFE, VIEWER_ROLE_ID).await;
    kit.op(Operation::FetchMembers, &token, json!({}))
        .await
        .expect(ResponseCode::Success);
    kit.op(
        Operation::UpdateMember,
        &kit.owner_token,
        json!({"member_id": member_id, "role_id": MAKER_ROLE_ID}),
    )
    .await
    .expect(ResponseCode::Success);
    let now = kit.op(Operation::FetchMembers, &token, json!({})).await;
    assert_eq!(now.status, 403);
    assert_eq!(
        now.body["message"],
        "Permission denied: your role lacks member.view"
    );
}

async fn members_are_filtered_sorted_and_paged(kit: TestKit) {
    for name in ["zara", "bola", "musa", "chi"] {
        kit.invite(
            &kit.owner_token,
            &format!("{name}@adaezefoods.ng"),
            VIEWER_ROLE_ID,
        )
        .await;
    }
    let (_, _) = kit
        .add_member("emeka@adaezefoods.ng", CHECKER_ROLE_ID)
        .await;
    let emails = |list: &[Value]| -> Vec<String> {
        list.iter()
            .map(|m| {
                m["email"]
                    .as_str()
                    .unwrap()
                    .split('@')
                    .next()
                    .unwrap()
                    .to_owned()
            })
            .collect()
    };
    // Newest first by default.
    let all = members(&kit, &kit.owner_token, json!({})).await;
    assert_eq!(
        emails(&all),
        ["emeka", "chi", "musa", "bola", "zara", "adaeze.okafor"]
    );
    let by_email = members(
        &kit,
        &kit.owner_token,
        json!({"sort_by": "email", "sort_order": "asc"}),
    )
    .await;
    assert_eq!(
        emails(&by_email),
        ["adaeze.okafor", "bola", "chi", "emeka", "musa", "zara"]
    );
    let active = members(
        &kit,
        &kit.owner_token,
        json!({"filters": {"is_active": true}}),
    )
    .await;
    assert_eq!(emails(&active), ["emeka", "adaeze.okafor"]);
    let checkers = members(
        &kit,
        &kit.owner_token,
        json!({"filters": {"role_id": CHECKER_ROLE_ID}}),
    )
    .await;
    assert_eq!(emails(&checkers), ["emeka"]);
    let logged_in = members(
        &kit,
        &kit.owner_token,
        json!({"sort_by": "last_login", "sort_order": "asc"}),
    )
    .await;
    // Those who logged in first, the rest after.
    assert_eq!(emails(&logged_in)[..2], ["adaeze.okafor", "emeka"]);

    let page = |n: u64| {
        kit.op(
            Operation::FetchMembers,
            &kit.owner_token,
            json!({"sort_by": "email", "sort_order": "asc", "page": n, "page_size": 4}),
        )
    };
    let first = page(1).await;
    assert_eq!(
        emails(first.expect(ResponseCode::Success).as_array().unwrap()).len(),
        4
    );
    assert_eq!(
        first.body["pagination"],
        json!({"has_more": true, "next_cursor_created_at": null, "next_cursor_id": null,
               "page": 1, "page_size": 4})
    );
    let second = page(2).await;
    assert_eq!(
        emails(second.expect(ResponseCode::Success).as_array().unwrap()),
        ["musa", "zara"]
    );
    assert_eq!(second.body["pagination"]["has_more"], false);

    // Date filters: everyone joined today; nobody tomorrow; inverted range is 01.
    let today = chrono::Utc::now().date_naive();
    let tomorrow = today.succ_opt().unwrap();
    let joined_today = members(
        &kit,
        &kit.owner_token,
        json!({"filters": {"start_date": today, "end_date": today}}),
    )
    .await;
    assert_eq!(joined_today.len(), 6);
    let none = members(
        &kit,
        &kit.owner_token,
        json!({"filters": {"start_date": tomorrow}}),
    )
    .await;
    assert!(none.is_empty());
    let inverted = kit
        .op(
            Operation::FetchMembers,
            &kit.owner_token,
            json!({"filters": {"start_date": tomorrow, "end_date": today}}),
        )
        .await;
    inverted.expect(ResponseCode::InvalidRequest);
    assert!(inverted.body["message"]
        .as_str()
        .unwrap()
        .contains("filters.start_date"));
}

/// Issue 56, item 4. Integration credentials act for the member who issued them: once that
/// member is demoted below `credential.manage`, deactivated, or their custom role loses it,
/// `generate_token` and the credentials' live tokens answer `41` (saying why) and the profile
/// says they do not work, until a member who may manage credentials issues a new secret.
async fn credentials_stop_when_their_issuer_may_no_longer_manage_them(kit: TestKit) {
    let generate = |secret: &str| {
        Call::new(
            Operation::GenerateToken.path(),
            None,
            json!({"client_id": kit.business.client_id, "client_secret": secret}),
        )
    };
    let usable = async || {
        kit.op(Operation::GetProfile, &kit.owner_token, json!({}))
            .await
            .expect(ResponseCode::Success)["business"]["credentials_usable"]
            .as_bool()
            .unwrap()
    };
    // Issued by the bank's operator: usable.
    assert!(usable().await);
    let treasurer = kit
        .create_role("Treasurer", &["credential.manage", "account.view"])
        .await;
    let issuers = [
        ("ada.admin@adaezefoods.ng", ADMIN_ROLE_ID),
        ("tunde.treasury@adaezefoods.ng", treasurer.as_str()),
        ("bisi.admin@adaezefoods.ng", ADMIN_ROLE_ID),
    ];
    for (n, (email, role)) in issuers.into_iter().enumerate() {
        let (member_id, token) = kit.add_member(email, role).await;
        let secret = kit
            .op(Operation::RegenerateSecret, &token, json!({}))
            .await
            .expect(ResponseCode::Success)["client_secret"]
            .as_str()
            .unwrap()
            .to_owned();
        let reply = kit.send(generate(&secret)).await;
        let integration = reply.expect(ResponseCode::Success)["access_token"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(usable().await);
        // The issuer leaves, in three ways.
        let change = match n {
            0 => json!({"member_id": member_id, "role_id": VIEWER_ROLE_ID}),
            1 => json!({"member_id": member_id, "is_active": false}),
            _ => json!({"member_id": member_id, "role_id": MAKER_ROLE_ID}),
        };
        kit.op(Operation::UpdateMember, &kit.owner_token, change)
            .await
            .expect(ResponseCode::Success);
        let refused = kit.send(generate(&secret)).await;
        refused.expect(ResponseCode::Unauthenticated);
        let message = refused.body["message"].as_str().unwrap();
        assert!(
            message.contains("regenerate the client secret"),
            "{message}"
        );
        kit.op(Operation::FetchCustomerAccounts, &integration, json!({}))
            .await
            .expect(ResponseCode::Unauthenticated);
        assert!(!usable().await, "{email}");
        // The owner issues new ones: they work.
        let secret = kit
            .op(Operation::RegenerateSecret, &kit.owner_token, json!({}))
            .await
            .expect(ResponseCode::Success)["client_secret"]
            .as_str()
            .unwrap()
            .to_owned();
        kit.send(generate(&secret))
            .await
            .expect(ResponseCode::Success);
        assert!(usable().await);
    }
    // A custom role that loses credential.manage stops its holder's credentials too.
    let (_, token) = kit
        .add_member("kemi.treasury@adaezefoods.ng", &treasurer)
        .await;
    let secret = kit
        .op(Operation::RegenerateSecret, &token, json!({}))
        .await
        .expect(ResponseCode::Success)["client_secret"]
        .as_str()
        .unwrap()
        .to_owned();
    kit.op(
        Operation::UpdateRole,
        &kit.owner_token,
        json!({"role_id": treasurer, "permission_codes": ["account.view"]}),
    )
    .await
    .expect(ResponseCode::Success);
    kit.send(generate(&secret))
        .await
        .expect(ResponseCode::Unauthenticated);
    assert!(!usable().await);
}

on_both_stores!(
    credentials_stop_when_their_issuer_may_no_longer_manage_them,
    an_invitation_is_emailed_accepted_and_then_logs_in,
    invitation_tokens_expire_and_are_replaced_by_resending,
    invitations_are_refused_for_taken_emails_unknown_roles_and_owner_by_non_owners,
    the_last_active_owner_stays,
    only_owners_grant_or_remove_the_owner_role,
    pending_members_cannot_be_activated_and_unknown_ids_are_47,
    a_role_change_applies_from_the_next_request,
    members_are_filtered_sorted_and_paged,
);
