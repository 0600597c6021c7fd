//! Rules about the shape of each operation: one POST, its body, its responses, its security,
//! its headers. Most exist because of what the generators accept.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{declares_header, response_sites, Sink};
use crate::spec::{
    self, component_schema_ref, is_snake_case, json_media, object, Access, Document,
    ERROR_ENVELOPE_REF, HTTP_METHODS, JSON,
};

/// Every path has exactly one operation and it is `post`.
pub(super) fn post_only(document: &Document<'_>, sink: &mut Sink) {
    let paths = object(document.doc.get("paths"));
    if paths.is_empty() {
        sink.report("#/paths", "the document has no operations");
    }
    for (path, item) in paths {
        let item = spec::deref(document.doc, item);
        let methods: Vec<&str> = HTTP_METHODS
            .into_iter()
            .filter(|method| item.get(method).is_some())
            .collect();
        if methods != ["post"] {
            sink.report(
                format!("path `{path}`"),
                format!(
                    "has operations {methods:?}: every path has exactly one operation, a `post`"
                ),
            );
        }
    }
}

/// Every operation has an `operationId`: snake_case (it names the generated trait method and
/// client method) and unique.
pub(super) fn operation_id(document: &Document<'_>, sink: &mut Sink) {
    let mut first_path_of: BTreeMap<&str, &str> = BTreeMap::new();
    for operation in &document.operations {
        let Some(id) = operation.id() else {
            sink.report(
                format!("path `{}`", operation.path),
                "has an operation without `operationId`",
            );
            continue;
        };
        if !is_snake_case(id) {
            sink.report(
                format!("path `{}`", operation.path),
                format!("`operationId: {id}` must be snake_case (it names generated Rust methods)"),
            );
        }
        if let Some(first) = first_path_of.insert(id, operation.path) {
            sink.report(
                format!("path `{}`", operation.path),
                format!("`operationId: {id}` is also the operationId of `{first}`: operationIds must be unique"),
            );
            first_path_of.insert(id, first);
        }
    }
}

/// `requestBody` is present, `application/json` only, with a component schema, and required
/// unless `{}` is a whole request (its schema requires no field): the runtime reads an absent
/// body as `{}`, and the Rust client sends one either way (progenitor treats every body as
/// required), so an optional body only lets other generators' clients leave it out.
pub(super) fn request_body(document: &Document<'_>, sink: &mut Sink) {
    for operation in &document.operations {
        let label = operation.label();
        let Some(body) = operation.value.get("requestBody") else {
            sink.report(
                label,
                "has no `requestBody`: the client generator always sends one, so every operation \
                 declares one (an operation without input takes `{}`)",
            );
            continue;
        };
        let Some(body) = document.deref(body) else {
            continue;
        };
        let required = body.get("required") == Some(&Value::Bool(true));
        match json_media(body) {
            Err(message) => sink.report(&label, format!("`requestBody` {message}")),
            Ok(media) => match component_schema_ref(media) {
                None => sink.report(
                    &label,
                    "the request body schema must be a `$ref` to #/components/schemas/... \
                     (so the generated request type has a name)",
                ),
                Some(reference) if !required && !accepts_empty_object(document, reference) => sink
                    .report(
                        &label,
                        "`requestBody` must be `required: true`: its schema requires fields, so \
                         an absent body (read as `{}`) is never valid",
                    ),
                Some(_) => {}
            },
        }
    }
}

/// Whether `{}` can be a whole request of the component schema `reference`: it names no
/// `required` field (nor do the parts of an `allOf`).
fn accepts_empty_object(document: &Document<'_>, reference: &str) -> bool {
    fn requires_nothing(doc: &Value, schema: &Value, depth: usize) -> bool {
        let schema = spec::deref(doc, schema);
        let own = schema
            .get("required")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty);
        let parts = schema
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .all(|part| depth < 8 && requires_nothing(doc, part, depth + 1));
        own && parts
    }
    spec::resolve_ref(document.doc, reference)
        .is_some_and(|schema| requires_nothing(document.doc, schema, 0))
}

/// Exactly one success response, `200`, `application/json` with a component schema (the
/// client generator accepts only one success body type).
pub(super) fn success_response(document: &Document<'_>, sink: &mut Sink) {
    for operation in &document.operations {
        let label = operation.label();
        let successes: Vec<&str> = operation
            .responses()
            .map(|(status, _)| status)
            .filter(|status| is_success(status))
            .collect();
        if successes != ["200"] {
            sink.report(
                &label,
                format!(
                    "has success responses {successes:?}: exactly one is allowed and it is `200` \
                     (the client generator accepts only one success body type)"
                ),
            );
        }
        let Some(response) = operation
            .response("200")
            .and_then(|response| document.deref(response))
        else {
            continue;
        };
        match json_media(response) {
            Err(message) => sink.report(&label, format!("response 200 {message}")),
            Ok(media) if component_schema_ref(media).is_none() => sink.report(
                &label,
                "the response 200 schema must be a `$ref` to #/components/schemas/... \
                 (the operation's own envelope)",
            ),
            Ok(_) => {}
        }
    }
}

fn is_success(status: &str) -> bool {
    status.starts_with('2')
}

/// Every non-2xx response (and `default`) carries the shared error envelope.
pub(super) fn error_envelope(document: &Document<'_>, sink: &mut Sink) {
    let envelope = serde_json::json!({ "$ref": ERROR_ENVELOPE_REF });
    for operation in &document.operations {
        for (status, response) in operation.responses() {
            if is_success(status) {
                continue;
            }
            let Some(response) = document.deref(response) else {
                continue;
            };
            let uses_envelope =
                json_media(response).is_ok_and(|media| media.get("schema") == Some(&envelope));
            if !uses_envelope {
                sink.report(
                    operation.label(),
                    format!(
                        "response {status} must use the shared error envelope {ERROR_ENVELOPE_REF} \
                         as its only content, `{JSON}` (the client generator accepts only one \
                         error body type)"
                    ),
                );
            }
        }
    }
    // A mock server answers the schema's own `example` before a response's `examples` (Prism puts
    // it first, and answers the first for an invalid request): with one on the envelope, a bad
    // body to Prism got the `41` example instead of the `400` response's `01`.
    if let Some(schema) = crate::spec::resolve_ref(document.doc, ERROR_ENVELOPE_REF) {
        if schema.get("example").is_some() {
            sink.report(
                ERROR_ENVELOPE_REF,
                "must have no schema-level `example`: mock servers (Prism) answer it for every \
                 error response before the response's own `examples`",
            );
        }
    }
}

/// `security` is explicit: `[]` (public) or one family of `x-token-families`, without scopes.
/// Where the document ties families to path segments, each path carries one and its operation
/// is public or of that family. Every scheme named is an HTTP bearer scheme of
/// `#/components/securitySchemes` (the router reads `Authorization: Bearer`).
pub(super) fn security(document: &Document<'_>, sink: &mut Sink) {
    let families = document.token_families();
    if document.doc.get("x-token-families").is_none() {
        sink.report(
            "#/x-token-families",
            "the token families are missing: map each bearer scheme operations require to \
             `{path_segment?, permissions?}` (`{}` when neither applies)",
        );
    }
    let forms = std::iter::once("`[]` (public)".to_string())
        .chain(
            families
                .iter()
                .map(|family| format!("`[{{{}: []}}]`", family.scheme)),
        )
        .collect::<Vec<_>>()
        .join(", ");
    let segments: Vec<&str> = families.iter().filter_map(|f| f.path_segment).collect();
    for operation in &document.operations {
        let label = operation.label();
        let by_path = document.family_of_path(operation.path);
        if !segments.is_empty() && by_path.is_none() {
            let names = segments
                .iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>();
            sink.report(
                &label,
                format!(
                    "path `{}` must have one of {} (its token family) as its second-to-last \
                     segment",
                    operation.path,
                    names.join(", ")
                ),
            );
        }
        match operation.access() {
            None => sink.report(
                &label,
                format!("declares no `security`: declare it explicitly, one of {forms}"),
            ),
            Some(Access::Scheme(scheme)) if document.token_family(scheme).is_none() => sink.report(
                &label,
                format!(
                    "`security` names `{scheme}`, which is not a family of \
                         #/x-token-families: use one of {forms}"
                ),
            ),
            Some(Access::Other) => sink.report(
                &label,
                format!(
                    "`security: {}` is not one of {forms}",
                    operation.value["security"]
                ),
            ),
            Some(Access::Scheme(scheme)) => match by_path {
                Some(family) if family.scheme != scheme => sink.report(
                    &label,
                    format!(
                        "uses `{scheme}` but its path `{}` is a `{}` (`/{}/`) path",
                        operation.path,
                        family.scheme,
                        family.path_segment.unwrap_or_default()
                    ),
                ),
                _ => {}
            },
            Some(Access::Public) => {}
        }
    }
    schemes_named(document, sink);
}

/// Every scheme the document's root `security` names is a token family, and every family is
/// an HTTP bearer scheme of `#/components/securitySchemes`.
fn schemes_named(document: &Document<'_>, sink: &mut Sink) {
    let families = document.token_families();
    let root = document.doc.get("security").and_then(Value::as_array);
    for name in root
        .into_iter()
        .flatten()
        .flat_map(|r| object(Some(r)).keys())
    {
        if document.token_family(name).is_none() {
            sink.report(
                "document",
                format!("`security` names `{name}`, which is not a family of #/x-token-families"),
            );
        }
    }
    let schemes = object(document.doc.pointer("/components/securitySchemes"));
    for family in &families {
        let name = family.scheme;
        let location = format!("#/x-token-families/{}", spec::escape(name));
        match schemes.get(name) {
            None => sink.report(
                &location,
                format!("security scheme `{name}` is not in #/components/securitySchemes"),
            ),
            Some(scheme) if !is_bearer(scheme) => sink.report(
                &location,
                format!(
                    "security scheme `{name}` must be `type: http` with `scheme: bearer` \
                     (the router reads bearer tokens)"
                ),
            ),
            Some(_) => {}
        }
    }
}

fn is_bearer(scheme: &Value) -> bool {
    scheme.get("type").and_then(Value::as_str) == Some("http")
        && scheme
            .get("scheme")
            .and_then(Value::as_str)
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case("bearer"))
}

const REQUEST_ID: &str = "X-Request-Id";
const RETRY_AFTER: &str = "Retry-After";
const IDEMPOTENCY_KEY: &str = "Idempotency-Key";
const IDEMPOTENT_REPLAYED: &str = "Idempotent-Replayed";

/// Every response declares `X-Request-Id`; every 429 declares `Retry-After`; an operation takes
/// `Idempotency-Key` exactly when its 200 declares `Idempotent-Replayed`.
pub(super) fn headers(document: &Document<'_>, sink: &mut Sink) {
    for site in response_sites(document) {
        if !declares_header(site.response, REQUEST_ID) {
            sink.report(
                &site.label,
                format!("does not declare the `{REQUEST_ID}` header: every response carries one"),
            );
        }
        if site.statuses.contains("429") && !declares_header(site.response, RETRY_AFTER) {
            sink.report(
                &site.label,
                format!("is a 429 response and does not declare the `{RETRY_AFTER}` header"),
            );
        }
    }
    for operation in &document.operations {
        let parameters: Option<Vec<&Value>> = operation
            .parameters()
            .map(|parameter| document.deref(parameter))
            .collect();
        let success = operation
            .response("200")
            .map(|response| document.deref(response));
        // With a reference that does not resolve, the answer is unknown (`refs-resolve` says why).
        let (Some(parameters), Some(Some(success))) = (parameters, success) else {
            continue;
        };
        let takes_key = parameters.iter().any(|parameter| {
            parameter.get("in").and_then(Value::as_str) == Some("header")
                && parameter
                    .get("name")
                    .and_then(Value::as_str)
                    .is_some_and(|name| name.eq_ignore_ascii_case(IDEMPOTENCY_KEY))
        });
        let replays = declares_header(success, IDEMPOTENT_REPLAYED);
        match (takes_key, replays) {
            (true, false) => sink.report(
                operation.label(),
                format!(
                    "takes the `{IDEMPOTENCY_KEY}` header but its 200 response does not declare \
                     `{IDEMPOTENT_REPLAYED}`"
                ),
            ),
            (false, true) => sink.report(
                operation.label(),
                format!(
                    "its 200 response declares `{IDEMPOTENT_REPLAYED}` but it does not take the \
                     `{IDEMPOTENCY_KEY}` header parameter"
                ),
            ),
            _ => {}
        }
    }
}
