//! `kobo serve` and `kobo demo`: the server's flags, its start (store, configuration, API,
//! background workers) and its stop, the demo's welcome, and the token signing key's file.

use std::io::Write;
use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::builder::TypedValueParser;
use clap::{Args, ValueEnum};
use serde_json::json;
use tokio::net::TcpListener;

use generated_server::Operation;

use super::StoreArgs;
use crate::http::{self, HttpConfig, KoboApi};
use crate::kernel::clock::Clock;
use crate::kernel::config::{Config, Environment, RequestBudget};
use crate::kernel::store::Store;
use crate::operator::businesses::{self, DemoBusiness};
use crate::outbox::dispatcher::{SmtpChannel, SmtpSettings};
use crate::outbox::webhooks::WebhookDispatcher;
use crate::platform::tokens::TokenKeys;
use crate::provider::faults::{FaultRates, Faults, FaultyProvider};
use crate::provider::network::NetworkProvider;
use crate::workers::Workers;

/// Bytes of a new token signing key.
const TOKEN_KEY_LENGTH: usize = 32;

/// How long `serve` waits, after the server stopped, for its background tasks to finish a pass.
const BACKGROUND_STOP_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Clone, Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub store: StoreArgs,

    /// Address and port to listen on.
    #[arg(long, env = "KOBO_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,

    /// `sandbox` returns OTPs in responses and offers the sandbox-only operations.
    #[arg(long, env = "KOBO_ENVIRONMENT", value_enum, default_value_t = EnvironmentArg::Sandbox)]
    pub environment: EnvironmentArg,

    /// The key that signs tokens; created with 32 random bytes (mode 0600) when missing.
    /// Default: `token.key` in the data directory. Processes behind one load balancer share it.
    #[arg(long, env = "KOBO_TOKEN_KEY_FILE")]
    pub token_key_file: Option<PathBuf>,

    /// Create (first run) or reuse the demo business and print its credentials (sandbox only).
    #[arg(long, env = "KOBO_DEMO")]
    pub demo: bool,

    /// With `kobo demo`: give the demo business this many customer accounts at start (each a
    /// verified customer with a virtual account under the main account, named from a list of
    /// 1,600 people, opened in bulk; those already there are kept), to try the Dashboard at a
    /// real business's scale.
    #[arg(long, env = "KOBO_DEMO_CUSTOMER_ACCOUNTS", default_value_t = 0)]
    pub demo_customer_accounts: u32,

    /// Requests per minute each credential (integration client, Dashboard member) may make
    /// sustained; over it the answer is `29` with `Retry-After`. On PostgreSQL the budget is
    /// one for all the processes on the database (give them all the same value); on SQLite
    /// the one process counts it.
    #[arg(long, env = "KOBO_RATE_LIMIT_PER_MINUTE", default_value_t = RequestBudget::default().per_minute)]
    pub rate_limit_per_minute: NonZeroU32,

    /// Requests each credential may make at once, above the sustained rate.
    #[arg(long, env = "KOBO_RATE_LIMIT_BURST", default_value_t = RequestBudget::default().burst)]
    pub rate_limit_burst: NonZeroU32,

    /// Sandbox only: make the core banking provider fail at random, as NIP does, to try a
    /// client's or an operator's handling of it. Comma-separated `name=value` pairs, each
    /// optional: `unavailable=0.1,refuse=0.01,timeout_after_submit=0.05,status_unknown=0.2,
    /// latency_ms=200,seed=7` (rates are probabilities per call, from 0 to 1; the seed
    /// replays a run's faults, random and logged when absent). Refused in production.
    #[arg(long, env = "KOBO_SANDBOX_FAULTS")]
    pub sandbox_faults: Option<FaultRates>,

    /// Sandbox only: the delays before each webhook retry, in seconds, comma-separated
    /// (`1,2,5`: four attempts in all), instead of the spec's schedule of about three days, so
    /// a test that takes its receiver down sees the retries within minutes. Refused in
    /// production, where partners rely on the documented schedule.
    #[arg(
        long,
        env = "KOBO_SANDBOX_WEBHOOK_RETRY_SCHEDULE",
        value_delimiter = ','
    )]
    pub sandbox_webhook_retry_schedule: Option<Vec<u64>>,

    /// Sandbox only, for local development: webhooks may be delivered to loopback addresses
    /// (127.0.0.0/8, `::1`), where `kobo webhooks listen` or a developer's receiver runs.
    /// Private, link-local and every other non-public address stay refused, as without it.
    /// `kobo demo` sets it; refused in production.
    #[arg(long, env = "KOBO_ALLOW_LOOPBACK_WEBHOOKS")]
    pub allow_loopback_webhooks: bool,

    /// Where people open the Dashboard (this server's `/dashboard/`, as they reach it): the
    /// invitation emails link to its `accept-invite` page, the approval emails to its
    /// approvals and receipts. Default: `http://<the address
    /// kobo listens on>/dashboard/`; set it when people reach kobo by another address (a
    /// load balancer, a host name, `--listen 0.0.0.0:...`).
    #[arg(long, env = "KOBO_DASHBOARD_URL")]
    pub dashboard_url: Option<String>,

    /// A Dashboard session ends after this many minutes without a request made with its token
    /// (its idle timeout); every request starts them again, within the token's twelve hours.
    #[arg(long, env = "KOBO_DASHBOARD_IDLE_MINUTES", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=720))]
    pub dashboard_idle_minutes: u64,

    /// The core banking provider Kobo calls over HTTP (`spec/provider.yaml`; `kobo-provider
    /// serve` is one). Required in production, which must not run on the sandbox's in-process
    /// tables; there plain `http://` is for a loopback address only. The sandbox uses its
    /// in-process provider unless this is set.
    #[arg(long, env = "KOBO_PROVIDER_URL")]
    pub provider_url: Option<String>,

    /// The secret Kobo shares with the provider (`whsec_...`; `kobo-provider serve` writes one
    /// to its data directory): Kobo's bearer token to it, and the key that signs its
    /// notifications.
    #[arg(long, env = "KOBO_PROVIDER_SECRET_FILE")]
    pub provider_secret_file: Option<PathBuf>,

    /// The certificates (PEM) an `https://` provider's must chain to, for a provider under a
    /// private CA. Default: the Mozilla roots.
    #[arg(long, env = "KOBO_PROVIDER_CA_FILE")]
    pub provider_ca_file: Option<PathBuf>,

    #[command(flatten)]
    pub smtp: SmtpArgs,

    #[command(flatten)]
    pub http: HttpArgs,
}

/// A provider over the network, as `kobo serve`'s flags name it.
pub struct ProviderLink {
    pub url: String,
    /// The shared secret: Kobo's bearer token to the provider.
    pub secret: String,
    /// The secret's key, which signs the provider's notifications.
    pub key: Vec<u8>,
}

impl ServeArgs {
    /// Whether webhooks may go to loopback addresses: `--allow-loopback-webhooks` or the demo;
    /// an error in production.
    pub fn loopback_webhooks(&self) -> Result<bool> {
        let allowed = self.allow_loopback_webhooks || self.demo;
        if allowed && self.environment != EnvironmentArg::Sandbox {
            bail!(
                "--allow-loopback-webhooks (KOBO_ALLOW_LOOPBACK_WEBHOOKS) is for local development \
                 in the sandbox only: production delivers to public addresses only"
            );
        }
        Ok(allowed)
    }

    /// The provider over the network the flags name, if any. An error in production without
    /// one, for plain `http://` to anything but loopback there, or without the secret.
    pub fn network_provider(&self) -> Result<Option<ProviderLink>> {
        let production = self.environment == EnvironmentArg::Production;
        let Some(url) = &self.provider_url else {
            if production {
                bail!(
                    "production needs a core banking provider: name it with --provider-url \
                     (KOBO_PROVIDER_URL) and --provider-secret-file; the sandbox's in-process \
                     tables answer in the sandbox only"
                );
            }
            return Ok(None);
        };
        let parsed = url::Url::parse(url).with_context(|| format!("--provider-url {url}"))?;
        let loopback = match parsed.host() {
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            Some(url::Host::Domain(name)) => name == "localhost",
            None => false,
        };
        match parsed.scheme() {
            "http" if production && !loopback => bail!(
                "--provider-url {url}: production reaches its provider over https://, or over \
                 http:// on a loopback address only"
            ),
            "http" | "https" => {}
            other => bail!("--provider-url {url}: `{other}` is neither https nor http"),
        }
        let Some(file) = &self.provider_secret_file else {
            bail!(
                "--provider-url needs --provider-secret-file (KOBO_PROVIDER_SECRET_FILE): the \
                 secret shared with the provider"
            );
        };
        let (secret, key) = crate::outbox::webhooks::signing::read_secret_file(file)?;
        Ok(Some(ProviderLink {
            url: url.clone(),
            secret,
            key,
        }))
    }

    /// The provider's injected faults and their seed, when `--sandbox-faults` asks for any;
    /// an error in production, where no fault may be injected.
    pub fn sandbox_faults(&self) -> Result<Option<(FaultRates, u64)>> {
        let Some(rates) = self.sandbox_faults else {
            return Ok(None);
        };
        if self.environment != EnvironmentArg::Sandbox {
            bail!(
                "--sandbox-faults (KOBO_SANDBOX_FAULTS) injects provider faults in the sandbox \
                 only: unset it to run in production"
            );
        }
        let seed = rates.seed.unwrap_or_else(|| {
            let bytes = crate::kernel::secrets::random_bytes(8);
            u64::from_le_bytes(bytes.try_into().unwrap_or([7; 8]))
        });
        Ok(Some((rates, seed)))
    }

    /// The webhook retry delays `--sandbox-webhook-retry-schedule` asks for; an error in
    /// production, or for an empty schedule or a delay of zero.
    pub fn webhook_retry_schedule(&self) -> Result<Option<Vec<Duration>>> {
        let Some(seconds) = &self.sandbox_webhook_retry_schedule else {
            return Ok(None);
        };
        if self.environment != EnvironmentArg::Sandbox {
            bail!(
                "--sandbox-webhook-retry-schedule (KOBO_SANDBOX_WEBHOOK_RETRY_SCHEDULE) applies \
                 to the sandbox only: production follows the documented schedule"
            );
        }
        if seconds.is_empty() || seconds.iter().any(|s| *s == 0 || *s > 86_400) {
            bail!("--sandbox-webhook-retry-schedule: one or more delays of 1 to 86400 seconds");
        }
        Ok(Some(
            seconds.iter().map(|s| Duration::from_secs(*s)).collect(),
        ))
    }
}

/// The HTTP edge's limits ([`HttpConfig`]).
#[derive(Clone, Debug, Args)]
pub struct HttpArgs {
    /// Seconds from a request's arrival to its answer: a body not received by then gets `01`,
    /// an operation not finished by then `96` (its transaction rolls back).
    #[arg(long, env = "KOBO_REQUEST_TIMEOUT_SECONDS", default_value_t = HttpConfig::default().request_timeout.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..))]
    pub request_timeout_seconds: u64,

    /// API requests served at once; more are answered `29` with `Retry-After` at once. The
    /// probes and `/metrics` are not counted.
    #[arg(long, env = "KOBO_MAX_CONCURRENT_REQUESTS", default_value_t = HttpConfig::default().max_concurrent_requests,
          value_parser = clap::value_parser!(u64).range(1..).map(|n| n as usize))]
    pub max_concurrent_requests: usize,

    /// Seconds a connection has to send a request's headers, from its opening or from the
    /// first byte after an idle spell; a silent or slow one is closed.
    #[arg(long, env = "KOBO_HEADER_READ_TIMEOUT_SECONDS", default_value_t = HttpConfig::default().header_read_timeout.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..))]
    pub header_read_timeout_seconds: u64,

    /// Seconds a kept-alive connection may wait for its next request (and a client has to
    /// read a response) before it is closed.
    #[arg(long, env = "KOBO_IDLE_TIMEOUT_SECONDS", default_value_t = HttpConfig::default().idle_timeout.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..))]
    pub idle_timeout_seconds: u64,

    /// Open connections at most; one more is closed when accepted (a warning says so, at most
    /// every 10 s). Keep it under the process's descriptor limit (`ulimit -n`).
    #[arg(long, env = "KOBO_MAX_CONNECTIONS", default_value_t = HttpConfig::default().max_connections,
          value_parser = clap::value_parser!(u64).range(1..).map(|n| n as usize))]
    pub max_connections: usize,

    /// Seconds the requests in flight get after SIGINT/SIGTERM before the process exits
    /// anyway. Keep it above `--request-timeout-seconds` and below the orchestrator's grace
    /// period.
    #[arg(long, env = "KOBO_SHUTDOWN_TIMEOUT_SECONDS", default_value_t = HttpConfig::default().shutdown_timeout.as_secs())]
    pub shutdown_timeout_seconds: u64,

    /// Seconds the process keeps serving after SIGINT/SIGTERM with `/readyz` answering `503`,
    /// before it stops accepting connections: set it above the time your load balancer takes
    /// to mark the process down (probe interval x failures), so that no request is sent to a
    /// process that no longer accepts. 0 (the default): stop accepting at once.
    #[arg(long, env = "KOBO_DRAIN_SECONDS", default_value_t = HttpConfig::default().drain.as_secs())]
    pub drain_seconds: u64,
}

impl HttpArgs {
    pub fn config(&self) -> HttpConfig {
        HttpConfig {
            request_timeout: Duration::from_secs(self.request_timeout_seconds),
            max_concurrent_requests: self.max_concurrent_requests,
            header_read_timeout: Duration::from_secs(self.header_read_timeout_seconds),
            idle_timeout: Duration::from_secs(self.idle_timeout_seconds),
            max_connections: self.max_connections,
            shutdown_timeout: Duration::from_secs(self.shutdown_timeout_seconds),
            drain: Duration::from_secs(self.drain_seconds),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EnvironmentArg {
    Sandbox,
    Production,
}

impl From<EnvironmentArg> for Environment {
    fn from(value: EnvironmentArg) -> Self {
        match value {
            EnvironmentArg::Sandbox => Environment::Sandbox,
            EnvironmentArg::Production => Environment::Production,
        }
    }
}

/// Email delivery of notifications. Without `KOBO_SMTP_URL` they stay in the outbox
/// (`kobo outbox`).
#[derive(Clone, Debug, Args)]
pub struct SmtpArgs {
    /// `smtp://host:25`, `smtp://user:pass@host:587?tls=required` (STARTTLS) or
    /// `smtps://user:pass@host:465`.
    #[arg(long, env = "KOBO_SMTP_URL", hide_env_values = true)]
    pub smtp_url: Option<String>,

    /// The sender of every email.
    #[arg(
        long,
        env = "KOBO_SMTP_FROM",
        default_value = "Kobo <no-reply@kobo.localhost>"
    )]
    pub smtp_from: String,

    /// How long one SMTP exchange may take, in seconds.
    #[arg(long, env = "KOBO_SMTP_TIMEOUT_SECONDS", default_value_t = 30)]
    pub smtp_timeout_seconds: u64,
}

impl SmtpArgs {
    pub fn settings(&self) -> Option<SmtpSettings> {
        self.smtp_url.as_ref().map(|url| SmtpSettings {
            url: url.clone(),
            from: self.smtp_from.clone(),
            timeout: Duration::from_secs(self.smtp_timeout_seconds),
        })
    }
}

pub(super) async fn serve(args: ServeArgs) -> Result<()> {
    if args.demo && args.environment != EnvironmentArg::Sandbox {
        bail!("the demo runs in the sandbox only: drop `--environment production`");
    }
    let store = args.store.open().await?;
    let clock = Clock::system();
    let listener = TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let address = listener.local_addr()?;
    let api = Arc::new(open_api(&args, store.clone(), clock.clone(), &address).await?);
    if args.demo {
        let dashboard = dashboard_url(&args, &address);
        demo(&api, &address, &dashboard, args.demo_customer_accounts).await?;
    }
    let smtp = args
        .smtp
        .settings()
        .map(|settings| SmtpChannel::new(&settings))
        .transpose()?;
    let notifications = if smtp.is_some() {
        "smtp"
    } else {
        "outbox only (kobo outbox)"
    };
    let nip_work = crate::workers::NipWork {
        provider: api.provider().clone(),
        environment: api.config().environment,
    };
    let webhooks = WebhookDispatcher::new(
        store.clone(),
        clock.clone(),
        api.config().webhooks.clone(),
        api.config().environment,
    );
    let workers = Workers::start(
        &store,
        &clock,
        smtp,
        Some(nip_work),
        Some(webhooks),
        Some(api.shared_bank()),
    );
    tracing::info!(
        address = %address,
        environment = api.config().environment.as_str(),
        database = store.backend().name(),
        notifications,
        workers = ?workers.names(),
        "kobo is serving"
    );
    run_until_stopped(listener, api, workers, &args.http.config()).await?;
    tracing::info!("kobo stopped");
    Ok(())
}

/// The API the flags describe: its configuration (rate limits, webhook policy, the Dashboard's
/// address in invitations), the token key, and the sandbox provider's injected faults when
/// asked for. Refuses flags the environment does not allow.
async fn open_api(
    args: &ServeArgs,
    store: Store,
    clock: Clock,
    address: &SocketAddr,
) -> Result<KoboApi> {
    let faults = args.sandbox_faults()?;
    let retry_schedule = args.webhook_retry_schedule()?;
    let loopback_webhooks = args.loopback_webhooks()?;
    let network = args.network_provider()?;
    let key_file = args
        .token_key_file
        .clone()
        .unwrap_or_else(|| args.store.data_dir.join("token.key"));
    let tokens = TokenKeys::new(load_or_create_token_key(&key_file)?);
    let mut config = Config::new(args.environment.into());
    config.request_budget = RequestBudget {
        per_minute: args.rate_limit_per_minute,
        burst: args.rate_limit_burst,
    };
    config.dashboard_url = dashboard_url(args, address);
    config.dashboard_idle_seconds = args.dashboard_idle_minutes * 60;
    config.invitation_link_base = format!("{}accept-invite?token=", config.dashboard_url);
    if loopback_webhooks {
        tracing::warn!(
            "webhooks may be delivered to loopback addresses (local development: \
             --allow-loopback-webhooks or kobo demo)"
        );
        config.webhooks.loopback_allowed = true;
    }
    if let Some(delays) = retry_schedule {
        tracing::warn!(
            ?delays,
            "webhook retries follow --sandbox-webhook-retry-schedule, not the spec's schedule"
        );
        config.webhooks.retry_delays = delays;
    }
    let mut api = KoboApi::open(store, config, clock.clone(), tokens).await?;
    if let Some(link) = network {
        tracing::info!(url = %link.url, "the core banking provider is reached over HTTP");
        let ca_file = args.provider_ca_file.as_deref();
        let provider = NetworkProvider::connect(&link.url, &link.secret, ca_file, clock).await?;
        api = api
            .with_provider(Arc::new(provider))
            .with_provider_notifications(link.key);
    }
    if let Some((rates, seed)) = faults {
        tracing::warn!(
            faults = %rates,
            seed,
            "the sandbox provider fails on purpose (--sandbox-faults; seed={seed} replays it)"
        );
        let inner = api.provider().clone();
        api = api.with_provider(Arc::new(FaultyProvider {
            inner,
            faults: Arc::new(Faults::random(rates, seed)),
        }));
    }
    Ok(api)
}

/// The Dashboard's address as people reach it, ending with `/`: `--dashboard-url`, or this
/// server's own `/dashboard/`.
fn dashboard_url(args: &ServeArgs, address: &SocketAddr) -> String {
    match &args.dashboard_url {
        Some(url) if url.ends_with('/') => url.clone(),
        Some(url) => format!("{url}/"),
        None => format!("http://{address}{}", http::dashboard::DASHBOARD_PATH),
    }
}

/// Serves `api` on `listener` until SIGINT or SIGTERM, then drains and stops: `/readyz`
/// answers `503` while requests are still served for `http_config.drain` (a load balancer
/// takes the process out of rotation meanwhile), then the server stops accepting and the
/// background tasks wind down while the requests in flight finish, so the stop takes the
/// drain and at most the longer of the two bounds after it.
async fn run_until_stopped(
    listener: TcpListener,
    api: Arc<KoboApi>,
    workers: Workers,
    http_config: &HttpConfig,
) -> Result<()> {
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    let draining = Arc::clone(&api);
    let drain = http_config.drain;
    tokio::spawn(async move {
        http::shutdown_signal().await;
        draining.draining().start();
        if !drain.is_zero() {
            tracing::info!(
                drain_seconds = drain.as_secs(),
                "draining: /readyz answers 503 while requests are still served"
            );
            tokio::time::sleep(drain).await;
        }
        let _ = stop.send(true);
    });
    let mut server_stopped = stopped.clone();
    let logs = Arc::clone(&api);
    let serving = http::serve_with(
        listener,
        http::app_with(api, http_config),
        async move {
            let _ = server_stopped.wait_for(|stop| *stop).await;
        },
        http_config,
    );
    let stopping = async move {
        let _ = stopped.wait_for(|stop| *stop).await;
        workers.stop(BACKGROUND_STOP_TIMEOUT).await;
    };
    let (served, ()) = tokio::join!(serving, stopping);
    // The last calls' activity-log entries, answered before they were written.
    logs.flush_activity_log().await;
    served.context("the server failed")
}

/// Prints the demo business's credentials and a first request (the business is created on the
/// first run and reused afterwards, with a fresh client secret each run).
async fn demo(
    api: &KoboApi,
    address: &SocketAddr,
    dashboard: &str,
    customer_accounts: u32,
) -> Result<()> {
    let demo = businesses::ensure_demo(api.store(), api.config(), api.clock()).await?;
    if customer_accounts > 0 {
        let started = std::time::Instant::now();
        let (store, clock) = (api.store(), api.clock());
        let business_id = &demo.business.business_id;
        let opened = crate::operator::demo_scale::seed_customer_accounts(
            store,
            clock,
            business_id,
            customer_accounts,
        )
        .await?;
        tracing::info!(
            opened,
            seconds = started.elapsed().as_secs_f64(),
            "the demo business has its {customer_accounts} seeded customer accounts"
        );
    }
    let mut out = std::io::stdout().lock();
    out.write_all(demo_text(&demo, &format!("http://{address}"), dashboard).as_bytes())?;
    out.flush()?;
    Ok(())
}

/// The demo's welcome: the Dashboard's address and login, the integration credentials, then
/// two `curl` commands that need only a POSIX shell.
fn demo_text(demo: &DemoBusiness, base_url: &str, dashboard: &str) -> String {
    use std::fmt::Write as _;
    let business = &demo.business;
    let credentials =
        json!({"client_id": business.client_id, "client_secret": business.client_secret});
    let password = business
        .owner_password
        .as_deref()
        .unwrap_or(businesses::DEMO_OWNER_PASSWORD);
    let mut text = String::new();
    let _ = write!(
        text,
        r#"
Kobo demo (sandbox): {action} {name} ({id})

Dashboard: open {dashboard} in a browser and log in as the owner
  email:          {email}
  password:       {password}

Integration credentials (a new secret at every start)
  client_id:      {client_id}
  client_secret:  {client_secret}
  main account:   {account}

Try it, in another terminal:

TOKEN=$(curl -s -X POST {base_url}{generate_token} \
  -H 'Content-Type: application/json' \
  -d '{credentials}' \
  | sed -E 's/.*"access_token":"([^"]+)".*/\1/')
curl -s -X POST {base_url}{fetch_accounts} \
  -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{{}}'

API reference: {base_url}/docs    Invitations and OTPs: kobo outbox    Stop: Ctrl-C
"#,
        action = if demo.created { "created" } else { "reusing" },
        name = business.name,
        id = business.business_id,
        email = business.owner_email,
        client_id = business.client_id,
        client_secret = business.client_secret,
        account = business.main_account_number,
        generate_token = Operation::GenerateToken.path(),
        fetch_accounts = Operation::FetchCustomerAccounts.path(),
    );
    text
}

/// Reads the token signing key, or creates it with [`TOKEN_KEY_LENGTH`] random bytes, readable
/// by the owner only.
pub fn load_or_create_token_key(path: &Path) -> Result<Vec<u8>> {
    match std::fs::read(path) {
        Ok(key) => check_token_key(path, key),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => create_token_key(path),
        Err(error) => {
            Err(error).with_context(|| format!("cannot read the token key {}", path.display()))
        }
    }
}

fn check_token_key(path: &Path, key: Vec<u8>) -> Result<Vec<u8>> {
    if key.len() < TOKEN_KEY_LENGTH {
        bail!(
            "the token key {} holds {} bytes; it needs at least {TOKEN_KEY_LENGTH}",
            path.display(),
            key.len()
        );
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)?.permissions().mode();
        if mode & 0o077 != 0 {
            tracing::warn!(
                path = %path.display(),
                mode = format!("{:o}", mode & 0o777),
                "the token key can be read by other users: chmod 600 it"
            );
        }
    }
    Ok(key)
}

fn create_token_key(path: &Path) -> Result<Vec<u8>> {
    if let Some(parent) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create the directory {}", parent.display()))?;
    }
    let mut key = vec![0u8; TOKEN_KEY_LENGTH];
    getrandom::fill(&mut key).map_err(|error| anyhow::anyhow!("no random bytes: {error}"))?;
    match crate::kernel::secrets::create_private_file(path, &key) {
        Ok(()) => {
            tracing::info!(path = %path.display(), "created a new token key");
            Ok(key)
        }
        // Another process created it first: use theirs.
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            let key = std::fs::read(path)
                .with_context(|| format!("cannot read the token key {}", path.display()))?;
            check_token_key(path, key)
        }
        Err(error) => {
            Err(error).with_context(|| format!("cannot create the token key {}", path.display()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    #[test]
    fn flags_are_parsed_and_checked() {
        let serve = |args: &[&str]| {
            let mut argv = vec!["kobo", "serve"];
            argv.extend_from_slice(args);
            Cli::try_parse_from(argv).map(|cli| match cli.command {
                Command::Serve(args) => args,
                other => panic!("not serve: {other:?}"),
            })
        };
        let args = serve(&["--listen", "0.0.0.0:9000", "--rate-limit-per-minute", "60"]).unwrap();
        assert_eq!(args.listen.to_string(), "0.0.0.0:9000");
        assert_eq!(args.rate_limit_per_minute.get(), 60);
        assert!(serve(&["--rate-limit-per-minute", "0"]).is_err());
        assert!(serve(&["--environment", "staging"]).is_err());
        assert!(serve(&["--listen", "localhost"]).is_err());
        let args = serve(&[
            "--request-timeout-seconds",
            "5",
            "--max-concurrent-requests",
            "7",
            "--header-read-timeout-seconds",
            "2",
            "--idle-timeout-seconds",
            "9",
            "--max-connections",
            "50",
            "--shutdown-timeout-seconds",
            "0",
            "--drain-seconds",
            "3",
        ])
        .unwrap();
        assert_eq!(
            args.http.config(),
            HttpConfig {
                request_timeout: Duration::from_secs(5),
                max_concurrent_requests: 7,
                header_read_timeout: Duration::from_secs(2),
                idle_timeout: Duration::from_secs(9),
                max_connections: 50,
                shutdown_timeout: Duration::ZERO,
                drain: Duration::from_secs(3),
            }
        );
        assert_eq!(
            serve(&[]).unwrap().http.config(),
            HttpConfig::default(),
            "the flags' defaults are the edge's"
        );
        assert!(serve(&["--request-timeout-seconds", "0"]).is_err());
        assert!(serve(&["--max-concurrent-requests", "0"]).is_err());
        assert!(serve(&["--header-read-timeout-seconds", "0"]).is_err());
        assert!(serve(&["--idle-timeout-seconds", "0"]).is_err());
        assert!(serve(&["--max-connections", "0"]).is_err());
        // Provider faults: the documented syntax, a clear error otherwise, sandbox only.
        let args = serve(&["--sandbox-faults", "unavailable=0.1,latency_ms=200,seed=7"]).unwrap();
        let (rates, seed) = args.sandbox_faults().unwrap().unwrap();
        assert_eq!((rates.unavailable, seed), (100_000, 7));
        assert_eq!(rates.latency, Duration::from_millis(200));
        assert!(serve(&[]).unwrap().sandbox_faults().unwrap().is_none());
        // The webhook retry schedule: seconds, sandbox only, no zero.
        let schedule = serve(&["--sandbox-webhook-retry-schedule", "1,2,5"])
            .unwrap()
            .webhook_retry_schedule()
            .unwrap()
            .unwrap();
        assert_eq!(schedule, [1, 2, 5].map(Duration::from_secs));
        assert!(serve(&["--sandbox-webhook-retry-schedule", "1,0"])
            .unwrap()
            .webhook_retry_schedule()
            .is_err());
        assert!(serve(&[
            "--environment",
            "production",
            "--sandbox-webhook-retry-schedule",
            "1"
        ])
        .unwrap()
        .webhook_retry_schedule()
        .is_err());
        let bad = serve(&["--sandbox-faults", "unavailable=2"])
            .unwrap_err()
            .to_string();
        assert!(
            bad.contains("`unavailable=2`: a rate is a probability"),
            "{bad}"
        );
        let production = serve(&["--environment", "production", "--sandbox-faults", "seed=1"])
            .unwrap()
            .sandbox_faults()
            .unwrap_err()
            .to_string();
        assert!(production.contains("in the sandbox only"), "{production}");
        let outbox = Cli::try_parse_from(["kobo", "outbox", "--limit", "1001"]);
        assert!(outbox.is_err(), "the outbox listing is bounded");
    }

    #[test]
    fn a_token_key_is_created_once_private_and_then_reused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/token.key");
        let key = load_or_create_token_key(&path).unwrap();
        assert_eq!(key.len(), TOKEN_KEY_LENGTH);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(load_or_create_token_key(&path).unwrap(), key);
        let other = load_or_create_token_key(&dir.path().join("other.key")).unwrap();
        assert_ne!(other, key, "each key is random");
    }

    #[test]
    fn a_short_token_key_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token.key");
        std::fs::write(&path, b"short").unwrap();
        let error = load_or_create_token_key(&path).unwrap_err().to_string();
        assert!(error.contains("holds 5 bytes"), "{error}");
    }
}
