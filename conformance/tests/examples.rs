//! Replays the spec's request examples against the real server, in the order of the story they
//! tell (Adaeze Foods Ltd: the owner logs in, builds her team, reads the logs, changes her
//! password, logs out), on SQLite and on PostgreSQL.
//!
//! Where an example names something that cannot exist in a fresh store (a member's id, a role's
//! id, an invitation token, the integration credentials), the real value is substituted;
//! everything else is sent as the spec has it. Every answer is checked by
//! `conformance::LiveServer::call` (schema, status, code, request id) and snapshotted with ids,
//! timestamps, tokens and secrets redacted; both stores must give the same snapshots.
//! `every_request_example_of_the_built_operations_is_replayed` fails when an example is added
//! to the spec and not to the story.

use std::collections::BTreeSet;
use std::sync::Mutex;

use conformance::{Exchange, LiveServer};
use generated_server::Operation;
use kobo::platform::permissions::MAKER_ROLE_ID;
use kobo::testkit::StoreKind;
use serde_json::{json, Value};

/// The operations built so far: the story replays every request example of each.
const BUILT: &[Operation] = &[
    Operation::GenerateToken,
    Operation::Login,
    Operation::Logout,
    Operation::ChangePassword,
    Operation::GenerateOtp,
    Operation::RegenerateSecret,
    Operation::GetProfile,
    Operation::FetchMembers,
    Operation::AddMember,
    Operation::ResendInvite,
    Operation::AcceptInvite,
    Operation::UpdateMember,
    Operation::FetchPermissions,
    Operation::FetchRoles,
    Operation::CreateRole,
    Operation::UpdateRole,
    Operation::FetchActivityLogs,
    Operation::FetchAuditLogs,
    Operation::FetchCustomerAccounts,
    Operation::CreateCustomerAccount,
    Operation::CreateAccountApi,
    Operation::CreateAccountWeb,
    Operation::GetAccount,
    Operation::FetchAccountCollections,
    Operation::FetchAccountSummaries,
    Operation::GetTotalAccountMetrics,
    Operation::FetchTransactionsWeb,
    Operation::FetchTransactionsApi,
    Operation::FetchSettlementTransactionsWeb,
    Operation::FetchSettlementTransactionsApi,
    Operation::SimulateInboundTransfer,
];

/// The ids and secrets of the examples' story, and the values that stand for them here.
#[derive(Default)]
struct Substitutions(Vec<(String, String)>);

impl Substitutions {
    fn add(&mut self, example_value: &str, real_value: &str) {
        self.0
            .push((example_value.to_string(), real_value.to_string()));
    }

    /// `example` with every string equal to an example value replaced by the real one.
    fn apply(&self, example: &Value) -> Value {
        match example {
            Value::String(text) => self
                .0
                .iter()
                .find(|(from, _)| from == text)
                .map_or_else(|| example.clone(), |(_, to)| Value::String(to.clone())),
            Value::Array(items) => {
                Value::Array(items.iter().map(|item| self.apply(item)).collect())
            }
            Value::Object(fields) => Value::Object(
                fields
                    .iter()
                    .map(|(name, value)| (name.clone(), self.apply(value)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// The story's state: the server, the substitutions so far, and what was replayed.
struct Story {
    server: LiveServer,
    substitutions: Substitutions,
    replayed: BTreeSet<(&'static str, String)>,
    step: usize,
}

impl Story {
    /// Sends the spec's request example `example` of `operation` (with the substitutions) and
    /// snapshots the answer.
    async fn replay(
        &mut self,
        operation: Operation,
        example: &str,
        token: Option<&str>,
    ) -> Exchange {
        let spec_example = operation
            .request_example(example)
            .unwrap_or_else(|| panic!("{} has no request example {example:?}", operation.id()));
        let body = self.substitutions.apply(&spec_example.value());
        self.replayed.insert((operation.id(), example.to_string()));
        self.send(operation, example, token, &body).await
    }

    /// Sends a body of the test's own (a negative case, a set-up step), checked and
    /// snapshotted like the examples.
    async fn send(
        &mut self,
        operation: Operation,
        label: &str,
        token: Option<&str>,
        body: &Value,
    ) -> Exchange {
        let exchange = self.server.call(operation, token, body).await;
        self.step += 1;
        snapshot(
            &format!("{:02}_{}_{label}", self.step, operation.id()),
            &exchange,
        );
        exchange
    }
}

/// Ids, timestamps, tokens and secrets change from run to run: redacted (nulls stay null, so
/// the snapshot still shows which fields were set).
const REDACTED: &[(&str, &str)] = &[
    (".**.id", "[id]"),
    (".**.user_role_id", "[id]"),
    (".**.user_id", "[id]"),
    (".**.target_id", "[id]"),
    (".**.request_id", "[id]"),
    (".**.next_cursor_id", "[id]"),
    (".**.created_at", "[timestamp]"),
    (".**.updated_at", "[timestamp]"),
    (".**.last_login", "[timestamp]"),
    (".**.date_joined", "[timestamp]"),
    (".**.next_cursor_created_at", "[timestamp]"),
    (".**.start_date", "[date]"),
    (".**.end_date", "[date]"),
    (".**.access_token", "[token]"),
    (".**.client_id", "[client_id]"),
    (".**.client_secret", "[secret]"),
    (".**.otp", "[otp]"),
    (".**.reference_number", "[reference]"),
    (".**.reference", "[reference]"),
    (".**.session_id", "[nip_session_id]"),
    (".**.last_balance_update", "[timestamp]"),
    (".**.last_transaction_date", "[timestamp]"),
    (".**.settlement_date", "[timestamp]"),
];

fn snapshot(name: &str, exchange: &Exchange) {
    let mut settings = insta::Settings::clone_current();
    settings.set_omit_expression(true);
    for &(selector, replacement) in REDACTED {
        settings.add_dynamic_redaction(selector, move |value, _path| {
            if value.is_nil() {
                value
            } else {
                replacement.into()
            }
        });
    }
    let recorded = json!({
        "operation": exchange.operation.id(),
        "status": exchange.status,
        "body": exchange.body,
    });
    settings.bind(|| insta::assert_json_snapshot!(name, recorded));
}

/// Which examples each store's run replayed, for the coverage test.
static REPLAYED: Mutex<Vec<BTreeSet<(&'static str, String)>>> = Mutex::new(Vec::new());

async fn story(kind: StoreKind) {
    let server = LiveServer::start(kind).await;
    let mut substitutions = Substitutions::default();
    // The examples' integration credentials are the fixture business's here.
    substitutions.add("kb_sandbox_5b6f8a523c1e", &server.kit.business.client_id);
    substitutions.add(
        "kbs_sandbox_Q2hpbmVkdU9iaUFkYWV6ZUZvb2Rz",
        &server.kit.business.client_secret,
    );
    let mut story = Story {
        server,
        substitutions,
        replayed: BTreeSet::new(),
        step: 0,
    };
    let old_secret = story.server.kit.business.client_secret.clone();

    // Session: the integration token, then the owner's login (the example's own email and
    // password: the fixture owner has them).
    story
        .replay(Operation::GenerateToken, "credentials", None)
        .await
        .expect("00");
    story
        .send(
            Operation::GenerateToken,
            "wrong_secret",
            None,
            &json!({"client_id": story.server.kit.business.client_id,
                    "client_secret": "kbs_sandbox_not-the-secret"}),
        )
        .await
        .expect("41");
    let login = story.replay(Operation::Login, "owner", None).await;
    let owner = login.expect("00")["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    let owner = Some(owner.as_str());
    story
        .send(
            Operation::Login,
            "wrong_password",
            None,
            &json!({"email": "adaeze.okafor@adaezefoods.ng", "password": "not-her-password"}),
        )
        .await
        .expect("41");
    let profile = story.replay(Operation::GetProfile, "empty", owner).await;
    assert_eq!(
        profile.expect("00")["member"]["email"],
        "adaeze.okafor@adaezefoods.ng"
    );
    let otp = story.replay(Operation::GenerateOtp, "empty", owner).await;
    assert!(
        otp.expect("00")["otp"].is_string(),
        "the sandbox returns the code"
    );

    // Roles and permissions.
    story
        .replay(Operation::FetchPermissions, "empty", owner)
        .await
        .expect("00");
    story
        .replay(Operation::FetchRoles, "empty", owner)
        .await
        .expect("00");
    let role = story.replay(Operation::CreateRole, "analyst", owner).await;
    let role_id = role.expect("00")["id"].as_str().unwrap().to_string();
    story
        .substitutions
        .add("6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c01", &role_id);
    story
        .replay(Operation::CreateRole, "analyst", owner)
        .await
        .expect("26");
    let updated = story
        .replay(Operation::UpdateRole, "add_audit_logs", owner)
        .await;
    assert_eq!(updated.expect("00")["id"], role_id.as_str());

    // The team: Ife is invited (the example), the invitation resent and accepted.
    story
        .replay(Operation::AddMember, "viewer", owner)
        .await
        .expect("00");
    let ife_id = story
        .server
        .kit
        .member_id("ife.olawale@adaezefoods.ng")
        .await;
    story
        .substitutions
        .add("9b2f4c1a-3d5e-4f60-8a71-b2c3d4e5f603", &ife_id);
    story
        .replay(Operation::FetchMembers, "all", owner)
        .await
        .expect("00");
    story
        .replay(Operation::FetchMembers, "joined_in_october_by_email", owner)
        .await
        .expect("00");
    story
        .replay(Operation::ResendInvite, "resend", owner)
        .await
        .expect("00");
    let invitation = story
        .server
        .kit
        .invitation_token("ife.olawale@adaezefoods.ng")
        .await;
    story
        .substitutions
        .add("inv_3kT9wQx2Lm8vRz5YpB7nC4dF6hJ1sG0a", &invitation);
    let accepted = story.replay(Operation::AcceptInvite, "accept", None).await;
    assert_eq!(accepted.expect("00")["id"], ife_id.as_str());
    story
        .replay(Operation::AcceptInvite, "accept", None)
        .await
        .expect("41");
    story
        .replay(Operation::ResendInvite, "resend", owner)
        .await
        .expect("48");

    // Tunde, a Maker (set up directly: no example invites him), becomes a Checker, then is
    // deactivated.
    let (tunde_id, _) = story
        .server
        .kit
        .add_member("tunde.bakare@adaezefoods.ng", MAKER_ROLE_ID)
        .await;
    story
        .substitutions
        .add("9b2f4c1a-3d5e-4f60-8a71-b2c3d4e5f601", &tunde_id);
    let checker = story
        .replay(Operation::UpdateMember, "make_checker", owner)
        .await;
    assert_eq!(checker.expect("00")["role_name"], "Checker");
    let deactivated = story
        .replay(Operation::UpdateMember, "deactivate", owner)
        .await;
    assert_eq!(deactivated.expect("00")["is_active"], false);

    // Credentials: a new secret; the old one stops working.
    let regenerated = story
        .replay(Operation::RegenerateSecret, "empty", owner)
        .await;
    let new_secret = regenerated.expect("00")["client_secret"]
        .as_str()
        .unwrap()
        .to_string();
    story
        .send(
            Operation::GenerateToken,
            "old_secret",
            None,
            &json!({"client_id": story.server.kit.business.client_id, "client_secret": old_secret}),
        )
        .await
        .expect("41");

    // Logs.
    story
        .replay(Operation::FetchActivityLogs, "errors_today", owner)
        .await
        .expect("00");
    story
        .send(
            Operation::FetchActivityLogs,
            "everything",
            owner,
            &json!({}),
        )
        .await
        .expect("00");
    story
        .replay(Operation::FetchAuditLogs, "secret_changes", owner)
        .await
        .expect("00");
    story
        .send(Operation::FetchAuditLogs, "everything", owner, &json!({}))
        .await
        .expect("00");

    // The password changes (every session ends), she logs in again and logs out.
    story
        .replay(Operation::ChangePassword, "change", owner)
        .await
        .expect("00");
    story
        .replay(Operation::GetProfile, "empty", owner)
        .await
        .expect("41");
    let again = story
        .send(
            Operation::Login,
            "new_password",
            None,
            &json!({"email": "adaeze.okafor@adaezefoods.ng", "password": "Suya-And-Zobo-2027"}),
        )
        .await;
    let token = again.expect("00")["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    let token = Some(token.as_str());
    story
        .replay(Operation::Logout, "empty", token)
        .await
        .expect("00");
    story
        .replay(Operation::Logout, "empty", token)
        .await
        .expect("41");

    accounts_and_money(&mut story, &new_secret).await;
    REPLAYED.lock().unwrap().push(story.replayed);
}

/// The money chapter, on the examples' day (2 November 2026): accounts are opened, a customer
/// gets a virtual account, money comes in, and every list and aggregate reads it back.
async fn accounts_and_money(story: &mut Story, client_secret: &str) {
    let clock = story.server.kit.clock.clone();
    let morning: chrono::DateTime<chrono::Utc> = "2026-11-02T09:00:00Z".parse().unwrap();
    clock.advance(morning - clock.now());
    let login = story
        .send(
            Operation::Login,
            "owner_on_the_examples_day",
            None,
            &json!({"email": "adaeze.okafor@adaezefoods.ng", "password": "Suya-And-Zobo-2027"}),
        )
        .await;
    let owner = login.expect("00")["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    let owner = Some(owner.as_str());
    let grant = story
        .send(
            Operation::GenerateToken,
            "new_secret",
            None,
            &json!({"client_id": story.server.kit.business.client_id, "client_secret": client_secret}),
        )
        .await;
    let api = grant.expect("00")["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    let api = Some(api.as_str());

    // Accounts: the main pool account, two current accounts, two customers' virtual accounts.
    let all = story
        .replay(Operation::FetchCustomerAccounts, "all", api)
        .await;
    assert_eq!(all.expect("00")[0]["account_number"], "1000000014");
    let named = story
        .replay(Operation::CreateAccountApi, "named", api)
        .await;
    assert_eq!(named.expect("00")["account_number"], "1000000021");
    let defaulted = story
        .replay(Operation::CreateAccountWeb, "default_name", owner)
        .await;
    assert_eq!(
        defaulted.expect("00")["account_name"],
        "Adaeze Foods Ltd - Current 2"
    );
    // The two operations share their request examples.
    let third = story
        .replay(Operation::CreateAccountApi, "default_name", api)
        .await;
    assert_eq!(
        third.expect("00")["account_name"],
        "Adaeze Foods Ltd - Current 3"
    );
    story
        .replay(Operation::CreateAccountWeb, "named", owner)
        .await
        .expect("00");
    let chinedu = story
        .replay(Operation::CreateCustomerAccount, "bvn", api)
        .await;
    assert_eq!(chinedu.expect("00")["account_number"], "2000000011");
    assert_eq!(chinedu.expect("00")["account_name"], "Chinedu Obi");
    story
        .replay(Operation::CreateCustomerAccount, "bvn", api)
        .await
        .expect("26");
    story
        .replay(Operation::CreateCustomerAccount, "nin_with_name", api)
        .await
        .expect("00");
    story
        .send(
            Operation::CreateCustomerAccount,
            "verification_fails",
            api,
            &json!({"bvn": "22212345683"}),
        )
        .await
        .expect("83");
    story
        .send(
            Operation::CreateCustomerAccount,
            "no_identity",
            api,
            &json!({"email": "chinedu.obi@example.ng"}),
        )
        .await
        .expect("02");

    // Money comes in at 09:12 and 09:20.
    clock.advance(chrono::Duration::minutes(12));
    story
        .send(
            Operation::SimulateInboundTransfer,
            "to_operations",
            api,
            &json!({"account_number": "1000000021", "amount": "500000.00",
                    "sender_account_name": "Lagos Fresh Produce Ltd",
                    "sender_account_number": "3000000018", "sender_bank_code": "090823",
                    "narration": "Invoice 88"}),
        )
        .await
        .expect("00");
    clock.advance(chrono::Duration::minutes(8));
    let credit = story
        .replay(Operation::SimulateInboundTransfer, "customer_pays", api)
        .await;
    let credited = credit.expect("00").clone();
    assert_eq!(credited["amount"], "15000.00");
    assert_eq!(credited["originator_account_name"], "Emeka Nwosu");
    story.substitutions.add(
        "COL-20261102-2D8R5T",
        credited["reference_number"].as_str().unwrap(),
    );

    // Reading it back.
    let detail = story
        .replay(Operation::GetAccount, "by_number", owner)
        .await;
    assert_eq!(detail.expect("00")["balance"], "15000.000000000");
    story
        .replay(Operation::GetAccount, "primary", owner)
        .await
        .expect("00");
    story
        .send(
            Operation::GetAccount,
            "no_match",
            owner,
            &json!({"account_number": "1999999991"}),
        )
        .await
        .expect("44");
    let collections = story
        .replay(
            Operation::FetchAccountCollections,
            "november_virtual",
            owner,
        )
        .await;
    assert_eq!(
        collections.expect("00")[1]["total_collection_amount"],
        "15000.00"
    );
    story
        .replay(Operation::FetchAccountSummaries, "current_accounts", owner)
        .await
        .expect("00");
    let metrics = story
        .replay(Operation::GetTotalAccountMetrics, "november", owner)
        .await;
    assert_eq!(metrics.expect("00")["total_volume_collected"], "515000.00");
    story
        .replay(Operation::GetTotalAccountMetrics, "fast", owner)
        .await
        .expect("00");
    story
        .replay(Operation::FetchTransactionsWeb, "debits_in_november", owner)
        .await
        .expect("00");
    let today = story
        .replay(Operation::FetchTransactionsApi, "collections_today", api)
        .await;
    assert_eq!(today.expect("00").as_array().unwrap().len(), 2);
    let by_reference = story
        .replay(Operation::FetchTransactionsApi, "by_reference", api)
        .await;
    assert_eq!(by_reference.expect("00")[0], credited);
    story
        .replay(
            Operation::FetchSettlementTransactionsWeb,
            "one_account_november",
            owner,
        )
        .await
        .expect("00");
    story
        .replay(
            Operation::FetchSettlementTransactionsApi,
            "one_account_november",
            api,
        )
        .await
        .expect("00");
    story
        .replay(Operation::FetchCustomerAccounts, "active_virtual", api)
        .await
        .expect("00");
    story
        .replay(Operation::FetchCustomerAccounts, "next_page", api)
        .await
        .expect("00");
    story.server.kit.assert_ledger_balances().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_examples_conform_on_sqlite() {
    story(StoreKind::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_examples_conform_on_postgres() {
    story(StoreKind::Postgres).await;
}

/// Runs the story on its own (tests run in any order) and compares what it replayed with
/// every request example the spec gives the built operations.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_example_of_the_built_operations_is_replayed() {
    story(StoreKind::Sqlite).await;
    let replayed = REPLAYED.lock().unwrap().last().cloned().unwrap();
    let expected: BTreeSet<(&'static str, String)> = BUILT
        .iter()
        .flat_map(|&operation| {
            operation
                .request_examples()
                .iter()
                .map(move |example| (operation.id(), example.name.to_string()))
        })
        .collect();
    let missing: Vec<_> = expected.difference(&replayed).collect();
    assert!(
        missing.is_empty(),
        "examples the story does not replay: {missing:?}"
    );
}
