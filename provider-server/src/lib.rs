//! The core banking provider's HTTP layer, generated from `spec/provider.yaml` by the same
//! `cargo xtask codegen` that generates Kobo's own (`generated-server`).
//!
//! The simulator (`kobo-provider`) implements [`Api`], one method per operation, and serves
//! [`router`]. A real provider adapter would implement the same trait over NIBSS.
//!
//! - `src/generated/` is written by `cargo xtask codegen` from `spec/provider.yaml` and never
//!   edited by hand.
//! - The request pipeline around it is `generated-server`'s hand-written runtime
//!   (`generated-server/src/runtime`), compiled here too: it names nothing of a document but
//!   what every generated crate has (`Api`, `Operation`, `ResponseCode` and its router roles,
//!   `schemas`, the embedded spec). So both documents get the same pipeline: request id,
//!   method and path, body size and type, bearer token, JSON Schema validation, the envelope,
//!   each answered with the code the document's catalog names for it (`router` roles).

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

// This document has no public operation and no page, so parts of the shared pipeline go
// unused here.
#[allow(dead_code)]
#[path = "../../generated-server/src/runtime/mod.rs"]
mod runtime;

pub use generated::api::*;
pub use generated::models;
pub use generated::response_code::ResponseCode;
pub use generated::router::router;
pub use generated::schemas;
pub use generated::spec::{OPENAPI_JSON, OPENAPI_YAML, TITLE, VERSION};
/// A mock of the whole API from the document's examples.
pub use runtime::mock;
pub use runtime::{
    assign_request_id, component_schema, ApiError, CallRecord, Deadline, JsonAdapter, JsonApi,
    JsonSuccess, OrInternal, RequestContext, RequestId, BODY_LIMIT_BYTES, REQUEST_ID_HEADER,
};

// The generated modules refer to each other by these paths.
use generated::api;
