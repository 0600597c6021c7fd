//! A webhook receiver for the tests: a real axum server on a loopback port that records every
//! delivery, and answers as the test says (2xx, at once or after a while, an error status, a
//! redirect, or nothing until released).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use generated_server::{Operation, ResponseCode};
use kobo::outbox::webhooks::signing;
use kobo::testkit::TestKit;
use serde_json::{json, Value};
use tokio::sync::Notify;

/// How the receiver answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Ok,
    Status(u16),
    Redirect,
    /// Holds every request until [`Receiver::release`].
    Hang,
    /// Answers 204 after this many milliseconds.
    Slow(u64),
}

/// One delivery as it arrived.
#[derive(Clone, Debug)]
pub struct Delivery {
    pub id: String,
    pub timestamp: String,
    pub signature: String,
    pub body: Vec<u8>,
    pub path: String,
}

impl Delivery {
    pub fn event(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
}

struct Inner {
    mode: Mutex<Mode>,
    deliveries: Mutex<Vec<Delivery>>,
    release: Notify,
}

pub struct Receiver {
    pub address: SocketAddr,
    inner: Arc<Inner>,
}

impl Receiver {
    pub async fn start() -> Receiver {
        let inner = Arc::new(Inner {
            mode: Mutex::new(Mode::Ok),
            deliveries: Mutex::new(Vec::new()),
            release: Notify::new(),
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let app = Router::new().fallback(receive).with_state(inner.clone());
        tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Receiver { address, inner }
    }

    pub fn url(&self) -> String {
        format!("http://{}/kobo/hooks", self.address)
    }

    pub fn set(&self, mode: Mode) {
        *self.inner.mode.lock().unwrap() = mode;
    }

    pub fn release(&self) {
        self.inner.release.notify_waiters();
    }

    pub fn deliveries(&self) -> Vec<Delivery> {
        self.inner.deliveries.lock().unwrap().clone()
    }

    /// How many times each `webhook-id` arrived.
    pub fn counts(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for delivery in self.deliveries() {
            *counts.entry(delivery.id).or_default() += 1;
        }
        counts
    }

    /// Waits (bounded) until at least `n` deliveries arrived.
    pub async fn wait_for(&self, n: usize) {
        for _ in 0..200 {
            if self.deliveries().len() >= n {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        panic!(
            "{n} deliveries did not arrive: {:?}",
            self.deliveries().len()
        );
    }
}

async fn receive(
    State(inner): State<Arc<Inner>>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let header = |name: &str| {
        headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default()
    };
    inner.deliveries.lock().unwrap().push(Delivery {
        id: header("webhook-id"),
        timestamp: header("webhook-timestamp"),
        signature: header("webhook-signature"),
        body: body.to_vec(),
        path: uri.path().to_owned(),
    });
    let mode = *inner.mode.lock().unwrap();
    match mode {
        Mode::Ok => StatusCode::NO_CONTENT.into_response(),
        Mode::Status(code) => (
            StatusCode::from_u16(code).unwrap(),
            format!("{{\"error\":\"status {code} on purpose\"}}"),
        )
            .into_response(),
        Mode::Redirect => (
            StatusCode::FOUND,
            [("location", "http://127.0.0.1:9/elsewhere")],
        )
            .into_response(),
        Mode::Slow(millis) => {
            tokio::time::sleep(std::time::Duration::from_millis(millis)).await;
            StatusCode::NO_CONTENT.into_response()
        }
        Mode::Hang => {
            inner.release.notified().await;
            StatusCode::OK.into_response()
        }
    }
}

/// Registers `url` as the business's endpoint (Dashboard token `token`); returns the secret.
pub async fn configure(kit: &TestKit, token: &str, url: &str, extra: Value) -> String {
    let mut body = json!({"url": url});
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    kit.op(Operation::WebhookConfiguration, token, body)
        .await
        .expect(ResponseCode::Success)["secret"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Checks `delivery`'s signature with `secret` at its own timestamp.
pub fn verifies(secret: &str, delivery: &Delivery) -> bool {
    let key = signing::key_of(secret).unwrap();
    let at: i64 = delivery.timestamp.parse().unwrap();
    signing::verify(
        &key,
        &delivery.id,
        &delivery.timestamp,
        &delivery.signature,
        &delivery.body,
        at,
    )
    .is_ok()
}

/// The business's delivery log, newest first.
pub async fn events(kit: &TestKit, token: &str, filters: Value) -> Vec<Value> {
    kit.op(
        Operation::FetchWebhookEvents,
        token,
        json!({"filters": filters, "limit": 100}),
    )
    .await
    .expect(ResponseCode::Success)
    .as_array()
    .unwrap()
    .clone()
}
