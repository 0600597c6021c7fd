//! What the money scenarios share.

use generated_server::{Operation, ResponseCode};
use kobo::testkit::TestKit;
use serde_json::json;

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
    let balance: i64 = sqlx::query_scalar("SELECT balance FROM accounts WHERE account_number = $1")
        .bind(number)
        .fetch_one(kit.store.pool())
        .await
        .unwrap();
    format!("{}.{:02}", balance / 100, balance % 100)
}
