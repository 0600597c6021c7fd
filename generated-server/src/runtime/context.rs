use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::{Operation, ResponseCode, TokenFamily};

/// What an operation's method knows about the request besides its body.
///
/// `P` is the implementation's principal for operations that take a token, and `()` for public
/// ones: a secured method always has its principal, a public one never does.
#[derive(Clone, Debug)]
pub struct RequestContext<P> {
    /// Who made the request, as [`crate::Api::authenticate`] resolved the bearer token.
    pub principal: P,
    pub operation: Operation,
    /// The request id the response carries in `X-Request-Id`.
    pub request_id: String,
    /// The `Idempotency-Key` header, on operations that declare it; already validated.
    pub idempotency_key: Option<String>,
    /// The client's address (from axum's `ConnectInfo`; `0.0.0.0` when the server was not
    /// started with `into_make_service_with_connect_info`).
    pub client_ip: IpAddr,
    /// When the request's time is up (its [`Deadline`]): the router answers `96` then, so an
    /// implementation that can say better (the database did not answer in time) answers
    /// before it.
    pub deadline: Option<tokio::time::Instant>,
    marks: Arc<Marks>,
}

/// What an operation's method tells the router about its answer, besides the answer.
#[derive(Debug, Default)]
pub(crate) struct Marks {
    /// [`RequestContext::mark_replayed`].
    pub(crate) replayed: AtomicBool,
    /// [`RequestContext::mark_recorded`].
    pub(crate) recorded: AtomicBool,
}

impl<P> RequestContext<P> {
    pub(crate) fn new(
        principal: P,
        operation: Operation,
        request_id: String,
        idempotency_key: Option<String>,
        client_ip: IpAddr,
        deadline: Option<tokio::time::Instant>,
        marks: Arc<Marks>,
    ) -> Self {
        RequestContext {
            principal,
            operation,
            request_id,
            idempotency_key,
            client_ip,
            deadline,
            marks,
        }
    }

    /// The same context with another principal (an adapter's view of it, say).
    pub fn map_principal<Q>(self, f: impl FnOnce(P) -> Q) -> RequestContext<Q> {
        RequestContext {
            principal: f(self.principal),
            operation: self.operation,
            request_id: self.request_id,
            idempotency_key: self.idempotency_key,
            client_ip: self.client_ip,
            deadline: self.deadline,
            marks: self.marks,
        }
    }

    /// Marks the response as the replay of an earlier one with the same `Idempotency-Key`: the
    /// router answers `Idempotent-Replayed: true`.
    pub fn mark_replayed(&self) {
        self.marks.replayed.store(true, Ordering::Relaxed);
    }

    /// Notes that the implementation recorded this call's success in its own logs with its
    /// own work (in the transaction that did it): [`CallRecord::recorded`] tells
    /// [`crate::Api::on_response`], which then need not record it again. It says nothing of
    /// another answer: a call answered otherwise (its commit failed, its time ran out) is
    /// the router's to record as answered.
    pub fn mark_recorded(&self) {
        self.marks.recorded.store(true, Ordering::Relaxed);
    }
}

/// What the router answered to one call of an operation, for [`crate::Api::on_response`].
#[derive(Debug)]
pub struct CallRecord<'a, P> {
    pub operation: Operation,
    /// The operation's token family; `None` for public operations.
    pub family: Option<TokenFamily>,
    /// The principal, when authentication got that far.
    pub principal: Option<&'a P>,
    pub http_status: u16,
    pub response_code: ResponseCode,
    /// The envelope's `message`.
    pub message: &'a str,
    pub client_ip: IpAddr,
    pub request_id: &'a str,
    pub idempotency_key: Option<&'a str>,
    /// Whether the response was marked as an idempotent replay.
    pub replayed: bool,
    /// Whether the operation marked its success as recorded already
    /// ([`RequestContext::mark_recorded`]).
    pub recorded: bool,
}

/// A request extension: the instant a request's time is up. A layer of the server sets it (for
/// `kobo serve`, `--request-timeout-seconds` after the request arrived); without it a request
/// has no time limit.
///
/// The pipeline waits for the body until then (`01` after it: the client was too slow), then
/// for authentication, validation and the operation (`96` after it, the operation's future
/// dropped, so an open transaction rolls back); [`crate::Api::on_response`] still runs, so the
/// call is logged with the answer the client got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deadline(pub std::time::Instant);
