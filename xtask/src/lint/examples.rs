//! Every example in the document validates against its schema: partners copy them, the
//! conformance suite replays them, and a wrong example is a wrong contract.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use serde_json::Value;

use super::Sink;
use crate::spec::{self, escape, examples_of, object, Document, JSON};

/// Example errors shown per example; more are counted, not listed.
const ERRORS_SHOWN_MAX: usize = 3;

/// Media type, parameter and header examples validate against their schema; schema-level
/// `example`s validate against the schema (or subschema) they sit on.
pub(super) fn examples_valid(document: &Document<'_>, sink: &mut Sink) {
    let mut validators = Validators {
        doc: document.doc,
        compiled: HashMap::new(),
        // A malformed schema is `schema-keywords`' one problem: the examples of the schemas
        // that reach it are not checked, and since every validator with a `$ref` carries every
        // component, their compile errors are not reported either.
        malformed: super::schemas::Malformed::new(document.doc),
    };
    let carriers = carriers(document);
    for carrier in &carriers {
        let Some(schema) = carrier.value.get("schema") else {
            continue;
        };
        for (name, example) in examples_of(document.doc, carrier.value) {
            if let Some(errors) = validators.errors(schema, example) {
                sink.report(
                    &carrier.label,
                    format!("example `{name}` does not match its schema: {errors}"),
                );
            }
        }
    }

    let component_schemas = object(document.doc.pointer("/components/schemas"))
        .iter()
        .map(|(name, schema)| (format!("schema `#/components/schemas/{name}`"), schema));
    let inline_schemas = carriers.iter().filter_map(|carrier| {
        let schema = carrier.value.get("schema")?;
        Some((format!("{} schema", carrier.label), schema))
    });
    for (label, root) in component_schemas.chain(inline_schemas) {
        let mut with_examples = Vec::new();
        schemas_with_examples(root, &mut String::new(), &mut with_examples);
        for (pointer, schema) in with_examples {
            if let Some(errors) = validators.errors(schema, &schema["example"]) {
                let place = if pointer.is_empty() {
                    "its `example`".to_string()
                } else {
                    format!("the `example` at `{pointer}`")
                };
                sink.report(
                    &label,
                    format!("{place} does not match its schema: {errors}"),
                );
            }
        }
    }
}

/// Something that has a `schema` and may have `example`/`examples`: a media type, a parameter,
/// a header. Each is visited once, where it is defined (a `$ref` is checked at its target).
struct Carrier<'a> {
    label: String,
    value: &'a Value,
}

fn carriers<'a>(document: &Document<'a>) -> Vec<Carrier<'a>> {
    let mut found = Vec::new();
    for operation in &document.operations {
        let label = operation.label();
        for parameter in object_list(operation.value.get("parameters")) {
            add_parameter(&mut found, &label, parameter);
        }
        if let Some(body) = operation.value.get("requestBody") {
            add_content(&mut found, &format!("{label}: request body"), body);
        }
        for (status, response) in operation.responses() {
            add_response(&mut found, &format!("{label}: response {status}"), response);
        }
    }
    for (path, item) in object(document.doc.get("paths")) {
        for parameter in object_list(item.get("parameters")) {
            add_parameter(&mut found, &format!("path `{path}`"), parameter);
        }
    }
    let components = |kind: &str| components(document.doc, kind);
    for (name, parameter) in components("parameters") {
        add_parameter(&mut found, &name, parameter);
    }
    for (name, body) in components("requestBodies") {
        add_content(&mut found, &format!("request body {name}"), body);
    }
    for (name, response) in components("responses") {
        add_response(&mut found, &format!("response {name}"), response);
    }
    for (name, header) in components("headers") {
        if header.get("$ref").is_none() {
            found.push(Carrier {
                label: format!("header {name}"),
                value: header,
            });
        }
    }
    found
}

/// The entries of one kind of component, labelled by their reference.
fn components<'a>(doc: &'a Value, kind: &str) -> Vec<(String, &'a Value)> {
    object(doc.pointer(&format!("/components/{kind}")))
        .iter()
        .map(|(name, value)| (format!("`#/components/{kind}/{name}`"), value))
        .collect()
}

fn object_list(value: Option<&Value>) -> impl Iterator<Item = &Value> {
    value.and_then(Value::as_array).into_iter().flatten()
}

fn add_parameter<'a>(found: &mut Vec<Carrier<'a>>, owner: &str, parameter: &'a Value) {
    if parameter.get("$ref").is_some() {
        return;
    }
    let name = parameter.get("name").and_then(Value::as_str).unwrap_or("?");
    let label = format!("{owner}: parameter `{name}`");
    add_content(found, &label, parameter);
    found.push(Carrier {
        label,
        value: parameter,
    });
}

fn add_response<'a>(found: &mut Vec<Carrier<'a>>, label: &str, response: &'a Value) {
    if response.get("$ref").is_some() {
        return;
    }
    add_content(found, label, response);
    for (name, header) in object(response.get("headers")) {
        if header.get("$ref").is_none() {
            found.push(Carrier {
                label: format!("{label} header `{name}`"),
                value: header,
            });
        }
    }
}

/// The media types of a request body, response or parameter defined here (not a `$ref`).
fn add_content<'a>(found: &mut Vec<Carrier<'a>>, label: &str, container: &'a Value) {
    if container.get("$ref").is_some() {
        return;
    }
    for (media_type, media) in object(container.get("content")) {
        let label = if media_type == JSON {
            label.to_string()
        } else {
            format!("{label} ({media_type})")
        };
        found.push(Carrier {
            label,
            value: media,
        });
    }
}

/// Collects every (sub)schema of `schema` that has an `example`, with its pointer relative to
/// `schema`. `$ref`s are not followed: their targets are visited as components.
fn schemas_with_examples<'a>(
    schema: &'a Value,
    pointer: &mut String,
    found: &mut Vec<(String, &'a Value)>,
) {
    let Some(map) = schema.as_object() else {
        return;
    };
    if map.contains_key("$ref") {
        return;
    }
    if map.contains_key("example") {
        found.push((pointer.clone(), schema));
    }
    let length = pointer.len();
    let mut visit = |suffix: String, child: &'a Value, found: &mut Vec<(String, &'a Value)>| {
        pointer.push_str(&suffix);
        schemas_with_examples(child, pointer, found);
        pointer.truncate(length);
    };
    for (name, child) in object(map.get("properties")) {
        visit(format!("/properties/{}", escape(name)), child, found);
    }
    for keyword in ["items", "additionalProperties", "not"] {
        if let Some(child) = map.get(keyword) {
            visit(format!("/{keyword}"), child, found);
        }
    }
    for keyword in ["allOf", "anyOf", "oneOf"] {
        for (index, child) in object_list(map.get(keyword)).enumerate() {
            visit(format!("/{keyword}/{index}"), child, found);
        }
    }
}

/// Compiled validators, one per distinct schema (a schema that does not compile is reported for
/// the first example checked against it only).
struct Validators<'a> {
    doc: &'a Value,
    compiled: HashMap<String, Result<jsonschema::Validator, String>>,
    malformed: super::schemas::Malformed<'a>,
}

impl Validators<'_> {
    /// Why `instance` does not match the OpenAPI `schema`, or `None` when it does.
    fn errors(&mut self, schema: &Value, instance: &Value) -> Option<String> {
        let doc = self.doc;
        if self.malformed.reaches(schema) {
            return None;
        }
        let validator = match self.compiled.entry(schema.to_string()) {
            Entry::Occupied(entry) => entry.into_mut(),
            Entry::Vacant(entry) => {
                let compiled = entry.insert(compile(doc, schema));
                if let Err(error) = compiled {
                    if self.malformed.any() {
                        return None;
                    }
                    // Said once per schema, not once per example.
                    return Some(format!("the schema does not compile: {error}"));
                }
                compiled
            }
        };
        let Ok(validator) = validator else {
            return None;
        };
        let errors: Vec<String> = validator
            .iter_errors(instance)
            .map(|error| {
                let path = error.instance_path().to_string();
                let path = if path.is_empty() {
                    "/".to_string()
                } else {
                    path
                };
                format!("at `{path}`: {error}")
            })
            .collect();
        match errors.len() {
            0 => None,
            count if count <= ERRORS_SHOWN_MAX => Some(errors.join("; ")),
            count => Some(format!(
                "{}; and {} more",
                errors[..ERRORS_SHOWN_MAX].join("; "),
                count - ERRORS_SHOWN_MAX
            )),
        }
    }
}

/// Compiles an OpenAPI schema as JSON Schema with format validation on (a date that is not a
/// date is a wrong example).
fn compile(doc: &Value, schema: &Value) -> Result<jsonschema::Validator, String> {
    // Carrying every component along is only needed when the schema refers to one.
    let json_schema = if mentions_ref(schema) {
        spec::json_schema_for(doc, schema)
    } else {
        let mut translated = spec::translate(schema);
        if let Value::Object(map) = &mut translated {
            map.insert("$schema".into(), spec::JSON_SCHEMA_DIALECT.into());
        }
        translated
    };
    jsonschema::options()
        .should_validate_formats(true)
        .build(&json_schema)
        .map_err(|error| plain(&error.to_string()))
}

/// A compile error of the `jsonschema` crate in the document's terms: it names the component
/// schemas by where [`spec::json_schema_for`] carries them (`/$defs/<name>`), which the
/// document does not have.
pub(super) fn plain(message: &str) -> String {
    let missing = message
        .strip_prefix("Pointer '")
        .and_then(|rest| rest.strip_suffix("' does not exist"));
    match missing {
        Some(pointer) => match pointer.strip_prefix("/$defs/") {
            Some(name) => {
                format!("it refers to `#/components/schemas/{name}`, which does not exist")
            }
            None => format!(
                "it refers to `#{pointer}`, which is not a schema of `#/components/schemas`"
            ),
        },
        None => message
            .replace("#/$defs/", "#/components/schemas/")
            .replace("/$defs/", "#/components/schemas/"),
    }
}

fn mentions_ref(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => map.contains_key("$ref") || map.values().any(mentions_ref),
        Value::Array(items) => items.iter().any(mentions_ref),
        _ => false,
    }
}

/// No example carries a field its schema does not declare. The response models stay open to
/// new fields (a client must ignore what it does not know), so `examples-valid` lets an extra
/// field through; but in the document's own examples one is a mistake: most often a field the
/// schema lost and its examples kept, which partners would then go on reading.
pub(super) fn examples_declared(document: &Document<'_>, sink: &mut Sink) {
    // A malformed schema is `schema-keywords`' one problem (as in `examples_valid`).
    let malformed = super::schemas::Malformed::new(document.doc);
    for carrier in carriers(document) {
        let Some(schema) = carrier.value.get("schema") else {
            continue;
        };
        if malformed.reaches(schema) {
            continue;
        }
        for (name, example) in examples_of(document.doc, carrier.value) {
            let mut found = Vec::new();
            undeclared(
                document.doc,
                &[schema],
                example,
                &mut String::new(),
                &mut found,
            );
            if !found.is_empty() {
                let fields = found
                    .iter()
                    .map(|pointer| format!("`{pointer}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                sink.report(
                    &carrier.label,
                    format!("example `{name}` carries {fields}, which its schema does not declare"),
                );
            }
        }
    }
}

/// Collects, as pointers into `example`, the object keys that none of `schemas` (taken together:
/// one value described by all of them) declares.
fn undeclared(
    doc: &Value,
    schemas: &[&Value],
    example: &Value,
    pointer: &mut String,
    found: &mut Vec<String>,
) {
    let mut flat = Vec::new();
    for schema in schemas {
        flatten(doc, schema, &mut flat, 0);
    }
    let length = pointer.len();
    match example {
        Value::Object(map) => {
            let Some(declared) = declared_properties(&flat) else {
                return;
            };
            for (key, value) in map {
                pointer.push('/');
                pointer.push_str(&escape(key));
                match declared.get(key.as_str()) {
                    Some(children) => undeclared(doc, children, value, pointer, found),
                    None => found.push(pointer.clone()),
                }
                pointer.truncate(length);
            }
        }
        Value::Array(items) => {
            let item_schemas: Vec<&Value> = flat.iter().filter_map(|s| s.get("items")).collect();
            if item_schemas.is_empty() {
                return;
            }
            for (index, item) in items.iter().enumerate() {
                pointer.push_str(&format!("/{index}"));
                undeclared(doc, &item_schemas, item, pointer, found);
                pointer.truncate(length);
            }
        }
        _ => {}
    }
}

/// `schema` and every schema it is made of (`$ref`, `allOf`, `anyOf`, `oneOf`), each resolved.
fn flatten<'a>(doc: &'a Value, schema: &'a Value, into: &mut Vec<&'a Value>, depth: usize) {
    if depth > 32 {
        return;
    }
    let schema = spec::deref(doc, schema);
    into.push(schema);
    for keyword in ["allOf", "anyOf", "oneOf"] {
        for member in object_list(schema.get(keyword)) {
            flatten(doc, member, into, depth + 1);
        }
    }
}

/// The properties `schemas` declare, each with the schemas that describe it; `None` when the
/// object is open by design (no schema lists properties, or one gives `additionalProperties` a
/// schema of its own: a map) or closed (`additionalProperties: false`, which `examples-valid`
/// enforces already: one mistake, one problem).
fn declared_properties<'a>(schemas: &[&'a Value]) -> Option<HashMap<&'a str, Vec<&'a Value>>> {
    let mut declared: HashMap<&str, Vec<&Value>> = HashMap::new();
    for schema in schemas {
        match schema.get("additionalProperties") {
            Some(Value::Object(_)) | Some(Value::Bool(false)) => return None,
            _ => {}
        }
        for (name, child) in object(schema.get("properties")) {
            declared.entry(name.as_str()).or_default().push(child);
        }
    }
    (!declared.is_empty()).then_some(declared)
}
