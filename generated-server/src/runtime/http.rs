//! Envelopes on the wire, the request id, the fallbacks and the documentation routes.

use axum::body::Body;
use axum::extract::Request;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, LOCATION, RETRY_AFTER,
    X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use serde::Serialize;
use serde_json::value::RawValue;

use super::{ApiError, REQUEST_ID_HEADER};
use crate::ResponseCode;

const IDEMPOTENT_REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");
const REQUEST_ID_MAX_LENGTH: usize = 128;

#[derive(Serialize)]
struct SuccessEnvelope<'a> {
    status: bool,
    response_code: ResponseCode,
    message: &'a str,
    data: Box<RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pagination: Option<Box<RawValue>>,
}

#[derive(Serialize)]
struct ErrorEnvelope<'a> {
    status: bool,
    response_code: ResponseCode,
    message: &'a str,
    data: Option<()>,
}

/// `200` with the success envelope; `replayed` is `Some` on idempotent operations.
pub(crate) fn success_response(
    message: &str,
    data: Box<RawValue>,
    pagination: Option<Box<RawValue>>,
    replayed: Option<bool>,
) -> Response {
    let envelope = SuccessEnvelope {
        status: true,
        response_code: ResponseCode::SUCCESS,
        message,
        data,
        pagination,
    };
    let mut response = json_response(StatusCode::OK, &envelope);
    if let Some(replayed) = replayed {
        response.headers_mut().insert(
            IDEMPOTENT_REPLAYED,
            HeaderValue::from_static(if replayed { "true" } else { "false" }),
        );
    }
    response
}

/// Marks an error answer as the stored answer of an earlier request with the same
/// `Idempotency-Key` (a refusal that lasts, replayed).
pub(crate) fn mark_replayed_error(response: &mut Response) {
    response
        .headers_mut()
        .insert(IDEMPOTENT_REPLAYED, HeaderValue::from_static("true"));
}

/// The error envelope with the HTTP status the catalog gives the code.
pub(crate) fn error_response(error: &ApiError) -> Response {
    let envelope = ErrorEnvelope {
        status: false,
        response_code: error.code(),
        message: error.public_message(),
        data: None,
    };
    let status = StatusCode::from_u16(error.code().http_status())
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = json_response(status, &envelope);
    if let Some(seconds) = error.retry_after_seconds() {
        response
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

/// The server-log line of an internal error (`96`): its detail and where it was made, with the
/// operation and request id when known. The client gets only the code's default message.
pub(crate) fn log_internal(error: &ApiError, request: Option<(crate::Operation, &str)>) {
    tracing::error!(
        operation = request.map(|(operation, _)| operation.id()),
        request_id = request.map(|(_, id)| id),
        error = error.message(),
        location = error.location().map(tracing::field::display),
        "internal error"
    );
}

fn json_response(status: StatusCode, body: &impl Serialize) -> Response {
    // Envelopes hold only strings, booleans and JSON values: serializing them cannot fail.
    let bytes = serde_json::to_vec(body).expect("envelopes serialize");
    let mut response = Response::new(Body::from(bytes));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    // An envelope may carry a secret (a token, a client secret shown once): no cache keeps it.
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

/// The request id of a request: a request extension set by [`assign_request_id`], the one place
/// that makes them. Layers around the router (a trace span, an access log) read it from there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestId(String);

impl RequestId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

pub(crate) fn request_id_of(request: &Request) -> String {
    request
        .extensions()
        .get::<RequestId>()
        .map(|RequestId(id)| id.clone())
        .expect("the router's request id middleware runs before every route")
}

/// Middleware: gives the request its id, as the [`RequestId`] extension, and sets it as
/// `X-Request-Id` on the response. The id is the client's `X-Request-Id` when it is a sane token
/// (at most 128 of `[A-Za-z0-9._-]`), else a new UUID.
///
/// The generated router runs it around its routes; a server that runs it further out (so that
/// its own routes and layers have the id too) makes the id there, and the router's run keeps
/// it: a request gets one id, made once.
pub async fn assign_request_id(mut request: Request, next: Next) -> Response {
    let id = match request.extensions().get::<RequestId>() {
        Some(RequestId(id)) => id.clone(),
        None => {
            let id = request
                .headers()
                .get(REQUEST_ID_HEADER)
                .and_then(|value| value.to_str().ok())
                .filter(|value| is_sane_request_id(value))
                .map(str::to_string)
                .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
            request.extensions_mut().insert(RequestId(id.clone()));
            id
        }
    };
    let mut response = next.run(request).await;
    let value = HeaderValue::from_str(&id).expect("request ids are visible ASCII");
    response.headers_mut().insert(REQUEST_ID_HEADER, value);
    response
}

fn is_sane_request_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= REQUEST_ID_MAX_LENGTH
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Unknown path: `04`, 404.
pub(crate) async fn not_found() -> Response {
    error_response(&ApiError::new(ResponseCode::UNKNOWN_OPERATION))
}

/// Known path, wrong method: `05`, 405 (axum adds `Allow`).
pub(crate) async fn method_not_allowed() -> Response {
    error_response(&ApiError::new(ResponseCode::METHOD_NOT_ALLOWED))
}

const REDOC_JS: &[u8] = include_bytes!("../../assets/redoc.standalone.js");

pub(crate) async fn openapi_yaml() -> Response {
    static_response("application/yaml", crate::OPENAPI_YAML.as_bytes(), false)
}

pub(crate) async fn openapi_json() -> Response {
    static_response("application/json", crate::OPENAPI_JSON.as_bytes(), false)
}

pub(crate) async fn redoc_js() -> Response {
    static_response("text/javascript; charset=utf-8", REDOC_JS, true)
}

/// The documentation page: Redoc, loaded from this server, reading `/openapi.json`.
pub(crate) async fn docs() -> Response {
    let title = html_escape(crate::TITLE);
    let page = format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>body {{ margin: 0; padding: 0; }}</style>
</head>
<body>
<redoc spec-url="openapi.json"></redoc>
<script src="docs/redoc.standalone.js"></script>
</body>
</html>
"#
    );
    let mut response = static_response("text/html; charset=utf-8", page.into_bytes(), false);
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(DOCS_CONTENT_SECURITY_POLICY),
    );
    headers.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

/// What the documentation page may load and run: its own script and the spec from this
/// server, the styles Redoc writes into the page, and its search's worker; never framed by
/// another page, nothing sent elsewhere.
const DOCS_CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; \
     connect-src 'self'; worker-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; \
     form-action 'none'";

/// `/docs/`, as people type it: a permanent redirect to `/docs`. Relative (`../docs`), as the
/// page's own addresses are (`openapi.json`, `docs/redoc.standalone.js`), so it works behind a
/// proxy that serves Kobo under a path prefix; served at `/docs/` itself, the page would load
/// neither.
pub(crate) async fn docs_with_slash() -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::PERMANENT_REDIRECT;
    response
        .headers_mut()
        .insert(LOCATION, HeaderValue::from_static("../docs"));
    response
}

fn static_response(content_type: &'static str, body: impl Into<Body>, cache: bool) -> Response {
    let mut response = Response::new(body.into());
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    let cache_control = if cache {
        "public, max-age=86400"
    } else {
        "no-cache"
    };
    headers.insert(CACHE_CONTROL, HeaderValue::from_static(cache_control));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
