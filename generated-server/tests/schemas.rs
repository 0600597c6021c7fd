//! The models agree with the spec: the JSON Schema `schemars` derives from each generated type is
//! compared with the spec's component schema.
//!
//! What schemars cannot see is left out of the comparison, on purpose and only that:
//! - newtypes check their pattern and lengths in code, so their derived schema is a bare
//!   `string`: constraints are not compared, only types;
//! - a required nullable property is an `Option` that must be present (typify's
//!   `deserialize_with`), which schemars reports as optional: such properties may be missing
//!   from the derived `required`, and no other.

use std::collections::BTreeSet;

use generated_server::schemas;
use serde_json::Value;

#[test]
fn every_component_has_a_model_whose_schema_agrees() {
    let components: Value = serde_json::from_str(schemas::COMPONENTS).unwrap();
    let defs = components["$defs"].as_object().unwrap();
    let derived = schemas::derived();
    let derived_names: BTreeSet<&str> = derived.iter().map(|(name, _)| *name).collect();
    let spec_names: BTreeSet<&str> = defs.keys().map(String::as_str).collect();
    assert_eq!(derived_names, spec_names);

    let mut problems = Vec::new();
    for (name, root) in &derived {
        let derived = serde_json::to_value(root).unwrap();
        let spec = &defs[*name];
        compare(name, spec, &derived, &components, &derived, &mut problems);
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Compares `spec` (refs resolved in `root`) with `derived` (refs resolved in `derived_root`).
fn compare(
    name: &str,
    spec: &Value,
    derived: &Value,
    root: &Value,
    derived_root: &Value,
    problems: &mut Vec<String>,
) {
    let spec = resolve(spec, root);
    if let Some(values) = spec.get("enum") {
        if enum_values(derived) != enum_values(spec) {
            problems.push(format!(
                "{name}: enum {values} vs derived {}",
                enum_values(derived)
                    .into_iter()
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        return;
    }
    if let (Some(spec_type), Some(derived_type)) = (base_type(spec), base_type(derived)) {
        // `number` in the spec may be an integer type in Rust only if the spec says integer.
        if spec_type != derived_type {
            problems.push(format!(
                "{name}: type {spec_type} vs derived {derived_type}"
            ));
        }
    }
    let Some(spec_properties) = spec.get("properties").and_then(Value::as_object) else {
        return;
    };
    let derived_properties = derived
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let spec_keys: BTreeSet<&String> = spec_properties.keys().collect();
    let derived_keys: BTreeSet<&String> = derived_properties.keys().collect();
    if spec_keys != derived_keys {
        problems.push(format!(
            "{name}: properties {spec_keys:?} vs derived {derived_keys:?}"
        ));
        return;
    }
    let spec_required = string_set(spec.get("required"));
    let derived_required = string_set(derived.get("required"));
    for property in derived_required.difference(&spec_required) {
        problems.push(format!(
            "{name}.{property}: required by the model, not by the spec"
        ));
    }
    for property in spec_required.difference(&derived_required) {
        if !nullable(&spec_properties[property], root) {
            problems.push(format!(
                "{name}.{property}: required by the spec, optional in the model"
            ));
        }
    }
    for (property, schema) in spec_properties {
        let derived_property = resolve_derived(&derived_properties[property], derived_root);
        compare(
            &format!("{name}.{property}"),
            schema,
            &derived_property,
            root,
            derived_root,
            problems,
        );
    }
}

/// Follows the spec's `$ref`s (and a one-element `allOf` wrapper) to the schema itself.
fn resolve<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    let mut schema = schema;
    for _ in 0..8 {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            schema = root.pointer(reference.trim_start_matches('#')).unwrap();
        } else if let Some(inner) = wrapped(schema) {
            schema = inner;
        } else {
            break;
        }
    }
    schema
}

/// Follows a derived `#/definitions/...` reference within the derived root schema.
fn resolve_derived(schema: &Value, derived_root: &Value) -> Value {
    let mut schema = schema.clone();
    for _ in 0..8 {
        let next = match schema.get("$ref").and_then(Value::as_str) {
            Some(reference) => derived_root
                .pointer(reference.trim_start_matches('#'))
                .cloned()
                .unwrap(),
            None => match wrapped(&schema) {
                Some(inner) => inner.clone(),
                None => break,
            },
        };
        schema = next;
    }
    schema
}

/// The schema inside a wrapper: a one-element `allOf`, or an `anyOf` of it and `null` (how both
/// the spec's translation and schemars spell "nullable" or "optional" around a `$ref`).
fn wrapped(schema: &Value) -> Option<&Value> {
    if let Some([only]) = schema
        .get("allOf")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
    {
        return Some(only);
    }
    match schema
        .get("anyOf")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
    {
        Some([a, b]) if b.get("type").is_some_and(|t| t == "null") => Some(a),
        Some([a, b]) if a.get("type").is_some_and(|t| t == "null") => Some(b),
        _ => None,
    }
}

/// The schema's type without `null`: `["string", "null"]` -> `string`.
fn base_type(schema: &Value) -> Option<String> {
    match schema.get("type")? {
        Value::String(single) => Some(single.clone()),
        Value::Array(many) => {
            let types: Vec<&str> = many
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect();
            (types.len() == 1).then(|| types[0].to_string())
        }
        _ => None,
    }
}

fn nullable(schema: &Value, root: &Value) -> bool {
    let is_null = |t: &Value| t == "null";
    let direct = match schema.get("type") {
        Some(Value::Array(types)) => types.iter().any(is_null),
        _ => false,
    };
    let any_of = schema
        .get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|options| options.iter().any(|o| o.get("type").is_some_and(is_null)));
    direct || any_of || (schema.get("$ref").is_some() && nullable(resolve(schema, root), root))
}

fn enum_values(schema: &Value) -> BTreeSet<String> {
    let mut values = BTreeSet::new();
    if let Some(list) = schema.get("enum").and_then(Value::as_array) {
        values.extend(list.iter().filter(|v| !v.is_null()).map(Value::to_string));
    }
    for variant in schema
        .get("oneOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        values.extend(enum_values(variant));
        if let Some(constant) = variant.get("const") {
            values.insert(constant.to_string());
        }
    }
    values
}

fn string_set(value: Option<&Value>) -> BTreeSet<String> {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

#[test]
fn the_comparison_sees_disagreements() {
    let spec_root = serde_json::json!({"$defs": {
        "Status": {"type": "string", "enum": ["on", "off"]},
    }});
    let spec = serde_json::json!({
        "type": "object",
        "required": ["id", "status", "note"],
        "properties": {
            "id": {"type": "string"},
            "status": {"$ref": "#/$defs/Status"},
            "note": {"type": ["string", "null"]},
            "count": {"type": "integer"},
        },
    });
    let check = |derived: Value, expected: &[&str]| {
        let mut problems = Vec::new();
        compare("T", &spec, &derived, &spec_root, &derived, &mut problems);
        assert_eq!(problems, expected);
    };
    let agreeing = serde_json::json!({
        "type": "object",
        "required": ["id", "status"],
        "properties": {
            "id": {"type": "string"},
            "status": {"$ref": "#/definitions/Status"},
            "note": {"type": ["string", "null"]},
            "count": {"type": ["integer", "null"]},
        },
        "definitions": {"Status": {"type": "string", "enum": ["on", "off"]}},
    });
    check(agreeing, &[]);
    let disagreeing = serde_json::json!({
        "type": "object",
        "required": ["count"],
        "properties": {
            "id": {"type": "integer"},
            "status": {"$ref": "#/definitions/Status"},
            "note": {"type": ["string", "null"]},
            "count": {"type": "integer"},
        },
        "definitions": {"Status": {"type": "string", "enum": ["on"]}},
    });
    check(
        disagreeing,
        &[
            "T.count: required by the model, not by the spec",
            "T.id: required by the spec, optional in the model",
            "T.status: required by the spec, optional in the model",
            "T.id: type string vs derived integer",
            "T.status: enum [\"on\",\"off\"] vs derived \"on\"",
        ],
    );
}
