//! Scheduled bulk transfers (issue 60, item 3): a batch created with an `execute_at` ahead is
//! reserved when authorised and waits `scheduled`; the executor pays it at that time, with every
//! rule checked then; it can be cancelled until then, its reservation released. A held one
//! approved goes into its schedule. On PostgreSQL, a cancel racing the executor's start ends
//! the batch one way only.

use generated_server::{Operation, ResponseCode};
use kobo::money::bulk::execute;
use kobo::on_both_stores;
use kobo::testkit::{StoreKind, TestKit, MEMBER_PASSWORD, OWNER_PASSWORD};
use serde_json::{json, Value};

use crate::payroll::{
    authorise, batch_body, bound_otp, get, item, items_of, run_workers, validated_as,
};
use crate::support::{approval_kit, balance, CHECKER};

/// The clock moved `by` ahead, the owner signed in again (a session does not last hours).
async fn wait(kit: &mut TestKit, by: chrono::Duration) {
    kit.clock.advance(by);
    let email = kit.business.owner_email.clone();
    kit.owner_token = kit.login(&email, OWNER_PASSWORD).await;
}

/// `at` as the API takes it, in Lagos time (`+01:00`) as a business writes it.
fn lagos(at: chrono::DateTime<chrono::Utc>) -> String {
    let lagos = chrono::FixedOffset::east_opt(3600).unwrap();
    at.with_timezone(&lagos)
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, false)
}

/// A batch of one payment of `amount` to `number` (a Kobo account of "Lagos Fresh Produce
/// Ltd"), to be paid at `at`, validated.
async fn scheduled_batch(
    kit: &TestKit,
    reference: &str,
    number: &str,
    amount: &str,
    at: chrono::DateTime<chrono::Utc>,
) -> Value {
    let mut body = batch_body(
        reference,
        vec![item(number, "090823", "Lagos Fresh Produce Ltd", amount)],
    );
    body["execute_at"] = json!(lagos(at));
    validated_as(kit, body).await
}

/// A salary run scheduled for the 25th: refused less than a minute or more than 90 days ahead
/// (`01`); authorised now, its total is reserved and it waits `scheduled`, the workers paying
/// nothing, until its time; then it is paid with every rule checked at that moment (a
/// recipient blocked meanwhile fails its item `83`, its money released). Another, cancelled
/// while it waits, gives its reservation back; a cancel once it executed is `48`.
async fn a_scheduled_payroll_waits_for_its_time_and_is_paid_then(mut kit: TestKit) {
    let api = kit.integration_token().await;
    kit.credit(&api, "1000000014", "1000000.00").await;
    let (lagos_fresh, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "bola.ade@lagosfresh.ng")
        .await;
    let (kano, _) = kit
        .other_business("Kano Grains Ltd", "musa.bello@kanograins.ng")
        .await;
    let now = kit.clock.now();
    let owner = kit.owner_token.clone();

    for (ahead, what) in [
        (chrono::Duration::seconds(30), "30 seconds ahead"),
        (chrono::Duration::days(91), "91 days ahead"),
        (chrono::Duration::hours(-1), "an hour ago"),
    ] {
        let mut body = batch_body("TOO-SOON", vec![item("1000000021", "090823", "A", "1")]);
        body["execute_at"] = json!(lagos(now + ahead));
        let reply = kit.op(Operation::CreateBulkTransfer, &owner, body).await;
        assert_eq!(
            reply.code(),
            Some(ResponseCode::InvalidRequest),
            "{what}: {reply:?}"
        );
    }

    let payday = now + chrono::Duration::hours(2);
    let mut body = batch_body(
        "SALARIES-2026-12-25",
        vec![
            item(
                &lagos_fresh.main_account_number,
                "090823",
                "Lagos Fresh Produce Ltd",
                "100000",
            ),
            item(
                &kano.main_account_number,
                "090823",
                "Kano Grains Ltd",
                "50000",
            ),
        ],
    );
    body["execute_at"] = json!(lagos(payday));
    let batch = validated_as(&kit, body).await;
    let id = batch["bulk_transfer_id"].as_str().unwrap().to_owned();
    let code = bound_otp(&kit, &owner, &batch).await;
    let authorised = authorise(&kit, &owner, &batch, &code)
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(authorised["status"], "scheduled", "{authorised:#}");
    assert_eq!(
        authorised["execute_at"].as_str().map(str::to_owned),
        Some(payday.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
    );
    assert_eq!(authorised["totals"]["reserved"], "150000.00");
    assert_eq!(balance(&kit, "1000000014").await, "850000.00");

    // Before its time the workers pay nothing of it, however often they look.
    wait(&mut kit, chrono::Duration::minutes(90)).await;
    let owner = kit.owner_token.clone();
    run_workers(&kit).await;
    let waiting = get(&kit, &id).await;
    assert_eq!(waiting["status"], "scheduled", "{waiting:#}");
    assert!(items_of(&kit, &id)
        .await
        .iter()
        .all(|i| i["outcome"] == "unpaid"));
    assert_eq!(
        balance(&kit, &lagos_fresh.main_account_number).await,
        "0.00"
    );
    let scheduled = kit
        .op(
            Operation::FetchBulkTransfers,
            &owner,
            json!({"status": "scheduled"}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(scheduled.as_array().map(Vec::len), Some(1), "{scheduled:#}");

    // Rules are checked when it moves: a recipient blocked before payday is not paid.
    kit.sql("UPDATE accounts SET status = 'blocked' WHERE account_number = $1")
        .bind(&kano.main_account_number)
        .execute()
        .await;
    wait(&mut kit, chrono::Duration::minutes(31)).await;
    let owner = kit.owner_token.clone();
    run_workers(&kit).await;
    let paid = get(&kit, &id).await;
    assert_eq!(paid["status"], "completed", "{paid:#}");
    assert_eq!(paid["counts"]["succeeded"], 1);
    assert_eq!(paid["counts"]["failed"], 1);
    assert_eq!(paid["totals"]["released"], "50000.00");
    assert_eq!(items_of(&kit, &id).await[1]["failure_code"], "83");
    assert_eq!(
        balance(&kit, &lagos_fresh.main_account_number).await,
        "100000.00"
    );
    assert_eq!(balance(&kit, "1000000014").await, "900000.00");
    kit.op(
        Operation::CancelBulkTransfer,
        &owner,
        json!({"bulk_transfer_id": id}),
    )
    .await
    .expect(ResponseCode::InvalidState);

    // Cancelled while it waits: the whole reservation back, and it never pays.
    let later = kit.clock.now() + chrono::Duration::days(30);
    let other = scheduled_batch(
        &kit,
        "RENT-2027-01",
        &lagos_fresh.main_account_number,
        "200000",
        later,
    )
    .await;
    let code = bound_otp(&kit, &owner, &other).await;
    authorise(&kit, &owner, &other, &code)
        .await
        .expect(ResponseCode::Success);
    assert_eq!(balance(&kit, "1000000014").await, "700000.00");
    let cancelled = kit
        .op(
            Operation::CancelBulkTransfer,
            &owner,
            json!({"bulk_transfer_id": other["bulk_transfer_id"]}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(cancelled["totals"]["released"], "200000.00");
    assert_eq!(balance(&kit, "1000000014").await, "900000.00");
    wait(&mut kit, chrono::Duration::days(31)).await;
    run_workers(&kit).await;
    let still = get(&kit, other["bulk_transfer_id"].as_str().unwrap()).await;
    assert_eq!(still["status"], "cancelled");
    assert_eq!(
        balance(&kit, &lagos_fresh.main_account_number).await,
        "100000.00"
    );
    kit.assert_ledger_balances().await;
}

on_both_stores!(a_scheduled_payroll_waits_for_its_time_and_is_paid_then);

/// A scheduled batch the approval policy holds: approved before its time, it is `scheduled`
/// (the checker kept as its reviewer); cancelled then, its reservation comes back whole and
/// the checker is still named. Approved after its time, it executes at once.
async fn a_held_scheduled_batch_is_approved_into_its_schedule(kind: StoreKind) {
    let (mut kit, checker) = approval_kit(kind, "1000000.00", "100").await;
    let owner = kit.owner_token.clone();
    let (lagos_fresh, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "bola.ade@lagosfresh.ng")
        .await;
    let number = lagos_fresh.main_account_number.clone();
    let at = kit.clock.now() + chrono::Duration::days(1);
    let early = scheduled_batch(&kit, "HELD-EARLY", &number, "100000", at).await;
    let late = scheduled_batch(&kit, "HELD-LATE", &number, "50000", at).await;
    for batch in [&early, &late] {
        let code = bound_otp(&kit, &owner, batch).await;
        let held = authorise(&kit, &owner, batch, &code)
            .await
            .expect(ResponseCode::Success)
            .clone();
        assert_eq!(held["status"], "pending_approval", "{held:#}");
    }
    assert_eq!(balance(&kit, "1000000014").await, "850000.00");

    let approve = async |kit: &TestKit, checker: &str, batch: &Value| {
        let code = bound_otp(kit, checker, batch).await;
        kit.op(
            Operation::ApproveBulkTransfer,
            checker,
            json!({"bulk_transfer_id": batch["bulk_transfer_id"], "otp": code}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone()
    };
    let approved = approve(&kit, &checker, &early).await;
    assert_eq!(approved["status"], "scheduled", "{approved:#}");
    assert!(approved["reviewed_by"].is_string());
    let cancelled = kit
        .op(
            Operation::CancelBulkTransfer,
            &owner,
            json!({"bulk_transfer_id": early["bulk_transfer_id"]}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone();
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(cancelled["totals"]["released"], "100000.00");
    assert_eq!(cancelled["reviewed_by"], approved["reviewed_by"]);
    assert_eq!(balance(&kit, "1000000014").await, "950000.00");

    // Approved 25 hours on, past its time (within the 72 hours of the hold): paid at once.
    wait(&mut kit, chrono::Duration::hours(25)).await;
    let checker = kit.login(CHECKER, MEMBER_PASSWORD).await;
    let approved = approve(&kit, &checker, &late).await;
    assert_eq!(approved["status"], "executing", "{approved:#}");
    run_workers(&kit).await;
    let done = get(&kit, late["bulk_transfer_id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed", "{done:#}");
    assert_eq!(balance(&kit, &number).await, "50000.00");
    assert_eq!(balance(&kit, "1000000014").await, "950000.00");
    kit.assert_ledger_balances().await;
}

on_both_stores!(kind: a_held_scheduled_batch_is_approved_into_its_schedule);

/// At its time, a scheduled batch is started by executors of two processes while its maker
/// cancels it through a third: either the cancel wins (nothing paid, the reservation back
/// once) or the batch is paid and the cancel is `48`; never both, never twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cancel_racing_the_start_of_a_scheduled_batch_ends_it_one_way() {
    let kit = TestKit::start(StoreKind::Postgres, crate::races::roomy_budget()).await;
    let api = kit.integration_token().await;
    kit.credit(&api, "1000000014", "1000000.00").await;
    let second = kit.another_process().await;
    let (lagos_fresh, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "bola.ade@lagosfresh.ng")
        .await;
    let number = lagos_fresh.main_account_number.clone();
    let mut outcomes = [0; 2];
    for round in 0..8u64 {
        let at = kit.clock.now() + chrono::Duration::minutes(10);
        let batch = scheduled_batch(&kit, &format!("RACE-AT-{round}"), &number, "1000", at).await;
        let code = bound_otp(&kit, &kit.owner_token, &batch).await;
        authorise(&kit, &kit.owner_token, &batch, &code)
            .await
            .expect(ResponseCode::Success);
        kit.clock.advance(chrono::Duration::minutes(11));
        let id = batch["bulk_transfer_id"].clone();
        let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(3));
        let executors: Vec<_> = [kit.api.clone(), second.api.clone()]
            .into_iter()
            .enumerate()
            .map(|(n, api)| {
                let barrier = barrier.clone();
                tokio::spawn(async move {
                    barrier.wait().await;
                    // The cancel has a request to read first: the executors start later and
                    // later, round by round, so that each side wins some rounds.
                    tokio::time::sleep(std::time::Duration::from_millis(round)).await;
                    execute::work(api.bank(), &format!("racer-{n}")).await
                })
            })
            .collect();
        barrier.wait().await;
        let cancel = kit
            .op(
                Operation::CancelBulkTransfer,
                &kit.owner_token,
                json!({"bulk_transfer_id": id}),
            )
            .await;
        for executor in executors {
            executor.await.unwrap().unwrap();
        }
        run_workers(&kit).await;
        let done = get(&kit, id.as_str().unwrap()).await;
        match cancel.code() {
            Some(ResponseCode::Success) => {
                outcomes[0] += 1;
                assert_eq!(done["status"], "cancelled", "{done:#}");
                assert_eq!(done["totals"]["released"], "1000.00");
                assert_eq!(done["counts"]["succeeded"], 0);
            }
            Some(ResponseCode::InvalidState) => {
                outcomes[1] += 1;
                assert_eq!(done["status"], "completed", "{done:#}");
                assert_eq!(done["totals"]["released"], "0.00");
                assert_eq!(done["counts"]["succeeded"], 1);
            }
            other => panic!("round {round}: the cancel answered {other:?}: {cancel:?}"),
        }
    }
    eprintln!(
        "the cancel won {} rounds, the executor {}",
        outcomes[0], outcomes[1]
    );
    // Whatever won each round, the money adds up: paid to Lagos or back home, once.
    let paid: f64 = balance(&kit, &number).await.parse().unwrap();
    let home: f64 = balance(&kit, "1000000014").await.parse().unwrap();
    assert_eq!(paid, f64::from(outcomes[1]) * 1000.0, "{outcomes:?}");
    assert_eq!(paid + home, 1_000_000.0);
    kit.assert_ledger_balances().await;
}
