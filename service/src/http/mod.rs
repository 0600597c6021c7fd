//! The HTTP edge: [`KoboApi`] (the one `impl Api`, in `api`), and around it the generated
//! router, the probes `/healthz` and `/readyz`, a trace span and one access-log line per
//! request. [`app`]
//! builds it without a socket (tests drive it with `oneshot`); [`serve`] puts it on a listener
//! until shutdown.

pub(crate) mod answer;
pub(crate) mod api;
mod connections;
pub(crate) mod dashboard;
pub(crate) mod metrics;
pub mod provider;
mod state;

pub use api::KoboApi;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::error_handling::HandleErrorLayer;
use axum::extract::{ConnectInfo, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderValue, Request, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use generated_server::{ApiError, Deadline, Operation, RequestId, ResponseCode};
use metrics::Metrics;
use serde_json::json;
use tokio::net::TcpListener;
use tower::limit::GlobalConcurrencyLimitLayer;
use tower::load_shed::error::Overloaded;
use tower::{BoxError, ServiceBuilder};
use tower_http::trace::TraceLayer;
use tracing::Span;

/// The numbers of the HTTP edge: `kobo serve`'s flags, and what [`app`] and [`serve`] use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpConfig {
    /// From a request's arrival to its answer: the body must have arrived by then (else `01`),
    /// and the operation finished (else `96`).
    pub request_timeout: Duration,
    /// API requests served at once; more are answered `29` with `Retry-After` at once.
    pub max_concurrent_requests: usize,
    /// From a connection's opening, or from the first byte of a request after an idle spell,
    /// to the end of that request's headers.
    pub header_read_timeout: Duration,
    /// How long a kept-alive connection may wait for its next request.
    pub idle_timeout: Duration,
    /// Open connections; one more is closed as soon as it is accepted.
    pub max_connections: usize,
    /// After the shutdown signal: how long requests in flight may take before the server
    /// returns anyway.
    pub shutdown_timeout: Duration,
    /// After the shutdown signal and before the server stops accepting: how long it keeps
    /// serving while `/readyz` answers `503`, so that a load balancer probing it takes it out
    /// of rotation first ([`Draining`]).
    pub drain: Duration,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            request_timeout: Duration::from_secs(30),
            max_concurrent_requests: 128,
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 1000,
            shutdown_timeout: Duration::from_secs(40),
            drain: Duration::ZERO,
        }
    }
}

/// Whether the process is stopping: from [`Draining::start`] (at SIGTERM) `/readyz` answers
/// `503`, so that a load balancer sends the process nothing new, while the requests that still
/// come are served until it stops accepting ([`HttpConfig::drain`]).
#[derive(Debug, Default)]
pub struct Draining(std::sync::atomic::AtomicBool);

impl Draining {
    pub fn start(&self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn is_on(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// How long a client is told to wait when the server is at `max_concurrent_requests`.
const OVERLOADED_RETRY_AFTER_SECONDS: u64 = 1;

/// The whole HTTP surface of `kobo serve`, with the default [`HttpConfig`].
pub fn app(api: Arc<KoboApi>) -> Router {
    app_with(api, &HttpConfig::default())
}

/// The whole HTTP surface of `kobo serve`.
///
/// Layers, from the socket in: the request id (made here, once, for every route: the generated
/// router keeps it), the request's trace span and access-log line, the metrics, the request's
/// [`Deadline`], then the routes: the API (behind the bound on requests in flight), the probes
/// and `/metrics` (never turned away, so a busy server is not taken for a dead one), and the
/// Dashboard's static files at `/dashboard/` (`dashboard`).
pub fn app_with(api: Arc<KoboApi>, config: &HttpConfig) -> Router {
    let metrics = Arc::new(Metrics::new());
    let probes = Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .method_not_allowed_fallback(probe_method_not_allowed)
        .with_state(api.clone());
    let scrape = Router::new()
        .route("/metrics", get(metrics::scrape))
        .method_not_allowed_fallback(probe_method_not_allowed)
        .with_state((api.clone(), metrics.clone()));
    let request_timeout = config.request_timeout;
    let api_for_provider = api.clone();
    generated_server::router(api)
        .layer(
            ServiceBuilder::new()
                .layer(HandleErrorLayer::new(overloaded))
                .load_shed()
                .layer(GlobalConcurrencyLimitLayer::new(
                    config.max_concurrent_requests,
                )),
        )
        .merge(probes)
        .merge(scrape)
        .merge(dashboard::routes())
        .merge(provider::routes(api_for_provider))
        .layer(axum::middleware::from_fn(
            move |mut request: Request<Body>, next: Next| async move {
                let deadline = Deadline(std::time::Instant::now() + request_timeout);
                request.extensions_mut().insert(deadline);
                next.run(request).await
            },
        ))
        .layer(axum::middleware::from_fn_with_state(
            metrics,
            metrics::count,
        ))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(request_span)
                .on_request(())
                .on_response(access_log)
                .on_body_chunk(())
                .on_eos(())
                .on_failure(()),
        )
        .layer(axum::middleware::from_fn(
            generated_server::assign_request_id,
        ))
}

/// The answer of the bound on requests in flight: `29` with `Retry-After` when it is full.
async fn overloaded(error: BoxError) -> Response {
    if error.is::<Overloaded>() {
        ApiError::new(ResponseCode::TooManyRequests)
            .with_retry_after_seconds(OVERLOADED_RETRY_AFTER_SECONDS)
            .into_response()
    } else {
        ApiError::internal(error).into_response()
    }
}

/// Serves `app` on `listener` until `shutdown` resolves, with the default [`HttpConfig`].
pub async fn serve(
    listener: TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(listener, app, shutdown, &HttpConfig::default()).await
}

/// Serves `app` on `listener` until `shutdown` resolves, then stops accepting, lets requests in
/// flight finish for up to `config.shutdown_timeout`, and returns. Connections are bounded in
/// number and time (`connections` says how); each request carries `ConnectInfo` with the
/// client's address.
pub async fn serve_with(
    listener: TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
    config: &HttpConfig,
) -> std::io::Result<()> {
    connections::serve(listener, app, shutdown, config).await
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

/// How long `/readyz` waits for the database.
const READINESS_DEADLINE: std::time::Duration = std::time::Duration::from_secs(1);

/// Readiness: the database answers too, and the process is not stopping (`draining` once
/// SIGTERM arrived, `kobo serve --drain-seconds`). A load balancer sends traffic only while
/// this is 200.
async fn readyz(State(api): State<Arc<KoboApi>>) -> Response {
    if api.draining().is_on() {
        return probe_response(
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"status": "draining"}),
        );
    }
    // A database that is down makes the pool wait for its acquire timeout (10 s); a probe must
    // say so within its own deadline, well under an orchestrator's usual probe timeout.
    let ping = tokio::time::timeout(READINESS_DEADLINE, api.store().ping()).await;
    let answer = match ping {
        Ok(answer) => answer.map_err(|error| error.to_string()),
        Err(_) => Err(format!("no answer within {READINESS_DEADLINE:?}")),
    };
    match answer {
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
    ApiError::new(ResponseCode::MethodNotAllowed).into_response()
}

fn probe_response(status: StatusCode, body: serde_json::Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The span of one request: every log line written while it is served carries its request id,
/// operation (or `-` off the API), method, path and client address.
fn request_span(request: &Request<Body>) -> Span {
    let path = request.uri().path();
    let request_id = request
        .extensions()
        .get::<RequestId>()
        .map(RequestId::as_str);
    let client_ip = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(address)| address.ip());
    tracing::info_span!(
        target: "kobo::http",
        "request",
        request_id = %request_id.unwrap_or("-"),
        operation = %operation_at(path).map(Operation::id).unwrap_or("-"),
        method = %request.method(),
        path = %path,
        client_ip = client_ip.map(tracing::field::display),
    )
}

/// The access log: one line per request, in its span, when the response is ready.
fn access_log(response: &Response, latency: Duration, _span: &Span) {
    tracing::info!(
        target: "kobo::access",
        status = response.status().as_u16(),
        latency_ms = (latency.as_secs_f64() * 1_000_000.0).round() / 1000.0,
        "request"
    );
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
