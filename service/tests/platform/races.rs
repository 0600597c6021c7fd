//! Races on PostgreSQL, where transactions truly run in parallel: many calls at once, spread
//! over two `kobo` processes (two connection pools) on one database. SQLite serializes
//! writes, so these run on PostgreSQL only: there a lost race would show.

use generated_server::{Operation, ResponseCode};
use kobo::platform::permissions::VIEWER_ROLE_ID;
use kobo::testkit::{Call, TestKit, MEMBER_PASSWORD};
use serde_json::{json, Value};

/// Calls at once in each race.
const RACERS: usize = 16;

/// `n` calls of `operation` with an empty body, each with the owner's token.
fn owners_calls(kit: &TestKit, operation: Operation, n: usize) -> Vec<Call<'_>> {
    (0..n)
        .map(|_| Call::new(operation.path(), Some(&kit.owner_token), json!({})))
        .collect()
}

fn count(replies: &[kobo::testkit::Reply], code: ResponseCode) -> usize {
    replies
        .iter()
        .filter(|reply| reply.code() == Some(code))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_invitation_accepted_at_once_by_many_activates_one_member_once() {
    let kit = TestKit::postgres().await;
    let second = kit.another_process().await;
    kit.invite(
        &kit.owner_token,
        "ife.olawale@adaezefoods.ng",
        VIEWER_ROLE_ID,
    )
    .await;
    let token = kit.invitation_token("ife.olawale@adaezefoods.ng").await;
    let body = json!({"token": token, "password": MEMBER_PASSWORD,
                      "confirm_password": MEMBER_PASSWORD});
    // Each from its own address, so that the per-address throttle stays out of the race.
    let calls = (0..RACERS)
        .map(|n| {
            let address = std::net::IpAddr::from([102, 89, 34, n as u8]);
            Call::new(Operation::AcceptInvite.path(), None, body.clone()).from_ip(address)
        })
        .collect();
    let replies = kit.race(&[second], calls).await;
    assert_eq!(count(&replies, ResponseCode::Success), 1, "{replies:#?}");
    assert_eq!(
        count(&replies, ResponseCode::Unauthenticated),
        RACERS - 1,
        "{replies:#?}"
    );
    // One audit entry for the one acceptance.
    let audit = kit
        .op(Operation::FetchAuditLogs, &kit.owner_token, json!({}))
        .await;
    let entries = audit.expect(ResponseCode::Success).as_array().unwrap();
    let accepted = |entry: &&Value| entry["action"] == "accept_invite";
    assert_eq!(entries.iter().filter(accepted).count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_idempotency_key_sent_at_once_by_many_executes_once() {
    let kit = TestKit::postgres().await;
    let second = kit.another_process().await;
    let body = json!({"name": "Treasury Analyst", "permission_codes": ["account.view"]});
    let calls = (0..RACERS)
        .map(|_| {
            Call::new(
                Operation::CreateRole.path(),
                Some(&kit.owner_token),
                body.clone(),
            )
            .header("idempotency-key", "payroll-2026-11")
        })
        .collect();
    let replies = kit.race(&[second], calls).await;
    // Each call either replays the one execution or is told it is still in progress.
    let executed: Vec<_> = replies
        .iter()
        .filter(|reply| reply.header("idempotent-replayed") == Some("false"))
        .collect();
    assert_eq!(executed.len(), 1, "{replies:#?}");
    let role = executed[0].expect(ResponseCode::Success);
    for reply in &replies {
        match reply.code() {
            Some(ResponseCode::Success) => assert_eq!(&reply.body["data"], role),
            Some(ResponseCode::IdempotencyKeyInProgress) => {}
            other => panic!("unexpected {other:?}: {reply:#?}"),
        }
    }
    let roles = kit
        .op(Operation::FetchRoles, &kit.owner_token, json!({}))
        .await;
    let roles = roles.expect(ResponseCode::Success).as_array().unwrap();
    let named = |role: &&Value| role["name"] == "Treasury Analyst";
    assert_eq!(roles.iter().filter(named).count(), 1);
}

/// Sends 100 wrong guesses at once from one address and returns how many were evaluated
/// (answered `41` rather than refused with `29`); then the right credential, from the same
/// address, must be refused too: the lock holds whatever the concurrency.
async fn evaluated_of_simultaneous_guesses(
    kit: &TestKit,
    operation: Operation,
    wrong: Value,
    right: Value,
) -> usize {
    let second = kit.another_process().await;
    let calls = (0..100)
        .map(|_| Call::new(operation.path(), None, wrong.clone()))
        .collect();
    let replies = kit.race(&[second], calls).await;
    let refused = count(&replies, ResponseCode::TooManyRequests);
    let evaluated = count(&replies, ResponseCode::Unauthenticated);
    assert_eq!(refused + evaluated, 100, "{replies:#?}");
    kit.send(Call::new(operation.path(), None, right))
        .await
        .expect(ResponseCode::TooManyRequests);
    evaluated
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn simultaneous_login_guesses_get_no_more_than_the_allowance() {
    let kit = TestKit::postgres().await;
    let email = "adaeze.okafor@adaezefoods.ng";
    let evaluated = evaluated_of_simultaneous_guesses(
        &kit,
        Operation::Login,
        json!({"email": email, "password": "wrong-password"}),
        json!({"email": email, "password": kobo::testkit::OWNER_PASSWORD}),
    )
    .await;
    let allowance = kit
        .api
        .config()
        .login
        .per_address_and_credential
        .free_attempts as usize;
    assert!(
        evaluated <= allowance,
        "{evaluated} of 100 guesses were evaluated"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn simultaneous_client_secret_guesses_get_no_more_than_the_allowance() {
    let kit = TestKit::postgres().await;
    let client_id = kit.business.client_id.clone();
    let evaluated = evaluated_of_simultaneous_guesses(
        &kit,
        Operation::GenerateToken,
        json!({"client_id": client_id, "client_secret": "kbs_sandbox_wrong"}),
        json!({"client_id": client_id, "client_secret": kit.business.client_secret}),
    )
    .await;
    let allowance = kit
        .api
        .config()
        .token
        .per_address_and_credential
        .free_attempts as usize;
    assert!(
        evaluated <= allowance,
        "{evaluated} of 100 guesses were evaluated"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_password_changes_leave_one_winner_and_tell_the_others() {
    let kit = TestKit::postgres().await;
    let second = kit.another_process().await;
    let owner = "adaeze.okafor@adaezefoods.ng";
    let old = kobo::testkit::OWNER_PASSWORD;
    let new_passwords: Vec<String> = (0..10).map(|n| format!("Egusi-Soup-{n:02}-2027")).collect();
    let calls = new_passwords
        .iter()
        .map(|new| {
            Call::new(
                Operation::ChangePassword.path(),
                Some(&kit.owner_token),
                json!({"old_password": old, "new_password": new, "confirm_password": new}),
            )
        })
        .collect();
    let replies = kit.race(&[second], calls).await;
    // One wins; each of the others is told its old password is no longer current, or is
    // throttled (at most five password checks per member at once), or, if it arrives after the
    // winner committed, finds its session revoked with the old password (41): a password change
    // ends every session, and the loser's token was one of them.
    assert_eq!(count(&replies, ResponseCode::Success), 1, "{replies:#?}");
    let losers = count(&replies, ResponseCode::OldPasswordIncorrect)
        + count(&replies, ResponseCode::TooManyRequests)
        + count(&replies, ResponseCode::Unauthenticated);
    assert_eq!(losers, 9, "{replies:#?}");
    // The one that answered 00 is the password that works now; the others' do not.
    let winner = replies
        .iter()
        .position(|reply| reply.code() == Some(ResponseCode::Success))
        .unwrap();
    kit.login(owner, &new_passwords[winner]).await;
    let losers = (0..new_passwords.len()).filter(|n| *n != winner).take(3);
    for n in losers {
        let body = json!({"email": owner, "password": new_passwords[n]});
        kit.send(Call::new(Operation::Login.path(), None, body))
            .await
            .expect(ResponseCode::Unauthenticated);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_address_invited_at_once_by_many_is_one_member_and_the_others_are_told_so() {
    let kit = TestKit::postgres().await;
    let second = kit.another_process().await;
    let body = json!({"email": "ife.olawale@adaezefoods.ng", "first_name": "Ife",
                      "last_name": "Olawale", "role_id": VIEWER_ROLE_ID});
    let calls = (0..RACERS)
        .map(|_| {
            Call::new(
                Operation::AddMember.path(),
                Some(&kit.owner_token),
                body.clone(),
            )
        })
        .collect();
    let replies = kit.race(&[second], calls).await;
    assert_eq!(count(&replies, ResponseCode::Success), 1, "{replies:#?}");
    for reply in replies
        .iter()
        .filter(|r| r.code() != Some(ResponseCode::Success))
    {
        reply.expect(ResponseCode::Duplicate);
        assert_eq!(
            reply.body["message"],
            "ife.olawale@adaezefoods.ng is already a member of this business"
        );
    }
    assert_eq!(kit.outbox("ife.olawale@adaezefoods.ng").await.len(), 1);
}

/// What a foreign-key check takes on the business row (every insert of a row that names the
/// business: transactions, events, idempotency keys, audit entries) must not hold up the
/// business lock of `generate_otp` and the team's changes, nor queue behind it: with a lock that
/// conflicted, money transactions deadlocked through a waiting `generate_otp` on the ledger
/// head. A second process whose connections give up on any lock wait (`lock_timeout`) asks for
/// an OTP while a transaction holds that key-share lock: it is answered at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_business_lock_does_not_wait_for_foreign_key_checks() {
    if kobo::testkit::through_pooler() {
        // Its second process must open connections that take the database's lock_timeout,
        // which a pooler's long-lived server connections never read.
        eprintln!("not through a transaction pooler: it sets lock_timeout for new sessions");
        return;
    }
    let kit = TestKit::postgres().await;
    let database: String = sqlx::query_scalar("SELECT CAST(current_database() AS TEXT)")
        .fetch_one(kit.store.postgres_pool().unwrap())
        .await
        .unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "ALTER DATABASE \"{database}\" SET lock_timeout = '2s'"
    )))
    .execute(kit.store.postgres_pool().unwrap())
    .await
    .unwrap();
    let impatient = kit.another_process().await;
    let mut holding = kit.store.postgres_pool().unwrap().begin().await.unwrap();
    sqlx::query("SELECT id FROM businesses WHERE id = $1::uuid FOR KEY SHARE")
        .bind(&kit.business.business_id)
        .fetch_one(&mut *holding)
        .await
        .unwrap();
    let otp = impatient
        .send(Call::new(
            Operation::GenerateOtp.path(),
            Some(&kit.owner_token),
            json!({}),
        ))
        .await;
    otp.expect(ResponseCode::Success);
    holding.rollback().await.unwrap();
}

/// A credential's request budget is one for every process on the database (issue 34): calls
/// spread over three processes at once get its burst once between them, where each process
/// counting its own granted three bursts.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_credentials_request_budget_is_one_across_processes() {
    let budget = kobo::kernel::config::RequestBudget {
        // One request a minute back: nothing refills while the race runs (a minute at most).
        per_minute: std::num::NonZeroU32::new(1).unwrap(),
        burst: std::num::NonZeroU32::new(100).unwrap(),
    };
    let config = kobo::kernel::config::Config {
        request_budget: budget,
        ..kobo::kernel::config::Config::default()
    };
    let kit = TestKit::start(kobo::testkit::StoreKind::Postgres, config).await;
    let others = [kit.another_process().await, kit.another_process().await];
    let started = std::time::Instant::now();
    let calls = owners_calls(&kit, Operation::GetProfile, 300);
    let replies = kit.race(&others, calls).await;
    let refilled = started.elapsed().as_secs() as usize / 60 + 1;
    let granted = count(&replies, ResponseCode::Success);
    let refused = count(&replies, ResponseCode::TooManyRequests);
    assert_eq!(granted + refused, replies.len(), "{replies:#?}");
    let burst = budget.burst.get() as usize;
    assert!(
        granted <= burst + refilled,
        "{granted} requests granted across three processes: the budget is {burst}"
    );
    // A lease a process claimed and did not spend is lost: at most one per process, less one.
    let lease = kobo::platform::rate_limit::lease_units(budget) as usize;
    assert!(
        granted >= burst - 3 * (lease - 1),
        "only {granted} of the budget's {burst} requests granted"
    );
    for reply in replies.iter().filter(|reply| reply.status == 429) {
        let retry_after: u64 = reply.header("retry-after").unwrap().parse().unwrap();
        assert!((1..=60).contains(&retry_after), "{retry_after}");
    }
}

/// Failed logins counted in the database lock the same whichever process they reach: the
/// same email from the same address, failing at once through two processes, gets the free
/// attempts once, then `29`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn failed_logins_through_two_processes_lock_as_through_one() {
    let kit = TestKit::postgres().await;
    let second = kit.another_process().await;
    let free = kit
        .api
        .config()
        .login
        .per_address_and_credential
        .free_attempts as usize;
    let calls = (0..RACERS)
        .map(|_| {
            Call::new(
                Operation::Login.path(),
                None,
                json!({"email": "adaeze.okafor@adaezefoods.ng", "password": "wrong-password"}),
            )
        })
        .collect();
    let replies = kit.race(&[second], calls).await;
    assert_eq!(
        count(&replies, ResponseCode::Unauthenticated),
        free,
        "{replies:#?}"
    );
    assert_eq!(
        count(&replies, ResponseCode::TooManyRequests),
        RACERS - free,
        "{replies:#?}"
    );
}

/// A burst of one credential's requests within its budget is all granted, however many
/// arrive at once: the requests that find no lease wait for the one claim in flight in their
/// process and spend what it brought, rather than each leasing a share of the budget (24
/// credits at once were refused `29` with 200 to spare when each claimed its own lease).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_burst_within_the_budget_is_all_granted() {
    let kit = TestKit::postgres().await;
    let second = kit.another_process().await;
    let burst = kit.api.config().request_budget.burst.get() as usize;
    let calls = owners_calls(&kit, Operation::GetProfile, burst * 3 / 4);
    let replies = kit.race(&[second], calls).await;
    assert_eq!(
        count(&replies, ResponseCode::Success),
        replies.len(),
        "{:?}",
        replies.iter().map(|reply| reply.code()).collect::<Vec<_>>()
    );
}

/// The OTP issue limit is counted in the database: OTPs asked for at once through two
/// processes are issued up to the limit once between them, then `29`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn otps_asked_through_two_processes_are_limited_as_through_one() {
    let mut config = kobo::kernel::config::Config::default();
    config.otp.issue_limit = 5;
    let kit = TestKit::start(kobo::testkit::StoreKind::Postgres, config).await;
    let second = kit.another_process().await;
    let limit = kit.api.config().otp.issue_limit as usize;
    let calls = owners_calls(&kit, Operation::GenerateOtp, RACERS);
    let replies = kit.race(&[second], calls).await;
    assert_eq!(
        count(&replies, ResponseCode::Success),
        limit,
        "{replies:#?}"
    );
    assert_eq!(
        count(&replies, ResponseCode::TooManyRequests),
        RACERS - limit,
        "{replies:#?}"
    );
}
