//! Every schema is made of OpenAPI 3.0 schema keywords with values of the right shape, checked
//! before anything compiles a schema: a typo such as `type: strng` is one problem at its own
//! JSON pointer (with the name it probably meant), instead of every example whose validator
//! carries the schema failing to compile and progenitor panicking.

use std::collections::HashSet;

use serde_json::Value;

use super::Sink;
use crate::spec::escape;

/// Where a schema's `$ref` points.
const SCHEMA_PREFIX: &str = "#/components/schemas/";

/// The `type`s an OpenAPI 3.0 schema may have (JSON Schema's, without `null`).
const TYPES: &[&str] = &["array", "boolean", "integer", "number", "object", "string"];

/// The keywords of an OpenAPI 3.0 Schema Object (extensions, `x-...`, are allowed besides).
const KEYWORDS: &[&str] = &[
    "$ref",
    "title",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxProperties",
    "minProperties",
    "required",
    "enum",
    "type",
    "allOf",
    "oneOf",
    "anyOf",
    "not",
    "items",
    "properties",
    "additionalProperties",
    "description",
    "format",
    "default",
    "nullable",
    "discriminator",
    "readOnly",
    "writeOnly",
    "xml",
    "externalDocs",
    "example",
    "deprecated",
];

/// Checks every schema in the document: component schemas, and the `schema` of every media
/// type, parameter and header (example values are data, not schemas, and are not entered).
pub(super) fn schema_keywords(document: &crate::spec::Document<'_>, sink: &mut Sink) {
    for (pointer, schema) in schemas(document.doc) {
        check_schema(document.doc, schema, &mut pointer.clone(), sink);
    }
}

/// Whether the document has a schema the structural check refuses (the examples rule then does
/// not report the schemas that fail to compile because of it).
pub(super) fn has_malformed_schema(doc: &Value) -> bool {
    let mut sink = Sink {
        rule: "schema-keywords",
        problems: Vec::new(),
    };
    for (pointer, schema) in schemas(doc) {
        check_schema(doc, schema, &mut pointer.clone(), &mut sink);
    }
    !sink.problems.is_empty()
}

/// Whether `schema` is malformed itself or reaches (through `$ref`s) a component schema that is,
/// or a `$ref` that does not resolve: its examples are not checked, `schema-keywords` or
/// `refs-resolve` has said what is wrong.
pub(super) struct Malformed<'a> {
    doc: &'a Value,
    components: HashSet<String>,
    /// Every local `$ref` of the document that does not resolve (`refs-resolve` reports each):
    /// a schema that reaches one does not compile, and its examples are not checked either.
    dangling: HashSet<String>,
}

impl<'a> Malformed<'a> {
    pub(super) fn new(doc: &'a Value) -> Self {
        let empty = serde_json::Map::new();
        let schemas = doc
            .pointer("/components/schemas")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let mut dangling = HashSet::new();
        super::walk(doc, &mut String::new(), &mut |_, value| {
            if let Some(reference) = value.get("$ref").and_then(Value::as_str) {
                if crate::spec::resolve_ref(doc, reference).is_none() {
                    dangling.insert(reference.to_string());
                }
            }
        });
        let mut components: HashSet<String> = schemas
            .iter()
            .filter(|(_, schema)| is_malformed(doc, schema) || refers_to(schema, &dangling))
            .map(|(name, _)| format!("#/components/schemas/{}", escape(name)))
            .collect();
        loop {
            let before = components.len();
            for (name, schema) in schemas {
                if refers_to(schema, &components) {
                    components.insert(format!("#/components/schemas/{}", escape(name)));
                }
            }
            if components.len() == before {
                break;
            }
        }
        Malformed {
            doc,
            components,
            dangling,
        }
    }

    pub(super) fn any(&self) -> bool {
        !self.components.is_empty() || !self.dangling.is_empty()
    }

    pub(super) fn reaches(&self, schema: &Value) -> bool {
        is_malformed(self.doc, schema)
            || refers_to(schema, &self.components)
            || refers_to(schema, &self.dangling)
    }
}

fn is_malformed(doc: &Value, schema: &Value) -> bool {
    let mut sink = Sink {
        rule: "schema-keywords",
        problems: Vec::new(),
    };
    check_schema(doc, schema, &mut "#".to_string(), &mut sink);
    !sink.problems.is_empty()
}

fn refers_to(value: &Value, targets: &HashSet<String>) -> bool {
    match value {
        Value::Object(map) => map.iter().any(|(key, child)| {
            (key == "$ref"
                && child
                    .as_str()
                    .is_some_and(|target| targets.contains(target)))
                || refers_to(child, targets)
        }),
        Value::Array(items) => items.iter().any(|child| refers_to(child, targets)),
        _ => false,
    }
}

/// Every schema root, with its JSON pointer (`#/...`).
fn schemas(doc: &Value) -> Vec<(String, &Value)> {
    let mut found = Vec::new();
    if let Some(components) = doc
        .pointer("/components/schemas")
        .and_then(Value::as_object)
    {
        for (name, schema) in components {
            found.push((format!("#/components/schemas/{}", escape(name)), schema));
        }
    }
    collect(doc, &mut found);
    found
}

/// The values under a `schema` key outside `components/schemas`, examples and schemas.
fn collect<'a>(doc: &'a Value, found: &mut Vec<(String, &'a Value)>) {
    super::walk_where(doc, &mut String::new(), &mut |pointer, value| {
        let key = pointer.rsplit('/').next().unwrap_or_default();
        if pointer == "/components/schemas" || matches!(key, "example" | "examples") {
            return false;
        }
        if key == "schema" {
            found.push((format!("#{pointer}"), value));
            return false;
        }
        true
    });
}

fn check_schema(doc: &Value, schema: &Value, pointer: &mut String, sink: &mut Sink) {
    let Some(map) = schema.as_object() else {
        sink.report(pointer.as_str(), "a schema must be a mapping");
        return;
    };
    let length = pointer.len();
    for (keyword, value) in map {
        pointer.push('/');
        pointer.push_str(&escape(keyword));
        check_keyword(doc, keyword, value, pointer, sink);
        pointer.truncate(length);
    }
}

fn check_keyword(doc: &Value, keyword: &str, value: &Value, pointer: &mut String, sink: &mut Sink) {
    let length = pointer.len();
    match keyword {
        "type" => match value.as_str() {
            Some(name) if TYPES.contains(&name) => {}
            Some("null") => sink.report(
                pointer.as_str(),
                "`null` is not an OpenAPI 3.0 type: write `nullable: true` beside the type",
            ),
            Some(name) => sink.report(
                pointer.as_str(),
                format!(
                    "`{name}` is not a schema type{}; the types are {}",
                    suggestion(name, TYPES),
                    TYPES.join(", ")
                ),
            ),
            None => sink.report(
                pointer.as_str(),
                format!(
                    "`type` must be one type name (OpenAPI 3.0 has no lists of types): one of {}",
                    TYPES.join(", ")
                ),
            ),
        },
        "properties" => match value.as_object() {
            Some(properties) => {
                for (name, child) in properties {
                    pointer.push('/');
                    pointer.push_str(&escape(name));
                    check_schema(doc, child, pointer, sink);
                    pointer.truncate(length);
                }
            }
            None => sink.report(pointer.as_str(), "`properties` must map names to schemas"),
        },
        "items" | "not" => check_schema(doc, value, pointer, sink),
        "additionalProperties" => {
            if !value.is_boolean() {
                check_schema(doc, value, pointer, sink);
            }
        }
        "allOf" | "anyOf" | "oneOf" => match value.as_array() {
            Some(items) if !items.is_empty() => {
                for (index, child) in items.iter().enumerate() {
                    pointer.push('/');
                    pointer.push_str(&index.to_string());
                    check_schema(doc, child, pointer, sink);
                    pointer.truncate(length);
                }
            }
            _ => sink.report(
                pointer.as_str(),
                format!("`{keyword}` must be a non-empty list of schemas"),
            ),
        },
        "required" => {
            let names = value
                .as_array()
                .is_some_and(|items| items.iter().all(Value::is_string));
            if !names {
                sink.report(
                    pointer.as_str(),
                    "`required` must be a list of property names",
                );
            }
        }
        "enum" => {
            if !value.is_array() {
                sink.report(pointer.as_str(), "`enum` must be a list of values");
            }
        }
        "$ref" => match value.as_str() {
            None => sink.report(pointer.as_str(), "`$ref` must be a string"),
            // Outside the document, or not resolving: `refs-resolve`'s problem.
            Some(reference)
                if !reference.starts_with(SCHEMA_PREFIX)
                    && crate::spec::resolve_ref(doc, reference).is_some() =>
            {
                sink.report(
                    pointer.as_str(),
                    format!(
                        "`$ref: {reference}` is not a schema: a schema's `$ref` points into \
                         `#/components/schemas`"
                    ),
                );
            }
            Some(_) => {}
        },
        known if KEYWORDS.contains(&known) || known.starts_with("x-") => {}
        unknown => sink.report(
            pointer.as_str(),
            format!(
                "`{unknown}` is not an OpenAPI 3.0 schema keyword{} (extensions start with `x-`)",
                suggestion(unknown, KEYWORDS)
            ),
        ),
    }
}

/// `: did you mean `x`?` for the closest of `names` ([`nearest`]), or nothing.
fn suggestion(written: &str, names: &[&str]) -> String {
    nearest(written, names.iter().copied())
        .map(|name| format!(": did you mean `{name}`?"))
        .unwrap_or_default()
}

/// The name of `names` closest to `written`, ignoring case, when it is close: one edit for
/// words of four letters or fewer, two up to twelve, three for longer ones (component names:
/// `CreateCustomerAccountRequest`). The first of equally close ones.
pub(super) fn nearest<'a>(
    written: &str,
    names: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = match written.chars().count() {
        0..=4 => 1,
        5..=12 => 2,
        _ => 3,
    };
    let written = written.to_lowercase();
    names
        .into_iter()
        .map(|name| (edit_distance(&written, &name.to_lowercase()), name))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name)
}

/// Levenshtein distance between `a` and `b`, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_are_the_nearest_name_within_two_edits() {
        assert_eq!(suggestion("strng", TYPES), ": did you mean `string`?");
        assert_eq!(suggestion("int", TYPES), "");
        assert_eq!(suggestion("bool", TYPES), "");
        assert_eq!(suggestion("objet", TYPES), ": did you mean `object`?");
        assert_eq!(
            suggestion("maxLenght", KEYWORDS),
            ": did you mean `maxLength`?"
        );
        assert_eq!(
            suggestion("requried", KEYWORDS),
            ": did you mean `required`?"
        );
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
