//! TLS to a provider over the network. The generated client (`provider-client`: progenitor on
//! reqwest) is built without TLS in this workspace: reqwest's rustls needs a crypto provider
//! installed in every process that builds a client, the tests' included. So an `https://`
//! provider is reached through a forwarder in this process: a loopback listener the client
//! calls over plain HTTP, which sends each request on to the provider over TLS (rustls with
//! ring, as the webhooks; the Mozilla roots, or those of `--provider-ca-file`) and its answer
//! back. Bodies are whole messages of at most [`BODY_LIMIT`] each way; a provider that cannot
//! be reached or answers too much is a `502`, which the client reads as the provider down.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};

/// The largest body forwarded either way.
pub const BODY_LIMIT: usize = 1024 * 1024;

type Https = Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>;

/// The roots a provider's certificate must chain to: the PEM file's, or the Mozilla roots.
pub fn roots(ca_file: Option<&std::path::Path>) -> Result<rustls::RootCertStore> {
    let Some(path) = ca_file else {
        return Ok(rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        });
    };
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_file_iter(path)
        .with_context(|| format!("cannot read the provider's CA file {}", path.display()))?
    {
        let cert = cert.with_context(|| format!("{}: not a PEM certificate", path.display()))?;
        roots
            .add(cert)
            .with_context(|| format!("{}: a certificate rustls refuses", path.display()))?;
    }
    if roots.is_empty() {
        anyhow::bail!("{}: no certificate in it", path.display());
    }
    Ok(roots)
}

/// Starts forwarding to `origin` (`https://host:port`, no path) from a loopback port; returns
/// the plain `http://127.0.0.1:PORT` the client is to call.
pub async fn forward(origin: &url::Url, roots: rustls::RootCertStore) -> Result<String> {
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .context("ring supports the default TLS versions")?
    .with_root_certificates(roots)
    .with_no_client_auth();
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_connect_timeout(Some(Duration::from_secs(5)));
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_only()
        .enable_http1()
        .wrap_connector(http);
    let client: Https = Client::builder(TokioExecutor::new()).build(https);
    let authority = match origin.port() {
        Some(port) => format!("{}:{port}", origin.host_str().unwrap_or_default()),
        None => origin.host_str().unwrap_or_default().to_owned(),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let local = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let (client, authority) = (client.clone(), authority.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                    let (client, authority) = (client.clone(), authority.clone());
                    async move { Ok::<_, Infallible>(relay(&client, &authority, request).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(local)
}

/// One request to the provider and its answer, or a `502` saying why there is none.
async fn relay(
    client: &Https,
    authority: &str,
    request: Request<Incoming>,
) -> Response<Full<Bytes>> {
    match try_relay(client, authority, request).await {
        Ok(response) => response,
        Err(error) => {
            tracing::warn!(error = %format!("{error:#}"), "the provider over TLS did not answer");
            let mut response =
                Response::new(Full::new(Bytes::from_static(b"provider unreachable")));
            *response.status_mut() = StatusCode::BAD_GATEWAY;
            response
        }
    }
}

async fn try_relay(
    client: &Https,
    authority: &str,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>> {
    let (mut parts, body) = request.into_parts();
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    parts.uri = Uri::builder()
        .scheme("https")
        .authority(authority)
        .path_and_query(path)
        .build()?;
    parts.headers.remove(hyper::header::HOST);
    let body = Limited::new(body, BODY_LIMIT)
        .collect()
        .await
        .map_err(|error| anyhow::anyhow!("the request's body: {error}"))?
        .to_bytes();
    let answer = client
        .request(Request::from_parts(parts, Full::new(body)))
        .await
        .context("the provider over TLS")?;
    let (parts, body) = answer.into_parts();
    let body = Limited::new(body, BODY_LIMIT)
        .collect()
        .await
        .map_err(|error| anyhow::anyhow!("the provider's answer: {error}"))?
        .to_bytes();
    Ok(Response::from_parts(parts, Full::new(body)))
}
