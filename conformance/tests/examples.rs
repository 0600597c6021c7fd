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
//!
//! A snapshot is named by what it is, never by its place in the story:
//! `tests/snapshots/<operation>.<example>.snap` for a request example
//! (`fetch_transactions_api.collections_today.snap`), `<operation>.<example>.<state>.snap` when
//! the story replays that example again in another state (`create_role.analyst.duplicate`), and
//! `<operation>.<label>.snap` for a body of the story's own (`login.wrong_password`). Adding a
//! step adds its own files and changes no other; the story refuses a name twice, and
//! `every_snapshot_file_is_one_the_story_asserts` fails on a file no step asserts (a step
//! renamed or removed), naming it.

use std::collections::BTreeSet;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use conformance::{Exchange, LiveServer};
use generated_server::{Operation, RequestExample};
use kobo::kernel::config::Environment;
use kobo::outbox::webhooks::destination::Resolver;
use kobo::outbox::webhooks::WebhookDispatcher;
use kobo::platform::permissions::MAKER_ROLE_ID;
use kobo::testkit::StoreKind;
use serde_json::{json, Value};
use tokio::sync::OnceCell;

/// The story replays every request example of every operation (all are built since webhooks
/// landed).
const BUILT: &[Operation] = Operation::ALL;

/// The ids and secrets of the examples' story, and the values that stand for them here.
#[derive(Default)]
struct Substitutions(Vec<(String, String)>);

impl Substitutions {
    fn add(&mut self, example_value: &str, real_value: &str) {
        self.0
            .push((example_value.to_string(), real_value.to_string()));
    }

    /// Makes `example_value` stand for `real_value` from now on, whatever it stood for before
    /// (a single-use OTP, the next held transfer).
    fn set(&mut self, example_value: &str, real_value: &str) {
        self.0.retain(|(from, _)| from != example_value);
        self.add(example_value, real_value);
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

/// What one run of the story did: the request examples it replayed and the snapshots it
/// asserted (by name: `tests/snapshots/<name>.snap`).
#[derive(Clone, Debug, Default)]
struct Record {
    replayed: BTreeSet<(&'static str, String)>,
    snapshots: BTreeSet<String>,
}

/// The story's state: the server, the substitutions so far, and what was replayed.
struct Story {
    server: LiveServer,
    substitutions: Substitutions,
    record: Record,
}

/// `operation`'s request example that a story step names: `example`, or `example.state` when
/// the story replays it again in another state.
fn request_example(operation: Operation, step: &str) -> RequestExample {
    let example = step
        .split_once('.')
        .map_or(step, |(example, _state)| example);
    operation
        .request_example(example)
        .unwrap_or_else(|| panic!("{} has no request example {example:?}", operation.id()))
}

impl Story {
    /// Sends the spec's request example of `operation` that `step` names (with the
    /// substitutions) and snapshots the answer as `<operation>.<step>`. `step` is the example's
    /// name the first time; when the story replays an example again, in another state, it is
    /// `example.state` (`"analyst.duplicate"`), never a position: adding a step adds its own
    /// snapshot and renames none.
    async fn replay(&mut self, operation: Operation, step: &str, token: Option<&str>) -> Exchange {
        self.replay_with_headers(operation, step, token, None).await
    }

    /// [`Story::replay`] with an `Idempotency-Key`.
    async fn replay_with_key(
        &mut self,
        operation: Operation,
        step: &str,
        token: Option<&str>,
        key: &str,
    ) -> Exchange {
        self.replay_with_headers(operation, step, token, Some(key))
            .await
    }

    async fn replay_with_headers(
        &mut self,
        operation: Operation,
        step: &str,
        token: Option<&str>,
        key: Option<&str>,
    ) -> Exchange {
        let spec_example = request_example(operation, step);
        let body = self.substitutions.apply(&spec_example.value());
        self.record
            .replayed
            .insert((operation.id(), spec_example.name.to_string()));
        let exchange = self.call(operation, step, token, &body, key).await;
        if let Some(problem) = conformance::empty_where_the_spec_lists(&exchange, step) {
            panic!("{problem}");
        }
        exchange
    }

    /// Sends a body of the test's own (a negative case, a set-up step), checked and
    /// snapshotted like the examples, as `<operation>.<label>`. `label` is not one of the
    /// operation's request examples (those are replayed with [`Story::replay`]).
    async fn send(
        &mut self,
        operation: Operation,
        label: &str,
        token: Option<&str>,
        body: &Value,
    ) -> Exchange {
        assert!(
            operation.request_example(label).is_none() && !label.contains('.'),
            "{}: `{label}` names one of its request examples, or has a `.`: replay the example, \
             or give the story's own body a name of its own",
            operation.id()
        );
        self.call(operation, label, token, body, None).await
    }

    /// Calls `operation` and snapshots the answer as `<operation>.<label>`, a name the story
    /// asserts once.
    async fn call(
        &mut self,
        operation: Operation,
        label: &str,
        token: Option<&str>,
        body: &Value,
        key: Option<&str>,
    ) -> Exchange {
        let name = format!("{}.{label}", operation.id());
        assert!(
            self.record.snapshots.insert(name.clone()),
            "the story snapshots {name} twice: name the state of the second \
             (`example.state`, or another label), not its position"
        );
        let headers: Vec<(&str, &str)> = key
            .map(|key| ("idempotency-key", key))
            .into_iter()
            .collect();
        let exchange = self
            .server
            .call_with_headers(operation, token, body, &headers)
            .await;
        snapshot(&name, &exchange);
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
    (".**.expires_at", "[timestamp]"),
    (".**.initiated_by", "[id]"),
    (".**.reviewed_by", "[id]"),
    (".**.reversal_reference_number", "[reference]"),
    (".**.secret", "[webhook_secret]"),
    (".**.previous_secret_expires_at", "[timestamp]"),
    (".**.next_attempt_at", "[timestamp]"),
    (".**.last_attempt_at", "[timestamp]"),
    (".**.attempted_at", "[timestamp]"),
    (".**.timestamp", "[timestamp]"),
    (".**.latency_ms", "[milliseconds]"),
    (".**.content_base64", "[base64]"),
    (".**.size_bytes", "[bytes]"),
    (".**.export_id", "[id]"),
    (".**.completed_at", "[timestamp]"),
    (".**.beneficiary_id", "[id]"),
    (".**.enquired_at", "[timestamp]"),
    (".**.created_by", "[id]"),
    (".**.bulk_transfer_id", "[id]"),
    (".**.transfer_id", "[id]"),
    (".**.validated_at", "[timestamp]"),
    (".**.cancelled_at", "[timestamp]"),
    (".**.authorised_at", "[timestamp]"),
    (".**.authorised_by", "[id]"),
    (".**.reviewed_at", "[timestamp]"),
];

/// `text` with every transfer reference (`TRF-20261102-7F3K9Q`, made at random) shown as
/// `[reference]`.
fn without_references(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("TRF-") {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 4..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(tail.len());
        out.push_str("[reference]");
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

fn snapshot(name: &str, exchange: &Exchange) {
    let mut settings = insta::Settings::clone_current();
    settings.set_omit_expression(true);
    // `tests/snapshots/<operation>.<step>.snap`: the name says which step it is.
    settings.set_prepend_module_to_snapshot(false);
    // Messages, a fee's narration (`remarks` in a statement) and a receipt's file name name them.
    for selector in [
        ".body.message",
        ".**.narration",
        ".**.remarks",
        ".**.file_name",
    ] {
        settings.add_dynamic_redaction(selector, |value, _path| match value.as_str() {
            Some(text) => without_references(text).into(),
            None => value,
        });
    }
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

/// The story's run on SQLite, shared by the tests that read its record (under `cargo test` they
/// run in one process and the story runs once; nextest runs each test in a process of its own).
static ON_SQLITE: OnceCell<Record> = OnceCell::const_new();

async fn on_sqlite() -> &'static Record {
    ON_SQLITE.get_or_init(|| story(StoreKind::Sqlite)).await
}

/// Where the snapshots are.
const SNAPSHOTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots");

async fn story(kind: StoreKind) -> Record {
    // The story happens on the examples' dates, whatever the day it runs: the fixture business
    // opens on the examples' founding day (its owner joined, its main account opened on
    // 15 October 2026: `fetch_members`' `joined_in_october_by_email` and `fetch_customer_accounts`'
    // `next_page`, after 20 October, read them), and the story on the examples' day (their
    // filters name 2 November 2026 and its month: the audit log's `secret_changes`). The money
    // chapter moves on to nine o'clock.
    let founding = "2026-10-15T10:00:00Z".parse().ok();
    let server = LiveServer::start_at(kind, founding).await;
    // Tunde, a Maker, joined with the business (set up directly: no example invites him).
    let (tunde_id, _) = server
        .kit
        .add_member("tunde.bakare@adaezefoods.ng", MAKER_ROLE_ID)
        .await;
    let clock = server.kit.clock.clone();
    let dawn: chrono::DateTime<chrono::Utc> = "2026-11-02T08:00:00Z".parse().unwrap();
    clock.advance(dawn - clock.now());
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
        record: Record::default(),
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
        .replay(Operation::CreateRole, "analyst.duplicate", owner)
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
    // The invitation page reads the link first: the business and the role, before a password.
    let invitation = story.replay(Operation::GetInvitation, "link", None).await;
    let invitation = invitation.expect("00");
    assert_eq!(invitation["business_name"], "Adaeze Foods Ltd");
    assert_eq!(invitation["role_name"], "Viewer");
    let accepted = story.replay(Operation::AcceptInvite, "accept", None).await;
    assert_eq!(accepted.expect("00")["id"], ife_id.as_str());
    story
        .replay(Operation::AcceptInvite, "accept.used", None)
        .await
        .expect("41");
    story
        .replay(Operation::GetInvitation, "link.used", None)
        .await
        .expect("41");
    story
        .replay(Operation::ResendInvite, "resend.accepted", owner)
        .await
        .expect("48");

    // Tunde, a Maker since the founding, becomes a Checker, then is deactivated.
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

    // Logs (the integration's errors of the day are read in the money chapter, once it has
    // made some).
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
        .replay(
            Operation::GetProfile,
            "empty.after_the_password_change",
            owner,
        )
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
        .replay(Operation::Logout, "empty.logged_out", token)
        .await
        .expect("41");

    let (owner, api) = accounts_and_money(&mut story, &new_secret).await;
    transfers(&mut story, &owner, &api, &tunde_id).await;
    let api = webhooks(&mut story, &owner, &new_secret).await;
    dashboard_twins(&mut story, &owner, &api).await;
    let owner = three_days_later(&mut story).await;
    let api = beneficiaries(&mut story, &owner, &new_secret).await;
    bulk_transfers(&mut story, &owner, &api).await;
    story.record
}

/// The money chapter, on the examples' day (2 November 2026): accounts are opened, a customer
/// gets a virtual account, money comes in, and every list and aggregate reads it back. Returns
/// the owner's Dashboard token and the integration token.
async fn accounts_and_money(story: &mut Story, client_secret: &str) -> (String, String) {
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
    let owner_token = owner.clone();
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
    let api_token = api.clone();
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
        .replay(Operation::CreateCustomerAccount, "bvn.duplicate", api)
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
    // The three openings refused are the integration's errors of the day in the activity log.
    let errors = story
        .replay(Operation::FetchActivityLogs, "errors_today", owner)
        .await;
    assert_eq!(errors.expect("00").as_array().unwrap().len(), 3);

    // Money comes in at 09:12 and 09:20.
    clock.advance(chrono::Duration::minutes(12));
    story
        .send(
            Operation::SimulateInboundTransfer,
            "to_operations",
            api,
            &json!({"account_number": "1000000021", "amount": "500000.00",
                    "sender_account_name": "Lagos Fresh Produce Ltd",
                    "sender_account_number": "0044000018", "sender_bank_code": "000014",
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
    let found = story
        .replay(Operation::FetchAccountSummaries, "search", owner)
        .await;
    let found = found.expect("00");
    assert_eq!(found.as_array().unwrap().len(), 1, "{found}");
    assert_eq!(found[0]["account_name"], "Chinedu Obi");
    let metrics = story
        .replay(Operation::GetTotalAccountMetrics, "november", owner)
        .await;
    assert_eq!(metrics.expect("00")["total_volume_collected"], "515000.00");
    story
        .replay(Operation::GetTotalAccountMetrics, "fast", owner)
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
    (owner_token, api_token)
}

/// A fresh OTP of the member behind `token`, standing for the example's `example_otp`.
async fn otp_for(story: &mut Story, token: Option<&str>, example_otp: &str) {
    let otp = story
        .server
        .call(Operation::GenerateOtp, token, &json!({}))
        .await;
    let code = otp.expect("00")["otp"].as_str().unwrap().to_string();
    story.substitutions.set(example_otp, &code);
}

/// A transfer the approval policy holds (NGN 750,000 to Lagos Fresh Produce, as the examples'
/// `held_for_approval`); the examples' held reference stands for it from now on.
async fn hold(story: &mut Story, owner: Option<&str>, label: &str, lagos: &str) -> Value {
    // A quarter of an hour later each time: a member gets at most 5 OTPs in 15 minutes.
    story
        .server
        .kit
        .clock
        .advance(chrono::Duration::minutes(16));
    otp_for(story, owner, "held-otp").await;
    let body = story.substitutions.apply(&json!({
        "source_account_number": "1000000014", "source_account_name": "Adaeze Foods Ltd",
        "beneficiary_account_number": lagos, "beneficiary_account_name": "Lagos Fresh Produce Ltd",
        "bank_code": "090823", "amount": "750000.00", "narration": "Quarterly produce contract",
        "transfer_type": "intra", "otp": "held-otp"}));
    let held = story
        .send(Operation::FundsTransfer, label, owner, &body)
        .await;
    let held = held.expect("00").clone();
    assert_eq!(held["transfer_status"], "pending_approval");
    story.substitutions.set(
        "TRF-20261102-9J5N3R",
        held["reference_number"].as_str().unwrap(),
    );
    held
}

/// The transfers chapter, the same morning: banks and name enquiries, an intra-bank transfer
/// to Lagos Fresh Produce (another Kobo business, standing for the examples' `3000000018`), an
/// inter-bank one and an integration's payout to Emeka Nwosu settled by the NIP worker, then
/// the approval policy: a held transfer approved by Tunde (a Checker) with his own OTP, one
/// rejected, one cancelled by its initiator, and the policy paused and changed.
async fn transfers(story: &mut Story, owner: &str, api: &str, tunde_id: &str) {
    let owner = Some(owner);
    let api = Some(api);
    let (lagos, _) = story
        .server
        .kit
        .other_business("Lagos Fresh Produce Ltd", "bola.ade@lagosfresh.ng")
        .await;
    story
        .substitutions
        .add("3000000018", &lagos.main_account_number);

    // Banks and name enquiry.
    story
        .replay(Operation::FetchBanks, "empty", api)
        .await
        .expect("00");
    story
        .replay(Operation::FetchBanksWeb, "empty", owner)
        .await
        .expect("00");
    let emeka = story
        .replay(Operation::NameEnquiry, "inter_bank", api)
        .await;
    assert_eq!(emeka.expect("00")["account_name"], "Emeka Nwosu");
    let local = story
        .replay(Operation::NameEnquiry, "intra_bank", api)
        .await;
    assert_eq!(
        local.expect("00")["account_name"],
        "Lagos Fresh Produce Ltd"
    );
    story
        .replay(Operation::NameEnquiryWeb, "inter_bank", owner)
        .await
        .expect("00");
    story
        .send(
            Operation::NameEnquiry,
            "no_such_account",
            api,
            &json!({"beneficiary_account_number": "0123456799", "bank_code": "000013",
                    "source_account_number": "1000000021"}),
        )
        .await
        .expect("06");

    // Money leaves: intra-bank at once, inter-bank and a payout through NIP.
    otp_for(story, owner, "482913").await;
    let intra = story
        .replay_with_key(
            Operation::FundsTransfer,
            "intra",
            owner,
            "conformance-intra",
        )
        .await;
    assert_eq!(intra.expect("00")["transfer_status"], "success");
    story
        .replay_with_key(
            Operation::FundsTransfer,
            "intra.same_key",
            owner,
            "conformance-intra",
        )
        .await
        .expect("00");
    otp_for(story, owner, "315072").await;
    let inter = story.replay(Operation::FundsTransfer, "inter", owner).await;
    let inter = inter.expect("00").clone();
    assert_eq!(inter["transfer_status"], "processing");
    story.substitutions.add(
        "TRF-20261102-8H4M2P",
        inter["reference_number"].as_str().unwrap(),
    );
    story
        .replay(Operation::FundsTransfer, "inter.otp_used", owner)
        .await
        .expect("45");
    let payout = story
        .replay_with_key(
            Operation::FundsTransferApi,
            "payout",
            api,
            "conformance-payout",
        )
        .await;
    let payout = payout.expect("00").clone();
    assert_eq!(payout["reference"], "PAYOUT-2026-11-0042");
    story
        .replay_with_key(
            Operation::FundsTransferApi,
            "payout.another_key",
            api,
            "conformance-payout-again",
        )
        .await
        .expect("26");
    let processing = story
        .replay(Operation::FetchTransfersWeb, "processing", owner)
        .await;
    assert_eq!(processing.expect("00").as_array().unwrap().len(), 2);
    story
        .replay(Operation::FetchTransfersApi, "processing", api)
        .await
        .expect("00");
    let kit = &story.server.kit;
    let pass = kobo::money::nip::process_due(
        &kit.store,
        &**kit.api.provider(),
        &kit.clock,
        kobo::kernel::config::Environment::Sandbox,
        10,
    )
    .await
    .unwrap();
    assert_eq!(pass.settled, 2);
    // The operations account's debits of the month: the three transfers out, settled, and the
    // two inter-bank ones' fees.
    let debits = story
        .replay(Operation::FetchTransactionsWeb, "debits_in_november", owner)
        .await;
    assert_eq!(debits.expect("00").as_array().unwrap().len(), 5);
    let week = story
        .replay(Operation::GetCashFlow, "last_week", owner)
        .await;
    let week = week.expect("00");
    assert_eq!(week["days"].as_array().unwrap().len(), 7);
    assert_ne!(week["money_out"], "0.00", "{week}");
    let account = story
        .replay(Operation::GetCashFlow, "one_account", owner)
        .await;
    assert_eq!(account.expect("00")["days"].as_array().unwrap().len(), 30);
    // The operations account's November: its figures reconcile, line by line.
    for (operation, token) in [
        (Operation::GetAccountStatement, owner),
        (Operation::GetAccountStatementApi, api),
    ] {
        let reply = story.replay(operation, "a_month", token).await;
        let statement = reply.expect("00");
        let kobo = |field: &serde_json::Value| -> i64 {
            let text = field.as_str().unwrap().replace('.', "");
            text.parse().unwrap()
        };
        let mut balance = kobo(&statement["opening_balance"]);
        let lines = statement["lines"].as_array().unwrap();
        assert!(!lines.is_empty(), "{statement}");
        for line in lines {
            let amount = kobo(&line["amount"]);
            balance += if line["transaction_type"] == "credit" {
                amount
            } else {
                -amount
            };
            assert_eq!(kobo(&line["balance_after"]), balance, "{line}");
        }
        assert_eq!(kobo(&statement["closing_balance"]), balance, "{statement}");
    }
    // What left it in November, as CSV: a header and a row a debit.
    for (operation, token) in [
        (Operation::DownloadTransactionsWeb, owner),
        (Operation::DownloadTransactionsApi, api),
    ] {
        let reply = story.replay(operation, "november_debits", token).await;
        assert_file(reply.expect("00"), "account_number,date_lagos,");
    }
    // The same month as files: each what its content type says.
    for (operation, token) in [
        (Operation::DownloadAccountStatement, owner),
        (Operation::DownloadAccountStatementApi, api),
    ] {
        for (example, starts) in [("november_pdf", "%PDF-1.4"), ("november_camt053", "<?xml")] {
            let reply = story.replay(operation, example, token).await;
            assert_file(reply.expect("00"), starts);
        }
    }
    exports(story, owner, api).await;
    let settled = story
        .replay(Operation::GetTransferWeb, "by_reference", owner)
        .await;
    assert_eq!(settled.expect("00")["transfer_status"], "success");
    story
        .replay(Operation::GetTransferApi, "by_reference", api)
        .await
        .expect("00");
    let by_client_reference = story
        .replay(Operation::GetTransferApi, "by_client_reference", api)
        .await;
    assert_eq!(
        by_client_reference.expect("00")["transfer_status"],
        "success"
    );
    // Their receipts, found the same two ways.
    for (operation, token) in [
        (Operation::DownloadTransferReceipt, owner),
        (Operation::DownloadTransferReceiptApi, api),
    ] {
        for example in ["by_reference", "by_client_reference"] {
            let reply = story.replay(operation, example, token).await;
            assert_file(reply.expect("00"), "%PDF-1.4");
        }
    }
    story
        .replay(Operation::GetTransferWeb, "by_client_reference", owner)
        .await
        .expect("00");
    story
        .replay(Operation::FetchTransfersWeb, "by_reference", owner)
        .await
        .expect("00");
    let payouts = story
        .replay(Operation::FetchTransfersApi, "by_reference", api)
        .await;
    assert_eq!(payouts.expect("00")[0]["id"], payout["id"]);
    story
        .send(
            Operation::GetTransferApi,
            "no_match",
            api,
            &json!({"reference": "PAYOUT-NONE"}),
        )
        .await
        .expect("47");
    let listed = story
        .send(Operation::FetchTransfersWeb, "all", owner, &json!({}))
        .await;
    assert_eq!(listed.expect("00").as_array().unwrap().len(), 3);
    story
        .send(
            Operation::FetchTransfersApi,
            "successes_from_operations",
            api,
            &json!({"filters": {"transfer_status": "success",
                                "source_account_number": "1000000021"}, "limit": 10}),
        )
        .await
        .expect("00");

    // Maker-checker: transfers from NGN 500,000 wait for a second member.
    story
        .replay(Operation::CreateApprovalPolicy, "large_transfers", owner)
        .await
        .expect("00");
    story
        .replay(
            Operation::CreateApprovalPolicy,
            "large_transfers.duplicate",
            owner,
        )
        .await
        .expect("26");
    story
        .send(
            Operation::SimulateInboundTransfer,
            "funds_for_the_contract",
            api,
            &json!({"account_number": "1000000014", "amount": "2000000.00"}),
        )
        .await
        .expect("00");
    hold(story, owner, "held", &lagos.main_account_number).await;
    story
        .replay(Operation::FetchPendingTransfers, "all", owner)
        .await
        .expect("00");
    let pending = story
        .replay(Operation::FetchPendingTransfers, "one_account", owner)
        .await;
    assert_eq!(pending.expect("00").as_array().unwrap().len(), 1);
    // Not by its initiator.
    otp_for(story, owner, "604218").await;
    story
        .replay(
            Operation::ApproveTransfer,
            "approve.by_its_initiator",
            owner,
        )
        .await
        .expect("43");
    // Tunde, a Checker, is active again and approves with his own OTP (the owner's is not his).
    story
        .send(
            Operation::UpdateMember,
            "reactivate",
            owner,
            &json!({"member_id": tunde_id, "is_active": true}),
        )
        .await
        .expect("00");
    let tunde = story
        .send(
            Operation::Login,
            "checker",
            None,
            &json!({"email": "tunde.bakare@adaezefoods.ng",
                    "password": kobo::testkit::MEMBER_PASSWORD}),
        )
        .await;
    let tunde = tunde.expect("00")["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    let tunde = Some(tunde.as_str());
    story
        .replay(
            Operation::ApproveTransfer,
            "approve.with_the_owners_otp",
            tunde,
        )
        .await
        .expect("45");
    otp_for(story, tunde, "604218").await;
    let approved = story
        .replay_with_key(
            Operation::ApproveTransfer,
            "approve",
            tunde,
            "conformance-approve",
        )
        .await;
    assert_eq!(approved.expect("00")["transfer_status"], "success");
    story
        .replay(
            Operation::ApproveTransfer,
            "approve.already_approved",
            tunde,
        )
        .await
        .expect("48");

    // Rejected by the checker; cancelled by its initiator.
    hold(story, owner, "held_again", &lagos.main_account_number).await;
    let rejected = story
        .replay(Operation::RejectTransfer, "reject", tunde)
        .await;
    assert_eq!(rejected.expect("00")["transfer_status"], "rejected");
    story
        .replay(Operation::RejectTransfer, "reject.already_rejected", tunde)
        .await
        .expect("48");
    hold(story, owner, "held_once_more", &lagos.main_account_number).await;
    story
        .replay(Operation::CancelTransfer, "cancel.by_a_checker", tunde)
        .await
        .expect("43");
    let cancelled = story
        .replay(Operation::CancelTransfer, "cancel", owner)
        .await;
    assert_eq!(cancelled.expect("00")["transfer_status"], "cancelled");

    // The policy: read, paused, its threshold changed.
    story
        .replay(Operation::GetApprovalPolicy, "empty", owner)
        .await
        .expect("00");
    let paused = story
        .replay(Operation::UpdateApprovalPolicy, "pause", owner)
        .await;
    assert_eq!(paused.expect("00")["is_active"], false);
    let threshold = story
        .replay(Operation::UpdateApprovalPolicy, "threshold", owner)
        .await;
    assert_eq!(threshold.expect("00")["min_amount"], "1000000.00");
    story.server.kit.assert_ledger_balances().await;
}

/// The webhook chapter: the endpoint registered, read, sent a test event, its secret rotated,
/// paused, an event replayed, moved. (No delivery is attempted until the last chapter,
/// [`three_days_later`].) Returns the integration token it used.
async fn webhooks(story: &mut Story, owner: &str, client_secret: &str) -> String {
    let owner = Some(owner);
    // The transfers chapter moved the clock past the integration token's hour.
    let grant = story
        .send(
            Operation::GenerateToken,
            "for_webhooks",
            None,
            &json!({"client_id": story.server.kit.business.client_id, "client_secret": client_secret}),
        )
        .await;
    let api_token = grant.expect("00")["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    let api = Some(api_token.as_str());
    story
        .replay(Operation::GetWebhookConfiguration, "empty.none_yet", owner)
        .await
        .expect("47");
    let created = story
        .replay(Operation::WebhookConfiguration, "register", owner)
        .await;
    let created = created.expect("00").clone();
    assert!(created["secret"].as_str().unwrap().starts_with("whsec_"));
    story.substitutions.add(
        "d4e5f6a7-b8c9-4d0e-8f1a-2b3c4d5e6f01",
        created["id"].as_str().unwrap(),
    );
    story
        .replay(Operation::WebhookConfiguration, "register.duplicate", owner)
        .await
        .expect("26");
    story
        .replay(Operation::GetWebhookConfiguration, "empty", owner)
        .await
        .expect("00");
    let test = story.replay(Operation::TestWebhook, "empty", owner).await;
    assert_eq!(test.expect("00")["status"], "pending");
    let rotated = story
        .replay(Operation::RotateWebhookSecret, "empty", owner)
        .await;
    assert_ne!(rotated.expect("00")["secret"], created["secret"]);
    let paused = story
        .replay(Operation::UpdateWebhookConfiguration, "pause", api)
        .await;
    assert_eq!(paused.expect("00")["is_active"], false);
    // The event the examples replay, the customer's payment of the money chapter
    // (`collection.received` of COL-20261102-2D8R5T), came before the endpoint and was
    // skipped; replaying it waits for the endpoint to be active again.
    let log = story
        .send(
            Operation::FetchWebhookEvents,
            "skipped",
            owner,
            &json!({"filters": {"status": "skipped"}}),
        )
        .await;
    let payment = story.substitutions.apply(&json!("COL-20261102-2D8R5T"));
    let skipped = log
        .expect("00")
        .as_array()
        .unwrap()
        .iter()
        .find(|event| event["payload"]["data"]["reference_number"] == payment)
        .expect("the customer's payment in the log")["id"]
        .as_str()
        .unwrap()
        .to_string();
    story
        .substitutions
        .add("e5f6a7b8-c9d0-4e1f-8a2b-3c4d5e6f7a01", &skipped);
    story
        .replay(
            Operation::ReplayWebhookEvent,
            "replay.endpoint_paused",
            owner,
        )
        .await
        .expect("48");
    story
        .send(
            Operation::UpdateWebhookConfiguration,
            "resume",
            api,
            &json!({"is_active": true}),
        )
        .await
        .expect("00");
    let replayed = story
        .replay(Operation::ReplayWebhookEvent, "replay", owner)
        .await;
    assert_eq!(replayed.expect("00")["remaining_attempts"], 10);
    story
        .replay(
            Operation::ReplayWebhookEvent,
            "replay.already_pending",
            owner,
        )
        .await
        .expect("48");
    let moved = story
        .replay(Operation::UpdateWebhookConfiguration, "move_and_open", api)
        .await;
    assert_eq!(moved.expect("00")["ip_whitelist"], json!([]));
    api_token
}

/// The year so far for an ERP and the business's transactions, written in the background: each
/// family starts both, the writer writes them, and the export is read, listed and downloaded.
async fn exports(story: &mut Story, owner: Option<&str>, api: Option<&str>) {
    let mut ready = None;
    for (create, token) in [
        (Operation::CreateExport, owner),
        (Operation::CreateExportApi, api),
    ] {
        for example in ["year_for_erp", "business_csv"] {
            let export = story.replay(create, example, token).await;
            assert_eq!(export.expect("00")["status"], "pending");
            ready.get_or_insert(export.expect("00")["export_id"].clone());
        }
        let kit = &story.server.kit;
        while kobo::money::exports::writer::work(kit.api.bank(), "conformance")
            .await
            .unwrap()
        {}
    }
    let id = ready.unwrap();
    story
        .substitutions
        .add("7c1e2d3f-4a5b-4c6d-8e7f-901a2b3c4d5e", id.as_str().unwrap());
    for (get, fetch, download, token) in [
        (
            Operation::GetExport,
            Operation::FetchExports,
            Operation::DownloadExport,
            owner,
        ),
        (
            Operation::GetExportApi,
            Operation::FetchExportsApi,
            Operation::DownloadExportApi,
            api,
        ),
    ] {
        let export = story.replay(get, "by_id", token).await;
        let export = export.expect("00").clone();
        assert_eq!(export["status"], "ready", "{export}");
        let listed = story.replay(fetch, "ready", token).await;
        assert_eq!(listed.expect("00").as_array().unwrap().len(), 4);
        let part = story.replay(download, "first_part", token).await;
        let part = part.expect("00");
        assert_eq!(part["parts"], export["parts"]);
        assert_file(part, "<?xml");
    }
}

/// The Dashboard twins of two integration operations, the same afternoon: the owner opens two
/// customers' accounts and changes the webhook endpoint without the integration's credentials,
/// with the integration twins' refusals; Ife, a Viewer, is refused both; the audit log names
/// who did what.
async fn dashboard_twins(story: &mut Story, owner: &str, api: &str) {
    let owner = Some(owner);
    let api = Some(api);
    let ife = story
        .send(
            Operation::Login,
            "viewer",
            None,
            &json!({"email": "ife.olawale@adaezefoods.ng", "password": "Puff-Puff-Friday-9"}),
        )
        .await;
    let ife = ife.expect("00")["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    let ife = Some(ife.as_str());

    // A customer at the counter; the same key again is the same answer, another send of the
    // same identity is 26, as is the identity the integration opened in the money chapter.
    let amaka = story
        .replay_with_key(
            Operation::CreateCustomerAccountWeb,
            "at_the_counter",
            owner,
            "conformance-counter",
        )
        .await;
    let amaka = amaka.expect("00").clone();
    assert_eq!(amaka["account_number"], "2000000035");
    assert_eq!(amaka["account_name"], "Amaka Nwosu");
    let again = story
        .replay_with_key(
            Operation::CreateCustomerAccountWeb,
            "at_the_counter.same_key",
            owner,
            "conformance-counter",
        )
        .await;
    assert_eq!(again.expect("00"), &amaka);
    story
        .replay(
            Operation::CreateCustomerAccountWeb,
            "at_the_counter.duplicate",
            owner,
        )
        .await
        .expect("26");
    let ibrahim = story
        .replay(
            Operation::CreateCustomerAccountWeb,
            "under_a_current_account",
            owner,
        )
        .await;
    assert_eq!(ibrahim.expect("00")["parent_account_number"], "1000000021");
    for (label, body, code) in [
        (
            "opened_by_the_integration",
            json!({"bvn": "22212345678"}),
            "26",
        ),
        (
            "no_identity",
            json!({"email": "amaka.nwosu@example.ng"}),
            "02",
        ),
        ("verification_fails", json!({"nin": "70123456783"}), "83"),
        (
            "a_virtual_parent",
            json!({"bvn": "22211110000", "parent_account_number": "2000000011"}),
            "44",
        ),
    ] {
        story
            .send(Operation::CreateCustomerAccountWeb, label, owner, &body)
            .await
            .expect(code);
    }
    story
        .replay(
            Operation::CreateCustomerAccountWeb,
            "at_the_counter.by_a_viewer",
            ife,
        )
        .await
        .expect("43");
    story
        .replay(
            Operation::CreateCustomerAccountWeb,
            "at_the_counter.integration_token",
            api,
        )
        .await
        .expect("41");

    // The endpoint paused for maintenance, resumed for money events, moved and pinned.
    let paused = story
        .replay(Operation::UpdateWebhookConfigurationWeb, "pause", owner)
        .await;
    assert_eq!(paused.expect("00")["is_active"], false);
    let resumed = story
        .replay(
            Operation::UpdateWebhookConfigurationWeb,
            "resume_for_money_events",
            owner,
        )
        .await;
    let resumed = resumed.expect("00");
    assert_eq!(resumed["is_active"], true);
    assert_eq!(resumed["event_types"].as_array().unwrap().len(), 4);
    let pinned = story
        .replay(
            Operation::UpdateWebhookConfigurationWeb,
            "move_and_pin",
            owner,
        )
        .await;
    assert_eq!(
        pinned.expect("00")["ip_whitelist"],
        json!(["102.89.34.17", "102.89.35.0/24"])
    );
    for (label, body, code) in [
        ("nothing_to_change", json!({}), "01"),
        (
            "not_an_address",
            json!({"ip_whitelist": ["102.89.34"]}),
            "01",
        ),
        (
            "private_address",
            json!({"url": "http://10.0.0.7/kobo"}),
            "01",
        ),
    ] {
        story
            .send(
                Operation::UpdateWebhookConfigurationWeb,
                label,
                owner,
                &body,
            )
            .await
            .expect(code);
    }
    story
        .replay(
            Operation::UpdateWebhookConfigurationWeb,
            "pause.by_a_viewer",
            ife,
        )
        .await
        .expect("43");
    story
        .replay(
            Operation::UpdateWebhookConfigurationWeb,
            "pause.integration_token",
            api,
        )
        .await
        .expect("41");

    // The audit log: the integration's openings and changes, then the owner's.
    for action in ["create_customer_account", "update_webhook_configuration"] {
        story
            .send(
                Operation::FetchAuditLogs,
                action,
                owner,
                &json!({"filters": {"action": action}}),
            )
            .await
            .expect("00");
    }
}

/// The examples' webhook host (`hooks.adaezefoods.ng`, and where the endpoint moved) does not
/// resolve here: every delivery fails at once, the same way on every machine.
struct Unresolvable;

impl Resolver for Unresolvable {
    fn lookup(
        &self,
        _host: &str,
        _port: u16,
    ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<SocketAddr>>> + Send + '_>> {
        Box::pin(async {
            Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no such host",
            ))
        })
    }
}

/// Three days later, as the examples' delivery log has it: the dispatcher (which nothing ran
/// before) tries every pending event at each retry of its budget, at an endpoint that never
/// resolves, until it is `failed`; the owner, logged in again, reads the failures.
async fn three_days_later(story: &mut Story) -> String {
    let kit = &story.server.kit;
    let policy = kit.api.config().webhooks.clone();
    let dispatcher = WebhookDispatcher::with_resolver(
        kit.store.clone(),
        kit.clock.clone(),
        policy.clone(),
        Environment::Sandbox,
        Arc::new(Unresolvable),
    );
    dispatcher.deliver_due().await.unwrap();
    for delay in &policy.retry_delays {
        // Past the delay and the most its jitter adds.
        let jittered = *delay * (1000 + policy.jitter_per_mille as u32) / 1000;
        let wait = jittered + std::time::Duration::from_secs(1);
        kit.clock.advance(chrono::Duration::from_std(wait).unwrap());
        dispatcher.deliver_due().await.unwrap();
    }
    let login = story
        .send(
            Operation::Login,
            "owner_three_days_later",
            None,
            &json!({"email": "adaeze.okafor@adaezefoods.ng", "password": "Suya-And-Zobo-2027"}),
        )
        .await;
    let owner = login.expect("00")["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    let failed = story
        .replay(Operation::FetchWebhookEvents, "failed", Some(&owner))
        .await;
    // The customer's payment, replayed in the webhook chapter, and the test event.
    let failed = failed.expect("00").as_array().unwrap();
    assert_eq!(failed.len(), 2, "{failed:#?}");
    for event in failed {
        assert_eq!(event["attempts"], policy.max_attempts(), "{event:#}");
        assert_eq!(event["remaining_attempts"], 0, "{event:#}");
    }
    owner
}

/// Saved beneficiaries, the same day, last (their payments would change what the chapters
/// before read): the owner saves Lagos Fresh Produce and the integration Emeka Nwosu (each
/// example from both families: saving again keeps the one saved), both are found by a search,
/// each family pays one, a name that is not the holder's is refused, and both are deleted.
async fn beneficiaries(story: &mut Story, owner: &str, client_secret: &str) -> String {
    let grant = story
        .send(
            Operation::GenerateToken,
            "for_beneficiaries",
            None,
            &json!({"client_id": story.server.kit.business.client_id, "client_secret": client_secret}),
        )
        .await;
    let api = grant.expect("00")["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    let (owner, api) = (Some(owner), Some(api.as_str()));
    let mut saved = Vec::new();
    for (create, token) in [
        (Operation::CreateBeneficiary, owner),
        (Operation::CreateBeneficiaryApi, api),
    ] {
        for example in ["supplier", "driver"] {
            let beneficiary = story.replay(create, example, token).await;
            saved.push(beneficiary.expect("00")["beneficiary_id"].clone());
        }
    }
    // Each account once, whichever family saved it again.
    assert_eq!(saved[0], saved[2]);
    assert_eq!(saved[1], saved[3]);
    assert_ne!(saved[0], saved[1]);
    story
        .send(
            Operation::CreateBeneficiary,
            "not_the_holder",
            owner,
            &json!({"account_number": "0123456788", "bank_code": "000013",
                    "account_name": "Chinedu Eze"}),
        )
        .await
        .expect("49");
    for (fetch, token) in [
        (Operation::FetchBeneficiaries, owner),
        (Operation::FetchBeneficiariesApi, api),
    ] {
        let found = story.replay(fetch, "search", token).await;
        let found = found.expect("00").as_array().unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0]["account_name"], "Lagos Fresh Produce Ltd");
    }
    let (supplier, driver) = (saved[0].as_str().unwrap(), saved[1].as_str().unwrap());
    story
        .substitutions
        .add("2f7c9a41-5b3d-4e6f-8a1b-3c4d5e6f7a81", supplier);
    story
        .substitutions
        .add("6a1d2e3f-4b5c-4d6e-9f70-8a9b0c1d2e3f", driver);
    otp_for(story, owner, "482913").await;
    let paid = story
        .replay(Operation::PayBeneficiary, "supplier", owner)
        .await;
    let paid = paid.expect("00");
    assert_eq!(paid["transfer_status"], "success", "{paid}");
    assert_eq!(paid["beneficiary_account_name"], "Lagos Fresh Produce Ltd");
    let payout = story
        .replay_with_key(
            Operation::PayBeneficiaryApi,
            "payout",
            api,
            "conformance-saved-payout",
        )
        .await;
    let payout = payout.expect("00");
    assert_eq!(payout["transfer_status"], "processing", "{payout}");
    assert_eq!(payout["reference"], "PAYOUT-2026-12-0007");
    story
        .replay(Operation::DeleteBeneficiaryApi, "by_id", api)
        .await
        .expect("00");
    // An id never saved (the deleted one's would put a random id in the snapshot's message).
    story.substitutions.set(
        "6a1d2e3f-4b5c-4d6e-9f70-8a9b0c1d2e3f",
        "00000000-0000-4000-8000-000000000047",
    );
    story
        .replay(Operation::DeleteBeneficiary, "by_id.unknown", owner)
        .await
        .expect("47");
    story
        .substitutions
        .set("6a1d2e3f-4b5c-4d6e-9f70-8a9b0c1d2e3f", supplier);
    story
        .replay(Operation::DeleteBeneficiary, "by_id", owner)
        .await
        .expect("00");
    story.server.kit.assert_ledger_balances().await;
    api.unwrap().to_owned()
}

/// The bulk transfers chapter: a month's payments sent from both families (one item to a
/// saved beneficiary, one whose holder is named otherwise), judged by the validation worker,
/// read back, and cancelled; nothing moves.
async fn bulk_transfers(story: &mut Story, owner: &str, api: &str) {
    let (owner, api) = (Some(owner), Some(api));
    let driver = story
        .send(
            Operation::CreateBeneficiary,
            "driver_for_payroll",
            owner,
            &json!({"account_number": "0123456788", "bank_code": "000013",
                    "account_name": "Emeka Nwosu"}),
        )
        .await;
    let driver = driver.expect("00")["beneficiary_id"].clone();
    story.substitutions.set(
        "6a1d2e3f-4b5c-4d6e-9f70-8a9b0c1d2e3f",
        driver.as_str().unwrap(),
    );
    let first = story
        .replay(Operation::CreateBulkTransfer, "payroll", owner)
        .await;
    let first = first.expect("00").clone();
    assert_eq!(first["status"], "validating", "{first}");
    // The integration's batch has a reference of its own: a batch's is unique for ever.
    story
        .substitutions
        .set("PAYROLL-2026-12", "PAYROLL-2026-12-API");
    let second = story
        .replay_with_key(
            Operation::CreateBulkTransferApi,
            "payroll",
            api,
            "conformance-payroll",
        )
        .await;
    let second = second.expect("00").clone();
    story
        .substitutions
        .set("PAYROLL-2026-12", "PAYROLL-2026-12");
    let bank = story.server.kit.api.bank();
    while kobo::money::bulk::validate::work(bank, "conformance")
        .await
        .unwrap()
    {}
    let first_id = first["bulk_transfer_id"].as_str().unwrap().to_owned();
    story
        .substitutions
        .add("5b6c7d8e-9f01-4a2b-8c3d-4e5f60718293", &first_id);
    for (get, token) in [
        (Operation::GetBulkTransfer, owner),
        (Operation::GetBulkTransferApi, api),
    ] {
        let batch = story.replay(get, "by_id", token).await;
        let batch = batch.expect("00");
        assert_eq!(batch["status"], "validated", "{batch}");
        assert_eq!(batch["counts"]["invalid"], 1, "{batch}");
    }
    for (fetch, token) in [
        (Operation::FetchBulkTransferItems, owner),
        (Operation::FetchBulkTransferItemsApi, api),
    ] {
        let items = story.replay(fetch, "invalid", token).await;
        let items = items.expect("00").as_array().unwrap();
        assert_eq!(items.len(), 1, "{items:?}");
        assert_eq!(items[0]["refusal_code"], "49");
    }
    for (download, token) in [
        (Operation::DownloadBulkTransferResults, owner),
        (Operation::DownloadBulkTransferResultsApi, api),
    ] {
        let file = story.replay(download, "by_id", token).await;
        let file = file.expect("00");
        assert_eq!(file["content_type"], "text/csv; charset=utf-8", "{file}");
        assert_eq!(
            file["file_name"],
            "bulk-transfer-PAYROLL-2026-12-results.csv"
        );
    }
    for (fetch, token) in [
        (Operation::FetchBulkTransfers, owner),
        (Operation::FetchBulkTransfersApi, api),
    ] {
        let batches = story.replay(fetch, "validated", token).await;
        assert_eq!(batches.expect("00").as_array().unwrap().len(), 2);
    }
    paying_bulk_transfers(story, owner, api, &second).await;
    story.substitutions.set(
        "5b6c7d8e-9f01-4a2b-8c3d-4e5f60718293",
        "00000000-0000-4000-8000-000000000047",
    );
    story
        .replay(Operation::GetBulkTransferApi, "by_id.unknown", api)
        .await
        .expect("47");
    story.server.kit.assert_ledger_balances().await;
}

/// Bulk transfers authorised and paid: the owner's batch with a bound OTP, the integration's
/// with its key; both paid by the executor and settled at NIP. Then, the approval policy on,
/// a batch held and approved by the checker, another rejected; two more cancelled.
async fn paying_bulk_transfers(
    story: &mut Story,
    owner: Option<&str>,
    api: Option<&str>,
    second: &Value,
) {
    let clock = story.server.kit.clock.clone();
    clock.advance(chrono::Duration::minutes(16));
    story
        .send(
            Operation::SimulateInboundTransfer,
            "funds_for_payroll",
            api,
            &json!({"account_number": "1000000021", "amount": "5000000.00"}),
        )
        .await
        .expect("00");
    let otp = story
        .replay(Operation::GenerateBulkTransferOtp, "by_id", owner)
        .await;
    let code = otp.expect("00")["otp"].as_str().unwrap().to_owned();
    story.substitutions.set("731264", &code);
    let authorised = story
        .replay(Operation::AuthorizeBulkTransfer, "authorise", owner)
        .await;
    assert_eq!(authorised.expect("00")["status"], "executing");
    let first_id = story
        .substitutions
        .apply(&json!("5b6c7d8e-9f01-4a2b-8c3d-4e5f60718293"));
    let second_id = second["bulk_transfer_id"].as_str().unwrap();
    story
        .substitutions
        .set("5b6c7d8e-9f01-4a2b-8c3d-4e5f60718293", second_id);
    let authorised = story
        .replay_with_key(
            Operation::AuthorizeBulkTransferApi,
            "authorise",
            api,
            "conformance-authorise",
        )
        .await;
    assert_eq!(authorised.expect("00")["status"], "executing");
    settle_bulk_transfers(story).await;
    for (label, id) in [
        ("paid_by_the_owner", first_id.as_str().unwrap()),
        ("paid_by_the_integration", second_id),
    ] {
        let done = story
            .send(
                Operation::GetBulkTransferApi,
                label,
                api,
                &json!({"bulk_transfer_id": id}),
            )
            .await;
        let done = done.expect("00");
        assert_eq!(done["status"], "completed", "{done}");
    }

    // The approval policy on: a batch is held whole for Tunde, a Checker.
    story
        .send(
            Operation::UpdateApprovalPolicy,
            "every_payroll",
            owner,
            &json!({"is_active": true, "min_amount": "100.00"}),
        )
        .await
        .expect("00");
    let tunde = story
        .send(
            Operation::Login,
            "checker_for_payroll",
            None,
            &json!({"email": "tunde.bakare@adaezefoods.ng",
                    "password": kobo::testkit::MEMBER_PASSWORD}),
        )
        .await;
    let tunde = tunde.expect("00")["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    let tunde = Some(tunde.as_str());
    for (label, example, operation) in [
        ("approved", "approve", Operation::ApproveBulkTransfer),
        ("rejected", "reject", Operation::RejectBulkTransfer),
    ] {
        let held = validated_batch(story, owner, label).await;
        let code = story
            .send(
                Operation::GenerateBulkTransferOtp,
                &format!("{label}_by_its_maker"),
                owner,
                &json!({"bulk_transfer_id": held["bulk_transfer_id"]}),
            )
            .await;
        let code = code.expect("00")["otp"].as_str().unwrap().to_owned();
        let body = json!({"bulk_transfer_id": held["bulk_transfer_id"],
                          "total": held["totals"]["total"], "item_count": held["counts"]["valid"],
                          "otp": code});
        let authorised = story
            .send(Operation::AuthorizeBulkTransfer, label, owner, &body)
            .await;
        assert_eq!(authorised.expect("00")["status"], "pending_approval");
        let id = held["bulk_transfer_id"].as_str().unwrap();
        story
            .substitutions
            .set("5b6c7d8e-9f01-4a2b-8c3d-4e5f60718293", id);
        let code = story
            .send(
                Operation::GenerateBulkTransferOtp,
                &format!("{label}_by_the_checker"),
                tunde,
                &json!({"bulk_transfer_id": id}),
            )
            .await;
        let code = code.expect("00")["otp"].as_str().unwrap().to_owned();
        story.substitutions.set("604218", &code);
        story.replay(operation, example, tunde).await.expect("00");
    }
    settle_bulk_transfers(story).await;

    // Two batches not authorised are cancelled, one through each family.
    let cancelled = validated_batch(story, owner, "cancelled").await;
    story.substitutions.set(
        "5b6c7d8e-9f01-4a2b-8c3d-4e5f60718293",
        cancelled["bulk_transfer_id"].as_str().unwrap(),
    );
    story
        .replay(Operation::CancelBulkTransfer, "by_id", owner)
        .await
        .expect("00");
    story
        .replay(Operation::CancelBulkTransfer, "by_id.cancelled", owner)
        .await
        .expect("48");
    let cancelled = validated_batch(story, owner, "cancelled_by_the_integration").await;
    story.substitutions.set(
        "5b6c7d8e-9f01-4a2b-8c3d-4e5f60718293",
        cancelled["bulk_transfer_id"].as_str().unwrap(),
    );
    story
        .replay(Operation::CancelBulkTransferApi, "by_id", api)
        .await
        .expect("00");
}

/// A one-item batch to Lagos Fresh Produce from the payroll account, validated.
async fn validated_batch(story: &mut Story, owner: Option<&str>, label: &str) -> Value {
    let body = json!({"source_account_number": "1000000021", "on_invalid": "refuse_batch",
                      "reference": format!("PAYROLL-{label}"),
                      "items": [{"account_number": "3000000018", "bank_code": "090823",
                                 "account_name": "Lagos Fresh Produce Ltd", "amount": "1000"}]});
    let body = story.substitutions.apply(&body);
    let created = story
        .send(Operation::CreateBulkTransfer, label, owner, &body)
        .await;
    let id = created.expect("00")["bulk_transfer_id"].clone();
    settle_bulk_transfers(story).await;
    let batch = story
        .send(
            Operation::GetBulkTransfer,
            label,
            owner,
            &json!({"bulk_transfer_id": id}),
        )
        .await;
    let batch = batch.expect("00").clone();
    assert_eq!(batch["status"], "validated", "{batch}");
    batch
}

/// Runs the bulk workers and the NIP worker until none has work left.
async fn settle_bulk_transfers(story: &mut Story) {
    let kit = &story.server.kit;
    let bank = kit.api.bank();
    for _ in 0..100 {
        let validated = kobo::money::bulk::validate::work(bank, "conformance")
            .await
            .unwrap();
        let executed = kobo::money::bulk::execute::work(bank, "conformance")
            .await
            .unwrap();
        let pass = kobo::money::nip::process_due(
            &kit.store,
            &**kit.api.provider(),
            &kit.clock,
            kobo::kernel::config::Environment::Sandbox,
            50,
        )
        .await
        .unwrap();
        if !validated && !executed && pass.settled + pass.reversed == 0 {
            kit.clock.advance(chrono::Duration::seconds(3));
            if !kobo::money::bulk::execute::work(bank, "conformance")
                .await
                .unwrap()
            {
                return;
            }
        }
    }
    panic!("the bulk workers were still busy after 100 rounds");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_examples_conform_on_sqlite() {
    on_sqlite().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_examples_conform_on_postgres() {
    story(StoreKind::Postgres).await;
}

/// Compares what the story replayed with every request example the spec gives the built
/// operations.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_example_of_the_built_operations_is_replayed() {
    let replayed = &on_sqlite().await.replayed;
    let expected: BTreeSet<(&'static str, String)> = BUILT
        .iter()
        .flat_map(|&operation| {
            operation
                .request_examples()
                .iter()
                .map(move |example| (operation.id(), example.name.to_string()))
        })
        .collect();
    let missing: Vec<_> = expected.difference(replayed).collect();
    assert!(
        missing.is_empty(),
        "examples the story does not replay: {missing:?}"
    );
}

/// Every file in `tests/snapshots/` is a snapshot the story asserts: a step renamed or removed
/// leaves its old file behind, which fails here by name (delete it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_snapshot_file_is_one_the_story_asserts() {
    let record = on_sqlite().await;
    if let Err(problem) = conformance::check_snapshot_files(SNAPSHOTS.as_ref(), &record.snapshots) {
        panic!("{problem}");
    }
}

/// A downloaded file (`FileContent`): its base64 decodes to `size_bytes` bytes starting with
/// `starts`.
fn assert_file(file: &serde_json::Value, starts: &str) {
    use base64::Engine;
    let content = base64::engine::general_purpose::STANDARD
        .decode(file["content_base64"].as_str().unwrap())
        .unwrap();
    assert_eq!(content.len() as u64, file["size_bytes"].as_u64().unwrap());
    assert!(
        content.starts_with(starts.as_bytes()),
        "{}",
        file["file_name"]
    );
}
