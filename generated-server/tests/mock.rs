//! The mock (`generated_server::mock`): every example of every operation's responses can be
//! chosen with `Prefer: example=<name>` and comes back exactly as the spec shows it, with the
//! status of the response it is an example of; without a preference the first `200` example
//! answers; the requests still go through the router's token check and validation.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use generated_server::mock::{mock_router, MockApi, PREFER_HEADER};
use generated_server::Operation;
use serde_json::{json, Value};
use tower::ServiceExt;

fn app() -> (Arc<MockApi>, axum::Router) {
    let mock = Arc::new(MockApi::new());
    (mock.clone(), mock_router(mock))
}

/// A request to `operation` with its first request example as the body (valid by the lint),
/// a token of its family, an idempotency key, and the preference, if any.
fn request(
    operation: Operation,
    body: Option<Value>,
    prefer: Option<&str>,
    token: bool,
) -> Request<Body> {
    let body = body.unwrap_or_else(|| {
        operation
            .request_examples()
            .first()
            .map(|example| example.value())
            .unwrap_or_else(|| json!({}))
    });
    let mut builder = Request::post(operation.path())
        .header("content-type", "application/json")
        .header("idempotency-key", "8a0c5cc1-5f5e-4c39-9d4f-2a0d7a1b6c11");
    if token && operation.family().is_some() {
        builder = builder.header("authorization", "Bearer any-token-will-do");
    }
    if let Some(name) = prefer {
        builder = builder.header(PREFER_HEADER, format!("example={name}"));
    }
    builder.body(Body::from(body.to_string())).unwrap()
}

async fn send(app: &axum::Router, request: Request<Body>) -> (StatusCode, Value) {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    assert!(response.headers().contains_key("x-request-id"));
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, serde_json::from_slice(&bytes).unwrap())
}

#[tokio::test]
async fn every_example_of_every_operation_answers_when_preferred() {
    let (mock, app) = app();
    let mut answered = 0;
    let mut problems = Vec::new();
    for &operation in Operation::ALL {
        let examples = mock.examples(operation);
        if !examples.iter().any(|example| example.status == 200) {
            problems.push(format!("{}: no 200 example", operation.id()));
        }
        for example in examples {
            let (status, body) =
                send(&app, request(operation, None, Some(&example.name), true)).await;
            if status.as_u16() != example.status || body != example.value {
                problems.push(format!(
                    "{} example {}: expected {} {}, got {} {}",
                    operation.id(),
                    example.name,
                    example.status,
                    example.value,
                    status,
                    body
                ));
            }
            answered += 1;
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(answered > Operation::ALL.len(), "only {answered} examples");
}

#[tokio::test]
async fn without_a_preference_the_first_200_example_answers() {
    let (mock, app) = app();
    for &operation in Operation::ALL {
        let first = mock
            .examples(operation)
            .iter()
            .find(|example| example.status == 200)
            .unwrap();
        let (status, body) = send(&app, request(operation, None, None, true)).await;
        assert_eq!(status, StatusCode::OK, "{}", operation.id());
        assert_eq!(body, first.value, "{}", operation.id());
    }
}

#[tokio::test]
async fn an_unknown_example_name_is_refused_with_the_names_there_are() {
    let (_, app) = app();
    let (status, body) = send(
        &app,
        request(
            Operation::GenerateToken,
            None,
            Some("no_such_example"),
            true,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["response_code"], "01");
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("no_such_example"), "{message}");
    assert!(message.contains("wrong_credentials"), "{message}");
}

#[tokio::test]
async fn requests_are_still_checked_before_an_example_answers() {
    let (_, app) = app();
    // An invalid body is refused by the router's validation, whatever the preference.
    let (status, body) = send(
        &app,
        request(
            Operation::GenerateToken,
            Some(json!({"client_id": 42})),
            Some("token"),
            true,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["response_code"], "01");
    // No token: 41, as on the real server.
    let (status, body) = send(&app, request(Operation::GetProfile, None, None, false)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["response_code"], "41");
}
