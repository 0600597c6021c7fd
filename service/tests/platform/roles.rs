//! Roles and the permission catalog.

use generated_server::{Operation, Permission, ResponseCode};
use kobo::on_both_stores;
use kobo::platform::permissions::{CHECKER_ROLE_ID, OWNER_ROLE_ID};
use kobo::testkit::TestKit;
use serde_json::{json, Value};

async fn roles(kit: &TestKit) -> Vec<Value> {
    let reply = kit
        .op(Operation::FetchRoles, &kit.owner_token, json!({}))
        .await;
    reply
        .expect(ResponseCode::Success)
        .as_array()
        .unwrap()
        .clone()
}

async fn the_catalog_and_the_built_in_roles_are_the_specs(kit: TestKit) {
    let reply = kit
        .op(Operation::FetchPermissions, &kit.owner_token, json!({}))
        .await;
    let catalog = reply
        .expect(ResponseCode::Success)
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(catalog.len(), Permission::ALL.len());
    let codes: Vec<&str> = catalog
        .iter()
        .map(|p| p["code"].as_str().unwrap())
        .collect();
    let mut sorted = codes.clone();
    sorted.sort();
    assert_eq!(codes, sorted);
    let account_view = catalog
        .iter()
        .find(|p| p["code"] == "account.view")
        .unwrap();
    assert_eq!(
        account_view,
        &json!({"id": "e347ccc4-e130-5e92-9699-248fbf891241", "code": "account.view",
                "name": "View accounts",
                "description": "Read accounts, their collections, summaries and metrics."})
    );

    let roles = roles(&kit).await;
    let names: Vec<&str> = roles.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Owner", "Admin", "Maker", "Checker", "Viewer"]);
    let checker = &roles[3];
    assert_eq!(checker["id"], CHECKER_ROLE_ID);
    assert_eq!(checker["is_built_in"], true);
    assert_eq!(
        checker["permission_codes"],
        json!([
            "self.manage",
            "account.view",
            "transaction.view",
            "transfer.view",
            "transfer.approve"
        ])
    );
}

async fn custom_roles_are_created_listed_and_edited(kit: TestKit) {
    let reply = kit
        .op(
            Operation::CreateRole,
            &kit.owner_token,
            json!({"name": "Treasury Analyst", "description": "Reads balances, transactions and logs.",
                   "permission_codes": ["activity_log.view", "account.view", "transaction.view"]}),
        )
        .await;
    let role = reply.expect(ResponseCode::Success).clone();
    assert_eq!(role["is_built_in"], false);
    assert_eq!(
        role["permission_codes"],
        json!([
            "self.manage",
            "account.view",
            "transaction.view",
            "activity_log.view"
        ])
    );
    let role_id = role["id"].as_str().unwrap().to_owned();
    kit.create_role("Auditor", &["audit_log.view"]).await;

    let names: Vec<String> = roles(&kit)
        .await
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        names,
        [
            "Owner",
            "Admin",
            "Maker",
            "Checker",
            "Viewer",
            "Auditor",
            "Treasury Analyst"
        ]
    );

    let updated = kit
        .op(
            Operation::UpdateRole,
            &kit.owner_token,
            json!({"role_id": role_id, "permission_codes": ["audit_log.view"]}),
        )
        .await;
    let updated = updated.expect(ResponseCode::Success);
    assert_eq!(updated["name"], "Treasury Analyst");
    assert_eq!(
        updated["description"],
        "Reads balances, transactions and logs."
    );
    assert_eq!(
        updated["permission_codes"],
        json!(["self.manage", "audit_log.view"])
    );
    let renamed = kit
        .op(
            Operation::UpdateRole,
            &kit.owner_token,
            json!({"role_id": role_id, "name": "treasury analyst"}),
        )
        .await;
    // Renaming a role to its own name in another case is allowed.
    assert_eq!(
        renamed.expect(ResponseCode::Success)["name"],
        "treasury analyst"
    );
}

async fn role_rules_are_enforced(kit: TestKit) {
    let role_id = kit.create_role("Treasury Analyst", &["account.view"]).await;
    kit.create_role("Auditor", &["audit_log.view"]).await;
    let create = |name: &str, codes: Value| {
        kit.op(
            Operation::CreateRole,
            &kit.owner_token,
            json!({"name": name, "permission_codes": codes}),
        )
    };
    let duplicate = create("TREASURY analyst", json!(["account.view"])).await;
    assert_eq!(duplicate.status, 409);
    duplicate.expect(ResponseCode::Duplicate);
    assert_eq!(
        duplicate.body["message"],
        "A role named TREASURY analyst already exists"
    );
    create("viewer", json!(["account.view"]))
        .await
        .expect(ResponseCode::Duplicate);
    let unknown = create(
        "Reader",
        json!(["account.view", "transaction.view", "logs.read"]),
    )
    .await;
    unknown.expect(ResponseCode::InvalidRequest);
    assert_eq!(
        unknown.body["message"],
        "`permission_codes[2]`: unknown permission code \"logs.read\""
    );
    create("   ", json!(["account.view"]))
        .await
        .expect(ResponseCode::InvalidRequest);

    let update = |body: Value| kit.op(Operation::UpdateRole, &kit.owner_token, body);
    update(json!({"role_id": OWNER_ROLE_ID, "name": "Boss"}))
        .await
        .expect(ResponseCode::InvalidState);
    update(json!({"role_id": uuid::Uuid::new_v4(), "name": "Boss"}))
        .await
        .expect(ResponseCode::NotFound);
    update(json!({"role_id": role_id, "name": "auditor"}))
        .await
        .expect(ResponseCode::Duplicate);
    update(json!({"role_id": role_id, "name": "Checker"}))
        .await
        .expect(ResponseCode::Duplicate);
    update(json!({"role_id": role_id}))
        .await
        .expect(ResponseCode::InvalidRequest);
    update(json!({"role_id": role_id, "permission_codes": ["nope.nope"]}))
        .await
        .expect(ResponseCode::InvalidRequest);
    // None of the refused changes happened.
    let stored = roles(&kit).await;
    let role = stored.iter().find(|r| r["id"] == role_id.as_str()).unwrap();
    assert_eq!(role["name"], "Treasury Analyst");
    assert_eq!(
        role["permission_codes"],
        json!(["self.manage", "account.view"])
    );
    let owner = stored.iter().find(|r| r["id"] == OWNER_ROLE_ID).unwrap();
    assert_eq!(owner["name"], "Owner");
}

async fn editing_a_role_changes_its_members_permissions_at_their_next_request(kit: TestKit) {
    let role_id = kit.create_role("Team Reader", &["member.view"]).await;
    let (_, token) = kit.add_member("ife.olawale@adaezefoods.ng", &role_id).await;
    kit.op(Operation::FetchMembers, &token, json!({}))
        .await
        .expect(ResponseCode::Success);
    kit.op(Operation::FetchRoles, &token, json!({}))
        .await
        .expect(ResponseCode::PermissionDenied);
    kit.op(
        Operation::UpdateRole,
        &kit.owner_token,
        json!({"role_id": role_id, "permission_codes": ["role.view"]}),
    )
    .await
    .expect(ResponseCode::Success);
    kit.op(Operation::FetchMembers, &token, json!({}))
        .await
        .expect(ResponseCode::PermissionDenied);
    kit.op(Operation::FetchRoles, &token, json!({}))
        .await
        .expect(ResponseCode::Success);
    // self.manage stays implicit.
    kit.op(Operation::GetProfile, &token, json!({}))
        .await
        .expect(ResponseCode::Success);
}

on_both_stores!(
    the_catalog_and_the_built_in_roles_are_the_specs,
    custom_roles_are_created_listed_and_edited,
    role_rules_are_enforced,
    editing_a_role_changes_its_members_permissions_at_their_next_request,
);
