//! Webhook delivery: every domain event (`events`, written with its change) is POSTed to its
//! business's endpoint, signed the Standard Webhooks way ([`signing`](super::signing)).
//!
//! A pass of the [`WebhookDispatcher`]:
//! 1. marks `skipped` the due events of businesses with no active configuration;
//! 2. picks due events fairly (at most `per_endpoint` per business, oldest first across
//!    businesses), so one business's backlog never holds up another's;
//! 3. claims them by moving their `next_attempt_at` past a lease, in one conditional update
//!    (several `kobo` processes share the work, and none sends an event while another has it);
//! 4. spawns one task per claimed event, bounded per endpoint and in all, and returns without
//!    waiting: a slow endpoint holds only its own permits.
//!
//! An attempt resolves the endpoint's host and checks every address ([`destination`]) before
//! connecting to exactly those addresses, waits at most the policy's timeout, follows no
//! redirect, counts only a 2xx as delivered and records itself in `webhook_attempts`. A failed
//! event is retried on the spec's schedule (with jitter) until its budget of attempts is spent,
//! then marked `failed`. A process that dies mid-attempt leaves the lease to expire; the event is
//! then sent again (delivery is at least once; receivers de-duplicate on `webhook-id`).

pub mod destination;
pub mod signing;

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use chrono::{DateTime, SecondsFormat, Utc};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::connect::dns::Name;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::net::SocketAddr;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;

use self::destination::{Policy, SharedResolver, SystemResolver};
use crate::datastore::events::{self, AttemptMade};
use crate::datastore::{webhook_endpoints, Conn};
use crate::error::{Error, OrInternal};
use crate::kernel::clock::Clock;
use crate::kernel::config::{Environment, WebhookPolicy};
use crate::kernel::secrets::random_bytes;
use crate::kernel::store::Store;

/// The kind sent by `test_webhook`, whatever the subscription.
pub const TEST_EVENT: &str = "webhook.test";
/// The most of an answer's body kept per attempt.
pub const RESPONSE_BODY_KEEP: usize = 1024;
/// The longest `last_error` / attempt error kept, in characters.
const ERROR_LENGTH_MAX: usize = 500;

/// One business's endpoint, as stored.
#[derive(Clone, Debug)]
pub struct Endpoint {
    pub url: String,
    pub is_active: bool,
    pub ip_whitelist: Vec<String>,
    pub event_types: Vec<String>,
    pub secret: String,
    pub previous_secret: Option<String>,
    pub previous_secret_expires_at: Option<DateTime<Utc>>,
}

impl Endpoint {
    /// Whether events of `kind` go to this endpoint.
    pub fn subscribes_to(&self, kind: &str) -> bool {
        kind == TEST_EVENT
            || self.event_types.is_empty()
            || self.event_types.iter().any(|t| t == kind)
    }

    /// The keys that sign a delivery at `now`: the current secret, and the previous one while
    /// its overlap lasts.
    pub fn signing_keys(&self, now: DateTime<Utc>) -> Result<Vec<Vec<u8>>, String> {
        let mut keys = vec![signing::key_of(&self.secret)?];
        if let (Some(previous), Some(until)) =
            (&self.previous_secret, self.previous_secret_expires_at)
        {
            if now < until {
                keys.push(signing::key_of(previous)?);
            }
        }
        Ok(keys)
    }
}

/// Reads the endpoint of `business_id`, if it has one.
pub async fn endpoint_of(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
) -> Result<Option<Endpoint>, Error> {
    let endpoint = webhook_endpoints::find_endpoint(conn, business_id).await?;
    Ok(endpoint.map(|row| Endpoint {
        url: row.url,
        is_active: row.is_active,
        ip_whitelist: row.ip_whitelist,
        event_types: row.event_types,
        secret: row.secret,
        previous_secret: row.previous_secret,
        previous_secret_expires_at: row.previous_secret_expires_at,
    }))
}

/// The exact bytes POSTed for an event: `{"id","type","timestamp","data"}`, `data` being the
/// stored payload verbatim, so every attempt sends the same body.
pub fn body_of(id: &str, kind: &str, created_at: DateTime<Utc>, payload: &str) -> String {
    format!(
        "{{\"id\":{},\"type\":{},\"timestamp\":{},\"data\":{}}}",
        serde_json::Value::from(id),
        serde_json::Value::from(kind),
        serde_json::Value::from(created_at.to_rfc3339_opts(SecondsFormat::AutoSi, true)),
        payload
    )
}

/// Events waiting for delivery (queued or waiting for a retry), for `/metrics`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    pub pending: i64,
    /// When the oldest of them was written; `None` when none waits.
    pub oldest_created_at: Option<DateTime<Utc>>,
}

/// The webhook [`Backlog`] of every business.
pub async fn backlog(store: &Store) -> Result<Backlog, Error> {
    let pending = events::pending(store).await?;
    Ok(Backlog {
        pending: pending.count,
        oldest_created_at: pending.oldest_created_at,
    })
}

/// What one pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pass {
    /// Events marked `skipped` because their business has no active endpoint.
    pub skipped: u64,
    /// Events claimed and handed to a delivery task.
    pub claimed: usize,
}

/// How one attempt ended.
#[derive(Debug)]
struct Outcome {
    response_status: Option<u16>,
    error: Option<String>,
    latency_ms: i64,
    response_body: Option<String>,
    url: String,
}

impl Outcome {
    fn delivered(&self) -> bool {
        self.error.is_none()
    }
}

/// Sends due events to their endpoints (see the module documentation).
pub struct WebhookDispatcher {
    store: Store,
    clock: Clock,
    policy: WebhookPolicy,
    environment: Environment,
    resolver: SharedResolver,
    tls: rustls::ClientConfig,
    /// One semaphore per business with deliveries in flight in this process.
    endpoints: Mutex<HashMap<String, Arc<Semaphore>>>,
    /// HTTP clients by destination (scheme, host, port and the checked addresses), so that
    /// deliveries to one endpoint reuse its connections. A client only ever connects to the
    /// addresses of its key: a host that resolves elsewhere gets another client.
    clients: Mutex<HashMap<String, HttpClient>>,
    in_flight: Arc<Semaphore>,
}

impl WebhookDispatcher {
    pub fn new(
        store: Store,
        clock: Clock,
        policy: WebhookPolicy,
        environment: Environment,
    ) -> Arc<WebhookDispatcher> {
        WebhookDispatcher::with_resolver(
            store,
            clock,
            policy,
            environment,
            Arc::new(SystemResolver),
        )
    }

    /// The same, resolving host names with `resolver` (tests use it to play DNS rebinding).
    pub fn with_resolver(
        store: Store,
        clock: Clock,
        policy: WebhookPolicy,
        environment: Environment,
        resolver: SharedResolver,
    ) -> Arc<WebhookDispatcher> {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("ring supports the default TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
        Arc::new(WebhookDispatcher {
            store,
            clock,
            in_flight: Arc::new(Semaphore::new(policy.in_flight_max)),
            policy,
            environment,
            resolver,
            tls,
            endpoints: Mutex::new(HashMap::new()),
            clients: Mutex::new(HashMap::new()),
        })
    }

    /// Passes until `shutdown`: again as soon as an attempt ends (its permits free a slot), else
    /// every `poll_interval`; then waits (bounded by the timeout) for the attempts in flight,
    /// so a clean stop records their outcomes.
    pub async fn run(self: Arc<Self>, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        let mut tasks = JoinSet::new();
        loop {
            match self.pass(&mut tasks).await {
                Ok(pass) if pass != Pass::default() => tracing::debug!(?pass, "webhooks"),
                Ok(_) => {}
                Err(error) => tracing::warn!(error = %error.chain(), "webhook pass failed"),
            }
            tokio::select! {
                () = &mut shutdown => break,
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {
                    while tasks.try_join_next().is_some() {}
                }
                () = tokio::time::sleep(self.policy.poll_interval) => {}
            }
        }
        let deadline = tokio::time::Instant::now() + self.policy.timeout + Duration::from_secs(1);
        while tokio::time::timeout_at(deadline, tasks.join_next())
            .await
            .is_ok_and(|joined| joined.is_some())
        {}
    }

    /// Passes and waits for every attempt until nothing is due: what tests call instead of
    /// running the loop. Returns the number of attempts made.
    pub async fn deliver_due(self: &Arc<Self>) -> Result<usize, Error> {
        let mut attempts = 0;
        loop {
            let mut tasks = JoinSet::new();
            let pass = self.pass(&mut tasks).await?;
            while tasks.join_next().await.is_some() {}
            attempts += pass.claimed;
            if pass.claimed == 0 {
                return Ok(attempts);
            }
        }
    }

    /// One pass at the clock's time: skips, claims and spawns (see the module documentation).
    pub async fn pass(self: &Arc<Self>, tasks: &mut JoinSet<()>) -> Result<Pass, Error> {
        let now = self.clock.now();
        let mut pass = Pass {
            skipped: self.skip_unconfigured(now).await?,
            claimed: 0,
        };
        let due = events::due(
            &self.store,
            now,
            self.policy.per_endpoint as i64,
            self.policy.in_flight_max as i64,
        )
        .await?;
        // Permits first (this endpoint, or this process, may be at its bound), then one claim
        // for all of them.
        let mut wanted = HashMap::new();
        for events::Due { id, business_id } in due {
            if let Some(permits) = self.permits_for(&business_id) {
                wanted.insert(id, (business_id, permits));
            }
        }
        let ids: Vec<&str> = wanted.keys().map(String::as_str).collect();
        let (lease, claimed) = self.claim(&ids, now).await?;
        for id in claimed {
            let Some((business_id, permits)) = wanted.remove(&id) else {
                continue;
            };
            pass.claimed += 1;
            let dispatcher = Arc::clone(self);
            tasks.spawn(async move {
                let _permits = permits;
                if let Err(error) = dispatcher.attempt(&id, &business_id, lease).await {
                    tracing::warn!(event_id = %id, error = %error.chain(), "webhook attempt");
                }
            });
        }
        // The permits of events another process took first go back now.
        drop(wanted);
        self.forget_idle_endpoints();
        Ok(pass)
    }

    /// Marks `skipped` the due events of businesses with no active endpoint. It looks first
    /// (a read), so a pass with none to skip takes no write lock.
    async fn skip_unconfigured(&self, now: DateTime<Utc>) -> Result<u64, Error> {
        if !events::any_due_unconfigured(&self.store, now).await? {
            return Ok(0);
        }
        let _turn = self.store.write_turn().await;
        Ok(events::skip_due_unconfigured(&self.store, now).await?)
    }

    /// A permit of the business's endpoint and one of the process, or `None` at either bound.
    fn permits_for(
        &self,
        business_id: &str,
    ) -> Option<(OwnedSemaphorePermit, OwnedSemaphorePermit)> {
        let endpoint = {
            let mut endpoints = self.endpoints.lock().unwrap_or_else(|p| p.into_inner());
            Arc::clone(
                endpoints
                    .entry(business_id.to_owned())
                    .or_insert_with(|| Arc::new(Semaphore::new(self.policy.per_endpoint))),
            )
        };
        let endpoint = endpoint.try_acquire_owned().ok()?;
        let all = Arc::clone(&self.in_flight).try_acquire_owned().ok()?;
        Some((endpoint, all))
    }

    fn forget_idle_endpoints(&self) {
        let per_endpoint = self.policy.per_endpoint;
        let mut endpoints = self.endpoints.lock().unwrap_or_else(|p| p.into_inner());
        endpoints.retain(|_, semaphore| semaphore.available_permits() < per_endpoint);
    }

    /// Reserves the due events `ids` for this process until the returned lease end, in one
    /// statement; returns the lease and the ids it got (another process may have moved some
    /// first: a claimed event is no longer due).
    async fn claim(
        &self,
        ids: &[&str],
        now: DateTime<Utc>,
    ) -> Result<(DateTime<Utc>, Vec<String>), Error> {
        let lease = now + chrono::Duration::from_std(self.policy.lease).or_internal()?;
        if ids.is_empty() {
            return Ok((lease, Vec::new()));
        }
        let _turn = self.store.write_turn().await;
        let claimed = events::claim(&self.store, ids, lease, now).await?;
        Ok((lease, claimed))
    }

    /// Makes one attempt of a claimed event and records it.
    async fn attempt(
        &self,
        id: &str,
        business_id: &str,
        lease: DateTime<Utc>,
    ) -> Result<(), Error> {
        let event = events::to_send(&self.store, id).await?;
        let endpoint = endpoint_of(&self.store, business_id).await?;
        let Some(endpoint) = endpoint.filter(|e| e.is_active && e.subscribes_to(&event.kind))
        else {
            return self.settle(id, lease, "skipped", None, None).await;
        };
        let body = body_of(id, &event.kind, event.created_at, &event.payload);
        let outcome = self.send(id, &endpoint, body).await;
        let used = event.attempts + 1 - event.budget_start;
        let now = self.clock.now();
        let mut tx = self.store.begin().await?;
        let made = AttemptMade {
            url: &outcome.url,
            response_status: outcome.response_status.map(i64::from),
            error: outcome.error.as_deref(),
            latency_ms: outcome.latency_ms,
            response_body: outcome.response_body.as_deref(),
        };
        events::record_attempt(&mut tx, id, now, &made).await?;
        let (status, next) = if outcome.delivered() {
            ("delivered", None)
        } else if used >= self.policy.max_attempts() {
            ("failed", None)
        } else {
            ("pending", Some(now + self.retry_delay(used)))
        };
        let updated = events::finish_attempt(&mut tx, id, lease, status, next, now, &made).await?;
        if !updated {
            // The lease ran out and another process took the event: its attempt decides.
            tracing::warn!(event_id = %id, "webhook attempt outlived its lease");
        }
        tx.commit().await.or_internal()?;
        if let Some(error) = &outcome.error {
            tracing::info!(event_id = %id, attempt = used, error = %error, status, "webhook not delivered");
        }
        Ok(())
    }

    /// Ends a claim without an attempt (`skipped`).
    async fn settle(
        &self,
        id: &str,
        lease: DateTime<Utc>,
        status: &str,
        next: Option<DateTime<Utc>>,
        error: Option<&str>,
    ) -> Result<(), Error> {
        let _turn = self.store.write_turn().await;
        Ok(events::settle(&self.store, id, lease, status, next, error).await?)
    }

    /// The wait after the `used`-th failed attempt of a budget, with jitter.
    fn retry_delay(&self, used: i64) -> chrono::Duration {
        let delays = &self.policy.retry_delays;
        let index = usize::try_from(used.max(1) - 1)
            .unwrap_or(0)
            .min(delays.len() - 1);
        let base = delays[index].as_millis() as u64;
        let spread = self.policy.jitter_per_mille;
        let bytes = random_bytes(8);
        let draw = u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8])) % (2 * spread + 1);
        let millis = base * (1000 - spread + draw) / 1000;
        chrono::Duration::milliseconds(millis as i64)
    }

    /// The client for `url` pinned to `addresses` (checked by the caller), made on first use.
    fn client_for(&self, url: &url::Url, addresses: &[SocketAddr]) -> HttpClient {
        /// Past this many destinations the cache starts over (idle connections go with it).
        const CLIENTS_MAX: usize = 1024;
        let mut sorted = addresses.to_vec();
        sorted.sort_unstable();
        let key = format!(
            "{}://{}:{}|{sorted:?}",
            url.scheme(),
            url.host_str().unwrap_or_default(),
            url.port_or_known_default().unwrap_or_default()
        );
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(client) = clients.get(&key) {
            return client.clone();
        }
        let mut http = HttpConnector::new_with_resolver(Pinned(Arc::new(sorted)));
        http.enforce_http(false);
        http.set_connect_timeout(Some(self.policy.timeout));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(self.tls.clone())
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new()).build(https);
        if clients.len() >= CLIENTS_MAX {
            clients.clear();
        }
        clients.insert(key, client.clone());
        client
    }

    /// POSTs `body` to the endpoint: resolve and check, sign, send, read a bounded answer.
    async fn send(&self, id: &str, endpoint: &Endpoint, body: String) -> Outcome {
        let started = Instant::now();
        let answered = match self.request(id, endpoint, body).await {
            Ok((client, request)) => self.exchange(client, request).await,
            Err(error) => Err(error),
        };
        let latency_ms = started.elapsed().as_millis() as i64;
        let url = endpoint.url.clone();
        let (status, kept) = match answered {
            Ok(answer) => answer,
            Err(error) => return Outcome::failed(error, None, None, latency_ms, url),
        };
        // PostgreSQL's TEXT refuses NUL: a binary answer must not stop the attempt being recorded.
        let response_body =
            (!kept.is_empty()).then(|| String::from_utf8_lossy(&kept).replace('\0', "\u{FFFD}"));
        if status.is_success() {
            return Outcome {
                response_status: Some(status.as_u16()),
                error: None,
                latency_ms,
                response_body,
                url,
            };
        }
        let error = if status.is_redirection() {
            format!(
                "HTTP {} from {} (redirects are not followed)",
                status.as_u16(),
                endpoint.url
            )
        } else {
            format!("HTTP {} from {}", status.as_u16(), endpoint.url)
        };
        Outcome::failed(error, Some(status.as_u16()), response_body, latency_ms, url)
    }

    /// The signed request of one attempt and the client that may send it, once the event's
    /// size, the URL and every address its host resolves to are checked; why not otherwise.
    async fn request(
        &self,
        id: &str,
        endpoint: &Endpoint,
        body: String,
    ) -> Result<(HttpClient, hyper::Request<Full<Bytes>>), String> {
        if body.len() > self.policy.body_max_bytes {
            return Err(format!(
                "the event is {} bytes, over the 256 KiB bound",
                body.len()
            ));
        }
        let whitelist = destination::parse_whitelist(&endpoint.ip_whitelist)?;
        let production = self.environment == Environment::Production;
        let policy = Policy::of(production, self.policy.loopback_allowed, whitelist);
        let url = destination::check_url(&endpoint.url, &policy)?;
        let addresses = destination::resolve(&url, &policy, &*self.resolver).await?;
        let now = self.clock.now();
        let keys = endpoint
            .signing_keys(now)
            .map_err(|error| format!("the signing secret is unusable: {error}"))?;
        let timestamp = now.timestamp();
        let signature = signing::signature_header(&keys, id, timestamp, body.as_bytes());
        let client = self.client_for(&url, &addresses);
        let request = hyper::Request::post(url.as_str())
            .header("content-type", "application/json")
            .header(
                "user-agent",
                concat!("Kobo-Webhooks/", env!("CARGO_PKG_VERSION")),
            )
            .header("webhook-id", id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(Full::new(Bytes::from(body)))
            .map_err(|error| format!("cannot build the request: {error}"))?;
        Ok((client, request))
    }

    /// Sends `request` and reads the answer's status and first KiB, within one bound for the
    /// whole exchange: connection, TLS, request and answer.
    async fn exchange(
        &self,
        client: HttpClient,
        request: hyper::Request<Full<Bytes>>,
    ) -> Result<(hyper::StatusCode, Vec<u8>), String> {
        let exchange = async {
            let response = client.request(request).await.map_err(|e| describe(&e))?;
            let status = response.status();
            let mut body = response.into_body();
            let mut kept = Vec::new();
            while kept.len() < RESPONSE_BODY_KEEP {
                match body.frame().await {
                    Some(Ok(frame)) => {
                        if let Some(data) = frame.data_ref() {
                            kept.extend_from_slice(data);
                        }
                    }
                    Some(Err(_)) | None => break,
                }
            }
            kept.truncate(RESPONSE_BODY_KEEP);
            Ok::<_, String>((status, kept))
        };
        match tokio::time::timeout(self.policy.timeout, exchange).await {
            Ok(answer) => answer,
            Err(_) => Err(format!(
                "timed out after {} s",
                self.policy.timeout.as_secs()
            )),
        }
    }
}

impl Outcome {
    /// An attempt that failed: `error` (cut to the recorded length) and what was answered.
    fn failed(
        error: String,
        response_status: Option<u16>,
        response_body: Option<String>,
        latency_ms: i64,
        url: String,
    ) -> Outcome {
        Outcome {
            response_status,
            error: Some(error.chars().take(ERROR_LENGTH_MAX).collect()),
            latency_ms,
            response_body,
            url,
        }
    }
}

/// A network error in words a developer acts on: the error and its causes.
fn describe(error: &hyper_util::client::legacy::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// What one delivery client is: HTTP/1.1 over TCP, or TLS (rustls with ring) for `https://`.
type HttpClient = Client<hyper_rustls::HttpsConnector<HttpConnector<Pinned>>, Full<Bytes>>;

/// A resolver that answers every name with the addresses checked for it, so a client connects
/// to nothing else (the host name is still what TLS verifies and `Host` says).
#[derive(Clone)]
struct Pinned(Arc<Vec<SocketAddr>>);

impl tower::Service<Name> for Pinned {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = std::io::Error;
    type Future = std::future::Ready<Result<Self::Response, Self::Error>>;

    fn poll_ready(
        &mut self,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, _name: Name) -> Self::Future {
        std::future::ready(Ok(self.0.as_ref().clone().into_iter()))
    }
}
