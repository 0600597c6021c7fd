//! The conformance suite's tools: the response checks ([`Checker`]) and the real server on a
//! loopback socket ([`LiveServer`]). What the spec says about each operation (its request
//! examples, the codes it lists, its schemas) comes from the tables `cargo xtask codegen`
//! generates into `generated_server` (`Operation::request_examples`, `Operation::response_codes`,
//! `Operation::response_json_schema`), so nothing here reads the spec's JSON or follows a `$ref`.
//!
//! Every response that goes through [`LiveServer::call`] is checked before the test sees it:
//! a `200` must validate against the operation's success envelope schema, any other status
//! against `ErrorEnvelope`; the HTTP status must be the one the response-code catalog gives the
//! envelope's `response_code`; an error code must be one the operation lists in its
//! `x-response-codes` (or a transport code every path may answer); and `X-Request-Id` must be
//! there. A violation fails the test with the operation, the request and the response.
//!
//! The story itself (which examples, in what order, with which ids substituted) is in
//! `tests/examples.rs`.

use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::OnceLock;

use generated_server::{Operation, ResponseCode};
use jsonschema::Validator;
use kobo::testkit::{StoreKind, TestKit};
use serde_json::Value;
use tokio::sync::oneshot;

/// Codes any path may answer, whatever the operation lists (the spec's `default` response):
/// the transport's, and `09` from an operation the server does not serve yet.
pub const TRANSPORT_CODES: [&str; 5] = ["04", "05", "07", "08", "09"];

/// Compiled response schemas: each operation's success envelope and the shared error envelope.
pub struct Checker {
    success: HashMap<Operation, Validator>,
    error: Validator,
}

impl Default for Checker {
    fn default() -> Self {
        Checker::new()
    }
}

impl Checker {
    /// Compiles every operation's response schema (formats such as `date-time`, `uuid` and
    /// `email` are checked too).
    pub fn new() -> Checker {
        let compile = |schema: &Value, name: &str| {
            jsonschema::options()
                .should_validate_formats(true)
                .build(schema)
                .unwrap_or_else(|error| panic!("the schema {name} does not compile: {error}"))
        };
        let success = Operation::ALL
            .iter()
            .map(|&operation| {
                let schema = operation.response_json_schema();
                (operation, compile(&schema, operation.response_schema()))
            })
            .collect();
        let error_schema =
            generated_server::component_schema(generated_server::schemas::ERROR_SCHEMA);
        Checker {
            success,
            error: compile(&error_schema, generated_server::schemas::ERROR_SCHEMA),
        }
    }

    /// Every problem with one response of `operation`; empty when it conforms.
    pub fn problems(
        &self,
        operation: Operation,
        status: u16,
        request_id: Option<&str>,
        body: &Value,
    ) -> Vec<String> {
        let mut problems = Vec::new();
        if request_id.is_none_or(str::is_empty) {
            problems.push("no X-Request-Id header".to_string());
        }
        let (validator, schema_name) = if status == 200 {
            (&self.success[&operation], operation.response_schema())
        } else {
            (&self.error, generated_server::schemas::ERROR_SCHEMA)
        };
        for error in validator.iter_errors(body) {
            problems.push(format!(
                "does not match {schema_name} at `{}`: {error}",
                error.instance_path()
            ));
        }
        let Some(code) = body["response_code"].as_str() else {
            problems.push("no response_code".to_string());
            return problems;
        };
        match ResponseCode::from_code(code) {
            Some(known) if known.http_status() != status => problems.push(format!(
                "response_code {code} is HTTP {} in the catalog, but the status is {status}",
                known.http_status()
            )),
            Some(_) => {}
            None => problems.push(format!("response_code {code} is not in the catalog")),
        }
        let listed: Vec<&str> = operation
            .response_codes()
            .iter()
            .map(|listed| listed.as_str())
            .collect();
        if !listed.contains(&code) && !TRANSPORT_CODES.contains(&code) {
            problems.push(format!(
                "response_code {code} is not in the operation's x-response-codes {listed:?}"
            ));
        }
        problems
    }
}

/// One call and its answer, already checked.
#[derive(Clone, Debug)]
pub struct Exchange {
    pub operation: Operation,
    pub status: u16,
    pub request_id: String,
    pub body: Value,
}

impl Exchange {
    pub fn code(&self) -> &str {
        self.body["response_code"].as_str().unwrap_or_default()
    }

    /// `data`, after checking the code (panics with the whole exchange otherwise).
    #[track_caller]
    pub fn expect(&self, code: &str) -> &Value {
        assert_eq!(self.code(), code, "unexpected answer: {self:#?}");
        &self.body["data"]
    }
}

/// The longest list a success example of `operation` shows as its `data` in the spec: the
/// example's name and its number of items; `None` when no success example lists anything (the
/// operation answers no list, or its examples' lists are empty). Read once, through the
/// generated crate's reader of the spec's response examples (`generated_server::mock`).
pub fn listed_in_the_spec(operation: Operation) -> Option<(&'static str, usize)> {
    static LISTED: OnceLock<HashMap<Operation, (String, usize)>> = OnceLock::new();
    let listed = LISTED.get_or_init(|| {
        let mock = generated_server::mock::MockApi::new();
        Operation::ALL
            .iter()
            .filter_map(|&operation| {
                mock.examples(operation)
                    .iter()
                    .filter(|example| example.status == 200)
                    .filter_map(|example| {
                        let items = example.value["data"].as_array()?.len();
                        (items > 0).then(|| (example.name.clone(), items))
                    })
                    .max_by_key(|(_, items)| *items)
                    .map(|longest| (operation, longest))
            })
            .collect()
    });
    listed
        .get(&operation)
        .map(|(name, items)| (name.as_str(), *items))
}

/// A problem when `exchange`, the replay of a request example of its operation (`example`, as
/// the story names the step), answered `00` with an empty list where the spec's success example
/// lists items: the example's filters (its dates, its account) missed the story's data, and
/// the replay tested nothing.
pub fn empty_where_the_spec_lists(exchange: &Exchange, example: &str) -> Option<String> {
    let empty = exchange.code() == "00"
        && exchange.body["data"]
            .as_array()
            .is_some_and(|items| items.is_empty());
    if !empty {
        return None;
    }
    let (spec_example, items) = listed_in_the_spec(exchange.operation)?;
    Some(format!(
        "{}: the replay of the example {example:?} answered an empty list, where the spec's \
         response example {spec_example:?} lists {items}: the story has no data its filters \
         select (make the data the example reads before replaying it)",
        exchange.operation.id()
    ))
}

/// The real server: `kobo::http::app` on a loopback socket, over a fresh store with a fixture
/// business (the testkit's: Adaeze Foods Ltd, its owner logged in). Stops when dropped.
pub struct LiveServer {
    pub kit: TestKit,
    pub base_url: String,
    checker: Checker,
    client: reqwest::Client,
    stop: Option<oneshot::Sender<()>>,
}

impl LiveServer {
    pub async fn start(kind: StoreKind) -> LiveServer {
        LiveServer::start_at(kind, None).await
    }

    /// [`LiveServer::start`] with the kit's clock at `at` ([`TestKit::start_at`]).
    pub async fn start_at(
        kind: StoreKind,
        at: Option<chrono::DateTime<chrono::Utc>>,
    ) -> LiveServer {
        let kit = TestKit::start_at(kind, kobo::kernel::config::Config::default(), at).await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let address: SocketAddr = listener.local_addr().expect("the bound address");
        let (stop, stopped) = oneshot::channel::<()>();
        let app = kobo::http::app(kit.api.clone());
        tokio::spawn(async move {
            kobo::http::serve(listener, app, async {
                let _ = stopped.await;
            })
            .await
            .expect("the server runs");
        });
        LiveServer {
            kit,
            base_url: format!("http://{address}"),
            checker: Checker::new(),
            client: reqwest::Client::new(),
            stop: Some(stop),
        }
    }

    /// `POST`s `body` to `operation` over the socket and checks the answer (panics on any
    /// problem, naming them all).
    pub async fn call(
        &self,
        operation: Operation,
        token: Option<&str>,
        request_body: &Value,
    ) -> Exchange {
        self.call_with_headers(operation, token, request_body, &[])
            .await
    }

    /// [`LiveServer::call`] with request headers (an `Idempotency-Key`).
    pub async fn call_with_headers(
        &self,
        operation: Operation,
        token: Option<&str>,
        request_body: &Value,
        headers: &[(&str, &str)],
    ) -> Exchange {
        let mut request = self
            .client
            .post(format!("{}{}", self.base_url, operation.path()))
            .header("content-type", "application/json")
            .body(request_body.to_string());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.expect("the server answers");
        let status = response.status().as_u16();
        let request_id = response
            .headers()
            .get("x-request-id")
            .and_then(|value| value.to_str().ok())
            .map(str::to_string);
        let bytes = response.bytes().await.expect("a response body");
        let body: Value = serde_json::from_slice(&bytes).unwrap_or_else(|error| {
            panic!(
                "{}: the response is not JSON ({error}): {}",
                operation.id(),
                String::from_utf8_lossy(&bytes)
            )
        });
        let problems = self
            .checker
            .problems(operation, status, request_id.as_deref(), &body);
        assert!(
            problems.is_empty(),
            "{} does not conform:\n  - {}\nrequest: {request_body}\nresponse ({status}): {body:#}",
            operation.id(),
            problems.join("\n  - "),
        );
        Exchange {
            operation,
            status,
            request_id: request_id.unwrap_or_default(),
            body,
        }
    }
}

impl Drop for LiveServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// The snapshot files in `dir` (`*.snap`; not insta's pending `.snap.new`) that are not
/// `<name>.snap` for a name in `asserted`, sorted.
pub fn orphaned_snapshots(dir: &Path, asserted: &BTreeSet<String>) -> std::io::Result<Vec<String>> {
    let mut orphans = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let file = entry?.file_name().to_string_lossy().into_owned();
        if let Some(name) = file.strip_suffix(".snap") {
            if !asserted.contains(name) {
                orphans.push(file);
            }
        }
    }
    orphans.sort();
    Ok(orphans)
}

/// `Err` naming every snapshot file in `dir` that no assertion in `asserted` produced (a step
/// renamed or removed leaves its file behind, and nothing else would notice: insta only reads
/// the files it is asked for).
pub fn check_snapshot_files(dir: &Path, asserted: &BTreeSet<String>) -> Result<(), String> {
    let orphans = orphaned_snapshots(dir, asserted)
        .map_err(|error| format!("cannot list {}: {error}", dir.display()))?;
    if orphans.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{} snapshot file(s) in {} are asserted by no step of the story (a step renamed or \
         removed): delete them\n  {}",
        orphans.len(),
        dir.display(),
        orphans.join("\n  ")
    ))
}
