//! Schemas as the gate compares them: `$ref`s followed and `allOf` wrappers merged, so that
//! `{allOf: [{$ref: AccountNumber}], nullable: true}` and an inline copy of `AccountNumber` with
//! `nullable: true` compare equal, and a field moved into a shared component is no change.
//! Each merged keyword remembers where in the document it is written, so that a change is
//! reported once, at the schema that holds it, however many operations reach it.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::spec;

/// The marker that makes an enum (or a `oneOf`/`anyOf`) open: clients must accept values added
/// later, so a response may gain values without breaking them.
pub const EXTENSIBLE_ENUM: &str = "x-extensible-enum";

/// What a description says to make the same promise as [`EXTENSIBLE_ENUM`] (compared in lower
/// case with whitespace collapsed), for the enums written before the marker existed.
pub const EXTENSIBLE_PHRASE: &str = "accept values added later";

/// One schema with its `$ref`s followed and its `allOf` parts merged into one object.
#[derive(Debug, Default)]
pub struct Resolved {
    /// The merged keywords: the parts' first, then the wrapper's own (which win); `properties`
    /// and `required` are the union of all of them.
    pub schema: Map<String, Value>,
    /// Every `$ref` followed to build it, in order (the comparison stops at a cycle of them).
    pub refs: Vec<String>,
    /// Whether the schema, or any part of it, is marked open (see [`is_marked_open`]).
    pub open: bool,
    /// The JSON pointer (`#/components/schemas/Thing`, `#/paths/...`) of the schema object each
    /// merged keyword is written in.
    pub origins: BTreeMap<String, String>,
    /// The same for each property, by name (the object whose `properties` holds it).
    pub property_origins: BTreeMap<String, String>,
    /// The same for each name in `required`.
    pub required_origins: BTreeMap<String, String>,
    /// The pointer of the schema as given, before any `$ref` is followed.
    pub pointer: String,
}

impl Resolved {
    pub fn get(&self, keyword: &str) -> Option<&Value> {
        self.schema.get(keyword)
    }

    pub fn str(&self, keyword: &str) -> Option<&str> {
        self.get(keyword).and_then(Value::as_str)
    }

    pub fn number(&self, keyword: &str) -> Option<f64> {
        self.get(keyword).and_then(Value::as_f64)
    }

    pub fn flag(&self, keyword: &str) -> bool {
        self.get(keyword).and_then(Value::as_bool) == Some(true)
    }

    pub fn properties(&self) -> &Map<String, Value> {
        spec::object(self.get("properties"))
    }

    /// The pointer of the schema object `keyword` is written in (the schema's own pointer when
    /// it has no such keyword).
    pub fn origin(&self, keyword: &str) -> &str {
        self.origins.get(keyword).unwrap_or(&self.pointer)
    }

    /// The names in `required`.
    pub fn required(&self) -> Vec<&str> {
        self.get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect()
    }
}

/// Resolves `schema`, a schema of `doc` (possibly a `$ref`, possibly an `allOf` wrapper) found
/// at the JSON pointer `pointer` (`#/...`).
pub fn resolve(doc: &Value, schema: &Value, pointer: &str) -> Resolved {
    let mut resolved = Resolved {
        pointer: pointer.to_string(),
        ..Resolved::default()
    };
    merge(doc, schema, pointer, &mut resolved, 0);
    resolved
}

/// `$ref` chains and `allOf` nesting are short in any sane document; this bounds a broken one.
const MAX_NESTING: usize = 32;

fn merge(doc: &Value, schema: &Value, pointer: &str, into: &mut Resolved, depth: usize) {
    let Some(object) = schema.as_object() else {
        // `true`/`false` schemas (and junk): nothing to merge.
        return;
    };
    if depth > MAX_NESTING {
        return;
    }
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        into.refs.push(reference.to_string());
        if let Some(target) = spec::resolve_ref(doc, reference) {
            merge(doc, target, reference, into, depth + 1);
        }
        // OpenAPI 3.0 ignores the siblings of `$ref`.
        return;
    }
    into.open |= is_marked_open(object);
    for (index, part) in object
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        merge(
            doc,
            part,
            &format!("{pointer}/allOf/{index}"),
            into,
            depth + 1,
        );
    }
    for (keyword, value) in object {
        match keyword.as_str() {
            "allOf" => {}
            "properties" => {
                let properties = into
                    .schema
                    .entry("properties")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let (Some(merged), Some(own)) = (properties.as_object_mut(), value.as_object()) {
                    merged.extend(own.iter().map(|(name, s)| (name.clone(), s.clone())));
                    for name in own.keys() {
                        into.property_origins
                            .insert(name.clone(), pointer.to_string());
                    }
                }
            }
            "required" => {
                let required = into
                    .schema
                    .entry("required")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let (Some(merged), Some(own)) = (required.as_array_mut(), value.as_array()) {
                    for name in own {
                        if !merged.contains(name) {
                            merged.push(name.clone());
                        }
                        if let Some(name) = name.as_str() {
                            into.required_origins
                                .entry(name.to_string())
                                .or_insert_with(|| pointer.to_string());
                        }
                    }
                }
            }
            _ => {
                into.schema.insert(keyword.clone(), value.clone());
                into.origins.insert(keyword.clone(), pointer.to_string());
            }
        }
    }
}

/// Whether a schema object promises that its values may grow: `x-extensible-enum: true`, or a
/// description that tells clients to accept values added later.
pub fn is_marked_open(object: &Map<String, Value>) -> bool {
    if object.get(EXTENSIBLE_ENUM).and_then(Value::as_bool) == Some(true) {
        return true;
    }
    object
        .get("description")
        .and_then(Value::as_str)
        .is_some_and(|description| {
            let words: Vec<String> = description
                .split_whitespace()
                .map(str::to_lowercase)
                .collect();
            words.join(" ").contains(EXTENSIBLE_PHRASE)
        })
}
