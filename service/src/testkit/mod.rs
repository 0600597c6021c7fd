//! A bank per test, on either store, driven through the real router without a socket.
//!
//! Compiled for this crate's tests and, with the `testkit` feature, for other crates (the
//! conformance suite): `kobo = { path = "../service", features = ["testkit"] }`.
//!
//! [`TestKit::sqlite`] opens a fresh SQLite file in a temporary directory;
//! [`TestKit::postgres`] creates a fresh database `kobo_test_<uuid>` on the server of
//! `KOBO_TEST_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432/test`) and drops it
//! when the kit is dropped (best effort). An unreachable PostgreSQL makes the test fail, never
//! skip. Either way the kit migrates, seeds the built-in roles, provisions a business with an
//! active Owner (password [`OWNER_PASSWORD`]) and logs the owner in.
//!
//! Write a behaviour once and run it on both stores with [`on_both_stores!`]:
//!
//! ```text
//! use kobo::testkit::TestKit;
//!
//! async fn logout_revokes_the_session(kit: TestKit) {
//!     let reply = kit.call("/api/v1/auth/web/logout", &kit.owner_token, json!({})).await;
//!     ...
//! }
//!
//! kobo::on_both_stores!(logout_revokes_the_session);
//! // -> logout_revokes_the_session::sqlite and logout_revokes_the_session::postgres
//! ```
//!
//! The calling crate needs `tokio` (with `macros` and `rt-multi-thread`) as a dependency.

mod databases;
pub mod sql;

pub use databases::through_pooler;
use databases::{open_store, PostgresDatabase};
pub use sql::Literal;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{HeaderMap, Request, StatusCode};
use axum::Router;
use generated_server::{Operation, ResponseCode, TokenFamily};
use serde_json::{json, Value};
use tower::ServiceExt;

use crate::http::KoboApi;
use crate::kernel::clock::Clock;
use crate::kernel::config::{Config, PasswordPolicy};
use crate::kernel::store::Store;
use crate::operator::businesses::{self, CreatedBusiness, NewBusiness};
use crate::platform::tokens::TokenKeys;

/// The password of every owner the kit provisions.
pub const OWNER_PASSWORD: &str = "Jollof-Rice-2026";
/// The password [`TestKit::add_member`] gives new members.
pub const MEMBER_PASSWORD: &str = "Puff-Puff-Friday-9";
/// Where calls come from unless a test says otherwise.
pub const CLIENT_IP: IpAddr = IpAddr::V4(Ipv4Addr::new(102, 89, 34, 17));

/// Which store a kit runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreKind {
    Sqlite,
    Postgres,
}

/// Runs each named `async fn(TestKit)` once per store, as `<name>::sqlite` and
/// `<name>::postgres`. Scenarios that build their own kit (another `Config`) take the store
/// instead: `on_both_stores!(kind: name, ...)` runs each `async fn(StoreKind)` the same way.
/// `on_both_stores!(config: expression => name, ...)` gives each kit the configuration the
/// expression makes (a path in it is resolved inside a module of the scenario's, so start it
/// with `crate::`).
#[macro_export]
macro_rules! on_both_stores {
    (config: $config:expr => $($scenario:ident),+ $(,)?) => {$(
        mod $scenario {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let kind = $crate::testkit::StoreKind::Sqlite;
                super::$scenario($crate::testkit::TestKit::start(kind, $config).await).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let kind = $crate::testkit::StoreKind::Postgres;
                super::$scenario($crate::testkit::TestKit::start(kind, $config).await).await;
            }
        }
    )+};
    (kind: $($scenario:ident),+ $(,)?) => {$(
        mod $scenario {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$scenario($crate::testkit::StoreKind::Sqlite).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$scenario($crate::testkit::StoreKind::Postgres).await;
            }
        }
    )+};
    ($($scenario:ident),+ $(,)?) => {$(
        mod $scenario {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$scenario($crate::testkit::TestKit::sqlite().await).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$scenario($crate::testkit::TestKit::postgres().await).await;
            }
        }
    )+};
}

/// A bank on a fresh store, its router, and a business whose owner is logged in.
pub struct TestKit {
    pub kind: StoreKind,
    pub api: Arc<KoboApi>,
    pub router: Router,
    pub store: Store,
    /// The API's clock: the system's time, which [`Clock::advance`] moves ahead (past an
    /// expiry, a lock or a window) instead of rewriting timestamps in the database.
    pub clock: Clock,
    /// Where the store is (for [`TestKit::another_process`]).
    url: String,
    /// The business the kit provisioned (with its integration credentials).
    pub business: CreatedBusiness,
    /// A Dashboard token of the business's owner.
    pub owner_token: String,
    // Dropped last: the temporary directory or database the store lives in.
    _place: Place,
}

/// Held for its `Drop`: the directory or database is removed with the kit.
#[allow(dead_code)]
enum Place {
    Sqlite(tempfile::TempDir),
    Postgres(PostgresDatabase),
}

/// An empty database of its own (no migrations, no business), dropped with the value: for
/// tests that load a database as another release left it ([`sql::load_dump`]).
pub struct EmptyDatabase {
    pub url: String,
    _place: Place,
}

impl EmptyDatabase {
    pub async fn new(kind: StoreKind) -> EmptyDatabase {
        match kind {
            StoreKind::Sqlite => {
                let dir = tempfile::tempdir().expect("a temporary directory");
                let url = Store::sqlite_url_in(dir.path()).expect("an SQLite URL");
                EmptyDatabase {
                    url,
                    _place: Place::Sqlite(dir),
                }
            }
            StoreKind::Postgres => {
                let database = PostgresDatabase::open(false).await;
                EmptyDatabase {
                    url: database.url.clone(),
                    _place: Place::Postgres(database),
                }
            }
        }
    }
}

/// One answer of the router.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    /// The envelope.
    pub body: Value,
}

impl Reply {
    /// The envelope's `response_code`, by name (`None` when there is no envelope or its code
    /// is not in the catalog).
    pub fn code(&self) -> Option<ResponseCode> {
        self.body["response_code"]
            .as_str()
            .and_then(ResponseCode::from_code)
    }

    /// The envelope's `data`, after checking the response code and that the HTTP status is
    /// the one the catalog gives it (panics with the whole reply otherwise).
    #[track_caller]
    pub fn expect(&self, code: ResponseCode) -> &Value {
        assert_eq!(self.code(), Some(code), "unexpected reply: {self:#?}");
        assert_eq!(
            self.status.as_u16(),
            code.http_status(),
            "unexpected status: {self:#?}"
        );
        &self.body["data"]
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }
}

/// A request to send with [`TestKit::send`].
#[derive(Clone, Debug)]
pub struct Call<'a> {
    pub path: &'a str,
    pub token: Option<&'a str>,
    pub body: Value,
    /// Sent as the body instead of `body`, byte for byte (JSON that a `Value` cannot hold,
    /// such as a key given twice).
    pub raw_body: Option<String>,
    pub headers: Vec<(&'a str, String)>,
    pub client_ip: IpAddr,
    /// The request's time, as `kobo serve` gives every request (`--request-timeout-seconds`);
    /// none unless [`Call::within`] says.
    pub timeout: Option<std::time::Duration>,
}

impl<'a> Call<'a> {
    pub fn new(path: &'a str, token: Option<&'a str>, body: Value) -> Call<'a> {
        Call {
            path,
            token,
            body,
            raw_body: None,
            headers: Vec::new(),
            client_ip: CLIENT_IP,
            timeout: None,
        }
    }

    /// A call whose body is `text` exactly as written.
    pub fn raw(path: &'a str, token: Option<&'a str>, text: &str) -> Call<'a> {
        Call {
            raw_body: Some(text.to_owned()),
            ..Call::new(path, token, Value::Null)
        }
    }

    pub fn header(mut self, name: &'a str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    pub fn from_ip(mut self, ip: IpAddr) -> Self {
        self.client_ip = ip;
        self
    }

    /// Gives the request `timeout` from when it is sent (the router's `Deadline`).
    pub fn within(mut self, timeout: std::time::Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

impl TestKit {
    /// The URL of the kit's database, for another process (`kobo serve`) on it.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub async fn sqlite() -> TestKit {
        TestKit::start(StoreKind::Sqlite, Config::default()).await
    }

    pub async fn postgres() -> TestKit {
        TestKit::start(StoreKind::Postgres, Config::default()).await
    }

    pub async fn on(kind: StoreKind) -> TestKit {
        TestKit::start(kind, Config::default()).await
    }

    /// A kit with `config` (production environment, shorter TTLs, ...). Passwords are hashed
    /// with [`PasswordPolicy::cheapest_for_tests`] whatever `config` says: a suite logs in
    /// thousands of times, and argon2's cost is not what it tests.
    pub async fn start(kind: StoreKind, config: Config) -> TestKit {
        TestKit::start_at(kind, config, None).await
    }

    /// A kit whose clock reads `at` when the kit is made (its business and owner are made
    /// then), and runs on from there; `None` is now. For tests whose data names a day.
    pub async fn start_at(
        kind: StoreKind,
        mut config: Config,
        at: Option<chrono::DateTime<chrono::Utc>>,
    ) -> TestKit {
        // What the server logs as an error (an internal error's cause, with its chain) goes to
        // the test's output, which the runner shows when the test fails.
        let _ = tracing_subscriber::fmt()
            .with_test_writer()
            .with_max_level(tracing::Level::ERROR)
            .try_init();
        config.passwords = PasswordPolicy::cheapest_for_tests();
        let (url, place) = match kind {
            StoreKind::Sqlite => {
                let dir = tempfile::tempdir().expect("a temporary directory");
                let url = Store::sqlite_url_in(dir.path()).expect("an SQLite URL");
                (url, Place::Sqlite(dir))
            }
            StoreKind::Postgres => {
                let database = PostgresDatabase::create().await;
                (database.url.clone(), Place::Postgres(database))
            }
        };
        let store = open_store(&url).await;
        let clock = Clock::shifted();
        if let Some(at) = at {
            clock.advance(at - clock.now());
        }
        let api = KoboApi::open(
            store.clone(),
            config.clone(),
            clock.clone(),
            TokenKeys::random(),
        )
        .await
        .unwrap_or_else(|error| panic!("cannot open the API: {error:#}"));
        let api = Arc::new(api);
        let router = generated_server::router(api.clone());
        let business = businesses::create(
            &store,
            &config,
            &clock,
            NewBusiness {
                name: "Adaeze Foods Ltd".into(),
                owner_email: "adaeze.okafor@adaezefoods.ng".into(),
                owner_first_name: "Adaeze".into(),
                owner_last_name: "Okafor".into(),
                owner_password: Some(OWNER_PASSWORD.into()),
                active: true,
                business_id: None,
                owner_id: None,
            },
        )
        .await
        .expect("the test business");
        let mut kit = TestKit {
            kind,
            api,
            router,
            store,
            clock,
            url,
            business,
            owner_token: String::new(),
            _place: place,
        };
        kit.owner_token = kit
            .login("adaeze.okafor@adaezefoods.ng", OWNER_PASSWORD)
            .await;
        kit
    }

    /// Sends one request through the router, as from `call.client_ip`.
    pub async fn send(&self, call: Call<'_>) -> Reply {
        send_to(self.router.clone(), request_of(&call)).await
    }

    /// Another `kobo` process on the kit's database: its own connection pool and API, the same
    /// token key, configuration, clock and core banking provider (faults included), as behind
    /// a load balancer. For races that only a second process can lose (see [`TestKit::race`]).
    pub async fn another_process(&self) -> Process {
        self.another_process_with(self.api.config().clone()).await
    }

    /// [`TestKit::another_process`] with its own configuration (a production server over a
    /// database that a sandbox server wrote, say).
    pub async fn another_process_with(&self, config: Config) -> Process {
        self.process_on(open_store(&self.url).await, config)
    }

    /// [`TestKit::another_process`] on the kit's database reached at `url` instead, directly
    /// (a proxy in between, say).
    pub async fn another_process_at(&self, url: &str) -> Process {
        let store = Store::connect(url)
            .await
            .unwrap_or_else(|error| panic!("cannot open the store at {url}: {error:#}"));
        self.process_on(store, self.api.config().clone())
    }

    fn process_on(&self, store: Store, mut config: Config) -> Process {
        config.passwords = PasswordPolicy::cheapest_for_tests();
        let api = KoboApi::new(store, config, self.clock.clone(), self.api.tokens().clone())
            .with_provider(self.api.provider().clone());
        let api = Arc::new(api);
        Process {
            router: generated_server::router(api.clone()),
            api,
        }
    }

    /// Sends every call at once, each from its own task (so on PostgreSQL they truly run in
    /// parallel), spread in turn over the kit's own router and `processes`. The calls start
    /// together, after a barrier; the replies come back in the order of `calls`.
    pub async fn race(&self, processes: &[Process], calls: Vec<Call<'_>>) -> Vec<Reply> {
        let routers: Vec<Router> = std::iter::once(self.router.clone())
            .chain(processes.iter().map(|process| process.router.clone()))
            .collect();
        let barrier = Arc::new(tokio::sync::Barrier::new(calls.len()));
        let tasks: Vec<_> = calls
            .iter()
            .enumerate()
            .map(|(i, call)| {
                let router = routers[i % routers.len()].clone();
                let request = request_of(call);
                let barrier = barrier.clone();
                tokio::spawn(async move {
                    barrier.wait().await;
                    send_to(router, request).await
                })
            })
            .collect();
        let mut replies = Vec::with_capacity(tasks.len());
        for task in tasks {
            replies.push(task.await.expect("a racing call does not panic"));
        }
        replies
    }

    /// `POST path` with a bearer token: the status and the envelope.
    pub async fn call(&self, path: &str, token: &str, body: Value) -> (StatusCode, Value) {
        let reply = self.send(Call::new(path, Some(token), body)).await;
        (reply.status, reply.body)
    }

    /// `POST path` without a token.
    pub async fn call_public(&self, path: &str, body: Value) -> (StatusCode, Value) {
        let reply = self.send(Call::new(path, None, body)).await;
        (reply.status, reply.body)
    }

    /// Calls an operation by its generated metadata.
    pub async fn op(&self, operation: Operation, token: &str, body: Value) -> Reply {
        self.send(Call::new(operation.path(), Some(token), body))
            .await
    }

    /// A Dashboard token for `email` (panics unless the login succeeds).
    pub async fn login(&self, email: &str, password: &str) -> String {
        let reply = self
            .send(Call::new(
                Operation::Login.path(),
                None,
                json!({"email": email, "password": password}),
            ))
            .await;
        reply.expect(ResponseCode::Success)["access_token"]
            .as_str()
            .expect("a token")
            .to_owned()
    }

    /// An integration token of the kit's business.
    pub async fn integration_token(&self) -> String {
        self.integration_token_of(&self.business).await
    }

    pub async fn integration_token_of(&self, business: &CreatedBusiness) -> String {
        let reply = self
            .send(Call::new(
                Operation::GenerateToken.path(),
                None,
                json!({"client_id": business.client_id, "client_secret": business.client_secret}),
            ))
            .await;
        reply.expect(ResponseCode::Success)["access_token"]
            .as_str()
            .expect("a token")
            .to_owned()
    }

    /// Provisions another business (for tenant isolation) and logs its owner in.
    pub async fn other_business(&self, name: &str, owner_email: &str) -> (CreatedBusiness, String) {
        let business = businesses::create(
            &self.store,
            self.api.config(),
            &self.clock,
            NewBusiness {
                name: name.into(),
                owner_email: owner_email.into(),
                owner_first_name: "Other".into(),
                owner_last_name: "Owner".into(),
                owner_password: Some(OWNER_PASSWORD.into()),
                active: true,
                business_id: None,
                owner_id: None,
            },
        )
        .await
        .expect("another business");
        let token = self.login(owner_email, OWNER_PASSWORD).await;
        (business, token)
    }

    /// Invites `email` with `role_id` as whoever `token` belongs to; returns the member's id.
    pub async fn invite(&self, token: &str, email: &str, role_id: &str) -> String {
        let reply = self
            .op(
                Operation::AddMember,
                token,
                json!({"email": email, "first_name": "Tunde", "last_name": "Bakare",
                       "role_id": role_id}),
            )
            .await;
        reply.expect(ResponseCode::Success);
        self.member_id(email).await
    }

    /// The id of the member with this email.
    pub async fn member_id(&self, email: &str) -> String {
        self.sql("SELECT id FROM members WHERE email = $1")
            .bind(email.to_lowercase())
            .text()
            .await
    }

    /// The invitation token of the last invitation email sent to `email`.
    pub async fn invitation_token(&self, email: &str) -> String {
        let body = self
            .outbox(email)
            .await
            .into_iter()
            .rev()
            .find(|message| message.subject.contains("invited"))
            .expect("an invitation email")
            .body;
        crate::platform::team::invitation_token_in(&body)
            .expect("a token in the invitation")
            .to_owned()
    }

    /// Invites `email` as the owner, accepts with [`MEMBER_PASSWORD`] and logs in. Returns the
    /// member's id and Dashboard token.
    pub async fn add_member(&self, email: &str, role_id: &str) -> (String, String) {
        let member_id = self.invite(&self.owner_token, email, role_id).await;
        let token = self.invitation_token(email).await;
        let reply = self
            .send(Call::new(
                Operation::AcceptInvite.path(),
                None,
                json!({"token": token, "password": MEMBER_PASSWORD,
                       "confirm_password": MEMBER_PASSWORD}),
            ))
            .await;
        reply.expect(ResponseCode::Success);
        (member_id, self.login(email, MEMBER_PASSWORD).await)
    }

    /// Creates a custom role as the owner; returns its id.
    pub async fn create_role(&self, name: &str, codes: &[&str]) -> String {
        let reply = self
            .op(
                Operation::CreateRole,
                &self.owner_token,
                json!({"name": name, "permission_codes": codes}),
            )
            .await;
        reply.expect(ResponseCode::Success)["id"]
            .as_str()
            .expect("a role id")
            .to_owned()
    }

    /// Messages in the outbox for `recipient`, oldest first.
    pub async fn outbox(&self, recipient: &str) -> Vec<OutboxMessage> {
        let rows = self
            .sql(
                "SELECT subject, body FROM notifications WHERE recipient = $1 \
                 ORDER BY created_at, id",
            )
            .bind(recipient.to_lowercase())
            .rows()
            .await;
        rows.into_iter()
            .map(|row| {
                let mut columns = row.into_iter().map(|column| column.unwrap_or_default());
                OutboxMessage {
                    subject: columns.next().unwrap_or_default(),
                    body: columns.next().unwrap_or_default(),
                }
            })
            .collect()
    }

    /// A single number from the database (`SELECT COUNT(*) ...`), for checks on stored rows.
    pub async fn count(&self, sql: &'static str, bind: &str) -> i64 {
        self.sql(sql).bind(bind).int().await
    }

    /// Waits (at most 10 s) until no other session of the kit's PostgreSQL database is inside
    /// a transaction: what a killed process's connections give at once when their sockets
    /// close, and a task aborted in this process gives only once the pool has sent its queued
    /// `ROLLBACK` (a spawned task, late on a loaded machine). Until then the aborted task's
    /// row locks stand, and a `SKIP LOCKED` claim passes over its rows. SQLite waits on its own
    /// (a writer waits out the lock), so there it returns at once.
    pub async fn until_aborted_transactions_end(&self) {
        if self.kind != StoreKind::Postgres {
            return;
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let open = self
                .sql(
                    "SELECT count(*) FROM pg_stat_activity \
                     WHERE datname = current_database() AND pid <> pg_backend_pid() \
                       AND backend_type = 'client backend' AND xact_start IS NOT NULL",
                )
                .int()
                .await;
            if open == 0 {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{open} transaction(s) of an aborted task still open after 10 s"
            );
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }

    /// Runs `kobo ledger verify` on the kit's store and fails the test on any discrepancy.
    pub async fn assert_ledger_balances(&self) -> crate::money::verify::Report {
        let report = crate::money::verify::verify(&self.store)
            .await
            .expect("the ledger can be read");
        assert!(
            report.ok,
            "the ledger has discrepancies: {:#?}",
            report.discrepancies
        );
        report
    }

    /// A webhook dispatcher on the kit's store, clock and configuration; tests call
    /// [`deliver_due`](crate::outbox::webhooks::WebhookDispatcher::deliver_due) on it instead of
    /// running its loop. [`Process::webhooks`] gives another process's.
    pub fn webhooks(&self) -> Arc<crate::outbox::webhooks::WebhookDispatcher> {
        dispatcher_of(&self.api)
    }

    /// Puts `provider` behind the kit's API (a provider that is down, that refuses, ...).
    pub fn use_provider(&mut self, provider: Arc<dyn crate::provider::CoreBanking>) {
        let api = KoboApi::new(
            self.store.clone(),
            self.api.config().clone(),
            self.clock.clone(),
            self.api.tokens().clone(),
        )
        .with_provider(provider);
        self.api = Arc::new(api);
        self.router = generated_server::router(self.api.clone());
    }

    /// Credits `amount` to `account_number` through `simulate_inbound_transfer` and returns the
    /// transaction.
    pub async fn credit(&self, token: &str, account_number: &str, amount: &str) -> Value {
        self.op(
            Operation::SimulateInboundTransfer,
            token,
            json!({"account_number": account_number, "amount": amount}),
        )
        .await
        .expect(ResponseCode::Success)
        .clone()
    }

    /// Opens an account named `name` for the business through `create_account_api` and
    /// returns its number.
    pub async fn open_account(&self, token: &str, name: &str) -> String {
        self.op(
            Operation::CreateAccountApi,
            token,
            json!({ "account_name": name }),
        )
        .await
        .expect(ResponseCode::Success)["account_number"]
            .as_str()
            .expect("an account number")
            .to_owned()
    }

    /// Signs a token with the server's key for any claims (to probe `authenticate`).
    pub fn forge_token(&self, session_id: &str, business_id: &str, family: TokenFamily) -> String {
        let now = self.clock.now().timestamp();
        self.api.tokens().sign(&crate::platform::tokens::Claims {
            sid: session_id.to_owned(),
            fam: crate::platform::tokens::family_str(family).to_owned(),
            bid: business_id.to_owned(),
            iat: now,
            exp: now + 600,
        })
    }
}

/// A second `kobo` process of a kit ([`TestKit::another_process`]).
pub struct Process {
    pub api: Arc<KoboApi>,
    router: Router,
}

impl Process {
    /// Sends one request through this process's router.
    pub async fn send(&self, call: Call<'_>) -> Reply {
        send_to(self.router.clone(), request_of(&call)).await
    }

    /// This process's webhook dispatcher (its own connection pool).
    pub fn webhooks(&self) -> Arc<crate::outbox::webhooks::WebhookDispatcher> {
        dispatcher_of(&self.api)
    }
}

fn dispatcher_of(api: &KoboApi) -> Arc<crate::outbox::webhooks::WebhookDispatcher> {
    crate::outbox::webhooks::WebhookDispatcher::new(
        api.store().clone(),
        api.clock().clone(),
        api.config().webhooks.clone(),
        api.config().environment,
    )
}

/// The HTTP request a [`Call`] stands for.
fn request_of(call: &Call<'_>) -> Request<Body> {
    let mut request = Request::post(call.path);
    // `application/json` unless the call sets its own content type.
    if !call
        .headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("content-type"))
    {
        request = request.header("content-type", "application/json");
    }
    if let Some(token) = call.token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    for (name, value) in &call.headers {
        request = request.header(*name, value.as_str());
    }
    let mut request = request
        .body(Body::from(
            call.raw_body
                .clone()
                .unwrap_or_else(|| call.body.to_string()),
        ))
        .expect("a well-formed request");
    request
        .extensions_mut()
        .insert(ConnectInfo(SocketAddr::new(call.client_ip, 40_000)));
    if let Some(timeout) = call.timeout {
        request.extensions_mut().insert(generated_server::Deadline(
            std::time::Instant::now() + timeout,
        ));
    }
    request
}

async fn send_to(router: Router, request: Request<Body>) -> Reply {
    let response = router.oneshot(request).await.expect("the router answers");
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("a readable body");
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    Reply {
        status,
        headers,
        body,
    }
}

/// One message of the notification outbox.
#[derive(Clone, Debug)]
pub struct OutboxMessage {
    pub subject: String,
    pub body: String,
}

/// The first request example the spec gives an operation (`{}` when it has none), so a test
/// can send every operation a body its schema accepts.
pub fn request_example(operation: Operation) -> Value {
    operation
        .request_examples()
        .first()
        .map_or_else(|| json!({}), |example| example.value())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_examples_come_from_the_spec() {
        assert_eq!(
            request_example(Operation::Login),
            json!({"email": "adaeze.okafor@adaezefoods.ng", "password": "Jollof-Rice-2026"})
        );
        assert_eq!(request_example(Operation::Logout), json!({}));
    }
}
