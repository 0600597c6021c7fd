//! Maker-checker: the approval policy holds transfers, their funds reserved; a different
//! member approves, rejects or lets them expire; the initiator may cancel.

use chrono::Duration;
use generated_server::{Operation, ResponseCode};
use kobo::kernel::config::Environment;
use kobo::money::{approvals, nip};
use kobo::on_both_stores;
use kobo::platform::permissions::CHECKER_ROLE_ID;
use kobo::testkit::{StoreKind, TestKit};
use serde_json::{json, Value};

use crate::races::roomy_budget;
use crate::support::{approval_kit, balance, otp};

fn body(to: &str, name: &str, bank: &str, amount: &str, otp: &str) -> Value {
    let mut body = crate::support::payout_body(to, name, bank, amount);
    body["otp"] = json!(otp);
    body
}

async fn held(kit: &TestKit, to: &str, name: &str, bank: &str, amount: &str) -> Value {
    let code = otp(kit, &kit.owner_token).await;
    let transfer = kit
        .op(
            Operation::FundsTransfer,
            &kit.owner_token,
            body(to, name, bank, amount, &code),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(
        transfer["transfer_status"], "pending_approval",
        "{transfer:#}"
    );
    assert_eq!(transfer["approval_status"], "awaiting_approval");
    assert_eq!(transfer["status"], "pending");
    assert!(transfer["expires_at"].is_string());
    transfer
}

/// `approve_transfer` by the member behind `token`, with a fresh OTP of theirs.
async fn approve(kit: &TestKit, token: &str, transfer: &Value) -> kobo::testkit::Reply {
    let code = otp(kit, token).await;
    kit.op(
        Operation::ApproveTransfer,
        token,
        json!({"reference_number": transfer["reference_number"], "otp": code}),
    )
    .await
}

async fn the_policy_holds_transfers_until_a_checker_decides(kind: StoreKind) {
    let mut config = roomy_budget();
    config.otp.issue_limit = 1_000;
    let kit = TestKit::start(kind, config).await;
    let token = kit.integration_token().await;
    kit.op(Operation::GetApprovalPolicy, &kit.owner_token, json!({}))
        .await
        .expect(ResponseCode::NotFound);
    let policy = kit
        .op(
            Operation::CreateApprovalPolicy,
            &kit.owner_token,
            json!({"min_amount": "1000"}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(policy["min_amount"], "1000.00");
    assert_eq!(policy["is_active"], true);
    kit.op(Operation::CreateApprovalPolicy, &kit.owner_token, json!({}))
        .await
        .expect(ResponseCode::Duplicate);

    kit.credit(&token, "1000000014", "100000").await;
    let (other, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "owner@lagosfresh.ng")
        .await;
    let (_, checker) = kit
        .add_member("ngozi.eze@adaezefoods.ng", CHECKER_ROLE_ID)
        .await;

    // Below the minimum: runs at once.
    let code = otp(&kit, &kit.owner_token).await;
    let small = kit
        .op(
            Operation::FundsTransfer,
            &kit.owner_token,
            body(
                &other.main_account_number,
                "Lagos Fresh Produce Ltd",
                "090823",
                "999.99",
                &code,
            ),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(small["transfer_status"], "success");
    assert_eq!(balance(&kit, "1000000014").await, "99000.01");

    // Held: the funds are reserved at once; the recipient has nothing yet.
    let first = held(
        &kit,
        &other.main_account_number,
        "Lagos Fresh Produce Ltd",
        "090823",
        "50000",
    )
    .await;
    assert_eq!(balance(&kit, "1000000014").await, "49000.01");
    assert_eq!(balance(&kit, &other.main_account_number).await, "999.99");
    let pending = kit
        .op(Operation::FetchPendingTransfers, &checker, json!({}))
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(pending.as_array().unwrap().len(), 1);
    // Not by the initiator.
    approve(&kit, &kit.owner_token, &first)
        .await
        .expect(ResponseCode::PermissionDenied);
    let approved = approve(&kit, &checker, &first)
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(approved["transfer_status"], "success");
    assert_eq!(approved["approval_status"], "approved");
    assert!(approved["reviewed_by"].is_string());
    assert_eq!(balance(&kit, &other.main_account_number).await, "50999.99");
    approve(&kit, &checker, &first)
        .await
        .expect(ResponseCode::InvalidState);

    // Rejected: the reserve comes back.
    let second = held(&kit, "0123456788", "Emeka Nwosu", "000013", "10000").await;
    assert_eq!(balance(&kit, "1000000014").await, "38973.13");
    let rejected = kit
        .op(
            Operation::RejectTransfer,
            &checker,
            json!({"reference_number": second["reference_number"], "reason": "Not budgeted"}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(rejected["transfer_status"], "rejected");
    assert_eq!(rejected["status"], "failed");
    assert_eq!(rejected["failure_reason"], "Not budgeted");
    assert_eq!(balance(&kit, "1000000014").await, "49000.01");

    // Cancelled by its initiator only.
    let third = held(&kit, "0123456788", "Emeka Nwosu", "000013", "2000").await;
    kit.op(
        Operation::CancelTransfer,
        &checker,
        json!({"reference_number": third["reference_number"]}),
    )
    .await
    .expect(ResponseCode::PermissionDenied);
    let cancelled = kit
        .op(
            Operation::CancelTransfer,
            &kit.owner_token,
            json!({"reference_number": third["reference_number"]}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(cancelled["transfer_status"], "cancelled");
    assert_eq!(balance(&kit, "1000000014").await, "49000.01");

    // An inter-bank transfer approved goes to NIP like any other.
    let fourth = held(&kit, "0123456788", "Emeka Nwosu", "000013", "5000").await;
    let approved = approve(&kit, &checker, &fourth)
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(approved["transfer_status"], "processing");
    let pass = nip::process_due(
        &kit.store,
        &**kit.api.provider(),
        &kit.clock,
        Environment::Sandbox,
        10,
    )
    .await
    .unwrap();
    assert_eq!(pass.settled, 1);
    assert_eq!(balance(&kit, "1000000014").await, "43989.26");

    // Unreviewed for 72 hours: expired, the reserve released.
    let fifth = held(&kit, "0123456788", "Emeka Nwosu", "000013", "3000").await;
    assert_eq!(balance(&kit, "1000000014").await, "40978.51");
    kit.clock.advance(Duration::hours(73));
    assert_eq!(
        approvals::expire_due(&kit.store, Environment::Sandbox, &kit.clock)
            .await
            .unwrap(),
        1
    );
    assert_eq!(balance(&kit, "1000000014").await, "43989.26");
    let owner = kit
        .login(
            "adaeze.okafor@adaezefoods.ng",
            kobo::testkit::OWNER_PASSWORD,
        )
        .await;
    let expired = kit
        .op(
            Operation::GetTransferWeb,
            &owner,
            json!({"reference_number": fifth["reference_number"]}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(expired["transfer_status"], "expired");

    // Each ending is announced by its own kind: no money left, so none is `transfer.failed`.
    let kinds = kit
        .sql(
            "SELECT type FROM events WHERE business_id = $1 AND type LIKE 'transfer.%' \
             ORDER BY created_at, id",
        )
        .bind(&kit.business.business_id)
        .texts()
        .await;
    for kind in [
        "transfer.rejected",
        "transfer.cancelled",
        "transfer.expired",
    ] {
        assert!(
            kinds.iter().any(|k| k == kind),
            "{kind} missing from {kinds:?}"
        );
    }
    assert!(!kinds.iter().any(|k| k == "transfer.failed"), "{kinds:?}");

    // The policy can be switched off.
    let off = kit
        .op(
            Operation::UpdateApprovalPolicy,
            &owner,
            json!({"is_active": false}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(off["is_active"], false);
    kit.assert_ledger_balances().await;
}

/// Approval is when the money leaves: the checker proves it is them with an OTP of their own.
/// None, a wrong one, or the initiator's is refused and nothing moves; the checker's own passes
/// once, and a retry under the same key with a fresh OTP replays the approval.
async fn an_approval_takes_the_approvers_own_otp(kind: StoreKind) {
    let (kit, checker) = approval_kit(kind, "10000", "100").await;
    let transfer = held(&kit, "0123456788", "Emeka Nwosu", "000013", "1000").await;
    let reference = transfer["reference_number"].clone();
    let reserved = balance(&kit, "1000000014").await;
    assert_eq!(reserved, "8989.25");

    // No OTP: the body is refused by its schema.
    let missing = kit
        .op(
            Operation::ApproveTransfer,
            &checker,
            json!({"reference_number": reference}),
        )
        .await;
    missing.expect(ResponseCode::InvalidRequest);
    assert!(
        missing.body["message"].as_str().unwrap().contains("otp"),
        "{missing:?}"
    );
    // A wrong OTP (the checker has a live one).
    let checker_code = otp(&kit, &checker).await;
    let wrong = if checker_code == "000000" {
        "000001"
    } else {
        "000000"
    };
    kit.op(
        Operation::ApproveTransfer,
        &checker,
        json!({"reference_number": reference, "otp": wrong}),
    )
    .await
    .expect(ResponseCode::InvalidOtp);
    // The initiator's OTP is theirs, not the checker's.
    let initiator_code = otp(&kit, &kit.owner_token).await;
    if initiator_code != checker_code {
        kit.op(
            Operation::ApproveTransfer,
            &checker,
            json!({"reference_number": reference, "otp": initiator_code}),
        )
        .await
        .expect(ResponseCode::InvalidOtp);
    }
    // An expired OTP of the checker's.
    let stale = otp(&kit, &checker).await;
    kit.clock.advance(Duration::minutes(11));
    kit.op(
        Operation::ApproveTransfer,
        &checker,
        json!({"reference_number": reference, "otp": stale}),
    )
    .await
    .expect(ResponseCode::InvalidOtp);
    // Nothing moved, nothing was reviewed.
    assert_eq!(balance(&kit, "1000000014").await, reserved);
    let still = kit
        .op(
            Operation::GetTransferWeb,
            &checker,
            json!({"reference_number": reference}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(still["transfer_status"], "pending_approval");
    assert_eq!(still["reviewed_by"], json!(null));

    // The checker's own, fresh OTP: approved, under a key; the OTP is spent.
    let code = otp(&kit, &checker).await;
    let approval = |code: &str| {
        kobo::testkit::Call::new(
            Operation::ApproveTransfer.path(),
            Some(checker.as_str()),
            json!({"reference_number": reference, "otp": code}),
        )
        .header("idempotency-key", "approve-once")
    };
    let approved = kit
        .send(approval(&code))
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(approved["transfer_status"], "processing");
    assert_eq!(approved["approval_status"], "approved");
    // The same key with a fresh OTP replays it (the OTP is no part of the fingerprint).
    let fresh = otp(&kit, &checker).await;
    let replay = kit.send(approval(&fresh)).await;
    assert_eq!(replay.expect(ResponseCode::Success), &approved);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    // The spent OTP does not approve again (nor would anything: it is approved).
    kit.op(
        Operation::ApproveTransfer,
        &checker,
        json!({"reference_number": reference, "otp": code}),
    )
    .await
    .expect(ResponseCode::InvalidState);
    assert_eq!(balance(&kit, "1000000014").await, reserved);
    kit.assert_ledger_balances().await;
}

/// The beneficiary is looked up again at approval: a Kobo account closed since the transfer
/// was held is refused (`06`), nothing moves, and the checker rejects it instead.
async fn a_beneficiary_closed_since_the_hold_is_refused_at_approval(kind: StoreKind) {
    let (kit, checker) = approval_kit(kind, "10000", "100").await;
    let (other, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "owner@lagosfresh.ng")
        .await;
    let transfer = held(
        &kit,
        &other.main_account_number,
        "Lagos Fresh Produce Ltd",
        "090823",
        "2500",
    )
    .await;
    kit.sql("UPDATE accounts SET status = 'closed' WHERE account_number = $1")
        .bind(&other.main_account_number)
        .execute()
        .await;
    approve(&kit, &checker, &transfer)
        .await
        .expect(ResponseCode::BeneficiaryAccountNotFound);
    assert_eq!(balance(&kit, "1000000014").await, "7500.00");
    assert_eq!(balance(&kit, &other.main_account_number).await, "0.00");
    let rejected = kit
        .op(
            Operation::RejectTransfer,
            &checker,
            json!({"reference_number": transfer["reference_number"],
                   "reason": "The supplier closed its account"}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(rejected["transfer_status"], "rejected");
    assert_eq!(balance(&kit, "1000000014").await, "10000.00");
    kit.assert_ledger_balances().await;
}

/// A hold past its `expires_at` can no longer be approved, even before the sweep has released
/// it: the approval is refused `48`, naming the expiry, with nothing moved; the sweep then
/// expires it. It used to be approved as long as the sweep had not
/// run (the NIP worker's pass, a hundred holds at a time).
async fn a_hold_past_its_expiry_is_not_approved(kind: StoreKind) {
    let (kit, _) = approval_kit(kind, "50000", "1000").await;
    let transfer = held(&kit, "0123456788", "Emeka Nwosu", "000013", "3000").await;
    let reserved = balance(&kit, "1000000014").await;
    kit.clock
        .advance(Duration::hours(72) + Duration::seconds(1));
    let checker = kit
        .login(crate::support::CHECKER, kobo::testkit::MEMBER_PASSWORD)
        .await;
    let refused = approve(&kit, &checker, &transfer).await;
    refused.expect(ResponseCode::InvalidState);
    let message = refused.body["message"].as_str().unwrap_or_default();
    assert!(message.contains("expired"), "{message}");
    assert_eq!(balance(&kit, "1000000014").await, reserved);
    assert_eq!(
        approvals::expire_due(&kit.store, Environment::Sandbox, &kit.clock)
            .await
            .unwrap(),
        1
    );
    assert_eq!(balance(&kit, "1000000014").await, "50000.00");
    kit.assert_ledger_balances().await;
}

on_both_stores!(
    kind: the_policy_holds_transfers_until_a_checker_decides,
    an_approval_takes_the_approvers_own_otp,
    a_beneficiary_closed_since_the_hold_is_refused_at_approval,
    a_hold_past_its_expiry_is_not_approved
);

/// One approval under one key, sent at once by many from two processes with the checker's one
/// OTP: the transfer is approved once, every `00` carries the same transfer, and the others
/// are told the key is in progress (`28`) or that the OTP is out of attempts (`45`: every
/// check counts one, and ten racers outnumber them). None is told the transfer is no longer
/// awaiting approval (`48`) or that the OTP was spent: that is what the key's own first send
/// did, and its answer is theirs. A resend with a fresh OTP afterwards replays the approval.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_approval_key_sent_at_once_approves_once() {
    let mut config = roomy_budget();
    config.otp.issue_limit = 1_000;
    let kit = TestKit::start(StoreKind::Postgres, config).await;
    let second = kit.another_process().await;
    let token = kit.integration_token().await;
    kit.credit(&token, "1000000014", "10000").await;
    kit.op(
        Operation::CreateApprovalPolicy,
        &kit.owner_token,
        json!({"min_amount": "100"}),
    )
    .await
    .expect(ResponseCode::Success);
    let (other, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "owner@lagosfresh.ng")
        .await;
    let (_, checker) = kit
        .add_member("ngozi.eze@adaezefoods.ng", CHECKER_ROLE_ID)
        .await;
    let transfer = held(
        &kit,
        &other.main_account_number,
        "Lagos Fresh Produce Ltd",
        "090823",
        "2500",
    )
    .await;
    let code = otp(&kit, &checker).await;
    let body = json!({"reference_number": transfer["reference_number"], "otp": code});
    let calls = (0..10)
        .map(|_| {
            kobo::testkit::Call::new(
                Operation::ApproveTransfer.path(),
                Some(&checker),
                body.clone(),
            )
            .header("idempotency-key", "approve-at-once")
        })
        .collect();
    let replies = kit.race(&[second], calls).await;
    let approved: Vec<&Value> = replies
        .iter()
        .filter(|r| r.code() == Some(ResponseCode::Success))
        .map(|r| &r.body["data"])
        .collect();
    assert!(!approved.is_empty(), "{replies:#?}");
    assert!(approved.iter().all(|data| *data == approved[0]));
    assert_eq!(approved[0]["transfer_status"], "success");
    assert!(replies.iter().all(|r| matches!(
        r.code(),
        Some(
            ResponseCode::Success
                | ResponseCode::IdempotencyKeyInProgress
                | ResponseCode::InvalidOtp
        )
    )));
    // Once: the recipient was credited once, one audit entry says so.
    assert_eq!(balance(&kit, &other.main_account_number).await, "2500.00");
    assert_eq!(balance(&kit, "1000000014").await, "7500.00");
    assert_eq!(
        kit.count(
            "SELECT COUNT(*) FROM audit_logs WHERE business_id = $1 AND action = 'approve_transfer'",
            &kit.business.business_id
        )
        .await,
        1
    );
    let fresh = otp(&kit, &checker).await;
    let replay = kit
        .send(
            kobo::testkit::Call::new(
                Operation::ApproveTransfer.path(),
                Some(&checker),
                json!({"reference_number": transfer["reference_number"], "otp": fresh}),
            )
            .header("idempotency-key", "approve-at-once"),
        )
        .await;
    assert_eq!(replay.expect(ResponseCode::Success), approved[0]);
    kit.assert_ledger_balances().await;
}

/// A hold rejected by its checker and cancelled by its maker at once, through two processes:
/// one of them ends it, the reserve comes back once, and every other is told it no longer
/// awaits approval (`48`), never an internal error (the release's `REV-` credit of a hold
/// another request had just ended was once refused by its unique reference: `96`).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hold_rejected_and_cancelled_at_once_ends_once() {
    let mut config = roomy_budget();
    config.otp.issue_limit = 1_000;
    let kit = TestKit::start(StoreKind::Postgres, config).await;
    let second = kit.another_process().await;
    let token = kit.integration_token().await;
    kit.credit(&token, "1000000014", "10000").await;
    kit.op(
        Operation::CreateApprovalPolicy,
        &kit.owner_token,
        json!({"min_amount": "100"}),
    )
    .await
    .expect(ResponseCode::Success);
    let (_, checker) = kit
        .add_member("ngozi.eze@adaezefoods.ng", CHECKER_ROLE_ID)
        .await;
    for round in 0..3 {
        let transfer = held(&kit, "0123456788", "Emeka Nwosu", "000013", "2500").await;
        let reference = &transfer["reference_number"];
        let calls = (0..12)
            .map(|i| {
                if i % 2 == 0 {
                    kobo::testkit::Call::new(
                        Operation::RejectTransfer.path(),
                        Some(&checker),
                        json!({"reference_number": reference, "reason": "Not budgeted"}),
                    )
                } else {
                    kobo::testkit::Call::new(
                        Operation::CancelTransfer.path(),
                        Some(&kit.owner_token),
                        json!({"reference_number": reference}),
                    )
                }
            })
            .collect();
        let replies = kit.race(std::slice::from_ref(&second), calls).await;
        let ended = replies
            .iter()
            .filter(|r| r.code() == Some(ResponseCode::Success))
            .count();
        assert_eq!(ended, 1, "round {round}: {replies:#?}");
        assert!(
            replies.iter().all(|r| matches!(
                r.code(),
                Some(ResponseCode::Success | ResponseCode::InvalidState)
            )),
            "round {round}: {replies:#?}"
        );
        assert_eq!(balance(&kit, "1000000014").await, "10000.00");
    }
    kit.assert_ledger_balances().await;
}

/// `funds_transfer_api` with the kit's business's credentials, under `key`.
async fn integration_transfer(kit: &TestKit, token: &str, amount: &str, key: &str) -> Value {
    let mut body = body("0123456788", "Emeka Nwosu", "000013", amount, "");
    body.as_object_mut().unwrap().remove("otp");
    kit.send(
        kobo::testkit::Call::new(Operation::FundsTransferApi.path(), Some(token), body)
            .header("idempotency-key", key),
    )
    .await
    .expect(ResponseCode::Success)
    .clone()
}

/// Issues a new client secret as the member behind `token` and returns an integration token
/// made with it.
async fn issue_credentials(kit: &TestKit, token: &str) -> String {
    let credentials = kit
        .op(Operation::RegenerateSecret, token, json!({}))
        .await
        .expect(ResponseCode::Success)
        .clone();
    kit.send(kobo::testkit::Call::new(
        Operation::GenerateToken.path(),
        None,
        json!({"client_id": credentials["client_id"], "client_secret": credentials["client_secret"]}),
    ))
    .await
    .expect(ResponseCode::Success)["access_token"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Issue 28, item 5. Maker and checker are two people, also when the maker used integration
/// credentials: whoever issued the client secret a transfer was made with (`regenerate_secret`)
/// is its maker and cannot approve it (`43`). A member whose custom role holds exactly
/// `credential.manage` and `transfer.approve` could issue a secret, pay through the API and
/// approve the hold alone; so could an Admin or the Owner. A secret the operator issued has no
/// maker among the members.
async fn whoever_issued_the_credentials_is_the_maker(kind: StoreKind) {
    let (kit, checker) = approval_kit(kind, "10000", "100").await;
    let operator_issued = kit.integration_token().await;
    let role = kit
        .create_role("Integrator", &["credential.manage", "transfer.approve"])
        .await;
    let (_, integrator) = kit.add_member("ife.olawale@adaezefoods.ng", &role).await;

    // The operator's credentials: the owner may approve what they made.
    let by_operator = integration_transfer(&kit, &operator_issued, "150", "k-1").await;
    assert_eq!(by_operator["transfer_status"], "pending_approval");
    approve(&kit, &kit.owner_token, &by_operator)
        .await
        .expect(ResponseCode::Success);

    // The integrator cannot pay from the Dashboard, issues a secret, pays through the API...
    let code = otp(&kit, &integrator).await;
    kit.op(
        Operation::FundsTransfer,
        &integrator,
        body("0123456788", "Emeka Nwosu", "000013", "150", &code),
    )
    .await
    .expect(ResponseCode::PermissionDenied);
    let theirs = issue_credentials(&kit, &integrator).await;
    let by_integrator = integration_transfer(&kit, &theirs, "150", "k-2").await;
    // ...and cannot approve it; another member can.
    let refused = approve(&kit, &integrator, &by_integrator).await;
    refused.expect(ResponseCode::PermissionDenied);
    let message = refused.body["message"].as_str().unwrap();
    assert!(message.contains("credentials"), "{message}");
    let still = kit
        .op(
            Operation::GetTransferWeb,
            &checker,
            json!({"reference_number": by_integrator["reference_number"]}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(still["transfer_status"], "pending_approval");
    approve(&kit, &checker, &by_integrator)
        .await
        .expect(ResponseCode::Success);

    // The Owner issues a secret in turn: now they are the maker of what it pays.
    let owners = issue_credentials(&kit, &kit.owner_token).await;
    let by_owner = integration_transfer(&kit, &owners, "150", "k-3").await;
    approve(&kit, &kit.owner_token, &by_owner)
        .await
        .expect(ResponseCode::PermissionDenied);
    // The integrator, no longer holding the credentials, may approve it.
    approve(&kit, &integrator, &by_owner)
        .await
        .expect(ResponseCode::Success);
    kit.assert_ledger_balances().await;
}

on_both_stores!(kind: whoever_issued_the_credentials_is_the_maker);
