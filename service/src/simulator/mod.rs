//! `kobo-provider`: a core banking provider that runs as its own process, serving
//! `spec/provider.yaml` (through the generated `provider-server`) with the sandbox's identity
//! table, external accounts and NIP outcomes, and keeping its own state in its data directory.
//! Kobo reaches it with `kobo serve --provider-url` (issue 32); a real NIBSS-facing adapter
//! would implement the same generated trait.
//!
//! - `kobo-provider serve --listen ADDR --data-dir DIR [--notify-url URL] [--faults SPEC]
//!   [--tls-cert PEM --tls-key PEM]`
//! - `kobo-provider credit --provider-url URL --secret-file FILE --account ACCT --amount X
//!   --sender-account N --sender-bank CODE --sender-name NAME`
//!
//! Both sides share one secret (`whsec_...`, the `secret` file of the data directory unless
//! `--secret-file` names another): Kobo presents it as its bearer token, and the simulator
//! signs its notifications with it.

mod api;
mod notify;
mod state;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};

pub use api::Simulator;
pub use notify::{CreditQueued, CreditRequest};
pub use state::State;

use crate::kernel::clock::Clock;
use crate::kernel::secrets;
use crate::outbox::webhooks::signing;
use crate::provider::faults::{FaultRates, Faults, FaultyProvider};
use crate::provider::sandbox::SandboxProvider;
use crate::provider::CoreBanking;

/// The path of the simulator's own route that queues an inbound credit.
pub const CREDIT_PATH: &str = "/simulator/credit";

#[derive(Debug, Parser)]
#[command(
    name = "kobo-provider",
    version,
    about = "A core banking provider for Kobo to call over HTTP: the sandbox's tables behind spec/provider.yaml"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the provider's API.
    Serve(ServeArgs),
    /// Ask a running simulator to send Kobo an inbound NIP credit.
    Credit(CreditArgs),
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on (`127.0.0.1:0` picks a free port, printed on the first line).
    #[arg(long, env = "KOBO_PROVIDER_LISTEN", default_value = "127.0.0.1:9090")]
    pub listen: SocketAddr,
    /// Where the simulator keeps its transfers and notifications (`provider.db`) and, unless
    /// `--secret-file` says otherwise, the shared secret (`secret`, created when missing).
    #[arg(long, env = "KOBO_PROVIDER_DATA_DIR")]
    pub data_dir: PathBuf,
    /// The shared secret's file (`whsec_...`).
    #[arg(long, env = "KOBO_PROVIDER_SECRET_FILE")]
    pub secret_file: Option<PathBuf>,
    /// Kobo's notification URL (`http://KOBO/provider/v1/inbound_credit`): where inbound
    /// credits are sent. Without it they wait in the data directory.
    #[arg(long, env = "KOBO_PROVIDER_NOTIFY_URL")]
    pub notify_url: Option<String>,
    /// Injected faults, in `kobo serve --sandbox-faults`'s syntax.
    #[arg(long, env = "KOBO_PROVIDER_FAULTS")]
    pub faults: Option<FaultRates>,
    /// Serve over TLS with this certificate chain (PEM), and `--tls-key`.
    #[arg(long, env = "KOBO_PROVIDER_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key (PEM) of `--tls-cert`.
    #[arg(long, env = "KOBO_PROVIDER_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CreditArgs {
    /// The running simulator.
    #[arg(long, env = "KOBO_PROVIDER_URL")]
    pub provider_url: String,
    /// The shared secret's file.
    #[arg(long, env = "KOBO_PROVIDER_SECRET_FILE")]
    pub secret_file: PathBuf,
    /// The Kobo account credited (10 digits).
    #[arg(long)]
    pub account: String,
    /// Naira: `15000.00`.
    #[arg(long)]
    pub amount: String,
    #[arg(long)]
    pub sender_account: String,
    /// The sending institution's NIP code (6 digits), e.g. `000013`.
    #[arg(long)]
    pub sender_bank: String,
    #[arg(long)]
    pub sender_name: String,
    #[arg(long)]
    pub narration: Option<String>,
    /// The sender's reference: the same one again is the same credit.
    #[arg(long)]
    pub payment_reference: Option<String>,
}

pub async fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Serve(args) => serve(args).await,
        Command::Credit(args) => credit(args).await,
    }
}

/// Reads the shared secret of `path`, creating a new one there if it does not exist.
pub fn load_or_create_secret(path: &Path) -> Result<String> {
    if !path.exists() {
        let secret = signing::new_secret();
        match secrets::create_private_file(path, format!("{secret}\n").as_bytes()) {
            Ok(()) => return Ok(secret),
            // Another process created it first: use theirs.
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(error) => {
                return Err(error)
                    .with_context(|| format!("cannot create the secret {}", path.display()))
            }
        }
    }
    Ok(signing::read_secret_file(path)?.0)
}

async fn serve(args: ServeArgs) -> Result<()> {
    let state = State::open(&args.data_dir).await?;
    let secret_file = args
        .secret_file
        .clone()
        .unwrap_or_else(|| args.data_dir.join("secret"));
    let secret = load_or_create_secret(&secret_file)?;
    let clock = Clock::system();
    let sandbox = SandboxProvider::new(clock.clone());
    let provider: Arc<dyn CoreBanking> = match args.faults {
        Some(rates) => {
            let seed = rates.seed.unwrap_or_else(rand_seed);
            tracing::warn!(faults = %rates, seed, "the simulator fails on purpose (--faults)");
            Arc::new(FaultyProvider {
                inner: Arc::new(sandbox.clone()),
                faults: Arc::new(Faults::random(rates, seed)),
            })
        }
        None => Arc::new(sandbox.clone()),
    };
    let simulator = Simulator {
        sandbox,
        provider,
        state: state.clone(),
        clock: clock.clone(),
        secret: secret.clone(),
    };
    let credits = Arc::new(notify::Credits {
        state: state.clone(),
        clock: clock.clone(),
        secret: secret.clone(),
    });
    let credit_route = axum::Router::new()
        .route(CREDIT_PATH, axum::routing::post(notify::credit))
        .with_state(credits);
    let app = credit_route.merge(provider_server::router(Arc::new(simulator)));
    if let Some(url) = args.notify_url.clone() {
        tokio::spawn(notify::deliver(state, clock, url, secret));
    } else {
        tracing::warn!("no --notify-url: inbound credits wait in the data directory");
    }
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let address = listener.local_addr()?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(tls_acceptor(cert, key)?),
        _ => None,
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    println!("kobo-provider listening on {scheme}://{address}");
    tracing::info!(%address, data_dir = %args.data_dir.display(), secret_file = %secret_file.display(), "kobo-provider serving spec/provider.yaml");
    if let Some(acceptor) = tls {
        return serve_tls(listener, acceptor, app).await;
    }
    let service = app.into_make_service_with_connect_info::<SocketAddr>();
    axum::serve(listener, service)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}

/// A TLS acceptor of the certificate chain and key in these PEM files (rustls with ring).
fn tls_acceptor(cert: &Path, key: &Path) -> Result<tokio_rustls::TlsAcceptor> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let chain = CertificateDer::pem_file_iter(cert)
        .with_context(|| format!("cannot read {}", cert.display()))?
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("{}: not PEM certificates", cert.display()))?;
    let key = PrivateKeyDer::from_pem_file(key)
        .with_context(|| format!("{}: not a PEM private key", key.display()))?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .context("the TLS certificate and key do not go together")?;
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

/// Serves `app` over TLS until the process ends: each connection's handshake, then HTTP/1.1.
async fn serve_tls(
    listener: tokio::net::TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    app: axum::Router,
) -> Result<()> {
    use tower::ServiceExt;
    loop {
        let (stream, peer) = listener.accept().await?;
        let (acceptor, app) = (acceptor.clone(), app.clone());
        tokio::spawn(async move {
            let Ok(stream) = acceptor.accept(stream).await else {
                return;
            };
            let service = hyper::service::service_fn(
                move |mut request: hyper::Request<hyper::body::Incoming>| {
                    let app = app.clone();
                    request
                        .extensions_mut()
                        .insert(axum::extract::ConnectInfo(peer));
                    async move { app.oneshot(request.map(axum::body::Body::new)).await }
                },
            );
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

fn rand_seed() -> u64 {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_or(7, |()| u64::from_le_bytes(bytes))
}

async fn credit(args: CreditArgs) -> Result<()> {
    let (secret, _) = signing::read_secret_file(&args.secret_file)?;
    let request = CreditRequest {
        account_number: args.account,
        amount: args.amount,
        sender_account_number: args.sender_account,
        sender_bank_code: args.sender_bank,
        sender_name: args.sender_name,
        narration: args.narration,
        payment_reference: args.payment_reference,
    };
    let url = format!("{}{CREDIT_PATH}", args.provider_url.trim_end_matches('/'));
    let response = reqwest::Client::new()
        .post(&url)
        .bearer_auth(&secret)
        .json(&request)
        .send()
        .await
        .with_context(|| format!("cannot reach the simulator at {url}"))?;
    let status = response.status();
    if !status.is_success() {
        let text = response.text().await.unwrap_or_default();
        bail!("the simulator refused the credit ({status}): {text}");
    }
    let queued: CreditQueued = response.json().await?;
    println!("{}", queued.session_id);
    Ok(())
}
