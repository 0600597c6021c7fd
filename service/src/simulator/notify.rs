//! Inbound credits: `kobo-provider credit` asks the simulator (`POST /simulator/credit`, the
//! shared secret as its bearer token) to tell Kobo that NIP credited one of its accounts. The
//! simulator keeps the notification (`state`) before it answers, then sends it to Kobo's
//! notification URL, signed (Standard Webhooks, keyed by the shared secret), until Kobo answers
//! 2xx: after a restart too, and with the same `webhook-id` and body on every attempt, so Kobo
//! books it once.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State as Extract;
use axum::http::{HeaderMap, StatusCode};
use serde::{Deserialize, Serialize};

use super::state::State;
use crate::kernel::clock::Clock;
use crate::kernel::secrets;
use crate::money::amount::Kobo;
use crate::outbox::webhooks::signing;

/// What `kobo-provider credit` sends the simulator.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct CreditRequest {
    pub account_number: String,
    /// Naira, two decimals at most: `"15000.00"`.
    pub amount: String,
    pub sender_account_number: String,
    pub sender_bank_code: String,
    pub sender_name: String,
    pub narration: Option<String>,
    /// The sender's reference: asking again under it answers the credit queued before, so a
    /// caller whose answer was lost asks again safely. A new one when absent.
    pub payment_reference: Option<String>,
}

/// What it answers: the NIP session of the credit, by which Kobo books it once.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct CreditQueued {
    pub session_id: String,
}

/// What the credit route needs.
pub struct Credits {
    pub state: State,
    pub clock: Clock,
    pub secret: String,
}

fn refuse(status: StatusCode, message: impl Into<String>) -> (StatusCode, String) {
    (status, message.into())
}

fn digits(value: &str, count: usize) -> bool {
    value.len() == count && value.bytes().all(|b| b.is_ascii_digit())
}

/// `POST /simulator/credit`: queues the notification of an inbound credit.
pub async fn credit(
    Extract(credits): Extract<Arc<Credits>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<String, (StatusCode, String)> {
    let presented = headers
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or_default();
    if !secrets::is_the_secret(presented, &credits.secret) {
        return Err(refuse(
            StatusCode::UNAUTHORIZED,
            "the shared secret is missing or wrong",
        ));
    }
    let request: CreditRequest = serde_json::from_slice(&body)
        .map_err(|error| refuse(StatusCode::BAD_REQUEST, format!("the body: {error}")))?;
    let amount = Kobo::parse(&request.amount).ok_or_else(|| {
        refuse(
            StatusCode::BAD_REQUEST,
            "amount: positive, two decimals at most",
        )
    })?;
    if !digits(&request.account_number, 10) || !digits(&request.sender_account_number, 10) {
        return Err(refuse(
            StatusCode::BAD_REQUEST,
            "account numbers are 10 digits",
        ));
    }
    if !digits(&request.sender_bank_code, 6) {
        return Err(refuse(
            StatusCode::BAD_REQUEST,
            "sender_bank_code: 6 digits",
        ));
    }
    // As `InboundCredit` allows them: Kobo would refuse the notification for ever otherwise.
    let sized = |text: &str| !text.trim().is_empty() && text.chars().count() <= 100;
    if !sized(&request.sender_name) || !request.narration.as_deref().is_none_or(sized) {
        return Err(refuse(
            StatusCode::BAD_REQUEST,
            "sender_name and narration: 1 to 100 characters",
        ));
    }
    let now = credits.clock.now();
    let session_id = crate::provider::new_session_id(&request.sender_bank_code, now);
    let reference = request
        .payment_reference
        .clone()
        .unwrap_or_else(|| format!("SIM-{}", &session_id[18..]));
    if reference.is_empty() || reference.len() > 100 {
        return Err(refuse(
            StatusCode::BAD_REQUEST,
            "payment_reference: 1 to 100 characters",
        ));
    }
    let narration = request.narration.clone().unwrap_or_else(|| {
        let default = format!("Transfer from {}", request.sender_name);
        default.chars().take(100).collect()
    });
    let body = serde_json::json!({
        "session_id": session_id,
        "originator_institution_code": request.sender_bank_code,
        "originator_account_number": request.sender_account_number,
        "originator_account_name": request.sender_name,
        "beneficiary_account_number": request.account_number,
        "narration": narration,
        "payment_reference": reference,
        "amount": amount.to_string(),
        "credited_at": now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    });
    let id = uuid::Uuid::new_v4().to_string();
    let session_id = credits
        .state
        .queue_notification(&id, &session_id, &reference, &body.to_string(), now)
        .await
        .map_err(|error| refuse(StatusCode::INTERNAL_SERVER_ERROR, format!("{error:#}")))?;
    let queued = serde_json::to_string(&CreditQueued { session_id })
        .map_err(|error| refuse(StatusCode::INTERNAL_SERVER_ERROR, error.to_string()))?;
    Ok(queued)
}

/// The delay before attempt `attempts + 1`: 1, 2, 4 ... seconds, at most 30.
fn backoff(attempts: i64) -> Duration {
    Duration::from_secs(1u64 << attempts.clamp(0, 5)).min(Duration::from_secs(30))
}

/// Sends every due notification to `url`, for ever: each one until Kobo answers 2xx.
pub async fn deliver(state: State, clock: Clock, url: String, secret: String) {
    let key = match signing::key_of(&secret) {
        Ok(key) => key,
        Err(error) => {
            tracing::error!(%error, "the shared secret cannot sign notifications");
            return;
        }
    };
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .expect("a plain HTTP client builds");
    loop {
        let due = state.due(clock.now()).await.unwrap_or_else(|error| {
            tracing::error!(error = %format!("{error:#}"), "cannot read the notifications");
            Vec::new()
        });
        for pending in due {
            let timestamp = clock.now().timestamp();
            let signature = signing::signature_header(
                std::slice::from_ref(&key),
                &pending.id,
                timestamp,
                pending.body.as_bytes(),
            );
            let sent = http
                .post(&url)
                .header("content-type", "application/json")
                .header("webhook-id", &pending.id)
                .header("webhook-timestamp", timestamp.to_string())
                .header("webhook-signature", signature)
                .body(pending.body.clone())
                .send()
                .await;
            let acknowledged = matches!(&sent, Ok(response) if response.status().is_success());
            let outcome = match acknowledged {
                true => state.delivered(&pending.id, clock.now()).await,
                false => {
                    let status = sent
                        .map(|r| r.status().to_string())
                        .unwrap_or_else(|e| e.to_string());
                    tracing::warn!(id = %pending.id, attempts = pending.attempts + 1, %status, "Kobo did not acknowledge a notification");
                    let next = clock.now() + backoff(pending.attempts);
                    state.retry_at(&pending.id, next).await
                }
            };
            if let Err(error) = outcome {
                tracing::error!(error = %format!("{error:#}"), "cannot record a notification's attempt");
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
