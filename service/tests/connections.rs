//! `kobo::http::serve_with` on a loopback socket, driven with raw TCP: silent, slow and idle
//! connections are closed within their timeouts, connections past the cap are closed at once,
//! and shutdown waits for requests in flight for a bounded time.
//!
//! The timeouts here are 1 s and the assertions allow 5 s: they check that a connection is
//! closed, not how fast.

use std::net::SocketAddr;
use std::time::Duration;

use kobo::http::HttpConfig;
use kobo::testkit::TestKit;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// How long a test waits for something the server must do within 1 s.
const PATIENCE: Duration = Duration::from_secs(5);

struct Server {
    address: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    serving: JoinHandle<std::io::Result<()>>,
    _kit: TestKit,
}

impl Server {
    async fn start(config: HttpConfig) -> Server {
        let kit = TestKit::sqlite().await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let app = kobo::http::app_with(kit.api.clone(), &config);
        let (stop, stopped) = oneshot::channel::<()>();
        let serving = tokio::spawn(async move {
            kobo::http::serve_with(
                listener,
                app,
                async {
                    let _ = stopped.await;
                },
                &config,
            )
            .await
        });
        Server {
            address,
            stop: Some(stop),
            serving,
            _kit: kit,
        }
    }

    async fn connect(&self) -> TcpStream {
        TcpStream::connect(self.address).await.unwrap()
    }

    fn shut_down(&mut self) {
        let _ = self.stop.take().unwrap().send(());
    }
}

fn short() -> HttpConfig {
    HttpConfig {
        header_read_timeout: Duration::from_secs(1),
        idle_timeout: Duration::from_secs(1),
        shutdown_timeout: Duration::from_secs(1),
        ..HttpConfig::default()
    }
}

/// True when the server closes `stream` (end of stream or reset) within [`PATIENCE`], reading
/// and dropping whatever it sends before.
async fn closed_by_server(stream: &mut TcpStream) -> bool {
    closed_silently(stream).await.is_some()
}

/// What the server sent before closing `stream` within [`PATIENCE`]; `None` if it did not
/// close it in time.
async fn closed_silently(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    let closing = async {
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => received.extend_from_slice(&buffer[..n]),
            }
        }
    };
    tokio::time::timeout(PATIENCE, closing).await.ok()?;
    Some(received)
}

/// Sends `GET /healthz` and reads its whole answer; returns the status line and body.
async fn healthz(stream: &mut TcpStream) -> (String, String) {
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: kobo\r\n\r\n")
        .await
        .unwrap();
    read_response(stream).await
}

/// Reads one response (headers, then `Content-Length` bytes of body).
async fn read_response(stream: &mut TcpStream) -> (String, String) {
    let mut bytes = Vec::new();
    let mut buffer = [0u8; 4096];
    let reading = async {
        loop {
            let n = stream.read(&mut buffer).await.unwrap();
            assert!(n > 0, "the connection closed mid-response: {bytes:?}");
            bytes.extend_from_slice(&buffer[..n]);
            let text = String::from_utf8_lossy(&bytes).to_string();
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length: usize = head
                    .lines()
                    .find_map(|line| {
                        let (name, value) = line.split_once(':')?;
                        name.eq_ignore_ascii_case("content-length")
                            .then(|| value.trim().parse().unwrap())
                    })
                    .expect("a Content-Length");
                if body.len() >= length {
                    let status = head.lines().next().unwrap().to_string();
                    return (status, body.to_string());
                }
            }
        }
    };
    tokio::time::timeout(PATIENCE, reading)
        .await
        .expect("a response in time")
}

#[tokio::test]
async fn a_connection_that_sends_nothing_is_closed_after_the_header_timeout() {
    let server = Server::start(short()).await;
    let mut silent = server.connect().await;

    assert_eq!(closed_silently(&mut silent).await, Some(Vec::new()));
}

#[tokio::test]
async fn a_connection_that_trickles_its_headers_is_closed_after_the_header_timeout() {
    let server = Server::start(short()).await;
    let mut slow = server.connect().await;
    let (mut reading, mut writing) = slow.split();
    writing
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: kobo\r\n")
        .await
        .unwrap();
    // A header byte every 200 ms: activity, but never the end of the headers.
    let trickle = async {
        for _ in 0..100 {
            tokio::time::sleep(Duration::from_millis(200)).await;
            if writing.write_all(b"X").await.is_err() {
                break;
            }
        }
    };
    let mut buffer = [0u8; 1024];
    let closed = async {
        if let Ok(n) = reading.read(&mut buffer).await {
            assert_eq!(n, 0, "no answer is due: {:?}", &buffer[..n]);
        }
    };
    let outcome = tokio::time::timeout(PATIENCE, async {
        tokio::select! {
            () = closed => true,
            () = trickle => false,
        }
    })
    .await;

    assert_eq!(outcome, Ok(true), "closed while still trickling");
}

#[tokio::test]
async fn a_kept_alive_connection_is_closed_after_the_idle_timeout() {
    let server = Server::start(HttpConfig {
        header_read_timeout: Duration::from_secs(30),
        ..short()
    })
    .await;
    let mut stream = server.connect().await;
    let (status, body) = healthz(&mut stream).await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(body, r#"{"status":"ok"}"#);
    // Kept alive: a second request on the same connection is served.
    assert_eq!(healthz(&mut stream).await.0, "HTTP/1.1 200 OK");

    assert!(closed_by_server(&mut stream).await);
}

#[tokio::test]
async fn connections_past_the_cap_are_closed_while_the_first_ones_are_served() {
    let server = Server::start(HttpConfig {
        max_connections: 2,
        idle_timeout: Duration::from_secs(60),
        header_read_timeout: Duration::from_secs(60),
        ..short()
    })
    .await;
    let mut first = server.connect().await;
    let mut second = server.connect().await;
    assert_eq!(healthz(&mut first).await.0, "HTTP/1.1 200 OK");
    assert_eq!(healthz(&mut second).await.0, "HTTP/1.1 200 OK");

    let mut third = server.connect().await;
    let _ = third
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: kobo\r\n\r\n")
        .await;
    assert!(closed_by_server(&mut third).await, "the third is closed");

    assert_eq!(healthz(&mut first).await.0, "HTTP/1.1 200 OK");
    assert_eq!(healthz(&mut second).await.0, "HTTP/1.1 200 OK");
    // Once one leaves, a newcomer gets its place (as soon as the server has seen it go).
    drop(first);
    let admitted = tokio::time::timeout(PATIENCE, async {
        loop {
            let mut newcomer = server.connect().await;
            if newcomer
                .write_all(b"GET /healthz HTTP/1.1\r\nHost: kobo\r\n\r\n")
                .await
                .is_ok()
            {
                let mut buffer = [0u8; 64];
                if let Ok(n) = newcomer.read(&mut buffer).await {
                    if buffer[..n].starts_with(b"HTTP/1.1 200") {
                        return;
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(admitted.is_ok(), "a place freed up is given again");
}

#[tokio::test]
async fn at_shutdown_a_request_in_flight_is_finished_and_idle_connections_are_closed() {
    let mut server = Server::start(HttpConfig {
        shutdown_timeout: Duration::from_secs(30),
        ..short()
    })
    .await;
    let mut idle = server.connect().await;
    assert_eq!(healthz(&mut idle).await.0, "HTTP/1.1 200 OK");
    // A request whose body is on its way when the signal comes.
    let mut busy = server.connect().await;
    busy.write_all(
        b"POST /api/v1/auth/web/get_profile HTTP/1.1\r\nHost: kobo\r\n\
          Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{",
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;

    server.shut_down();

    assert!(closed_by_server(&mut idle).await, "the idle one closes");
    busy.write_all(b"}").await.unwrap();
    let (status, body) = read_response(&mut busy).await;
    assert_eq!(status, "HTTP/1.1 401 Unauthorized", "{body}");
    assert!(body.contains(r#""response_code":"41""#), "{body}");
    assert!(closed_by_server(&mut busy).await, "then it closes too");
    let served = tokio::time::timeout(PATIENCE, &mut server.serving).await;
    assert!(matches!(served, Ok(Ok(Ok(())))), "{served:?}");
}

#[tokio::test]
async fn shutdown_gives_up_on_requests_in_flight_after_its_timeout() {
    let mut server = Server::start(HttpConfig {
        request_timeout: Duration::from_secs(3600),
        ..short()
    })
    .await;
    let mut stuck = server.connect().await;
    stuck
        .write_all(
            b"POST /api/v1/auth/web/get_profile HTTP/1.1\r\nHost: kobo\r\n\
              Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{",
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;

    server.shut_down();

    let served = tokio::time::timeout(PATIENCE, &mut server.serving).await;
    assert!(matches!(served, Ok(Ok(Ok(())))), "{served:?}");
    assert!(closed_by_server(&mut stuck).await);
}
