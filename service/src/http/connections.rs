//! The socket side of [`super::serve_with`]: an accept loop and one HTTP/1.1 connection per task
//! (hyper), with the limits `axum::serve` does not have.
//!
//! - **Connection cap** (`max_connections`): a connection accepted beyond it is closed at once,
//!   and a warning says so, at most once per [`CAP_WARNING_INTERVAL`].
//! - **Header-read timeout**: a connection must deliver a request's headers within
//!   `header_read_timeout` of opening, or of the first byte of a request that follows an idle
//!   spell. Slow-header and silent connections are dropped.
//! - **Idle timeout**: a kept-alive connection waits at most `idle_timeout` for its next request,
//!   and a client has as long to read a response.
//! - The body is bounded by the request's deadline (`request_timeout`, in the runtime).
//! - **Shutdown**: after the signal the listener closes, idle connections close, connections
//!   with a request in flight finish it (keep-alive off), and after `shutdown_timeout` whatever
//!   is left is dropped.
//!
//! Each connection has a [`Watch`]: the phase it is in (waiting for a head, handling a request,
//! writing a response, idle) and the instant that phase must end by. A watchdog beside the
//! connection drops it when that instant passes. No request is in flight in the phases that
//! have one, so dropping never cuts an operation short.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::ConnectInfo;
use axum::http::Request;
use axum::Router;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tower::ServiceExt;

use super::HttpConfig;

/// The least time between two warnings that the connection cap turned connections away.
pub const CAP_WARNING_INTERVAL: Duration = Duration::from_secs(10);
/// The pause after an accept error that is not the client's (out of descriptors, say).
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_secs(1);

/// Serves `app` on `listener` until `shutdown` resolves; see the module's documentation.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    config: &HttpConfig,
) -> std::io::Result<()> {
    let (closing, closing_seen) = watch::channel(false);
    let mut connections = JoinSet::new();
    let mut cap_warning = CapWarning::default();
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        while connections.try_join_next().is_some() {}
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) if is_the_clients(&error) => continue,
            Err(error) => {
                tracing::error!(%error, "cannot accept a connection");
                tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                continue;
            }
        };
        if connections.len() >= config.max_connections {
            drop(stream);
            cap_warning.refused(config.max_connections);
            continue;
        }
        let limits = Limits::from(config);
        connections.spawn(connection(
            stream,
            peer,
            app.clone(),
            limits,
            closing_seen.clone(),
        ));
    }
    drop(listener);
    let _ = closing.send(true);
    let open = connections.len();
    tracing::info!(
        open_connections = open,
        "no longer accepting connections; finishing the requests in flight"
    );
    let drained = tokio::time::timeout(config.shutdown_timeout, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            open_connections = connections.len(),
            timeout_seconds = config.shutdown_timeout.as_secs(),
            "shutdown timeout: dropping the connections still open"
        );
        connections.shutdown().await;
    }
    Ok(())
}

/// Errors of one client's connection attempt, not of the listener.
fn is_the_clients(error: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    matches!(
        error.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    )
}

/// Counts connections refused at the cap and warns at most once per [`CAP_WARNING_INTERVAL`].
#[derive(Default)]
struct CapWarning {
    last: Option<Instant>,
    refused_since: u64,
}

impl CapWarning {
    fn refused(&mut self, max_connections: usize) {
        self.refused_since += 1;
        let now = Instant::now();
        if self
            .last
            .is_some_and(|last| now.duration_since(last) < CAP_WARNING_INTERVAL)
        {
            return;
        }
        tracing::warn!(
            max_connections,
            refused_since_last_warning = self.refused_since,
            "connection cap reached: closing new connections (--max-connections)"
        );
        self.last = Some(now);
        self.refused_since = 0;
    }
}

/// The per-connection numbers of [`HttpConfig`].
#[derive(Clone, Copy, Debug)]
struct Limits {
    header_read_timeout: Duration,
    idle_timeout: Duration,
}

impl From<&HttpConfig> for Limits {
    fn from(config: &HttpConfig) -> Self {
        Limits {
            header_read_timeout: config.header_read_timeout,
            idle_timeout: config.idle_timeout,
        }
    }
}

/// Where a connection is, and by when it must have moved on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Waiting for the rest of a request's headers.
    Head { by: Instant },
    /// A request is being handled: its own deadline applies, not the connection's.
    Handling,
    /// The response is being written: the client must read it in time.
    Responding { by: Instant },
    /// Kept alive between requests.
    Idle { by: Instant },
}

impl Phase {
    fn deadline(self) -> Option<Instant> {
        match self {
            Phase::Head { by } | Phase::Responding { by } | Phase::Idle { by } => Some(by),
            Phase::Handling => None,
        }
    }

    fn why(self) -> &'static str {
        match self {
            Phase::Head { .. } => "no complete request headers in time",
            Phase::Responding { .. } => "the client did not read its response in time",
            Phase::Idle { .. } => "idle for too long",
            Phase::Handling => "handling a request",
        }
    }
}

/// A connection's [`Phase`], shared by the socket, the service and the watchdog.
struct Watch {
    phase: Mutex<Phase>,
    changed: Notify,
    limits: Limits,
}

impl Watch {
    fn new(limits: Limits) -> Watch {
        Watch {
            phase: Mutex::new(Phase::Head {
                by: Instant::now() + limits.header_read_timeout,
            }),
            changed: Notify::new(),
            limits,
        }
    }

    fn phase(&self) -> Phase {
        *self.phase.lock().expect("the phase lock is never poisoned")
    }

    fn set(&self, phase: Phase) {
        *self.phase.lock().expect("the phase lock is never poisoned") = phase;
        self.changed.notify_one();
    }

    /// Bytes arrived: after an idle spell they start a request's headers.
    fn received(&self) {
        let mut phase = self.phase.lock().expect("the phase lock is never poisoned");
        if let Phase::Idle { .. } = *phase {
            *phase = Phase::Head {
                by: Instant::now() + self.limits.header_read_timeout,
            };
            drop(phase);
            self.changed.notify_one();
        }
    }

    fn handling(&self) {
        self.set(Phase::Handling);
    }

    fn responding(&self) {
        self.set(Phase::Responding {
            by: Instant::now() + self.limits.idle_timeout,
        });
    }

    fn responded(&self) {
        self.set(Phase::Idle {
            by: Instant::now() + self.limits.idle_timeout,
        });
    }

    /// Resolves, with the phase, once the phase's deadline has passed.
    async fn expired(&self) -> Phase {
        loop {
            let phase = self.phase();
            match phase.deadline() {
                Some(by) if by <= Instant::now() => return phase,
                Some(by) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(by) => {}
                        () = self.changed.notified() => {}
                    }
                }
                None => self.changed.notified().await,
            }
        }
    }
}

/// Serves one connection until it ends, its watchdog drops it, or shutdown closes it.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    app: Router,
    limits: Limits,
    mut closing: watch::Receiver<bool>,
) {
    let watch = Arc::new(Watch::new(limits));
    let io = TokioIo::new(Watched {
        stream,
        watch: watch.clone(),
    });
    let service_watch = watch.clone();
    let service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
        let watch = service_watch.clone();
        let app = app.clone();
        watch.handling();
        request.extensions_mut().insert(ConnectInfo(peer));
        async move {
            let response = match app.oneshot(request.map(Body::new)).await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            watch.responding();
            Ok::<_, Infallible>(response.map(|body| Guarded { body, watch }))
        }
    });
    let connection = http1::Builder::new().serve_connection(io, service);
    tokio::pin!(connection);
    let mut finishing = false;
    loop {
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(%peer, %error, "connection ended with an error");
                }
                return;
            }
            phase = watch.expired() => {
                tracing::debug!(%peer, why = phase.why(), "closing the connection");
                return;
            }
            _ = closing.wait_for(|closing| *closing), if !finishing => {
                match watch.phase() {
                    // Nothing started: close now.
                    Phase::Head { .. } | Phase::Idle { .. } => return,
                    // Finish the response, then close.
                    Phase::Handling | Phase::Responding { .. } => {
                        connection.as_mut().graceful_shutdown();
                        finishing = true;
                    }
                }
            }
        }
    }
}

/// The socket, telling the [`Watch`] when bytes arrive.
struct Watched {
    stream: TcpStream,
    watch: Arc<Watch>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.stream).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.watch.received();
        }
        poll
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

/// A response body that tells the [`Watch`] when hyper is done with it (written or dropped).
struct Guarded {
    body: Body,
    watch: Arc<Watch>,
}

impl Drop for Guarded {
    fn drop(&mut self) {
        self.watch.responded();
    }
}

impl hyper::body::Body for Guarded {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            header_read_timeout: Duration::from_secs(5),
            idle_timeout: Duration::from_secs(60),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn each_phase_has_its_own_deadline_and_handling_has_none() {
        let watch = Watch::new(limits());
        let opened = Instant::now();
        assert_eq!(
            watch.phase(),
            Phase::Head {
                by: opened + Duration::from_secs(5)
            }
        );
        watch.handling();
        assert_eq!(watch.phase().deadline(), None);
        watch.received();
        assert_eq!(watch.phase(), Phase::Handling, "body bytes change nothing");
        watch.responding();
        watch.responded();
        let idle_since = Instant::now();
        assert_eq!(
            watch.phase(),
            Phase::Idle {
                by: idle_since + Duration::from_secs(60)
            }
        );
        tokio::time::advance(Duration::from_secs(30)).await;
        watch.received();
        assert_eq!(
            watch.phase(),
            Phase::Head {
                by: Instant::now() + Duration::from_secs(5)
            },
            "the first byte after an idle spell starts the header clock"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_watchdog_fires_at_the_deadline_of_the_phase_it_is_in() {
        let watch = Arc::new(Watch::new(limits()));
        watch.handling();
        let watchdog = tokio::spawn({
            let watch = watch.clone();
            async move { watch.expired().await }
        });
        tokio::time::advance(Duration::from_secs(3600)).await;
        assert!(!watchdog.is_finished(), "no deadline while handling");
        watch.responding();
        watch.responded();
        let phase = watchdog.await.unwrap();
        assert!(matches!(phase, Phase::Idle { .. }), "{phase:?}");
    }
}
