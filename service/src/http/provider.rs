//! `POST /provider/v1/inbound_credit`: the core banking provider tells Kobo that NIP credited
//! one of its accounts (`spec/provider.yaml`, `x-webhooks` `nip.inbound_credit`).
//!
//! Served only when Kobo runs on a provider over the network (`--provider-url`), whose shared
//! secret signs the notification (Standard Webhooks: a timestamp more than 5 minutes from this
//! clock or a wrong signature is `401`). The body is read as the document's `InboundCredit`
//! (`400` otherwise), then booked once per NIP session (`money::inbound::book_notified`):
//! `200` whether booked now or before, so the provider stops sending it. An account Kobo
//! does not hold is `404`; one that cannot receive, or a session booked before with another
//! account or amount, `409`: the provider keeps the notification and sends it again, for an
//! operator to see. A database that cannot be reached is `503`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use generated_server::ResponseCode;
use serde_json::json;

use super::KoboApi;
use crate::kernel::text;
use crate::money::amount::Kobo;
use crate::money::inbound::{self, Booked, InboundCredit};
use crate::money::transactions::Originator;
use crate::outbox::webhooks::signing;

/// Where the provider sends its notifications.
pub const NOTIFICATION_PATH: &str = "/provider/v1/inbound_credit";

impl KoboApi {
    /// Accepts the notifications of a provider over the network, signed with `key` (the
    /// shared secret's, `signing::key_of`).
    pub fn with_provider_notifications(mut self, key: Vec<u8>) -> KoboApi {
        self.provider_key = Some(key);
        self
    }
}

pub(crate) fn routes(api: Arc<KoboApi>) -> Router {
    Router::new()
        .route(NOTIFICATION_PATH, post(inbound_credit))
        .with_state(api)
}

fn answer(status: StatusCode, message: impl Into<String>) -> Response {
    let body = json!({"status": status.is_success(), "message": message.into()});
    (
        status,
        [(CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
}

async fn inbound_credit(
    State(api): State<Arc<KoboApi>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(key) = api.provider_key.as_deref() else {
        return answer(
            StatusCode::NOT_FOUND,
            "Kobo takes provider notifications only on a provider over the network",
        );
    };
    let verified = signing::verify(
        key,
        header(&headers, "webhook-id"),
        header(&headers, "webhook-timestamp"),
        header(&headers, "webhook-signature"),
        &body,
        api.clock().now().timestamp(),
    );
    if let Err(refusal) = verified {
        tracing::warn!(%refusal, "a provider notification refused");
        return answer(StatusCode::UNAUTHORIZED, refusal.to_string());
    }
    let credit = match read(&body, api.config().environment) {
        Ok(credit) => credit,
        Err(message) => return answer(StatusCode::BAD_REQUEST, message),
    };
    match inbound::book_notified(api.store(), api.clock(), &credit).await {
        Ok(Booked::Now(id)) => answer(StatusCode::OK, format!("booked as {id}")),
        Ok(Booked::Before(id)) => answer(StatusCode::OK, format!("booked before as {id}")),
        Err(error) => {
            let code = error.code();
            let status = match code {
                ResponseCode::AccountNotFound => StatusCode::NOT_FOUND,
                ResponseCode::InvalidState => StatusCode::CONFLICT,
                _ => StatusCode::SERVICE_UNAVAILABLE,
            };
            if status == StatusCode::SERVICE_UNAVAILABLE {
                tracing::error!(error = %error.chain(), "a provider notification could not be booked");
                return answer(
                    status,
                    "the notification could not be booked now: send it again",
                );
            }
            answer(status, error.message())
        }
    }
}

/// The notification's body as the credit to book, or why it is not one.
fn read(
    body: &[u8],
    environment: crate::kernel::config::Environment,
) -> Result<InboundCredit, String> {
    let notified: provider_client::types::InboundCredit =
        serde_json::from_slice(body).map_err(|error| format!("the body: {error}"))?;
    let amount = Kobo::parse(notified.amount.as_str())
        .ok_or_else(|| "`amount`: must be positive".to_string())?;
    let name = notified.originator_account_name.as_str();
    let narration = notified.narration.as_str();
    text::check_name("originator_account_name", name).map_err(|e| e.message().to_owned())?;
    text::check_name("narration", narration).map_err(|e| e.message().to_owned())?;
    let bank_code = notified.originator_institution_code.to_string();
    // Money between Kobo's own accounts moves by funds_transfer, in one transaction: a credit
    // from "another bank" that names Kobo is no credit the network can make.
    if bank_code == crate::money::nuban::BANK_CODE {
        return Err(format!(
            "`originator_institution_code`: {bank_code} is Kobo's own: an inbound credit comes \
             from another bank"
        ));
    }
    Ok(InboundCredit {
        session_id: Some(notified.session_id.to_string()),
        account_number: notified.beneficiary_account_number.to_string(),
        amount,
        narration: narration.trim().to_owned(),
        originator: Originator {
            account_number: notified.originator_account_number.to_string(),
            account_name: name.trim().to_owned(),
            bank_name: inbound::bank_name(&bank_code),
            bank_code,
        },
        environment,
    })
}
