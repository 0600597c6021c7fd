//! The hand-written part of the crate: the request pipeline the generated routes call. Nothing
//! here names an operation of the spec; what differs per operation comes from the generated
//! `Operation` metadata and trait.

mod context;
mod error;
mod http;
mod json;
mod json_api;
pub mod mock;
mod server;
mod validation;

use std::sync::Arc;

use axum::routing::get;

pub use context::{CallRecord, Deadline, RequestContext};
pub use error::{ApiError, OrInternal};
pub use http::{assign_request_id, RequestId};
pub use json_api::{encode as encode_json, JsonAdapter, JsonApi, JsonSuccess};
pub(crate) use server::{Server, Success};
pub use validation::component_schema;

use crate::Api;

/// The largest request body accepted (1 MiB); larger ones get `08` (413).
pub const BODY_LIMIT_BYTES: usize = 1024 * 1024;

/// The header that carries the request id, both ways.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// Adds what every Kobo router has around the generated operation routes: the documentation
/// routes, the enveloped 404 and 405 fallbacks, and the request id middleware.
pub(crate) fn finish_router<A: Api>(
    routes: axum::Router<Arc<Server<A>>>,
    api: Arc<A>,
) -> axum::Router {
    let server = Arc::new(Server::new(api));
    routes
        .route("/openapi.yaml", get(http::openapi_yaml))
        .route("/openapi.json", get(http::openapi_json))
        .route("/docs", get(http::docs))
        .route("/docs/", get(http::docs_with_slash))
        .route("/docs/redoc.standalone.js", get(http::redoc_js))
        // After every route: it applies to the routes that exist when it is called.
        .method_not_allowed_fallback(http::method_not_allowed)
        .fallback(http::not_found)
        .layer(axum::middleware::from_fn(http::assign_request_id))
        .with_state(server)
}
