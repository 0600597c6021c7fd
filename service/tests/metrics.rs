//! `GET /metrics` of `kobo::http::app`: what was served, the database pool and the outbox, in
//! the text Prometheus scrapes.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use generated_server::Operation;
use kobo::on_both_stores;
use kobo::platform::permissions::VIEWER_ROLE_ID;
use kobo::testkit::TestKit;
use tower::ServiceExt;

async fn send(app: &axum::Router, request: Request<Body>) -> (StatusCode, String, String) {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|value| value.to_str().unwrap().to_string())
        .unwrap_or_default();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (
        status,
        content_type,
        String::from_utf8(bytes.to_vec()).unwrap(),
    )
}

/// The value of the sample named exactly `series` (name and labels).
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .filter_map(|line| line.strip_prefix(series))
        .find_map(|rest| rest.strip_prefix(' '))
        .map(|value| value.trim().parse().expect("a number"))
}

async fn requests_are_counted_by_operation_and_the_outbox_is_measured(kit: TestKit) {
    let app = kobo::http::app(kit.api.clone());
    // An invitation: its email waits in the outbox (no SMTP in tests).
    kit.invite(
        &kit.owner_token,
        "ife.olawale@adaezefoods.ng",
        VIEWER_ROLE_ID,
    )
    .await;
    let profile = || {
        Request::post(Operation::GetProfile.path())
            .header("content-type", "application/json")
            .header("authorization", format!("Bearer {}", kit.owner_token))
            .body(Body::from("{}"))
            .unwrap()
    };
    assert_eq!(send(&app, profile()).await.0, StatusCode::OK);
    assert_eq!(send(&app, profile()).await.0, StatusCode::OK);
    let unauthenticated = Request::post(Operation::GetProfile.path())
        .header("content-type", "application/json")
        .body(Body::from("{}"))
        .unwrap();
    assert_eq!(
        send(&app, unauthenticated).await.0,
        StatusCode::UNAUTHORIZED
    );
    let nowhere = Request::get("/wp-login.php").body(Body::empty()).unwrap();
    assert_eq!(send(&app, nowhere).await.0, StatusCode::NOT_FOUND);

    let scrape = Request::get("/metrics").body(Body::empty()).unwrap();
    let (status, content_type, text) = send(&app, scrape).await;

    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(content_type.starts_with("application/openmetrics-text"));
    let get_profile = |status: u16| {
        format!("kobo_http_requests_total{{operation=\"get_profile\",status=\"{status}\"}}")
    };
    assert_eq!(sample(&text, &get_profile(200)), Some(2.0), "{text}");
    assert_eq!(sample(&text, &get_profile(401)), Some(1.0), "{text}");
    assert_eq!(
        sample(
            &text,
            "kobo_http_requests_total{operation=\"other\",status=\"404\"}"
        ),
        Some(1.0),
        "an unknown path is `other`, not its own label: {text}"
    );
    assert_eq!(
        sample(
            &text,
            "kobo_http_request_duration_seconds_count{operation=\"get_profile\"}"
        ),
        Some(3.0),
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            "kobo_http_request_duration_seconds_bucket{le=\"+Inf\",operation=\"get_profile\"}"
        ),
        Some(3.0),
        "{text}"
    );
    assert_eq!(sample(&text, "kobo_db_up"), Some(1.0), "{text}");
    assert!(
        sample(&text, "kobo_db_pool_connections").unwrap() >= 1.0,
        "{text}"
    );
    assert!(
        sample(&text, "kobo_db_pool_idle_connections").is_some(),
        "{text}"
    );
    assert!(
        sample(&text, "kobo_outbox_unsent").unwrap() >= 1.0,
        "{text}"
    );
    assert!(
        sample(&text, "kobo_outbox_oldest_unsent_age_seconds").unwrap() >= 0.0,
        "{text}"
    );
    assert!(
        sample(&text, "kobo_webhooks_pending").is_some()
            && sample(&text, "kobo_webhooks_oldest_pending_age_seconds").is_some(),
        "{text}"
    );
}

on_both_stores!(requests_are_counted_by_operation_and_the_outbox_is_measured);
