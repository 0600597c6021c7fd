//! Reading `spec/openapi.yaml`: loading it, resolving `$ref`s, indexing its operations
//! ([`Document`], in `spec/document.rs`), and turning its OpenAPI 3.0 schemas into JSON Schema.
//!
//! The lint and the code generator read the spec only through this module: the same
//! [`Document`] for operations, and the same translation for schemas (the lint validates
//! examples with it, the generated router compiles its request validators from it).

mod document;
mod position;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::{Map, Value};

pub use document::*;
pub use position::{position, Position};

/// The JSON Schema dialect the translated schemas declare.
pub const JSON_SCHEMA_DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// Where an open enum's response wrapper (`Open<Name>`, a plain `type: string`) names the enum of
/// the values known today: `x-known-values: '#/components/schemas/<Name>'`. The lint holds its
/// shape (`open-enums`, `known-values`); the code generator types the wrapper as that enum.
pub const KNOWN_VALUES: &str = "x-known-values";

/// The workspace root (the parent of `xtask/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

/// A document the toolkit lints and generates from, and where its generated code goes: the
/// settings that differ between documents. Everything else the generators need, the document
/// says of itself (`x-token-families`, `x-response-codes` with their `router` roles,
/// `x-permissions`, `x-source-document`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    /// The document, from the workspace root.
    pub spec: &'static str,
    /// The folder of the server's generated modules (every `.rs` file in it is generated).
    pub server_dir: &'static str,
    /// The client's generated file.
    pub client_file: &'static str,
    /// Whether `codegen` prints the steps that follow a new operation in Kobo's `impl Api`.
    pub next_steps: bool,
}

/// Kobo's own API: `generated-server/` and `generated-client/`.
pub const KOBO: Target = Target {
    spec: "spec/openapi.yaml",
    server_dir: "generated-server/src/generated",
    client_file: "generated-client/src/generated.rs",
    next_steps: true,
};

/// The core banking provider's API (issue 32): the simulator serves it (`provider-server/`),
/// Kobo calls it (`provider-client/`).
pub const PROVIDER: Target = Target {
    spec: "spec/provider.yaml",
    server_dir: "provider-server/src/generated",
    client_file: "provider-client/src/generated.rs",
    next_steps: false,
};

/// Every document of the workspace, in the order `lint` and `codegen` take them.
pub const TARGETS: &[Target] = &[KOBO, PROVIDER];

impl Target {
    pub fn path(&self) -> PathBuf {
        workspace_root().join(self.spec)
    }
}

/// The path of the single source of truth (the commands take it from a workspace root instead,
/// so that their tests can run on a copy).
#[cfg(test)]
pub fn spec_path() -> PathBuf {
    KOBO.path()
}

/// Parses an OpenAPI document written in YAML (or JSON, which is YAML) into a JSON value.
pub fn parse(text: &str) -> Result<Value> {
    let value: Value = serde_norway::from_str(text).context("the document is not valid YAML")?;
    Ok(value)
}

/// Reads and parses the document at `path`.
pub fn load(path: &Path) -> Result<Value> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    parse(&text).with_context(|| format!("cannot parse {}", path.display()))
}

/// Resolves a local JSON pointer reference such as `#/components/schemas/Account`.
pub fn resolve_ref<'a>(doc: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    doc.pointer(pointer)
}

/// Follows `$ref` chains (for responses, request bodies, parameters, examples) to the object.
pub fn deref<'a>(doc: &'a Value, value: &'a Value) -> &'a Value {
    let mut current = value;
    // References between components are bounded; a cycle of plain `$ref`s is a broken document.
    for _ in 0..16 {
        match current.get("$ref").and_then(Value::as_str) {
            Some(reference) => match resolve_ref(doc, reference) {
                Some(target) => current = target,
                None => return current,
            },
            None => return current,
        }
    }
    current
}

/// Builds a self-contained JSON Schema (draft 2020-12) for `schema`, an OpenAPI 3.0 schema object
/// taken from `doc`: every component schema is carried along under `$defs`, `$ref`s are rewritten
/// to point there, and OpenAPI-only keywords are translated (`nullable`, boolean
/// `exclusiveMinimum`/`exclusiveMaximum`) or dropped (`discriminator`, `example`, `xml`,
/// `externalDocs`, extensions).
pub fn json_schema_for(doc: &Value, schema: &Value) -> Value {
    let mut root = match translate(schema) {
        Value::Object(map) => map,
        // `true`/`false` schemas: wrap them so `$defs` has somewhere to live.
        other => {
            let mut map = Map::new();
            map.insert("allOf".into(), Value::Array(vec![other]));
            map
        }
    };
    let defs: Map<String, Value> = doc
        .pointer("/components/schemas")
        .and_then(Value::as_object)
        .map(|schemas| {
            schemas
                .iter()
                .map(|(name, schema)| (name.clone(), translate(schema)))
                .collect()
        })
        .unwrap_or_default();
    root.insert("$schema".into(), Value::String(JSON_SCHEMA_DIALECT.into()));
    if !defs.is_empty() {
        root.insert("$defs".into(), Value::Object(defs));
    }
    Value::Object(root)
}

/// Translates one OpenAPI 3.0 schema object (recursively) into JSON Schema.
pub fn translate(schema: &Value) -> Value {
    let Value::Object(object) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in object {
        match key.as_str() {
            "$ref" => {
                let reference = value.as_str().unwrap_or_default();
                let rewritten = reference
                    .strip_prefix("#/components/schemas/")
                    .map(|name| format!("#/$defs/{name}"))
                    .unwrap_or_else(|| reference.to_string());
                out.insert(key.clone(), Value::String(rewritten));
            }
            "properties" | "patternProperties" => {
                let translated = value
                    .as_object()
                    .map(|properties| {
                        properties
                            .iter()
                            .map(|(name, schema)| (name.clone(), translate(schema)))
                            .collect::<Map<_, _>>()
                    })
                    .unwrap_or_default();
                out.insert(key.clone(), Value::Object(translated));
            }
            "items" | "additionalProperties" | "not" => {
                out.insert(key.clone(), translate(value));
            }
            "allOf" | "anyOf" | "oneOf" => {
                let translated = value
                    .as_array()
                    .map(|schemas| schemas.iter().map(translate).collect())
                    .unwrap_or_default();
                out.insert(key.clone(), Value::Array(translated));
            }
            // OpenAPI-only keywords with no JSON Schema meaning.
            "nullable" | "discriminator" | "example" | "xml" | "externalDocs" => {}
            "exclusiveMinimum" | "exclusiveMaximum" => {}
            extension if extension.starts_with("x-") => {}
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    // OpenAPI 3.0 spells an exclusive bound as a boolean beside minimum/maximum.
    for (flag, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        if object.get(flag).and_then(Value::as_bool) == Some(true) {
            if let Some(limit) = out.remove(bound) {
                out.insert(flag.into(), limit);
            }
        }
    }
    if object.get("nullable").and_then(Value::as_bool) == Some(true) {
        make_nullable(&mut out);
    }
    Value::Object(out)
}

fn make_nullable(out: &mut Map<String, Value>) {
    if let Some(values) = out.get_mut("enum").and_then(Value::as_array_mut) {
        if !values.contains(&Value::Null) {
            values.push(Value::Null);
        }
    }
    match out.get("type").cloned() {
        Some(Value::String(single)) => {
            out.insert(
                "type".into(),
                Value::Array(vec![Value::String(single), Value::String("null".into())]),
            );
        }
        Some(Value::Array(mut many)) => {
            if !many.iter().any(|t| t == "null") {
                many.push(Value::String("null".into()));
            }
            out.insert("type".into(), Value::Array(many));
        }
        _ => {
            // No `type` to widen (for example an `allOf` wrapper): accept null beside the schema.
            let inner = std::mem::take(out);
            out.insert(
                "anyOf".into(),
                Value::Array(vec![
                    Value::Object(inner),
                    serde_json::json!({ "type": "null" }),
                ]),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(openapi: Value, expected: Value) {
        assert_eq!(translate(&openapi), expected);
    }

    #[test]
    fn nullable_widens_the_type_and_the_enum() {
        check(
            json!({"type": "string", "enum": ["a"], "nullable": true}),
            json!({"type": ["string", "null"], "enum": ["a", null]}),
        );
    }

    #[test]
    fn nullable_without_a_type_becomes_any_of() {
        check(
            json!({"allOf": [{"$ref": "#/components/schemas/A"}], "nullable": true}),
            json!({"anyOf": [{"allOf": [{"$ref": "#/$defs/A"}]}, {"type": "null"}]}),
        );
    }

    #[test]
    fn boolean_exclusive_bounds_become_numeric() {
        check(
            json!({"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 9}),
            json!({"type": "number", "exclusiveMinimum": 0, "maximum": 9}),
        );
    }

    #[test]
    fn openapi_only_keywords_are_dropped_inside_properties() {
        check(
            json!({"type": "object", "x-origin": "extension", "properties": {
                "a": {"type": "string", "example": "x", "x-origin": "extension"}
            }}),
            json!({"type": "object", "properties": {"a": {"type": "string"}}}),
        );
    }

    #[test]
    fn component_schemas_travel_as_defs() {
        let doc = json!({"components": {"schemas": {
            "Code": {"type": "string", "pattern": "^[0-9]{2}$"}
        }}});
        let schema = json_schema_for(&doc, &json!({"$ref": "#/components/schemas/Code"}));
        assert_eq!(schema["$ref"], "#/$defs/Code");
        assert_eq!(schema["$defs"]["Code"]["pattern"], "^[0-9]{2}$");
        let validator = jsonschema::validator_for(&schema).unwrap();
        assert!(validator.is_valid(&json!("07")));
        assert!(!validator.is_valid(&json!("7")));
    }
}
