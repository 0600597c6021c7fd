//! Tenant isolation: with business A's tokens, nothing of business B can be read or changed.

use generated_server::{Operation, ResponseCode, TokenFamily};
use kobo::on_both_stores;
use kobo::platform::permissions::VIEWER_ROLE_ID;
use kobo::testkit::{Call, TestKit, MEMBER_PASSWORD};
use serde_json::{json, Value};

const B_OWNER: &str = "owner@lagosfresh.ng";
const B_MEMBER: &str = "amaka@lagosfresh.ng";
const B_PENDING: &str = "sani@lagosfresh.ng";

/// B's rows as they stand, to compare before and after A's attempts.
async fn snapshot_of_b(kit: &TestKit, business_id: &str) -> Value {
    let members = kit
        .sql(
            "SELECT email, role_id, is_active, invitation_status FROM members \
             WHERE business_id = $1 ORDER BY email",
        )
        .bind(business_id)
        .rows()
        .await;
    let roles = kit
        .sql("SELECT name, permission_codes, updated_at FROM roles WHERE business_id = $1")
        .bind(business_id)
        .rows()
        .await;
    let invitations = kit
        .sql(
            "SELECT token_hash, revoked_at FROM invitations WHERE business_id = $1 \
             ORDER BY token_hash",
        )
        .bind(business_id)
        .rows()
        .await;
    let live_sessions: i64 = kit
        .count(
            "SELECT COUNT(*) FROM sessions WHERE business_id = $1 AND revoked_at IS NULL",
            business_id,
        )
        .await;
    json!({"members": members, "roles": roles, "invitations": invitations,
           "live_sessions": live_sessions})
}

async fn nothing_of_another_business_leaks_or_changes(kit: TestKit) {
    // Business B with an owner, an active member, a pending invitation, a custom role, audit
    // and activity entries, and live sessions of both families.
    let (b, b_owner) = kit.other_business("Lagos Fresh Produce Ltd", B_OWNER).await;
    let b_role = kit
        .send(Call::new(
            Operation::CreateRole.path(),
            Some(&b_owner),
            json!({"name": "Fresh Auditor", "permission_codes": ["audit_log.view"]}),
        ))
        .await
        .expect(ResponseCode::Success)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let b_member = kit.invite(&b_owner, B_MEMBER, VIEWER_ROLE_ID).await;
    let token = kit.invitation_token(B_MEMBER).await;
    kit.send(Call::new(
        Operation::AcceptInvite.path(),
        None,
        json!({"token": token, "password": MEMBER_PASSWORD, "confirm_password": MEMBER_PASSWORD}),
    ))
    .await
    .expect(ResponseCode::Success);
    let b_member_token = kit.login(B_MEMBER, MEMBER_PASSWORD).await;
    let b_pending = kit.invite(&b_owner, B_PENDING, VIEWER_ROLE_ID).await;
    let b_integration = kit.integration_token_of(&b).await;
    kit.op(Operation::FetchBanks, &b_integration, json!({}))
        .await;
    let before = snapshot_of_b(&kit, &b.business_id).await;

    // A reads: nothing of B appears.
    let a = &kit.owner_token;
    let listed = kit.op(Operation::FetchMembers, a, json!({})).await;
    let text = listed.expect(ResponseCode::Success).to_string();
    assert!(!text.contains("lagosfresh"), "{text}");
    let roles = kit.op(Operation::FetchRoles, a, json!({})).await;
    assert!(!roles
        .expect(ResponseCode::Success)
        .to_string()
        .contains("Fresh Auditor"));
    let activity = kit.op(Operation::FetchActivityLogs, a, json!({})).await;
    assert_eq!(activity.expect(ResponseCode::Success), &json!([]));
    for body in [
        json!({}),
        json!({"search": "lagosfresh"}),
        json!({"filters": {"user_id": kit.member_id(B_OWNER).await}}),
    ] {
        let audit = kit.op(Operation::FetchAuditLogs, a, body).await;
        assert!(!audit
            .expect(ResponseCode::Success)
            .to_string()
            .contains("lagosfresh"));
    }
    let members = kit
        .op(
            Operation::FetchMembers,
            a,
            json!({"filters": {"role_id": b_role}}),
        )
        .await;
    assert_eq!(members.expect(ResponseCode::Success), &json!([]));

    // A writes: B's objects are "not found" in A.
    let attempts = [
        (
            Operation::UpdateMember,
            json!({"member_id": b_member, "is_active": false}),
        ),
        (
            Operation::UpdateMember,
            json!({"member_id": b_member, "role_id": VIEWER_ROLE_ID}),
        ),
        (
            Operation::UpdateMember,
            json!({"member_id": b_pending, "is_active": true}),
        ),
        (Operation::ResendInvite, json!({"member_id": b_pending})),
        (
            Operation::UpdateRole,
            json!({"role_id": b_role, "name": "Taken Over"}),
        ),
        (
            Operation::AddMember,
            json!({"email": "spy@adaezefoods.ng", "first_name": "S", "last_name": "Py",
                   "role_id": b_role}),
        ),
    ];
    for (operation, body) in attempts {
        let reply = kit.op(operation, a, body).await;
        assert_eq!(reply.status, 404, "{}: {reply:?}", operation.id());
        reply.expect(ResponseCode::NotFound);
    }
    // Inviting B's member's email is an invitation like any other: nothing says the address
    // is B's (a person may belong to several businesses), and B's rows stay as they were.
    let invited = kit
        .op(
            Operation::AddMember,
            a,
            json!({"email": B_MEMBER, "first_name": "A", "last_name": "Mak",
                   "role_id": VIEWER_ROLE_ID}),
        )
        .await;
    invited.expect(ResponseCode::Success);
    assert!(!invited.body.to_string().contains("Lagos"));
    // Role names are per business.
    kit.create_role("Fresh Auditor", &["audit_log.view"]).await;

    // B's sessions: a token naming B's session with A's business id is refused, and A's
    // logout or password change does not touch B's sessions.
    let b_session = kit
        .api
        .tokens()
        .verify(&b_member_token, kit.clock.now())
        .unwrap()
        .sid;
    let forged = kit.forge_token(
        &b_session,
        &kit.business.business_id,
        TokenFamily::Dashboard,
    );
    kit.op(Operation::GetProfile, &forged, json!({}))
        .await
        .expect(ResponseCode::Unauthenticated);
    let b_integration_session = kit
        .api
        .tokens()
        .verify(&b_integration, kit.clock.now())
        .unwrap()
        .sid;
    let forged = kit.forge_token(
        &b_integration_session,
        &kit.business.business_id,
        TokenFamily::Integration,
    );
    kit.op(Operation::FetchBanks, &forged, json!({}))
        .await
        .expect(ResponseCode::Unauthenticated);
    kit.op(Operation::RegenerateSecret, a, json!({}))
        .await
        .expect(ResponseCode::Success);
    kit.op(Operation::Logout, a, json!({}))
        .await
        .expect(ResponseCode::Success);

    // B is exactly as it was, and its tokens still work.
    assert_eq!(snapshot_of_b(&kit, &b.business_id).await, before);
    kit.op(Operation::GetProfile, &b_member_token, json!({}))
        .await
        .expect(ResponseCode::Success);
    let b_activity = kit
        .op(Operation::FetchActivityLogs, &b_owner, json!({}))
        .await;
    // B's own log: its token grant and its call before; the refused forged call is nobody's.
    let endpoints: Vec<&str> = b_activity
        .expect(ResponseCode::Success)
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["endpoint"].as_str().unwrap())
        .collect();
    assert_eq!(
        endpoints,
        [
            Operation::FetchBanks.path(),
            Operation::GenerateToken.path()
        ]
    );
    kit.op(Operation::FetchBanks, &b_integration, json!({}))
        .await
        .expect(ResponseCode::Success);
}

on_both_stores!(nothing_of_another_business_leaks_or_changes);
