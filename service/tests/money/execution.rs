//! A rule checked when a transfer is initiated is checked again, in the executing transaction,
//! whenever its money moves later: a held transfer's approval (the source account's status, the
//! business's status, the reservation, the daily limit of the day it executes). Defects found
//! from outside (issue 28, items 1 to 3), each on both stores; the race on PostgreSQL.

use chrono::{DateTime, Duration, FixedOffset, NaiveTime, Utc};
use generated_server::models::AccountStatus;
use generated_server::{Operation, ResponseCode};
use kobo::kernel::config::Environment;
use kobo::money::{accounts, approvals, nip};
use kobo::on_both_stores;
use kobo::operator::businesses;
use kobo::platform::permissions::CHECKER_ROLE_ID;
use kobo::testkit::{Call, StoreKind, TestKit, MEMBER_PASSWORD, OWNER_PASSWORD};
use serde_json::{json, Value};

use crate::support::{approval_kit, balance, otp, until_a_statement_waits, CHECKER};

const OWNER: &str = "adaeze.okafor@adaezefoods.ng";
const MAIN: &str = "1000000014";

fn transfer_body(from: &str, from_name: &str, to: (&str, &str, &str), amount: &str) -> Value {
    let (number, name, bank) = to;
    json!({
        "source_account_number": from,
        "source_account_name": from_name,
        "beneficiary_account_number": number,
        "beneficiary_account_name": name,
        "bank_code": bank,
        "amount": amount,
        "transfer_type": if bank == "090823" { "intra" } else { "inter" },
    })
}

const EMEKA: (&str, &str, &str) = ("0123456788", "Emeka Nwosu", "000013");
const BISI: (&str, &str, &str) = ("0690000036", "Bisi Alade", "000013");

/// `funds_transfer` by the member behind `token` from the main account, with a fresh OTP.
async fn transfer(kit: &TestKit, token: &str, to: (&str, &str, &str), amount: &str) -> Value {
    transfer_from(kit, token, MAIN, "Adaeze Foods Ltd", to, amount).await
}

async fn transfer_from(
    kit: &TestKit,
    token: &str,
    from: &str,
    from_name: &str,
    to: (&str, &str, &str),
    amount: &str,
) -> Value {
    let mut body = transfer_body(from, from_name, to, amount);
    body["otp"] = json!(otp(kit, token).await);
    kit.op(Operation::FundsTransfer, token, body).await.body
}

fn code_of(reply: &Value) -> &str {
    reply["response_code"].as_str().unwrap_or("none")
}

fn held(reply: &Value) -> Value {
    assert_eq!(code_of(reply), "00", "{reply:#}");
    assert_eq!(
        reply["data"]["transfer_status"], "pending_approval",
        "{reply:#}"
    );
    reply["data"].clone()
}

async fn approve(kit: &TestKit, token: &str, transfer: &Value) -> kobo::testkit::Reply {
    let code = otp(kit, token).await;
    kit.op(
        Operation::ApproveTransfer,
        token,
        json!({"reference_number": transfer["reference_number"], "otp": code}),
    )
    .await
}

async fn status_of(kit: &TestKit, transfer: &Value) -> String {
    let owner = kit.login(OWNER, OWNER_PASSWORD).await;
    kit.op(
        Operation::GetTransferWeb,
        &owner,
        json!({"reference_number": transfer["reference_number"]}),
    )
    .await
    .expect(ResponseCode::Success)["transfer_status"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// `kobo account set-status NUMBER closed`.
async fn close(kit: &TestKit, number: &str) -> Result<(), kobo::error::Error> {
    accounts::change_status(
        &kit.store,
        &kit.clock,
        number,
        AccountStatus::Closed,
        "customer request",
    )
    .await
    .map(|_| ())
}

/// One pass of the NIP worker.
async fn nip_pass(kit: &TestKit) -> nip::Pass {
    nip::process_due(
        &kit.store,
        &**kit.api.provider(),
        &kit.clock,
        Environment::Sandbox,
        10,
    )
    .await
    .unwrap()
}

async fn set_account_status(kit: &TestKit, number: &str, status: AccountStatus) {
    accounts::change_status(&kit.store, &kit.clock, number, status, "fraud suspected")
        .await
        .unwrap_or_else(|error| panic!("{number} -> {status}: {}", error.message()));
}

/// Item 1. A held transfer from an account blocked since it was held is refused at approval
/// (`48`), intra-bank and over NIP alike, and nothing moves; the hold stays reviewable, and a
/// rejection or a cancellation releases it into the blocked account.
async fn a_held_transfer_from_a_blocked_account_is_refused_at_approval(kind: StoreKind) {
    let (kit, checker) = approval_kit(kind, "10000", "100").await;
    let (other, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "owner@lagosfresh.ng")
        .await;
    let lagos = (
        other.main_account_number.as_str(),
        "Lagos Fresh Produce Ltd",
        "090823",
    );
    let intra = held(&transfer(&kit, &kit.owner_token, lagos, "150").await);
    let inter = held(&transfer(&kit, &kit.owner_token, EMEKA, "200").await);
    // 150 and 200 + 10.75 reserved.
    assert_eq!(balance(&kit, MAIN).await, "9639.25");
    set_account_status(&kit, MAIN, AccountStatus::Blocked).await;

    // A direct transfer is refused, as before.
    let direct = transfer(&kit, &kit.owner_token, lagos, "50").await;
    assert_eq!(code_of(&direct), "48", "{direct:#}");
    // So is each approval: nothing moves, the transfers stay held.
    for transfer in [&intra, &inter] {
        let refused = approve(&kit, &checker, transfer).await;
        refused.expect(ResponseCode::InvalidState);
        let message = refused.body["message"].as_str().unwrap();
        assert!(message.contains("blocked"), "{message}");
        assert_eq!(status_of(&kit, transfer).await, "pending_approval");
    }
    assert_eq!(balance(&kit, &other.main_account_number).await, "0.00");
    assert_eq!(balance(&kit, MAIN).await, "9639.25");
    let processing = kit
        .count(
            "SELECT COUNT(*) FROM transfers WHERE business_id = $1 AND transfer_status = 'processing'",
            &kit.business.business_id,
        )
        .await;
    assert_eq!(processing, 0, "nothing went to NIP");

    // The holds stay reviewable: rejected and cancelled, their reserve released.
    kit.op(
        Operation::RejectTransfer,
        &checker,
        json!({"reference_number": intra["reference_number"], "reason": "Frozen account"}),
    )
    .await
    .expect(ResponseCode::Success);
    kit.op(
        Operation::CancelTransfer,
        &kit.owner_token,
        json!({"reference_number": inter["reference_number"]}),
    )
    .await
    .expect(ResponseCode::Success);
    assert_eq!(balance(&kit, MAIN).await, "10000.00");
    kit.assert_ledger_balances().await;
}

/// Item 1, the business: a held transfer of a business deactivated since is refused at
/// approval (`60`) and stays held; reactivated, it is approved.
async fn a_held_transfer_of_a_deactivated_business_waits(kind: StoreKind) {
    let (kit, checker) = approval_kit(kind, "10000", "100").await;
    let transfer = held(&transfer(&kit, &kit.owner_token, EMEKA, "500").await);
    businesses::set_status(&kit.store, &kit.clock, &kit.business.business_id, false)
        .await
        .unwrap();
    approve(&kit, &checker, &transfer)
        .await
        .expect(ResponseCode::BusinessInactive);
    assert_eq!(status_of(&kit, &transfer).await, "pending_approval");
    businesses::set_status(&kit.store, &kit.clock, &kit.business.business_id, true)
        .await
        .unwrap();
    let approved = approve(&kit, &checker, &transfer).await;
    assert_eq!(
        approved.expect(ResponseCode::Success)["transfer_status"],
        "processing"
    );
    kit.assert_ledger_balances().await;
}

/// Item 2. An account whose funds are reserved by a held transfer, or in flight to NIP, cannot
/// be closed (`48`): its balance shows 0, but the money is still its own. Released or settled,
/// it can.
async fn an_account_with_reserved_funds_cannot_be_closed(kind: StoreKind) {
    let (kit, checker) = approval_kit(kind, "100", "100").await;
    let token = kit.integration_token().await;
    let payroll = kit.open_account(&token, "Adaeze Foods Ltd - Payroll").await;
    kit.credit(&token, &payroll, "200").await;
    let name = "Adaeze Foods Ltd - Payroll";
    let reserved =
        held(&transfer_from(&kit, &kit.owner_token, &payroll, name, EMEKA, "189.25").await);
    assert_eq!(balance(&kit, &payroll).await, "0.00");
    let refused = close(&kit, &payroll).await.unwrap_err();
    assert_eq!(refused.code(), ResponseCode::InvalidState);
    let reference = reserved["reference_number"].as_str().unwrap();
    assert!(
        refused.message().contains(reference),
        "{}",
        refused.message()
    );
    // Approved: the money is in flight to NIP, not gone; still not closable.
    approve(&kit, &checker, &reserved)
        .await
        .expect(ResponseCode::Success);
    let refused = close(&kit, &payroll).await.unwrap_err();
    assert_eq!(refused.code(), ResponseCode::InvalidState);
    // Settled: gone for good, and the empty account closes.
    assert_eq!(nip_pass(&kit).await.settled, 1);
    set_account_status(&kit, &payroll, AccountStatus::Closed).await;
    kit.assert_ledger_balances().await;
}

/// Ten o'clock in Lagos, `days` days after today there.
fn lagos_morning(days: i64) -> DateTime<Utc> {
    let lagos = FixedOffset::east_opt(3600).unwrap();
    let date = (Utc::now().with_timezone(&lagos) + Duration::days(days)).date_naive();
    date.and_time(NaiveTime::from_hms_opt(10, 0, 0).unwrap())
        .and_local_timezone(lagos)
        .unwrap()
        .with_timezone(&Utc)
}

/// Moves the kit's clock (which keeps running) to `at`.
fn move_to(kit: &TestKit, at: DateTime<Utc>) {
    kit.clock.advance(at - kit.clock.now());
}

/// The running total of the daily limit on the Lagos day of `at`, in naira.
async fn spent_on(kit: &TestKit, at: DateTime<Utc>) -> String {
    let day = kobo::money::fees::lagos_day(at);
    let spent = kit
        .sql("SELECT amount FROM daily_transfer_totals WHERE business_id = $1 AND day = $2")
        .bind(&kit.business.business_id)
        .bind(&day)
        .optional_int()
        .await;
    let spent = spent.unwrap_or(0);
    format!("{}.{:02}", spent / 100, spent % 100)
}

/// Logs the owner and the checker in again (the clock moved past their tokens).
async fn tokens(kit: &TestKit) -> (String, String) {
    (
        kit.login(OWNER, OWNER_PASSWORD).await,
        kit.login(CHECKER, MEMBER_PASSWORD).await,
    )
}

/// Item 3. A held transfer counts toward the daily limit of the day it executes (its
/// approval), not of the day it was held: holding counts nothing, an approval that would pass
/// the day's limit is refused (`83`) and stays reviewable, and a NIP failure gives back what
/// the approval day counted.
async fn a_held_transfer_counts_on_the_day_it_executes(kind: StoreKind) {
    let (kit, _) = approval_kit(kind, "100000", "500").await;
    businesses::set_daily_transfer_limit(&kit.store, &kit.business.business_id, Some(100_000))
        .await
        .unwrap();
    let day_one = lagos_morning(1);
    move_to(&kit, day_one);
    let owner = kit.login(OWNER, OWNER_PASSWORD).await;

    // Day one: a hold of the whole limit counts nothing; two direct transfers fit.
    let big = held(&transfer(&kit, &owner, EMEKA, "1000").await);
    for amount in ["400", "400"] {
        let direct = transfer(&kit, &owner, EMEKA, amount).await;
        assert_eq!(code_of(&direct), "00", "{direct:#}");
    }
    assert_eq!(spent_on(&kit, day_one).await, "800.00");

    // Day two: a direct 400 leaves 600 of the limit: the held 1,000 does not fit.
    let day_two = day_one + Duration::days(1);
    move_to(&kit, day_two);
    let (owner, checker) = tokens(&kit).await;
    let direct = transfer(&kit, &owner, EMEKA, "400").await;
    assert_eq!(code_of(&direct), "00", "{direct:#}");
    let refused = approve(&kit, &checker, &big).await;
    refused.expect(ResponseCode::ProviderError);
    assert!(
        refused.body["message"]
            .as_str()
            .unwrap()
            .contains("daily transfer limit"),
        "{refused:?}"
    );
    assert_eq!(status_of(&kit, &big).await, "pending_approval");
    assert_eq!(spent_on(&kit, day_two).await, "400.00");
    assert_eq!(spent_on(&kit, day_one).await, "800.00");
    // A hold of 600 (to Bisi Alade, whose transfers fail at NIP) waits for day three.
    let failing = held(&transfer(&kit, &owner, BISI, "600").await);

    // Day three: both approved? The first fits, the second passes the limit.
    let day_three = day_two + Duration::days(1);
    move_to(&kit, day_three);
    let (owner, checker) = tokens(&kit).await;
    let approved = approve(&kit, &checker, &failing).await;
    assert_eq!(
        approved.expect(ResponseCode::Success)["transfer_status"],
        "processing"
    );
    assert_eq!(spent_on(&kit, day_three).await, "600.00");
    approve(&kit, &checker, &big)
        .await
        .expect(ResponseCode::ProviderError);
    // NIP accepts the 600, then fails it: day three's total gives it back.
    let mut reversed = 0;
    for _ in 0..2 {
        reversed += nip_pass(&kit).await.reversed;
        kit.clock.advance(Duration::seconds(6));
    }
    assert_eq!(reversed, 1);
    assert_eq!(spent_on(&kit, day_three).await, "0.00");
    // Now the 1,000 fits day three.
    let approved = approve(&kit, &checker, &big).await;
    assert_eq!(
        approved.expect(ResponseCode::Success)["transfer_status"],
        "processing"
    );
    assert_eq!(spent_on(&kit, day_three).await, "1000.00");
    let over = transfer(&kit, &owner, EMEKA, "1").await;
    assert_eq!(code_of(&over), "83", "{over:#}");
    kit.assert_ledger_balances().await;
}

/// Item 3, the refusal at once: a hold larger than the whole daily limit could never be
/// approved under it, so it is refused when made (`83`) instead of waiting 72 hours to fail.
async fn a_hold_over_the_whole_daily_limit_is_refused_at_once(kind: StoreKind) {
    let (kit, _) = approval_kit(kind, "100000", "500").await;
    businesses::set_daily_transfer_limit(&kit.store, &kit.business.business_id, Some(100_000))
        .await
        .unwrap();
    let refused = transfer(&kit, &kit.owner_token, EMEKA, "1000.01").await;
    assert_eq!(code_of(&refused), "83", "{refused:#}");
    assert_eq!(balance(&kit, MAIN).await, "100000.00");
    kit.assert_ledger_balances().await;
}

on_both_stores!(
    kind: a_held_transfer_from_a_blocked_account_is_refused_at_approval,
    a_held_transfer_of_a_deactivated_business_waits,
    an_account_with_reserved_funds_cannot_be_closed,
    a_held_transfer_counts_on_the_day_it_executes,
    a_hold_over_the_whole_daily_limit_is_refused_at_once,
);

/// Item 1, the race (PostgreSQL): a freeze that commits while an approval runs. The freeze's
/// transaction holds the account row when the approval reaches it; the approval waits for it
/// and then refuses (`48`). Reading the status without a lock, it approved from the snapshot
/// taken before the freeze committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_approval_waits_for_a_freeze_in_flight_and_refuses() {
    let (kit, checker) = approval_kit(StoreKind::Postgres, "10000", "100").await;
    let transfer = held(&transfer(&kit, &kit.owner_token, EMEKA, "500").await);
    let code = otp(&kit, &checker).await;
    let mut freeze = kit.store.postgres_pool().unwrap().begin().await.unwrap();
    sqlx::query("UPDATE accounts SET status = 'blocked' WHERE account_number = $1")
        .bind(MAIN)
        .execute(&mut *freeze)
        .await
        .unwrap();
    let approval = kit.send(Call::new(
        Operation::ApproveTransfer.path(),
        Some(&checker),
        json!({"reference_number": transfer["reference_number"], "otp": code}),
    ));
    let freezing = async {
        let waited = until_a_statement_waits(&kit).await;
        freeze.commit().await.unwrap();
        waited
    };
    let (reply, waited) = tokio::join!(approval, freezing);
    reply.expect(ResponseCode::InvalidState);
    assert!(waited, "the approval never waited for the freeze");
    assert_eq!(status_of(&kit, &transfer).await, "pending_approval");
    kit.assert_ledger_balances().await;
}

/// The approval path reads the policy and the state before its transaction; an approval of a
/// transfer that the worker expired meanwhile is `48`, and expiry releases the reserve even of
/// a blocked account.
async fn a_blocked_accounts_hold_still_expires(kind: StoreKind) {
    let (kit, _) = approval_kit(kind, "10000", "100").await;
    let transfer = held(&transfer(&kit, &kit.owner_token, EMEKA, "500").await);
    set_account_status(&kit, MAIN, AccountStatus::Blocked).await;
    kit.clock.advance(Duration::hours(73));
    assert_eq!(
        approvals::expire_due(&kit.store, Environment::Sandbox, &kit.clock)
            .await
            .unwrap(),
        1
    );
    let owner = kit.login(OWNER, OWNER_PASSWORD).await;
    let found = kit
        .op(
            Operation::GetTransferWeb,
            &owner,
            json!({"reference_number": transfer["reference_number"]}),
        )
        .await;
    assert_eq!(
        found.expect(ResponseCode::Success)["transfer_status"],
        "expired"
    );
    assert_eq!(balance(&kit, MAIN).await, "10000.00");
    kit.assert_ledger_balances().await;
}

on_both_stores!(kind: a_blocked_accounts_hold_still_expires);

/// Item 3, the race (PostgreSQL): approvals of held transfers and direct payouts of one
/// business, all at once from two processes, share the day's limit: together they never pass
/// it. Limit 1,000; three approvals of 400 and three payouts of 299.99 (3,599.97 in all): what
/// goes through stays within the limit, and the rest is refused for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn approvals_and_payouts_at_once_never_pass_the_daily_limit() {
    let (kit, _) = approval_kit(StoreKind::Postgres, "100000", "300").await;
    let second = kit.another_process().await;
    let token = kit.integration_token().await;
    let holds = [
        held(&transfer(&kit, &kit.owner_token, EMEKA, "400").await),
        held(&transfer(&kit, &kit.owner_token, EMEKA, "400").await),
        held(&transfer(&kit, &kit.owner_token, EMEKA, "400").await),
    ];
    businesses::set_daily_transfer_limit(&kit.store, &kit.business.business_id, Some(100_000))
        .await
        .unwrap();
    // One checker per approval: a member has one live OTP at a time.
    let mut approvals = Vec::new();
    for (n, hold) in holds.iter().enumerate() {
        let (_, checker) = kit
            .add_member(&format!("checker{n}@adaezefoods.ng"), CHECKER_ROLE_ID)
            .await;
        let code = otp(&kit, &checker).await;
        approvals.push((checker, code, hold["reference_number"].clone()));
    }
    let mut calls: Vec<Call> = approvals
        .iter()
        .map(|(checker, code, reference)| {
            Call::new(
                Operation::ApproveTransfer.path(),
                Some(checker),
                json!({"reference_number": reference, "otp": code}),
            )
        })
        .collect();
    // Payouts of 299.99, below the policy's 300: direct.
    for n in 0..3 {
        calls.push(
            Call::new(
                Operation::FundsTransferApi.path(),
                Some(&token),
                transfer_body(MAIN, "Adaeze Foods Ltd", EMEKA, "299.99"),
            )
            .header("idempotency-key", format!("direct-{n}")),
        );
    }
    let replies = kit.race(&[second], calls).await;
    let amounts_kobo = [40_000, 40_000, 40_000, 29_999, 29_999, 29_999];
    let mut sent = 0_i64;
    for (reply, amount) in replies.iter().zip(amounts_kobo) {
        match reply.code() {
            Some(ResponseCode::Success) => sent += amount,
            Some(ResponseCode::ProviderError) => {
                let message = reply.body["message"].as_str().unwrap();
                assert!(message.contains("daily transfer limit"), "{message}");
            }
            other => panic!("unexpected {other:?}: {reply:#?}"),
        }
    }
    assert!(sent <= 100_000, "{sent} kobo sent: {replies:#?}");
    assert!(sent >= 70_000, "room was left unused: {sent} kobo sent");
    let today = kit.clock.now();
    let counted = spent_on(&kit, today).await;
    assert_eq!(counted, format!("{}.{:02}", sent / 100, sent % 100));
    kit.assert_ledger_balances().await;
}
