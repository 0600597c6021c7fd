//! `kobo::http::app`, driven without a socket: the probes, and the generated router behind the
//! request id, trace span and access-log layers.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use kobo::http::HttpConfig;
use kobo::testkit::TestKit;
use serde_json::{json, Value};
use tower::ServiceExt;

async fn send(app: &axum::Router, request: Request<Body>) -> (StatusCode, Option<String>, Value) {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let request_id = response
        .headers()
        .get("x-request-id")
        .map(|value| value.to_str().unwrap().to_string());
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, request_id, body)
}

fn get(path: &str) -> Request<Body> {
    Request::get(path).body(Body::empty()).unwrap()
}

#[tokio::test]
async fn the_probes_answer_small_json_bodies_with_a_request_id() {
    let kit = TestKit::sqlite().await;
    let app = kobo::http::app(kit.api.clone());

    let (status, request_id, body) = send(&app, get("/healthz")).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"status": "ok"})));
    assert!(request_id.is_some());

    let (status, _, body) = send(&app, get("/readyz")).await;
    assert_eq!(
        (status, body),
        (StatusCode::OK, json!({"status": "ready", "database": "ok"}))
    );

    let (status, request_id, body) =
        send(&app, Request::post("/healthz").body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(body["response_code"], "05");
    assert_eq!(body["data"], Value::Null);
    assert!(request_id.is_some());
}

#[tokio::test]
async fn readiness_fails_when_the_database_does_not_answer() {
    let kit = TestKit::sqlite().await;
    let app = kobo::http::app(kit.api.clone());
    kit.store.sqlite_pool().unwrap().close().await;

    let (status, _, body) = send(&app, get("/readyz")).await;

    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(body["status"], "unavailable");
    // Liveness does not depend on the database.
    let (status, _, _) = send(&app, get("/healthz")).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn the_api_is_served_behind_the_request_id_and_access_log() {
    let kit = TestKit::sqlite().await;
    let app = kobo::http::app(kit.api.clone());

    let request = Request::post("/api/v1/auth/web/get_profile")
        .header("content-type", "application/json")
        .header("authorization", format!("Bearer {}", kit.owner_token))
        .header("x-request-id", "probe-42")
        .body(Body::from("{}"))
        .unwrap();
    let (status, request_id, body) = send(&app, request).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["business"]["name"], "Adaeze Foods Ltd");
    assert_eq!(
        request_id.as_deref(),
        Some("probe-42"),
        "the router's id is kept"
    );

    let (status, request_id, body) = send(&app, get("/nowhere")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["response_code"], "04");
    assert!(request_id.is_some());

    let (status, _, _) = send(&app, get("/openapi.json")).await;
    assert_eq!(status, StatusCode::OK);
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
        .with_env_filter("info")
        .finish();
    let output = {
        let _guard = tracing::subscriber::set_default(subscriber);
        body.await
    };
    let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
    (output, text)
}

#[tokio::test]
async fn every_line_of_a_request_carries_its_id_and_operation_and_one_line_closes_it() {
    let kit = TestKit::sqlite().await;
    let app = kobo::http::app(kit.api.clone());
    let request = Request::post("/api/v1/auth/web/get_profile")
        .header("content-type", "application/json")
        .header("authorization", format!("Bearer {}", kit.owner_token))
        .header("x-request-id", "trace-1")
        .body(Body::from("{}"))
        .unwrap();

    let ((status, _, _), log) = logs_of(send(&app, request)).await;

    assert_eq!(status, StatusCode::OK);
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 1, "one access line: {log}");
    let line = lines[0];
    for field in [
        "request_id=trace-1",
        "operation=get_profile",
        "method=POST",
        "path=/api/v1/auth/web/get_profile",
        "kobo::access",
        "status=200",
        "latency_ms=",
    ] {
        assert!(line.contains(field), "{field} in {line}");
    }
}

#[tokio::test]
async fn a_line_written_inside_a_probe_carries_the_request_id_made_for_it() {
    let kit = TestKit::sqlite().await;
    let app = kobo::http::app(kit.api.clone());
    kit.store.sqlite_pool().unwrap().close().await;

    let ((status, request_id, _), log) = logs_of(send(&app, get("/readyz"))).await;

    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    let request_id = request_id.expect("the probe's answer has an id");
    let warning = log
        .lines()
        .find(|line| line.contains("the database does not answer"))
        .unwrap_or_else(|| panic!("the probe's warning: {log}"));
    assert!(
        warning.contains(&format!("request_id={request_id}")),
        "{warning}"
    );
    assert!(warning.contains("path=/readyz"), "{warning}");
    let access = log
        .lines()
        .find(|line| line.contains("status=503"))
        .unwrap();
    assert!(
        access.contains(&format!("request_id={request_id}")),
        "{access}"
    );
}

fn profile_request(kit: &TestKit, body: Body) -> Request<Body> {
    Request::post("/api/v1/auth/web/get_profile")
        .header("content-type", "application/json")
        .header("authorization", format!("Bearer {}", kit.owner_token))
        .body(body)
        .unwrap()
}

#[tokio::test]
async fn past_the_bound_on_requests_in_flight_the_api_answers_29_and_the_probes_still_answer() {
    let kit = TestKit::sqlite().await;
    let config = HttpConfig {
        max_concurrent_requests: 1,
        ..HttpConfig::default()
    };
    let app = kobo::http::app_with(kit.api.clone(), &config);
    // The first request holds the only place while its body is on its way.
    let (reading, is_reading) = tokio::sync::oneshot::channel();
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    let body = Body::from_stream(futures_util::stream::once(async move {
        let _ = reading.send(());
        let _ = released.await;
        Ok::<_, std::io::Error>("{}")
    }));
    let first = tokio::spawn(app.clone().oneshot(profile_request(&kit, body)));
    is_reading.await.unwrap();

    let turned_away = app
        .clone()
        .oneshot(profile_request(&kit, Body::from("{}")))
        .await
        .unwrap();
    assert_eq!(turned_away.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(turned_away.headers()["retry-after"], "1");
    assert!(turned_away.headers().contains_key("x-request-id"));
    let bytes = axum::body::to_bytes(turned_away.into_body(), usize::MAX)
        .await
        .unwrap();
    let envelope: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(envelope["response_code"], "29");
    assert_eq!(envelope["status"], false);
    assert_eq!(envelope["data"], Value::Null);
    let (status, _, _) = send(&app, get("/healthz")).await;
    assert_eq!(status, StatusCode::OK, "the probes are not turned away");

    release.send(()).unwrap();
    let first = first.await.unwrap().unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    let (status, _, _) = send(&app, profile_request(&kit, Body::from("{}"))).await;
    assert_eq!(status, StatusCode::OK, "the place is free again");
}

#[tokio::test]
async fn a_body_still_on_its_way_at_the_request_timeout_gets_the_envelope() {
    let kit = TestKit::sqlite().await;
    let config = HttpConfig {
        request_timeout: Duration::from_millis(300),
        ..HttpConfig::default()
    };
    let app = kobo::http::app_with(kit.api.clone(), &config);
    let never_ending = futures_util::stream::pending::<Result<&'static str, std::io::Error>>();

    let (status, request_id, body) =
        send(&app, profile_request(&kit, Body::from_stream(never_ending))).await;

    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body,
        json!({"status": false, "response_code": "01", "data": null,
               "message": "the request body did not arrive within the request timeout"})
    );
    assert!(request_id.is_some());
}
