//! Rules about the document as a whole: its version, its references, its components.

use std::collections::BTreeSet;

use serde_json::Value;

use super::{walk, Sink};
use crate::spec::{self, escape, object, Document, KNOWN_VALUES};

/// `openapi` is 3.0.x and the document deserializes as the OpenAPI 3.0 model progenitor reads.
pub(super) fn openapi_version(document: &Document<'_>, sink: &mut Sink) {
    match document.doc.get("openapi").and_then(Value::as_str) {
        Some(version) if is_openapi_3_0(version) => {}
        Some(version) => sink.report(
            "#/openapi",
            format!("`openapi: {version}`: the client generator accepts OpenAPI 3.0.x only"),
        ),
        None => sink.report(
            "#/openapi",
            "`openapi` is missing or not a string: write `openapi: 3.0.3`",
        ),
    }
    let model = serde_path_to_error::deserialize::<_, openapiv3::OpenAPI>(document.doc.clone());
    if let Err(error) = model {
        // A schema that is not one is `schema-keywords`' problem, at its own pointer.
        if super::schemas::has_malformed_schema(document.doc) {
            return;
        }
        sink.report(
            serde_pointer(error.path()),
            format!(
                "does not deserialize as OpenAPI 3.0 (the model the client generator reads): {}",
                error.inner()
            ),
        );
    }
}

/// The JSON pointer (`#/...`) of where deserialization stopped.
fn serde_pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut pointer = "#".to_string();
    for segment in path.iter() {
        pointer.push('/');
        match segment {
            Segment::Seq { index } => pointer.push_str(&index.to_string()),
            Segment::Map { key } => pointer.push_str(&escape(key)),
            Segment::Enum { variant } => pointer.push_str(&escape(variant)),
            Segment::Unknown => pointer.push('?'),
        }
    }
    pointer
}

fn is_openapi_3_0(version: &str) -> bool {
    version
        .strip_prefix("3.0.")
        .is_some_and(|patch| !patch.is_empty() && patch.bytes().all(|b| b.is_ascii_digit()))
}

/// Every `$ref` is local and points at something; one that does not names the component of
/// the same kind it probably meant.
pub(super) fn refs_resolve(document: &Document<'_>, sink: &mut Sink) {
    walk(document.doc, &mut String::new(), &mut |pointer, value| {
        let Some(reference) = value.get("$ref").and_then(Value::as_str) else {
            return;
        };
        if !reference.starts_with("#/") {
            sink.report(
                format!("#{pointer}"),
                format!(
                    "`$ref: {reference}` does not resolve: only references inside this document \
                     (`#/...`) are allowed"
                ),
            );
        } else if spec::resolve_ref(document.doc, reference).is_none() {
            sink.report(
                format!("#{pointer}"),
                format!(
                    "`$ref: {reference}` does not resolve{}",
                    missing_component(document.doc, reference)
                ),
            );
        }
    });
}

/// The kinds of component, each with what one of them is called.
const COMPONENT_KINDS: [(&str, &str); 9] = [
    ("schemas", "schema"),
    ("responses", "response"),
    ("parameters", "parameter"),
    ("examples", "example"),
    ("requestBodies", "request body"),
    ("headers", "header"),
    ("securitySchemes", "security scheme"),
    ("links", "link"),
    ("callbacks", "callback"),
];

/// For a `#/components/<kind>/<name>` that does not resolve: `: there is no <kind> `<name>`;
/// did you mean `<nearest name of that kind>`?`, or the reference it probably meant when the
/// kind is misspelt. Nothing for any other reference.
fn missing_component(doc: &Value, reference: &str) -> String {
    let Some(rest) = reference.strip_prefix("#/components/") else {
        return String::new();
    };
    let Some((kind, name)) = rest.split_once('/') else {
        return String::new();
    };
    let name = name.replace("~1", "/").replace("~0", "~");
    let names = |kind: &str| -> Vec<&str> {
        object(doc.pointer(&format!("/components/{kind}")))
            .keys()
            .map(String::as_str)
            .collect()
    };
    if let Some((_, called)) = COMPONENT_KINDS.iter().find(|(known, _)| *known == kind) {
        let nearest = super::schemas::nearest(&name, names(kind));
        return match nearest {
            Some(nearest) => {
                format!(": there is no {called} `{name}`; did you mean `{nearest}`?")
            }
            None => format!(": there is no {called} `{name}` in `#/components/{kind}`"),
        };
    }
    let kinds = COMPONENT_KINDS.iter().map(|(known, _)| *known);
    let Some(meant) = super::schemas::nearest(kind, kinds) else {
        return format!(": `{kind}` is not a kind of component");
    };
    let meant_name = if names(meant).contains(&name.as_str()) {
        Some(name.as_str())
    } else {
        super::schemas::nearest(&name, names(meant))
    };
    match meant_name {
        Some(meant_name) => format!(
            ": `{kind}` is not a kind of component; did you mean `#/components/{meant}/{}`?",
            escape(meant_name)
        ),
        None => format!(": `{kind}` is not a kind of component; did you mean `{meant}`?"),
    }
}

/// The component kinds whose entries must each be referenced somewhere.
const REFERENCED_KINDS: [&str; 6] = [
    "schemas",
    "responses",
    "parameters",
    "examples",
    "requestBodies",
    "headers",
];

/// Every component is used: referenced from outside itself, or (security schemes) named by a
/// security requirement.
pub(super) fn unused_components(document: &Document<'_>, sink: &mut Sink) {
    let mut referenced: BTreeSet<String> = BTreeSet::new();
    walk(document.doc, &mut String::new(), &mut |pointer, value| {
        // An open enum's wrapper names its enum by `x-known-values`, which the Rust types use.
        let Some(target) = value
            .get("$ref")
            .or_else(|| value.get(KNOWN_VALUES))
            .and_then(Value::as_str)
            .and_then(|reference| reference.strip_prefix('#'))
        else {
            return;
        };
        // A reference from inside its own target (a recursive schema) does not make it used.
        let inside_target = pointer == target
            || pointer
                .strip_prefix(target)
                .is_some_and(|rest| rest.starts_with('/'));
        if !inside_target {
            referenced.insert(target.to_string());
        }
    });
    for kind in REFERENCED_KINDS {
        for name in object(document.doc.pointer(&format!("/components/{kind}"))).keys() {
            let pointer = format!("/components/{kind}/{}", escape(name));
            if !referenced.contains(&pointer) {
                sink.report(
                    format!("#{pointer}"),
                    "is never referenced: use it or remove it (a reference from inside itself does not count)",
                );
            }
        }
    }

    let mut named: BTreeSet<&str> = BTreeSet::new();
    let requirements = document
        .operations
        .iter()
        .filter_map(|operation| operation.value.get("security"))
        .chain(document.doc.get("security"));
    for requirement in requirements.filter_map(Value::as_array).flatten() {
        named.extend(object(Some(requirement)).keys().map(String::as_str));
    }
    for name in object(document.doc.pointer("/components/securitySchemes")).keys() {
        if !named.contains(name.as_str()) {
            sink.report(
                format!("#/components/securitySchemes/{}", escape(name)),
                "is not used by any security requirement: use it or remove it",
            );
        }
    }
}

/// No schema has a `default`: openapi-typescript (with its default flags) types a field with one as
/// required, so `{limit: 5}` would not compile without `page` and `page_size`. A request field's
/// default, which the server applies, is `x-server-default` (the code generator gives it back to
/// the Rust types as `default`), and its description says it, since no tool shows the extension.
pub(super) fn request_defaults(document: &Document<'_>, sink: &mut Sink) {
    fn walk(schema: &serde_json::Value, location: &str, sink: &mut Sink) {
        let Some(object) = schema.as_object() else {
            return;
        };
        if object.contains_key("default") {
            sink.report(
                location,
                "has a `default`: write `x-server-default` and say the default in the \
                 description (openapi-typescript types a field with a `default` as required)",
            );
        }
        if object.contains_key(crate::codegen::SERVER_DEFAULT) {
            let said = object
                .get("description")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|description| description.to_lowercase().contains("default"));
            if !said {
                sink.report(
                    location,
                    "has an `x-server-default` its description does not mention (`Default: ...`): \
                     no generator or reference page shows the extension",
                );
            }
        }
        for (keyword, value) in object {
            match keyword.as_str() {
                "properties" => {
                    for (name, property) in value.as_object().into_iter().flatten() {
                        walk(property, &format!("{location}/properties/{name}"), sink);
                    }
                }
                "items" | "additionalProperties" | "not" => {
                    walk(value, &format!("{location}/{keyword}"), sink);
                }
                "allOf" | "anyOf" | "oneOf" => {
                    for (index, part) in value.as_array().into_iter().flatten().enumerate() {
                        walk(part, &format!("{location}/{keyword}/{index}"), sink);
                    }
                }
                _ => {}
            }
        }
    }
    let schemas = document
        .doc
        .pointer("/components/schemas")
        .and_then(serde_json::Value::as_object);
    for (name, schema) in schemas.into_iter().flatten() {
        walk(schema, &format!("#/components/schemas/{name}"), sink);
    }
}

/// No component schema's name ends in `Test`: openapi-generator's Go client writes each schema to
/// `model_<snake_case>.go`, and Go takes a file ending in `_test.go` for a test file (the
/// generator renames it with a warning, and the names of the model and its file part).
pub(super) fn schema_names(document: &Document<'_>, sink: &mut Sink) {
    let schemas = document
        .doc
        .pointer("/components/schemas")
        .and_then(serde_json::Value::as_object);
    for name in schemas.into_iter().flatten().map(|(name, _)| name) {
        if name.ends_with("Test") || name.ends_with("_test") {
            sink.report(
                format!("#/components/schemas/{name}"),
                "a schema name must not end in `Test`: openapi-generator's Go client would \
                 write it to a `_test.go` file, which Go builds only for tests",
            );
        }
    }
}

/// `x-origin`, wherever it appears, says `extension`.
pub(super) fn x_origin(document: &Document<'_>, sink: &mut Sink) {
    walk(document.doc, &mut String::new(), &mut |pointer, value| {
        match value.get("x-origin") {
            None => {}
            Some(origin) if origin == "extension" => {}
            Some(origin) => sink.report(
                format!("#{pointer}/x-origin"),
                format!(
                    "`x-origin: {origin}`: the only value is `extension` (what comes from the source document carries no `x-origin`)"
                ),
            ),
        }
    });
}
