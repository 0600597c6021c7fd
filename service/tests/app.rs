//! `kobo::http::app`, driven without a socket: the probes, and the generated router behind the
//! access-log layer.

use axum::body::Body;
use axum::http::{Request, StatusCode};
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
    kit.store.pool().close().await;

    let (status, _, body) = send(&app, get("/readyz")).await;

    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(body["status"], "unavailable");
    // Liveness does not depend on the database.
    let (status, _, _) = send(&app, get("/healthz")).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn the_api_is_served_behind_the_access_log() {
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
