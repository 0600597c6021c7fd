//! What the money scenarios share.

use generated_server::{Operation, ResponseCode};
use kobo::platform::permissions::CHECKER_ROLE_ID;
use kobo::testkit::{StoreKind, TestKit};
use serde_json::{json, Value};

use crate::races::roomy_budget;

/// The checker [`approval_kit`] adds.
pub const CHECKER: &str = "ngozi.eze@adaezefoods.ng";

/// A kit for maker-checker scenarios: room for many OTPs, `balance` in the business's main
/// account, an approval policy holding transfers from `policy_from`, and a checker, whose
/// Dashboard token is returned.
pub async fn approval_kit(kind: StoreKind, balance: &str, policy_from: &str) -> (TestKit, String) {
    let mut config = roomy_budget();
    config.otp.issue_limit = 1_000;
    let kit = TestKit::start(kind, config).await;
    let token = kit.integration_token().await;
    kit.credit(&token, "1000000014", balance).await;
    kit.op(
        Operation::CreateApprovalPolicy,
        &kit.owner_token,
        json!({"min_amount": policy_from}),
    )
    .await
    .expect(ResponseCode::Success);
    let (_, checker) = kit.add_member(CHECKER, CHECKER_ROLE_ID).await;
    (kit, checker)
}

/// A fresh OTP of the member behind `token` (the sandbox returns it).
pub async fn otp(kit: &TestKit, token: &str) -> String {
    kit.op(Operation::GenerateOtp, token, json!({}))
        .await
        .expect(ResponseCode::Success)["otp"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The stored balance of an account, as an amount (`"49000.01"`).
pub async fn balance(kit: &TestKit, number: &str) -> String {
    let balance = kit
        .sql("SELECT balance FROM accounts WHERE account_number = $1")
        .bind(number)
        .int()
        .await;
    format!("{}.{:02}", balance / 100, balance % 100)
}

/// Waits until a statement of the server is waiting for a lock the test holds (PostgreSQL:
/// a lock not granted, seen in `pg_locks`), for at most 5 s, or a moment for one to queue
/// behind the test's write transaction (SQLite, whose waiters cannot be seen from outside).
/// Whether one was seen; a server that does not wait (a defect the test is there to catch)
/// is then judged by what it answers.
pub async fn until_a_statement_waits(kit: &TestKit) -> bool {
    if kit.kind == StoreKind::Sqlite {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        return true;
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while std::time::Instant::now() < deadline {
        let waiting = kit
            .sql("SELECT COUNT(*) FROM pg_locks WHERE NOT granted")
            .int()
            .await;
        if waiting > 0 {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    false
}

/// A payout's body from the main account of Adaeze Foods (`1000000014`), without an OTP.
pub fn payout_body(to: &str, name: &str, bank: &str, amount: &str) -> Value {
    json!({
        "source_account_number": "1000000014",
        "source_account_name": "Adaeze Foods Ltd",
        "beneficiary_account_number": to,
        "beneficiary_account_name": name,
        "bank_code": bank,
        "amount": amount,
        "transfer_type": if bank == "090823" { "intra" } else { "inter" },
    })
}
