//! Every schema is made of OpenAPI 3.0 schema keywords with values of the right shape, checked
//! before anything compiles a schema: a typo such as `type: strng` is one problem at its own
//! JSON pointer (with the name it probably meant), instead of every example whose validator
//! carries the schema failing to compile and progenitor panicking.

use std::collections::HashSet;

use serde_json::Value;

use super::Sink;
use crate::spec::escape;

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
        check_schema(schema, &mut pointer.clone(), sink);
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
        check_schema(schema, &mut pointer.clone(), &mut sink);
    }
    !sink.problems.is_empty()
}

/// Whether `schema` is malformed itself or reaches (through `$ref`s) a component schema that is:
/// its examples are not checked, `schema-keywords` has said what is wrong.
pub(super) struct Malformed {
    components: HashSet<String>,
}

impl Malformed {
    pub(super) fn new(doc: &Value) -> Self {
        let empty = serde_json::Map::new();
        let schemas = doc
            .pointer("/components/schemas")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let mut components: HashSet<String> = schemas
            .iter()
            .filter(|(_, schema)| is_malformed(schema))
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
        Malformed { components }
    }

    pub(super) fn any(&self) -> bool {
        !self.components.is_empty()
    }

    pub(super) fn reaches(&self, schema: &Value) -> bool {
        is_malformed(schema) || refers_to(schema, &self.components)
    }
}

fn is_malformed(schema: &Value) -> bool {
    let mut sink = Sink {
        rule: "schema-keywords",
        problems: Vec::new(),
    };
    check_schema(schema, &mut "#".to_string(), &mut sink);
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

fn check_schema(schema: &Value, pointer: &mut String, sink: &mut Sink) {
    let Some(map) = schema.as_object() else {
        sink.report(pointer.as_str(), "a schema must be a mapping");
        return;
    };
    let length = pointer.len();
    for (keyword, value) in map {
        pointer.push('/');
        pointer.push_str(&escape(keyword));
        check_keyword(keyword, value, pointer, sink);
        pointer.truncate(length);
    }
}

fn check_keyword(keyword: &str, value: &Value, pointer: &mut String, sink: &mut Sink) {
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
                    check_schema(child, pointer, sink);
                    pointer.truncate(length);
                }
            }
            None => sink.report(pointer.as_str(), "`properties` must map names to schemas"),
        },
        "items" | "not" => check_schema(value, pointer, sink),
        "additionalProperties" => {
            if !value.is_boolean() {
                check_schema(value, pointer, sink);
            }
        }
        "allOf" | "anyOf" | "oneOf" => match value.as_array() {
            Some(items) if !items.is_empty() => {
                for (index, child) in items.iter().enumerate() {
                    pointer.push('/');
                    pointer.push_str(&index.to_string());
                    check_schema(child, pointer, sink);
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
        "$ref" => {
            if !value.is_string() {
                sink.report(pointer.as_str(), "`$ref` must be a string");
            }
        }
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

/// `: did you mean `x`?` for the closest of `names` (two edits at most, fewer for short words),
/// or nothing.
fn suggestion(written: &str, names: &[&str]) -> String {
    let limit = if written.chars().count() <= 4 { 1 } else { 2 };
    names
        .iter()
        .map(|name| {
            (
                edit_distance(&written.to_lowercase(), &name.to_lowercase()),
                name,
            )
        })
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| format!(": did you mean `{name}`?"))
        .unwrap_or_default()
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
