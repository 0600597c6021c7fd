//! Every permission-guarded operation refuses a member whose role lacks its permission, and
//! lets them through once the role has it. The operations come from the generated table, so
//! a new operation is walked without touching this test.

use generated_server::{Operation, Permission, ResponseCode};
use kobo::on_both_stores;
use kobo::testkit::{request_example, TestKit};
use serde_json::json;

async fn every_guarded_operation_needs_its_permission(kit: TestKit) {
    let role_id = kit.create_role("Walker", &["self.manage"]).await;
    let (_, token) = kit.add_member("walker@adaezefoods.ng", &role_id).await;
    let set_role = |permissions: Vec<&'static str>| {
        kit.op(
            Operation::UpdateRole,
            &kit.owner_token,
            json!({"role_id": role_id, "permission_codes": permissions}),
        )
    };

    let guarded: Vec<(Operation, Permission)> = Operation::ALL
        .iter()
        .filter_map(|operation| Some((*operation, operation.permission()?)))
        .filter(|(_, permission)| !permission.implicit())
        .collect();
    assert!(guarded.len() >= 30, "{guarded:?}");
    // Every Dashboard operation of transfers and approvals is walked, with the permission the
    // spec gives it (a member lacking `transfer.initiate`, `transfer.approve`, ... gets `43`).
    for (operation, permission) in [
        (Operation::FetchBanksWeb, "transfer.initiate"),
        (Operation::NameEnquiryWeb, "transfer.initiate"),
        (Operation::FundsTransfer, "transfer.initiate"),
        (Operation::CancelTransfer, "transfer.initiate"),
        (Operation::GetTransferWeb, "transfer.view"),
        (Operation::FetchTransfersWeb, "transfer.view"),
        (Operation::FetchPendingTransfers, "transfer.view"),
        (Operation::ApproveTransfer, "transfer.approve"),
        (Operation::RejectTransfer, "transfer.approve"),
        (Operation::CreateApprovalPolicy, "approval_policy.manage"),
        (Operation::UpdateApprovalPolicy, "approval_policy.manage"),
        (Operation::GetApprovalPolicy, "approval_policy.view"),
    ] {
        assert!(
            guarded
                .iter()
                .any(|(o, p)| *o == operation && p.as_str() == permission),
            "{} is not walked with {permission}",
            operation.id()
        );
    }

    let mut walked = 0;
    for permission in Permission::ALL.iter().filter(|p| !p.implicit()) {
        // Every permission but this one.
        let others: Vec<&'static str> = Permission::ALL
            .iter()
            .filter(|p| *p != permission)
            .map(|p| p.as_str())
            .collect();
        set_role(others).await.expect(ResponseCode::Success);
        for (operation, _) in guarded.iter().filter(|(_, p)| p == permission) {
            let reply = kit
                .op(*operation, &token, request_example(*operation))
                .await;
            assert_eq!(
                reply.status,
                403,
                "{} without {permission}: {reply:?}",
                operation.id()
            );
            reply.expect(ResponseCode::PermissionDenied);
            assert_eq!(
                reply.body["message"],
                format!("Permission denied: your role lacks {permission}")
            );
            walked += 1;
        }
        // With it, the same calls get past the permission check (whatever they answer: a
        // `43` of the operation's own rules, such as granting a permission the member lacks,
        // is past it).
        set_role(vec![permission.as_str()])
            .await
            .expect(ResponseCode::Success);
        for (operation, _) in guarded.iter().filter(|(_, p)| p == permission) {
            let reply = kit
                .op(*operation, &token, request_example(*operation))
                .await;
            assert_ne!(
                reply.body["message"],
                format!("Permission denied: your role lacks {permission}"),
                "{} with {permission}: {reply:?}",
                operation.id()
            );
            assert_ne!(
                reply.code(),
                Some(ResponseCode::Unauthenticated),
                "{} with {permission}: {reply:?}",
                operation.id()
            );
        }
    }
    assert_eq!(walked, guarded.len());
}

/// Operations guarded by the implicit `self.manage` work for a role that names nothing else.
async fn self_manage_is_implicit(kit: TestKit) {
    let role_id = kit.create_role("Nothing Else", &["self.manage"]).await;
    let (_, token) = kit.add_member("minimal@adaezefoods.ng", &role_id).await;
    kit.op(Operation::GetProfile, &token, json!({}))
        .await
        .expect(ResponseCode::Success);
    kit.op(Operation::GenerateOtp, &token, json!({}))
        .await
        .expect(ResponseCode::Success);
    kit.op(Operation::Logout, &token, json!({}))
        .await
        .expect(ResponseCode::Success);
}

on_both_stores!(
    every_guarded_operation_needs_its_permission,
    self_manage_is_implicit
);
