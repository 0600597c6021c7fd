//! The router's pipeline, request by request, without a socket: every failure outside the bank
//! gets the error envelope and its catalog status, in the documented order.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode};
use axum::response::Response;
use generated_server::{
    router, ApiError, CallRecord, Deadline, JsonAdapter, JsonApi, JsonSuccess, Operation,
    Permission, RequestContext, ResponseCode, TokenFamily, BODY_LIMIT_BYTES, OPENAPI_JSON,
    OPENAPI_YAML,
};
use serde_json::{json, Value};
use tower::ServiceExt;

const OWNER: &str = "owner-token";
const VIEWER: &str = "viewer-token";
const INTEGRATION: &str = "integration-token";
const THROTTLED: &str = "throttled-token";

/// Answers every operation with the spec's example, except the scripted failures below; keeps
/// what `on_response` was told.
#[derive(Default)]
struct ScriptedBank {
    records: Mutex<Vec<String>>,
    /// `get_approval_policy` says it started here, then waits for `proceed`.
    started: tokio::sync::Notify,
    proceed: tokio::sync::Notify,
}

impl JsonApi for ScriptedBank {
    type Principal = &'static str;

    async fn authenticate(
        &self,
        family: TokenFamily,
        token: &str,
    ) -> Result<&'static str, ApiError> {
        match (family, token) {
            (TokenFamily::Dashboard, OWNER) => Ok("owner"),
            (TokenFamily::Dashboard, VIEWER) => Ok("viewer"),
            (TokenFamily::Integration, INTEGRATION) => Ok("integration"),
            (_, THROTTLED) => Err(ApiError::new(code("29")).with_retry_after_seconds(7)),
            _ => Err(ApiError::new(code("41"))),
        }
    }

    async fn authorize(&self, principal: &&'static str, _: Permission) -> Result<(), ApiError> {
        match *principal {
            "viewer" => Err(ApiError::new(code("43"))),
            _ => Ok(()),
        }
    }

    async fn call(
        &self,
        ctx: RequestContext<Option<&'static str>>,
        _body: Value,
    ) -> Result<JsonSuccess, ApiError> {
        match ctx.operation {
            Operation::GetProfile => Err(ApiError::internal("the database password is hunter2")),
            Operation::Logout => panic!("the bank fell over"),
            // What the stub `cargo xtask codegen` prints answers.
            Operation::GetWebhookConfiguration => Err(ApiError::not_implemented()),
            Operation::GetApprovalPolicy => {
                self.started.notify_one();
                self.proceed.notified().await;
                let example = example(ctx.operation);
                Ok(JsonSuccess {
                    data: example["data"].clone(),
                    pagination: None,
                })
            }
            Operation::NameEnquiry => {
                // A provider that never answers.
                std::future::pending::<()>().await;
                unreachable!()
            }
            operation => {
                let example = example(operation);
                Ok(JsonSuccess {
                    data: example["data"].clone(),
                    pagination: example.get("pagination").cloned(),
                })
            }
        }
    }

    async fn on_response(&self, record: &CallRecord<'_, &'static str>) {
        self.records.lock().unwrap().push(format!(
            "{} {} {} {:?} {}",
            record.operation.id(),
            record.http_status,
            record.response_code,
            record.principal,
            record.client_ip,
        ));
    }
}

fn code(code: &str) -> ResponseCode {
    ResponseCode::from_code(code).expect("the catalog has the code")
}

fn example(operation: Operation) -> Value {
    let spec: Value = serde_json::from_str(OPENAPI_JSON).unwrap();
    let content =
        &spec["paths"][operation.path()]["post"]["responses"]["200"]["content"]["application/json"];
    match content["examples"].as_object() {
        Some(examples) => examples.values().next().unwrap()["value"].clone(),
        None => content["example"].clone(),
    }
}

struct Answer {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("the answer is JSON")
    }

    /// Asserts the error envelope and status of a catalog code.
    fn assert_error(&self, expected_code: &str, message: &str) {
        assert_eq!(self.status.as_u16(), code(expected_code).http_status());
        assert_eq!(
            self.json(),
            json!({"status": false, "response_code": expected_code, "message": message, "data": null})
        );
        assert_eq!(self.headers["content-type"], "application/json");
        assert!(self.headers.contains_key("x-request-id"));
    }

    fn assert_default_error(&self, expected_code: &str) {
        self.assert_error(expected_code, code(expected_code).default_message());
    }
}

async fn send(bank: Arc<ScriptedBank>, request: Request<Body>) -> Answer {
    let app = router(Arc::new(JsonAdapter(bank)));
    let response: Response = app.oneshot(request).await.unwrap();
    let (parts, body) = response.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap()
        .to_vec();
    Answer {
        status: parts.status,
        headers: parts.headers,
        body,
    }
}

fn post(operation: Operation, token: Option<&str>) -> axum::http::request::Builder {
    let mut request = Request::post(operation.path()).header("content-type", "application/json");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    request
}

async fn call(operation: Operation, token: Option<&str>, body: &str) -> Answer {
    let request = post(operation, token)
        .body(Body::from(body.to_string()))
        .unwrap();
    send(Arc::default(), request).await
}

#[tokio::test]
async fn unknown_paths_get_04() {
    for method in ["POST", "GET"] {
        let request = Request::builder()
            .method(method)
            .uri("/api/v1/no_such_operation")
            .body(Body::empty())
            .unwrap();
        send(Arc::default(), request)
            .await
            .assert_default_error("04");
    }
}

#[tokio::test]
async fn wrong_methods_get_05_and_allow() {
    let request = Request::get(Operation::GenerateToken.path())
        .body(Body::empty())
        .unwrap();
    let answer = send(Arc::default(), request).await;
    answer.assert_default_error("05");
    assert_eq!(answer.headers["allow"], "POST");
}

#[tokio::test]
async fn bodies_that_are_not_json_get_07() {
    let request = Request::post(Operation::GenerateToken.path())
        .header("content-type", "text/plain")
        .body(Body::from("client_id=a"))
        .unwrap();
    send(Arc::default(), request)
        .await
        .assert_default_error("07");
}

#[tokio::test]
async fn json_with_a_charset_is_json() {
    let request = Request::post(Operation::FetchBanks.path())
        .header("content-type", "Application/JSON; charset=utf-8")
        .header("authorization", format!("Bearer {INTEGRATION}"))
        .body(Body::from("{}"))
        .unwrap();
    assert_eq!(send(Arc::default(), request).await.status, 200);
}

#[tokio::test]
async fn bodies_over_the_limit_get_08() {
    let big = format!("{{\"client_id\": \"{}\"}}", "a".repeat(BODY_LIMIT_BYTES));
    // With a Content-Length the router refuses before reading; without one, while reading.
    let declared = post(Operation::GenerateToken, None)
        .header("content-length", big.len())
        .body(Body::from(big.clone()))
        .unwrap();
    send(Arc::default(), declared)
        .await
        .assert_default_error("08");
    let streamed = post(Operation::GenerateToken, None)
        .body(Body::from(big))
        .unwrap();
    send(Arc::default(), streamed)
        .await
        .assert_default_error("08");
}

#[tokio::test]
async fn an_empty_body_means_an_empty_object() {
    let request = Request::post(Operation::FetchBanks.path())
        .header("authorization", format!("Bearer {INTEGRATION}"))
        .body(Body::empty())
        .unwrap();
    let answer = send(Arc::default(), request).await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.json(), example(Operation::FetchBanks));
}

#[tokio::test]
async fn malformed_json_gets_01() {
    let answer = call(Operation::GenerateToken, None, "{\"client_id\": ").await;
    assert_eq!(answer.status, 400);
    let message = answer.json()["message"].as_str().unwrap().to_string();
    assert!(
        message.starts_with("request body is not valid JSON: "),
        "{message}"
    );
}

#[tokio::test]
async fn validation_errors_name_the_field() {
    call(Operation::GenerateToken, None, "{}")
        .await
        .assert_error("01", "`client_id` is required");
    call(
        Operation::GenerateToken,
        None,
        r#"{"client_id": "a", "client_secret": "b", "colour": "red"}"#,
    )
    .await
    .assert_error("01", "unknown field `colour`");
    call(
        Operation::NameEnquiry,
        Some(INTEGRATION),
        r#"{"beneficiary_account_number": "12", "bank_code": "090823", "source_account_number": "1000000014"}"#,
    )
    .await
    .assert_error(
        "01",
        "`beneficiary_account_number`: must be at least 10 characters",
    );
}

#[tokio::test]
async fn idempotency_keys_are_validated_against_the_spec() {
    let request = post(Operation::CreateAccountApi, Some(INTEGRATION))
        .header("idempotency-key", "k".repeat(256))
        .body(Body::from("{}"))
        .unwrap();
    let answer = send(Arc::default(), request).await;
    assert_eq!(answer.status, 400);
    let message = answer.json()["message"].as_str().unwrap().to_string();
    assert!(
        message.starts_with("`Idempotency-Key` header: "),
        "{message}"
    );
}

#[tokio::test]
async fn tokens_are_checked_before_bodies() {
    for token in [None, Some("not-a-token")] {
        call(Operation::NameEnquiry, token, "not even JSON")
            .await
            .assert_default_error("41");
    }
    let request = Request::post(Operation::FetchBanks.path())
        .header("authorization", format!("Basic {INTEGRATION}"))
        .body(Body::empty())
        .unwrap();
    send(Arc::default(), request)
        .await
        .assert_default_error("41");
}

#[tokio::test]
async fn permissions_are_checked_before_bodies() {
    let operation = Operation::FundsTransfer;
    assert!(operation.permission().is_some());
    call(operation, Some(VIEWER), "{}")
        .await
        .assert_default_error("43");
}

#[tokio::test]
async fn throttling_sets_retry_after() {
    let answer = call(Operation::FetchBanks, Some(THROTTLED), "{}").await;
    answer.assert_default_error("29");
    assert_eq!(answer.headers["retry-after"], "7");
}

#[tokio::test]
async fn internal_errors_and_panics_keep_their_detail_to_themselves() {
    for operation in [Operation::GetProfile, Operation::Logout] {
        let answer = call(operation, Some(OWNER), "{}").await;
        answer.assert_default_error("96");
        assert!(!String::from_utf8_lossy(&answer.body).contains("hunter2"));
    }
}

#[tokio::test]
async fn an_operation_not_implemented_yet_gets_09_and_501() {
    let bank = Arc::new(ScriptedBank::default());
    let request = post(Operation::GetWebhookConfiguration, Some(OWNER))
        .body(Body::from("{}"))
        .unwrap();
    let answer = send(bank.clone(), request).await;
    assert_eq!(answer.status, StatusCode::NOT_IMPLEMENTED);
    answer.assert_error(
        "09",
        "Not implemented yet: this operation is in the spec but this server does not serve it",
    );
    let records = bank.records.lock().unwrap();
    assert!(
        records[0].starts_with("get_webhook_configuration 501 09 "),
        "{records:?}"
    );
}

/// Log lines written while `body` runs on this thread.
async fn logs_of<T>(body: impl std::future::Future<Output = T>) -> (T, String) {
    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Lines {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let lines = Lines::default();
    let writer = lines.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let output = {
        let _guard = tracing::subscriber::set_default(subscriber);
        body.await
    };
    let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
    (output, text)
}

#[tokio::test]
async fn an_internal_error_is_logged_with_its_detail_and_call_site_and_answered_without() {
    let (answer, log) = logs_of(call(Operation::GetProfile, Some(OWNER), "{}")).await;

    answer.assert_default_error("96");
    let body = String::from_utf8_lossy(&answer.body);
    assert!(!body.contains("hunter2") && !body.contains(".rs"), "{body}");
    assert!(log.contains("internal error"), "{log}");
    assert!(log.contains("the database password is hunter2"), "{log}");
    // `ScriptedBank::call`, in this file, made the error.
    assert!(log.contains(&format!("location={}:", file!())), "{log}");
    assert!(log.contains("operation=\"get_profile\""), "{log}");
}

#[tokio::test]
async fn request_ids_are_echoed_when_sane_and_made_up_otherwise() {
    let with_id = |id: &str| {
        Request::get("/nowhere")
            .header("x-request-id", id)
            .body(Body::empty())
            .unwrap()
    };
    let answer = send(Arc::default(), with_id("req-1.A_b")).await;
    assert_eq!(answer.headers["x-request-id"], "req-1.A_b");
    for insane in ["has space", &"x".repeat(129), ""] {
        let answer = send(Arc::default(), with_id(insane)).await;
        let id = answer.headers["x-request-id"].to_str().unwrap();
        assert!(uuid::Uuid::parse_str(id).is_ok(), "{id}");
    }
}

#[tokio::test]
async fn a_request_id_made_further_out_is_kept_by_the_router() {
    use axum::middleware::{from_fn, Next};
    // What the router's own request id step put on the response, seen from between the two.
    let seen = Arc::new(Mutex::new(None::<String>));
    let spy = seen.clone();
    let app = router(Arc::new(JsonAdapter(Arc::new(ScriptedBank::default()))))
        .layer(from_fn(move |mut request: Request<Body>, next: Next| {
            let spy = spy.clone();
            async move {
                // Were the router to make an id of its own, it would not see the client's.
                request.headers_mut().remove("x-request-id");
                let response = next.run(request).await;
                *spy.lock().unwrap() = response
                    .headers()
                    .get("x-request-id")
                    .map(|id| id.to_str().unwrap().to_string());
                response
            }
        }))
        .layer(from_fn(generated_server::assign_request_id));

    let request = Request::get("/nowhere")
        .header("x-request-id", "outer-1")
        .body(Body::empty())
        .unwrap();
    let response = app.oneshot(request).await.unwrap();

    assert_eq!(response.headers()["x-request-id"], "outer-1");
    assert_eq!(seen.lock().unwrap().as_deref(), Some("outer-1"));
}

#[tokio::test]
async fn on_response_hears_of_every_call_of_an_operation() {
    let bank = Arc::new(ScriptedBank::default());
    let peer: SocketAddr = "203.0.113.9:4000".parse().unwrap();
    let mut request = post(Operation::FetchBanks, Some(INTEGRATION))
        .body(Body::from("{}"))
        .unwrap();
    request.extensions_mut().insert(ConnectInfo(peer));
    send(bank.clone(), request).await;
    send(
        bank.clone(),
        post(Operation::FetchBanks, None)
            .body(Body::from("{}"))
            .unwrap(),
    )
    .await;
    send(
        bank.clone(),
        Request::get("/nowhere").body(Body::empty()).unwrap(),
    )
    .await;
    let unspecified = IpAddr::from([0, 0, 0, 0]);
    assert_eq!(
        *bank.records.lock().unwrap(),
        [
            "fetch_banks 200 00 Some(\"integration\") 203.0.113.9".to_string(),
            format!("fetch_banks 401 41 None {unspecified}"),
        ]
    );
}

#[tokio::test]
async fn a_call_whose_client_hung_up_still_finishes_and_reaches_on_response() {
    let bank = Arc::new(ScriptedBank::default());
    let request = post(Operation::GetApprovalPolicy, Some(OWNER))
        .body(Body::from("{}"))
        .unwrap();
    let client = tokio::spawn(send(bank.clone(), request));
    bank.started.notified().await;

    // The client goes away while the operation runs: its request future is dropped.
    client.abort();
    assert!(client.await.is_err_and(|failure| failure.is_cancelled()));
    bank.proceed.notify_one();

    let heard = async {
        while bank.records.lock().unwrap().is_empty() {
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), heard)
        .await
        .expect("on_response ran");
    assert_eq!(
        *bank.records.lock().unwrap(),
        ["get_approval_policy 200 00 Some(\"owner\") 0.0.0.0"]
    );
}

fn with_deadline(mut request: Request<Body>, after: Duration) -> Request<Body> {
    request
        .extensions_mut()
        .insert(Deadline(std::time::Instant::now() + after));
    request
}

/// Issue 56: a request not answered before its deadline is dropped, so nothing of it is kept:
/// the catalog's `timed_out` code (`97`, retry after `Retry-After`), never `96`.
#[tokio::test]
async fn an_operation_past_its_deadline_gets_97_and_is_still_told_to_on_response() {
    let bank = Arc::new(ScriptedBank::default());
    let request = post(Operation::NameEnquiry, Some(INTEGRATION))
        .body(Body::from(
            r#"{"beneficiary_account_number": "0123456789", "bank_code": "058152",
                "source_account_number": "1000000014"}"#,
        ))
        .unwrap();

    let (answer, log) = logs_of(send(
        bank.clone(),
        with_deadline(request, Duration::from_millis(200)),
    ))
    .await;

    answer.assert_default_error("97");
    assert_eq!(answer.headers["retry-after"], "2");
    assert!(log.contains("not answered before its deadline"), "{log}");
    assert_eq!(
        *bank.records.lock().unwrap(),
        ["name_enquiry 503 97 Some(\"integration\") 0.0.0.0"]
    );
}

#[tokio::test]
async fn a_body_that_does_not_arrive_by_the_deadline_gets_01() {
    let never_ending = futures_util::stream::pending::<Result<Vec<u8>, std::io::Error>>();
    let request = post(Operation::FetchBanks, Some(INTEGRATION))
        .body(Body::from_stream(never_ending))
        .unwrap();

    let answer = send(
        Arc::default(),
        with_deadline(request, Duration::from_millis(200)),
    )
    .await;

    answer.assert_error(
        "01",
        "the request body did not arrive within the request timeout",
    );
}

#[tokio::test]
async fn a_request_within_its_deadline_is_served_as_usual() {
    let request = post(Operation::FetchBanks, Some(INTEGRATION))
        .body(Body::from("{}"))
        .unwrap();
    let answer = send(
        Arc::default(),
        with_deadline(request, Duration::from_secs(60)),
    )
    .await;
    assert_eq!(answer.status, 200);
}

#[tokio::test]
async fn the_spec_and_its_documentation_are_served() {
    let get = |path: &str| Request::get(path).body(Body::empty()).unwrap();
    let yaml = send(Arc::default(), get("/openapi.yaml")).await;
    assert_eq!(yaml.status, 200);
    assert_eq!(yaml.body, OPENAPI_YAML.as_bytes());
    let json = send(Arc::default(), get("/openapi.json")).await;
    assert_eq!(json.headers["content-type"], "application/json");
    assert_eq!(json.json()["openapi"], "3.0.3");
    let docs = send(Arc::default(), get("/docs")).await;
    // Issue 56: the page is never framed by another, and runs only what this server sends.
    let policy = docs.headers["content-security-policy"].to_str().unwrap();
    for directive in [
        "frame-ancestors 'none'",
        "script-src 'self'",
        "default-src 'none'",
    ] {
        assert!(policy.contains(directive), "{policy}");
    }
    assert_eq!(docs.headers["x-frame-options"], "DENY");
    assert_eq!(docs.headers["x-content-type-options"], "nosniff");
    let page = String::from_utf8(docs.body).unwrap();
    assert!(page.contains(r#"<script src="docs/redoc.standalone.js"></script>"#));
    assert!(
        !page.contains("https://"),
        "the page must not load anything from elsewhere"
    );
    let script = send(Arc::default(), get("/docs/redoc.standalone.js")).await;
    assert_eq!(script.status, 200);
    assert!(script.body.len() > 100_000);
}

/// Issue 56: an answer may carry a secret (a token, a client secret shown once): no cache
/// keeps any, success or error, and no browser guesses its type.
#[tokio::test]
async fn answers_are_never_cached_or_sniffed() {
    let unknown = send(
        Arc::default(),
        Request::post("/api/v1/nowhere")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.headers["cache-control"], "no-store");
    assert_eq!(unknown.headers["x-content-type-options"], "nosniff");
}

#[tokio::test]
async fn docs_with_a_trailing_slash_redirects_to_the_page() {
    let response = send(
        Arc::default(),
        Request::get("/docs/").body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(response.status, 308);
    // Relative, as the page's own addresses are: `/docs/` + `../docs` is `/docs`.
    assert_eq!(response.headers["location"], "../docs");
    assert!(response.body.is_empty());
}
