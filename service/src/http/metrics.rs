//! `GET /metrics`: what Prometheus scrapes, in the OpenMetrics text format.
//!
//! Counted as requests are served ([`count`], a middleware): requests by operation and HTTP
//! status, and a latency histogram per operation. Read when scraped: the database pool (open
//! and idle connections) and the notification outbox (messages waiting to be sent, and the age
//! of the oldest). Each [`super::app`] has its own registry, so tests do not share counters.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use generated_server::ApiError;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use super::KoboApi;
use crate::outbox::{dispatcher, webhooks};

/// Upper bounds of the latency buckets, in seconds.
const LATENCY_BUCKETS: [f64; 12] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// The routes outside the API that get their own label; every other path is `other`, so a
/// scanner cannot grow the label set without bound.
const OTHER_ROUTES: [&str; 7] = [
    "/healthz",
    "/readyz",
    "/metrics",
    "/openapi.yaml",
    "/openapi.json",
    "/docs",
    "/docs/redoc.standalone.js",
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    operation: &'static str,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OperationLabels {
    operation: &'static str,
}

type LatencyFamily = Family<OperationLabels, Histogram, fn() -> Histogram>;

/// The registry of one app and the metrics it holds.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: LatencyFamily,
    pool_connections: Gauge,
    pool_idle: Gauge,
    database_up: Gauge,
    outbox_unsent: Gauge,
    outbox_oldest_unsent_age: Gauge<f64, AtomicU64>,
    webhooks_pending: Gauge,
    webhooks_oldest_pending_age: Gauge<f64, AtomicU64>,
    lost_commits: Family<OutcomeLabels, Gauge>,
}

/// What was found out about a commit whose answer was lost.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::default();
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "kobo_http_requests",
            "HTTP requests answered, by operation (or route) and HTTP status",
            requests.clone(),
        );
        let latency: LatencyFamily =
            Family::new_with_constructor(|| Histogram::new(LATENCY_BUCKETS));
        registry.register(
            "kobo_http_request_duration_seconds",
            "Time from the request's arrival to its response, by operation (or route)",
            latency.clone(),
        );
        let pool_connections = Gauge::default();
        registry.register(
            "kobo_db_pool_connections",
            "Open connections of the database pool, idle or in use",
            pool_connections.clone(),
        );
        let pool_idle = Gauge::default();
        registry.register(
            "kobo_db_pool_idle_connections",
            "Idle connections of the database pool",
            pool_idle.clone(),
        );
        let database_up = Gauge::default();
        registry.register(
            "kobo_db_up",
            "1 when the scrape's database queries answered, else 0 (the outbox figures are then those of the last good scrape)",
            database_up.clone(),
        );
        let outbox_unsent = Gauge::default();
        registry.register(
            "kobo_outbox_unsent",
            "Notifications waiting to be sent (not sent and not given up)",
            outbox_unsent.clone(),
        );
        let outbox_oldest_unsent_age = Gauge::<f64, AtomicU64>::default();
        registry.register(
            "kobo_outbox_oldest_unsent_age_seconds",
            "Age of the oldest notification waiting to be sent; 0 when none waits",
            outbox_oldest_unsent_age.clone(),
        );
        let webhooks_pending = Gauge::default();
        registry.register(
            "kobo_webhooks_pending",
            "Webhook events waiting for delivery (queued or waiting for a retry)",
            webhooks_pending.clone(),
        );
        let webhooks_oldest_pending_age = Gauge::<f64, AtomicU64>::default();
        registry.register(
            "kobo_webhooks_oldest_pending_age_seconds",
            "Age of the oldest webhook event waiting for delivery; 0 when none waits",
            webhooks_oldest_pending_age.clone(),
        );
        let lost_commits = Family::<OutcomeLabels, Gauge>::default();
        registry.register(
            "kobo_db_lost_commits",
            "Commits whose answer from the database was lost since the process started, by what Kobo found out before answering: kept, not_kept, or unknown (answered 98)",
            lost_commits.clone(),
        );
        Metrics {
            registry,
            lost_commits,
            webhooks_pending,
            webhooks_oldest_pending_age,
            requests,
            latency,
            pool_connections,
            pool_idle,
            database_up,
            outbox_unsent,
            outbox_oldest_unsent_age,
        }
    }

    fn observe(&self, operation: &'static str, status: u16, seconds: f64) {
        self.requests
            .get_or_create(&RequestLabels { operation, status })
            .inc();
        self.latency
            .get_or_create(&OperationLabels { operation })
            .observe(seconds);
    }

    /// Reads the pool and the outbox, then writes every metric as OpenMetrics text.
    async fn render(&self, api: &KoboApi) -> Result<String, std::fmt::Error> {
        let (connections, idle) = api.store().pool_size();
        self.pool_connections.set(i64::from(connections));
        self.pool_idle.set(i64::try_from(idle).unwrap_or(i64::MAX));
        let config = dispatcher::DispatcherConfig::default();
        match dispatcher::backlog(api.store(), &config).await {
            Ok(backlog) => {
                self.database_up.set(1);
                self.outbox_unsent.set(backlog.unsent);
                let age = backlog
                    .oldest_created_at
                    .map(|created| (api.clock().now() - created).num_milliseconds().max(0))
                    .unwrap_or(0);
                self.outbox_oldest_unsent_age.set(age as f64 / 1000.0);
            }
            Err(error) => {
                self.database_up.set(0);
                tracing::warn!(
                    error = format!("{error:#}"),
                    "metrics: cannot read the outbox"
                );
            }
        }
        match webhooks::backlog(api.store()).await {
            Ok(backlog) => {
                self.webhooks_pending.set(backlog.pending);
                let age = backlog
                    .oldest_created_at
                    .map(|created| (api.clock().now() - created).num_milliseconds().max(0))
                    .unwrap_or(0);
                self.webhooks_oldest_pending_age.set(age as f64 / 1000.0);
            }
            Err(error) => {
                self.database_up.set(0);
                tracing::warn!(
                    error = %error.chain(),
                    "metrics: cannot read the webhook backlog"
                );
            }
        }
        let lost = api.store().lost_commits();
        for (outcome, count) in [
            ("kept", lost.kept),
            ("not_kept", lost.not_kept),
            ("unknown", lost.unknown),
        ] {
            self.lost_commits
                .get_or_create(&OutcomeLabels { outcome })
                .set(i64::try_from(count).unwrap_or(i64::MAX));
        }
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)?;
        Ok(text)
    }
}

/// The label of a request: its operation's id, one of [`OTHER_ROUTES`], or `other`.
pub fn route_label(path: &str) -> &'static str {
    if let Some(operation) = super::operation_at(path) {
        return operation.id();
    }
    OTHER_ROUTES
        .iter()
        .copied()
        .find(|route| *route == path)
        .unwrap_or("other")
}

/// Middleware: counts the request and its latency once it is answered.
pub async fn count(State(metrics): State<Arc<Metrics>>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let operation = route_label(request.uri().path());
    let response = next.run(request).await;
    metrics.observe(
        operation,
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}

/// `GET /metrics`.
pub async fn scrape(State((api, metrics)): State<(Arc<KoboApi>, Arc<Metrics>)>) -> Response {
    match metrics.render(&api).await {
        Ok(text) => {
            let mut response = text.into_response();
            let headers = response.headers_mut();
            headers.insert(
                CONTENT_TYPE,
                HeaderValue::from_static(
                    "application/openmetrics-text; version=1.0.0; charset=utf-8",
                ),
            );
            headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response
        }
        Err(error) => {
            ApiError::internal(format!("cannot encode the metrics: {error}")).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use generated_server::Operation;

    #[test]
    fn labels_are_operations_known_routes_or_other() {
        assert_eq!(
            route_label(Operation::GetProfile.path()),
            Operation::GetProfile.id()
        );
        assert_eq!(route_label("/healthz"), "/healthz");
        assert_eq!(route_label("/wp-admin/setup.php"), "other");
    }
}
