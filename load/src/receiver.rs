//! A partner's webhook endpoint: verifies every delivery's Standard Webhooks signature with its
//! own HMAC (not kobo's code), counts deliveries by `webhook-id`, and can be taken down (it
//! answers 503, as a receiver behind a load balancer whose backends are gone) and brought back.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

/// What the endpoint saw.
#[derive(Default)]
pub struct Received {
    /// `webhook-id` -> (event type, the payload's `data`), the first good delivery of each.
    pub events: BTreeMap<String, (String, Value)>,
    /// Good deliveries in all, repeats included.
    pub deliveries: u64,
    /// Deliveries whose signature did not verify, or that lacked the headers.
    pub bad_signatures: u64,
    /// Deliveries for a business the receiver has no secret for.
    pub unknown_business: u64,
    /// Deliveries whose `webhook-id` differs from the payload's `id`.
    pub id_mismatch: u64,
}

/// The endpoint: one path per business (`/hooks/<index>`), each with its secret.
#[derive(Clone, Default)]
pub struct Receiver {
    secrets: Arc<Mutex<BTreeMap<usize, Vec<u8>>>>,
    pub received: Arc<Mutex<Received>>,
    down: Arc<AtomicBool>,
}

impl Receiver {
    /// Serves on a free loopback port; answers its base URL.
    pub async fn start(&self) -> anyhow::Result<String> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let app = Router::new()
            .route("/hooks/{business}", post(deliver))
            .with_state(self.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(format!("http://{address}"))
    }

    /// The secret (`whsec_<base64>`) kobo gave business `index`'s endpoint.
    pub fn add_secret(&self, index: usize, secret: &str) -> anyhow::Result<()> {
        let key = STANDARD.decode(secret.strip_prefix("whsec_").unwrap_or(secret))?;
        self.secrets.lock().unwrap().insert(index, key);
        Ok(())
    }

    pub fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
    }

    pub fn ids(&self) -> BTreeSet<String> {
        self.received
            .lock()
            .unwrap()
            .events
            .keys()
            .cloned()
            .collect()
    }
}

async fn deliver(
    State(receiver): State<Receiver>,
    Path(business): Path<usize>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    if receiver.down.load(Ordering::SeqCst) {
        return StatusCode::SERVICE_UNAVAILABLE;
    }
    let key = receiver.secrets.lock().unwrap().get(&business).cloned();
    let mut received = receiver.received.lock().unwrap();
    let Some(key) = key else {
        received.unknown_business += 1;
        return StatusCode::NOT_FOUND;
    };
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let (Some(id), Some(timestamp), Some(signatures)) = (
        header("webhook-id"),
        header("webhook-timestamp"),
        header("webhook-signature"),
    ) else {
        received.bad_signatures += 1;
        return StatusCode::BAD_REQUEST;
    };
    if !verify(&key, id, timestamp, &body, signatures) {
        received.bad_signatures += 1;
        return StatusCode::UNAUTHORIZED;
    }
    let payload: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if payload.get("id").and_then(Value::as_str) != Some(id) {
        received.id_mismatch += 1;
    }
    received.deliveries += 1;
    let kind = payload
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let data = payload.get("data").cloned().unwrap_or(Value::Null);
    received.events.entry(id.to_owned()).or_insert((kind, data));
    StatusCode::NO_CONTENT
}

/// Standard Webhooks: HMAC-SHA256 of `id.timestamp.body`, base64, in one of the
/// space-separated `v1,<signature>` entries.
pub fn verify(key: &[u8], id: &str, timestamp: &str, body: &[u8], signatures: &str) -> bool {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body);
    let expected = mac.finalize().into_bytes();
    signatures.split(' ').any(|entry| {
        entry
            .strip_prefix("v1,")
            .and_then(|sig| STANDARD.decode(sig).ok())
            .is_some_and(|sig| {
                // Constant-time enough for a test receiver; the comparison is of equal lengths.
                sig.len() == expected.len()
                    && sig
                        .iter()
                        .zip(expected.iter())
                        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                        == 0
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verifies_the_standard_webhooks_example() {
        // The example of the Standard Webhooks specification.
        let key = STANDARD.decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = br#"{"test": 2432232314}"#;
        let good = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
        assert!(verify(
            &key,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            "1614265330",
            body,
            good
        ));
        assert!(verify(
            &key,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            "1614265330",
            body,
            &format!("v1,bm9wZQ== {good}")
        ));
        assert!(!verify(
            &key,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            "1614265331",
            body,
            good
        ));
        assert!(!verify(
            &key,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            "1614265330",
            b"{}",
            good
        ));
    }
}
