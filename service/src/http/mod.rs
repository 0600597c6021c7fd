//! The HTTP edge: [`KoboApi`] (the one `impl Api`, in `api`), and around it the generated
//! router, the probes `/healthz` and `/readyz`, and one access-log line per request. [`app`]
//! builds it without a socket (tests drive it with `oneshot`); [`serve`] puts it on a listener
//! until shutdown.

pub mod api;

pub use api::KoboApi;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use generated_server::{Operation, ResponseCode, REQUEST_ID_HEADER};
use serde_json::json;
use tokio::net::TcpListener;

/// The whole HTTP surface of `kobo serve`.
pub fn app(api: Arc<KoboApi>) -> Router {
    let probes = Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .method_not_allowed_fallback(probe_method_not_allowed)
        .with_state(api.clone());
    generated_server::router(api)
        .merge(probes)
        .layer(axum::middleware::from_fn(access_log))
}

/// Serves `app` on `listener` until `shutdown` resolves, then lets requests in flight finish.
/// The router reads the client's address from the connection, so it is served with
/// `ConnectInfo`.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown)
    .await
}

/// Resolves on the first SIGINT (Ctrl-C) or SIGTERM (what orchestrators send).
pub async fn shutdown_signal() {
    let interrupt = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::error!(%error, "cannot listen for SIGINT");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut stream) => {
                stream.recv().await;
            }
            Err(error) => {
                tracing::error!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => tracing::info!("SIGINT received: shutting down"),
        () = terminate => tracing::info!("SIGTERM received: shutting down"),
    }
}

/// Liveness: the process answers. Never touches the database, so a slow database does not get
/// a healthy process restarted.
async fn healthz() -> Response {
    probe_response(StatusCode::OK, json!({"status": "ok"}))
}

/// Readiness: the database answers too. A load balancer sends traffic only while this is 200.
async fn readyz(State(api): State<Arc<KoboApi>>) -> Response {
    match api.store().ping().await {
        Ok(()) => probe_response(StatusCode::OK, json!({"status": "ready", "database": "ok"})),
        Err(error) => {
            tracing::warn!(%error, "readiness probe: the database does not answer");
            probe_response(
                StatusCode::SERVICE_UNAVAILABLE,
                json!({"status": "unavailable", "database": "unreachable"}),
            )
        }
    }
}

/// `POST /healthz` and the like: the API's error envelope (`05`), as on every other path.
async fn probe_method_not_allowed() -> Response {
    let code = ResponseCode::MethodNotAllowed;
    probe_response(
        StatusCode::METHOD_NOT_ALLOWED,
        json!({
            "status": false,
            "response_code": code.as_str(),
            "message": code.default_message(),
            "data": null,
        }),
    )
}

fn probe_response(status: StatusCode, body: serde_json::Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// One log line per request, written when the response is ready: request id, operation (or
/// the path when it is not one), HTTP status and latency. The generated router sets
/// `X-Request-Id`; routes outside it (the probes) get one here, so every response has one.
async fn access_log(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let client_ip = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(address)| address.ip().to_string());
    let mut response = next.run(request).await;
    let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
    let request_id = match response.headers().get(REQUEST_ID_HEADER) {
        Some(value) => value.to_str().unwrap_or("-").to_string(),
        None => {
            let id = uuid::Uuid::new_v4().to_string();
            let value = HeaderValue::from_str(&id).expect("a UUID is a valid header value");
            response.headers_mut().insert(REQUEST_ID_HEADER, value);
            id
        }
    };
    let status = response.status().as_u16();
    let operation = operation_at(&path).map(Operation::id).unwrap_or("-");
    tracing::info!(
        target: "kobo::access",
        request_id,
        operation,
        method = %method,
        path,
        status,
        latency_ms = (latency_ms * 1000.0).round() / 1000.0,
        client_ip = client_ip.as_deref().unwrap_or("-"),
        "request"
    );
    response
}

/// The operation served at `path`, if any.
fn operation_at(path: &str) -> Option<Operation> {
    Operation::ALL
        .iter()
        .copied()
        .find(|operation| operation.path() == path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_is_found_by_its_path() {
        for &operation in Operation::ALL {
            assert_eq!(operation_at(operation.path()), Some(operation));
        }
        assert_eq!(operation_at("/healthz"), None);
        assert_eq!(operation_at("/api/v1/auth/web/login/"), None);
    }
}
