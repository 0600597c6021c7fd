//! Kobo's HTTP layer, generated from `spec/openapi.yaml`.
//!
//! The bank implements [`Api`], one method per operation, and serves [`router`]:
//!
//! ```text
//! let app = generated_server::router(Arc::new(Bank::new(...)));
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! // ConnectInfo gives the request context the client's IP address.
//! axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await?;
//! ```
//!
//! # What is generated and what is not
//!
//! - `src/generated/` is written by `cargo xtask codegen` and never edited by hand:
//!   [`models`] (typify), [`Api`] and [`Operation`] with [`TokenFamily`] and [`Permission`]
//!   (each operation's metadata, listed [`ResponseCode`]s and [`RequestExample`]s),
//!   [`ResponseCode`], [`router`], [`schemas`], the spec text ([`OPENAPI_YAML`]), and the
//!   `impl Api for JsonAdapter<T>` that lets a [`JsonApi`] (one method on JSON values) stand in
//!   for a typed implementation in tests and mocks.
//! - `src/runtime/` is hand-written and does not depend on the spec's operations: the request
//!   pipeline the generated routes call ([`ApiError`], [`RequestContext`], [`CallRecord`],
//!   envelopes, validation, the request id, the fallbacks and the documentation page), and
//!   [`JsonApi`].
//! - `assets/` holds the vendored Redoc bundle (MIT, see `assets/redoc.LICENSE`) that `/docs`
//!   serves, so the page works without internet access.
//!
//! # The pipeline
//!
//! For every request, in this order: request id ([`assign_request_id`]: the client's
//! `X-Request-Id` if it is a sane token, else a new UUID; echoed on every response; kept as it is
//! when a layer further out assigned it already) -> method and path (`04`/404, `05`/405) ->
//! body size (`08`/413, limit [`BODY_LIMIT_BYTES`]) and content type (`07`/415; an empty body
//! means `{}`) -> bearer token ([`Api::authenticate`]; no token: `41`/401 without calling it) ->
//! permission ([`Api::authorize`]) -> JSON parse and JSON Schema validation of the body and the
//! declared headers (`01`/400 naming the field) -> deserialization -> the operation's method ->
//! the success envelope, or the error envelope with the catalog's HTTP status -> [`Api::on_response`].

// Generated code is formatted by prettyplease when it is generated; rustfmt leaves it alone.
#[rustfmt::skip]
mod generated {
    pub mod api;
    pub mod json_api;
    pub mod models;
    pub mod response_code;
    pub mod router;
    pub mod schemas;
    pub mod spec;
}

mod runtime;

pub use generated::api::*;
pub use generated::models;
pub use generated::response_code::ResponseCode;
pub use generated::router::router;
pub use generated::schemas;
pub use generated::spec::{OPENAPI_JSON, OPENAPI_YAML, TITLE, VERSION};
/// A mock of the whole API from the spec's examples (`kobo mock`).
pub use runtime::mock;
pub use runtime::{
    assign_request_id, component_schema, ApiError, CallRecord, Deadline, JsonAdapter, JsonApi,
    JsonSuccess, OrInternal, RequestContext, RequestId, BODY_LIMIT_BYTES, REQUEST_ID_HEADER,
};

// The generated modules refer to each other by these paths.
use generated::api;

/// The Rust examples of docs/partners.md, compiled as doctests so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../docs/partners.md")]
struct PartnersDoctests;
