//! What the money scenarios share.

use generated_server::{Operation, ResponseCode};
use kobo::platform::permissions::CHECKER_ROLE_ID;
use kobo::testkit::{Call, StoreKind, TestKit};
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
/// a connection of the kit's own database waiting on a lock, seen in `pg_stat_activity`), for
/// at most 5 s, or a moment for one to queue behind the test's write transaction (SQLite,
/// whose waiters cannot be seen from outside). Whether one was seen; a server that does not
/// wait (a defect the test is there to catch) is then judged by what it answers.
pub async fn until_a_statement_waits(kit: &TestKit) -> bool {
    if kit.kind == StoreKind::Sqlite {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        return true;
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while std::time::Instant::now() < deadline {
        if statements_waiting(kit).await > 0 {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    false
}

/// How many connections of the kit's own database wait on a lock. Only its own: the
/// server's other databases are other tests', run at the same time, and a wait of theirs
/// (`pg_locks` counted every database's) once let a test commit its change before the
/// payout it raced had even read.
pub async fn statements_waiting(kit: &TestKit) -> i64 {
    kit.sql(
        "SELECT COUNT(*) FROM pg_stat_activity \
         WHERE datname = current_database() AND wait_event_type = 'Lock'",
    )
    .int()
    .await
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

/// A lock wait in another test's database is not one of this kit's: the scenarios that
/// commit their change once the server waits for it must not commit it on a wait of a test
/// running alongside (`a_payout_to_an_account_closed_meanwhile_is_refused` failed in CI so:
/// its account closed before the payout read it, and the payout rightly answered `06`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_in_another_database_is_not_the_kits() {
    let ours = TestKit::postgres().await;
    let theirs = TestKit::postgres().await;
    let close = "UPDATE accounts SET status = 'closed' WHERE account_number = '1000000014'";
    let mut holding = theirs.store.begin().await.unwrap();
    theirs.sql(close).execute_in(&mut holding).await;
    let waiter = tokio::spawn({
        let pool = theirs.store.postgres_pool().unwrap().clone();
        async move { sqlx::query(close).execute(&pool).await.unwrap() }
    });
    assert!(
        until_a_statement_waits(&theirs).await,
        "their statement never waited"
    );
    assert_eq!(statements_waiting(&ours).await, 0);
    holding.commit().await.unwrap();
    waiter.await.unwrap();
}

/// A payout of NGN 10 from the main account to Emeka Nwosu at another bank, through the
/// integration `api`, holding the client `reference`: an item that asks for it afterwards
/// finds it taken.
pub async fn a_transfer_holding(kit: &TestKit, api: &str, reference: &str) {
    let mut body = payout_body("0123456788", "Emeka Nwosu", "000013", "10");
    body["reference"] = json!(reference);
    let call = Call::new(Operation::FundsTransferApi.path(), Some(api), body);
    kit.send(call.header("idempotency-key", format!("holds-{reference}")))
        .await
        .expect(ResponseCode::Success);
}
