//! The request pipeline every generated route runs.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{ConnectInfo, Request};
use axum::http::header::{AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::HeaderMap;
use axum::response::Response;
use futures_util::FutureExt;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;
use tokio::time::Instant;
use tracing::Instrument;

use super::context::Marks;
use super::http::{
    error_response, log_internal, mark_replayed_error, request_id_of, success_response,
};
use super::json;
use super::validation::Validators;
use super::{ApiError, CallRecord, Deadline, RequestContext, BODY_LIMIT_BYTES};
use crate::{Api, Operation, ResponseCode};

/// The bank and the compiled validators, shared by every route.
pub struct Server<A: Api> {
    api: Arc<A>,
    validators: Validators,
}

/// An operation's successful outcome, ready for the envelope.
///
/// The payload is serialized here, once, into the JSON text the envelope then copies: a
/// `serde_json::Value` in between built a tree of maps and strings for every response (a
/// tenth of the server's time for a page of 50 transactions) only to write it out again.
pub struct Success {
    data: Result<Box<RawValue>, serde_json::Error>,
    pagination: Option<Result<Box<RawValue>, serde_json::Error>>,
}

impl Success {
    pub fn data(data: impl Serialize) -> Success {
        Success {
            data: serde_json::value::to_raw_value(&data),
            pagination: None,
        }
    }

    pub fn page(data: impl Serialize, pagination: impl Serialize) -> Success {
        Success {
            data: serde_json::value::to_raw_value(&data),
            pagination: Some(serde_json::value::to_raw_value(&pagination)),
        }
    }

    /// No payload: `data` is `{}`.
    pub fn empty() -> Success {
        Success {
            data: RawValue::from_string("{}".to_owned()),
            pagination: None,
        }
    }
}

/// What the pipeline learned about a request before the operation ran.
struct Exchange {
    operation: Operation,
    request_id: String,
    client_ip: IpAddr,
    idempotency_key: Option<String>,
    marks: Arc<Marks>,
    /// When the request's time is up (its [`Deadline`] extension), if it has one.
    deadline: Option<Instant>,
}

impl Exchange {
    fn context<P>(&self, principal: P) -> RequestContext<P> {
        RequestContext::new(
            principal,
            self.operation,
            self.request_id.clone(),
            self.idempotency_key.clone(),
            self.client_ip,
            self.deadline,
            self.marks.clone(),
        )
    }
}

impl<A: Api> Server<A> {
    pub fn new(api: Arc<A>) -> Self {
        Server {
            api,
            validators: Validators::new(),
        }
    }

    /// Runs a public operation (no token): `call` gets a context without a principal.
    ///
    /// The pipeline runs in a task of its own ([`detached`]), so it finishes, `on_response`
    /// included, even when the client hangs up first.
    pub async fn public<B, F, Fut>(
        self: &Arc<Self>,
        operation: Operation,
        request: Request,
        call: F,
    ) -> Response
    where
        B: DeserializeOwned + Send + 'static,
        F: FnOnce(Arc<A>, RequestContext<()>, B) -> Fut + Send + 'static,
        Fut: Future<Output = Result<Success, ApiError>> + Send + 'static,
    {
        let server = self.clone();
        detached(Box::pin(async move {
            server.run_public(operation, request, call).await
        }))
        .await
    }

    /// Runs an operation that takes a token: authentication and permission first, then `call`
    /// with the principal in its context. In a task of its own, as [`Server::public`].
    pub async fn secured<B, F, Fut>(
        self: &Arc<Self>,
        operation: Operation,
        request: Request,
        call: F,
    ) -> Response
    where
        B: DeserializeOwned + Send + 'static,
        F: FnOnce(Arc<A>, RequestContext<A::Principal>, B) -> Fut + Send + 'static,
        Fut: Future<Output = Result<Success, ApiError>> + Send + 'static,
    {
        let server = self.clone();
        detached(Box::pin(async move {
            server.run_secured(operation, request, call).await
        }))
        .await
    }

    async fn run_public<B, F, Fut>(
        &self,
        operation: Operation,
        request: Request,
        call: F,
    ) -> Response
    where
        B: DeserializeOwned,
        F: FnOnce(Arc<A>, RequestContext<()>, B) -> Fut,
        Fut: Future<Output = Result<Success, ApiError>> + Send,
    {
        let mut exchange = start(operation, &request);
        let deadline = exchange.deadline;
        let outcome = async {
            let (headers, body) = in_time(deadline, read(request), body_too_slow).await?;
            in_time(
                deadline,
                async {
                    let body: B = self.parse(&mut exchange, &headers, &body)?;
                    let context = exchange.context(());
                    run(call(self.api.clone(), context, body)).await
                },
                timed_out,
            )
            .await
        }
        .await;
        self.finish(&exchange, None, outcome).await
    }

    async fn run_secured<B, F, Fut>(
        &self,
        operation: Operation,
        request: Request,
        call: F,
    ) -> Response
    where
        B: DeserializeOwned,
        F: FnOnce(Arc<A>, RequestContext<A::Principal>, B) -> Fut,
        Fut: Future<Output = Result<Success, ApiError>> + Send,
    {
        let mut exchange = start(operation, &request);
        let deadline = exchange.deadline;
        let mut principal = None;
        let outcome = async {
            let (headers, body) = in_time(deadline, read(request), body_too_slow).await?;
            in_time(
                deadline,
                async {
                    let family = operation
                        .family()
                        .expect("the router sends only operations with a token family here");
                    let token = bearer_token(&headers)?;
                    let authenticated = self.api.authenticate(family, token).await?;
                    principal = Some(authenticated.clone());
                    if let Some(permission) = operation.permission() {
                        self.api.authorize(&authenticated, permission).await?;
                    }
                    let body: B = self.parse(&mut exchange, &headers, &body)?;
                    let context = exchange.context(authenticated);
                    run(call(self.api.clone(), context, body)).await
                },
                timed_out,
            )
            .await
        }
        .await;
        self.finish(&exchange, principal.as_ref(), outcome).await
    }

    /// Headers and body against the operation's schemas, then into its body type.
    fn parse<B: DeserializeOwned>(
        &self,
        exchange: &mut Exchange,
        headers: &HeaderMap,
        body: &Bytes,
    ) -> Result<B, ApiError> {
        let operation = exchange.operation;
        for parameter in operation.header_parameters() {
            match headers.get(parameter.name) {
                None if parameter.required => {
                    return Err(invalid(format!("`{}` header is required", parameter.name)));
                }
                None => {}
                Some(value) => {
                    let value = value.to_str().map_err(|_| {
                        invalid(format!("`{}` header is not visible ASCII", parameter.name))
                    })?;
                    self.validators
                        .check_header(operation, parameter.name, value)
                        .map_err(invalid)?;
                    if parameter.name.eq_ignore_ascii_case("Idempotency-Key") {
                        exchange.idempotency_key = Some(value.to_string());
                    }
                }
            }
        }
        let value: Value = if body.iter().all(u8::is_ascii_whitespace) {
            Value::Object(serde_json::Map::new())
        } else {
            json::parse(body).map_err(|refusal| match refusal {
                json::Refusal::Syntax(error) => {
                    invalid(format!("request body is not valid JSON: {error}"))
                }
                json::Refusal::DuplicateKey(path) => {
                    invalid(format!("`{path}`: given twice in the request body"))
                }
            })?
        };
        self.validators
            .check_body(operation, &value)
            .map_err(invalid)?;
        serde_path_to_error::deserialize(value).map_err(|error| invalid(describe_shape(&error)))
    }

    /// Writes the envelope, then tells the bank what was answered.
    async fn finish(
        &self,
        exchange: &Exchange,
        principal: Option<&A::Principal>,
        outcome: Result<Success, ApiError>,
    ) -> Response {
        let operation = exchange.operation;
        let replayed = exchange.marks.replayed.load(Ordering::Relaxed);
        let recorded = exchange.marks.recorded.load(Ordering::Relaxed);
        let (response, code, message) = match envelope_parts(outcome) {
            Ok((data, pagination)) => {
                let code = ResponseCode::SUCCESS;
                let message = operation.success_message();
                let replay = operation.idempotent().then_some(replayed);
                let response = success_response(message, data, pagination, replay);
                (response, code, message.to_string())
            }
            Err(error) => {
                if error.code() == ResponseCode::INTERNAL_ERROR {
                    log_internal(&error, Some((operation, &exchange.request_id)));
                }
                let message = error.public_message().to_string();
                let mut response = error_response(&error);
                if replayed && operation.idempotent() {
                    mark_replayed_error(&mut response);
                }
                (response, error.code(), message)
            }
        };
        let record = CallRecord {
            operation,
            family: operation.family(),
            principal,
            http_status: response.status().as_u16(),
            response_code: code,
            message: &message,
            client_ip: exchange.client_ip,
            request_id: &exchange.request_id,
            idempotency_key: exchange.idempotency_key.as_deref(),
            replayed,
            recorded,
        };
        self.api.on_response(&record).await;
        response
    }
}

fn start(operation: Operation, request: &Request) -> Exchange {
    let client_ip = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(address)| address.ip())
        .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    Exchange {
        operation,
        request_id: request_id_of(request),
        client_ip,
        idempotency_key: None,
        marks: Arc::default(),
        deadline: request
            .extensions()
            .get::<Deadline>()
            .map(|Deadline(at)| Instant::from_std(*at)),
    }
}

/// Runs `pipeline` in a task of its own, in the request's span, and waits for it. The
/// connection's future can be dropped (the client hung up, or the server gave up on it at
/// shutdown) without cutting the pipeline between the operation's commit and
/// [`Api::on_response`]: the task runs on to the end.
///
/// The pipeline comes boxed: its state holds the whole operation's, many kilobytes, and a
/// future passed by value is copied at each layer it passes through (this function's state,
/// the span's wrapper, the task), a tenth of the server's time for the cheapest operations.
async fn detached<F>(pipeline: Pin<Box<F>>) -> Response
where
    F: Future<Output = Response> + Send + 'static,
{
    match tokio::spawn(pipeline.in_current_span()).await {
        Ok(response) => response,
        Err(failure) => {
            // The operation's own panics are caught in `run`; this is the rest of the pipeline.
            let error = ApiError::internal(format!("the request's task failed: {failure}"));
            log_internal(&error, None);
            error_response(&error)
        }
    }
}

/// `work`, unless `deadline` passes first: then the error `late` makes, and `work` is dropped
/// (a transaction it had open rolls back).
async fn in_time<T>(
    deadline: Option<Instant>,
    work: impl Future<Output = Result<T, ApiError>>,
    late: fn() -> ApiError,
) -> Result<T, ApiError> {
    match deadline {
        None => work.await,
        Some(deadline) => tokio::time::timeout_at(deadline, work)
            .await
            .unwrap_or_else(|_| Err(late())),
    }
}

/// The client did not send its whole body in time: its fault, `01`.
fn body_too_slow() -> ApiError {
    invalid("the request body did not arrive within the request timeout")
}

/// The request was not answered before its deadline (its authentication, its operation or
/// its log waiting, say, on a database out of reach): it is dropped, so nothing of it is
/// kept, and the catalog's `timed_out` code says so (Kobo's `97`, with `Retry-After`). An
/// implementation that may have kept something (a commit under way) answers before the
/// deadline itself.
fn timed_out() -> ApiError {
    tracing::warn!("a request was not answered before its deadline: it was dropped");
    ApiError::new(ResponseCode::TIMED_OUT).with_retry_after_seconds(TIMED_OUT_RETRY_AFTER_SECONDS)
}

/// How long a client waits after [`timed_out`] before it tries again.
const TIMED_OUT_RETRY_AFTER_SECONDS: u64 = 2;

/// The body, at most [`BODY_LIMIT_BYTES`], and only JSON when there is one.
async fn read(request: Request) -> Result<(HeaderMap, Bytes), ApiError> {
    let (parts, body) = request.into_parts();
    let declared_length = parts
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if declared_length.is_some_and(|length| length > BODY_LIMIT_BYTES as u64) {
        return Err(ApiError::new(ResponseCode::BODY_TOO_LARGE));
    }
    let body = axum::body::to_bytes(body, BODY_LIMIT_BYTES)
        .await
        .map_err(|error| {
            let too_large = std::error::Error::source(&error)
                .is_some_and(|source| source.is::<http_body_util::LengthLimitError>());
            if too_large {
                ApiError::new(ResponseCode::BODY_TOO_LARGE)
            } else {
                invalid("the request body could not be read")
            }
        })?;
    let empty = body.iter().all(u8::is_ascii_whitespace);
    if !empty {
        check_media_type(&parts.headers)?;
    }
    Ok((parts.headers, body))
}

/// `07` unless the body is declared `application/json`, in UTF-8: with no `charset`
/// parameter (JSON is UTF-8, RFC 8259) or `charset=utf-8`. A body declared in another
/// charset is refused rather than read as UTF-8, which is not what its sender meant.
fn check_media_type(headers: &HeaderMap) -> Result<(), ApiError> {
    let value = headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let mut parts = value.split(';');
    let media_type = parts.next().unwrap_or_default().trim();
    if !media_type.eq_ignore_ascii_case("application/json") {
        return Err(ApiError::new(ResponseCode::UNSUPPORTED_MEDIA_TYPE));
    }
    let utf8 = parts
        .filter_map(|parameter| parameter.split_once('='))
        .filter(|(name, _)| name.trim().eq_ignore_ascii_case("charset"))
        .all(|(_, charset)| {
            let charset = charset.trim().trim_matches('"');
            charset.eq_ignore_ascii_case("utf-8") || charset.eq_ignore_ascii_case("utf8")
        });
    if utf8 {
        Ok(())
    } else {
        Err(
            ApiError::new(ResponseCode::UNSUPPORTED_MEDIA_TYPE).with_message(
                "Unsupported media type: the body must be JSON in UTF-8 (`application/json` or \
             `application/json; charset=utf-8`)",
            ),
        )
    }
}

/// The token of `Authorization: Bearer <token>`; anything else is `41` without asking the bank.
fn bearer_token(headers: &HeaderMap) -> Result<&str, ApiError> {
    let unauthenticated = || ApiError::new(ResponseCode::UNAUTHENTICATED);
    let value = headers
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .ok_or_else(unauthenticated)?;
    let (scheme, token) = value.trim().split_once(' ').ok_or_else(unauthenticated)?;
    let token = token.trim();
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return Err(unauthenticated());
    }
    Ok(token)
}

/// Runs the operation; a panic becomes an internal error instead of a dropped connection.
async fn run(
    call: impl Future<Output = Result<Success, ApiError>> + Send,
) -> Result<Success, ApiError> {
    AssertUnwindSafe(call)
        .catch_unwind()
        .await
        .unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("a value that is not text");
            Err(ApiError::internal(format!(
                "the operation panicked: {what}"
            )))
        })
}

type EnvelopeParts = (Box<RawValue>, Option<Box<RawValue>>);

fn envelope_parts(outcome: Result<Success, ApiError>) -> Result<EnvelopeParts, ApiError> {
    let success = outcome?;
    let serialization = |error: serde_json::Error| {
        ApiError::internal(format!("the response data does not serialize: {error}"))
    };
    let data = success.data.map_err(serialization)?;
    let pagination = success.pagination.transpose().map_err(serialization)?;
    Ok((data, pagination))
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::new(ResponseCode::INVALID_REQUEST).with_message(message.into())
}

/// A body the schema accepted that still does not fit the model (a JSON Schema `integer` takes
/// `1.0`; a `u64` does not), with the field named: "`page`: must be a whole number".
fn describe_shape(error: &serde_path_to_error::Error<serde_json::Error>) -> String {
    let path = error.path().to_string();
    let field = if path == "." {
        "request body".to_string()
    } else {
        format!("`{path}`")
    };
    let inner = error.inner().to_string();
    if inner.starts_with("invalid type: floating point") {
        return format!("{field}: must be a whole number");
    }
    let short: String = inner.chars().take(120).collect();
    format!("{field}: {short}")
}
