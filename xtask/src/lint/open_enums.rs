//! Open enums: an enum whose values may grow reaches responses only through its wrapper
//! `Open<Name>`, a plain string that names the enum and lists the values known today.

use std::collections::BTreeSet;

use serde_json::Value;

use super::Sink;
use crate::spec::{Document, COMPONENT_SCHEMA_PREFIX, KNOWN_VALUES};

/// An open enum (`x-extensible-enum` on an `enum`: its values may grow in a minor release) reaches
/// a response only through its wrapper `Open<Name>`: a plain `type: string` with
/// `x-extensible-enum: true` and `x-known-values: '#/components/schemas/<Name>'` (the wrapper's
/// own shape is [`known_values`]'s). Generated clients refuse a whole answer with a value an
/// `enum` does not list (openapi-python-client, openapi-generator's Python and Go), and an `anyOf`
/// of the enum and a string is lost or refused by others (openapi-generator's PHP, Kotlin, C#);
/// a plain string every one of them keeps. Requests keep the enum itself: a client sends only
/// values it knows. The Rust generators type the wrapper as the enum (`codegen/client.rs`,
/// `close_open_enums`).
pub(super) fn open_enums(document: &Document<'_>, sink: &mut Sink) {
    let Some(schemas) = document
        .doc
        .pointer("/components/schemas")
        .and_then(Value::as_object)
    else {
        return;
    };
    let open: BTreeSet<&str> = schemas
        .iter()
        .filter(|(_, schema)| is_open_enum(schema))
        .map(|(name, _)| name.as_str())
        .collect();
    if open.is_empty() {
        return;
    }
    for name in &open {
        let wrapper = format!("Open{name}");
        let reference = format!("{COMPONENT_SCHEMA_PREFIX}{name}");
        let names_it = schemas
            .get(&wrapper)
            .and_then(|schema| schema.get(KNOWN_VALUES))
            .and_then(Value::as_str)
            == Some(reference.as_str());
        if !names_it {
            sink.report(
                format!("{COMPONENT_SCHEMA_PREFIX}{name}"),
                format!(
                    "is an open enum: it needs `{wrapper}` (`type: string`, `x-extensible-enum: \
                     true`, `{KNOWN_VALUES}: '{reference}'`, no `anyOf`) for responses to use, so \
                     generated clients keep a value added later"
                ),
            );
        }
    }
    // Every schema a response or a webhook reaches: none may name an open enum but its wrapper.
    let mut roots: Vec<(String, &Value)> = Vec::new();
    for operation in &document.operations {
        for (status, _) in operation
            .responses()
            .filter(|(status, _)| status.starts_with('2'))
        {
            if let Some(media) = document.response_media(operation, status) {
                roots.push((format!("{} response {status}", operation.label()), media));
            }
        }
    }
    if let Some(webhooks) = document.doc.get("x-webhooks") {
        roots.push(("#/x-webhooks".to_string(), webhooks));
    }
    let mut visited = BTreeSet::new();
    while let Some((location, value)) = roots.pop() {
        let mut refs = Vec::new();
        collect_schema_refs(value, &mut refs);
        for target in refs {
            if open.contains(target) {
                sink.report(
                    &location,
                    format!(
                        "a response reaches the open enum `{target}` directly: use \
                         `Open{target}`, or generated clients refuse a value added later"
                    ),
                );
            } else if !target.starts_with("Open") || !open.contains(&target[4..]) {
                if let Some(schema) = schemas.get(target) {
                    if visited.insert(target) {
                        roots.push((format!("#/components/schemas/{target}"), schema));
                    }
                }
            }
        }
    }
}

/// The component schemas `value` names with a `$ref`, at any depth (examples left out).
fn collect_schema_refs<'v>(value: &'v Value, into: &mut Vec<&'v str>) {
    match value {
        Value::Object(object) => {
            for (key, value) in object {
                match (key.as_str(), value) {
                    ("$ref", Value::String(reference)) => {
                        if let Some(name) = reference.strip_prefix("#/components/schemas/") {
                            into.push(name);
                        }
                    }
                    ("example" | "examples", _) => {}
                    _ => collect_schema_refs(value, into),
                }
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|item| collect_schema_refs(item, into)),
        _ => {}
    }
}

/// Whether `schema` is an open enum: an `enum` with `x-extensible-enum: true`.
fn is_open_enum(schema: &Value) -> bool {
    schema.get("enum").is_some()
        && schema.get(crate::breaking::EXTENSIBLE_ENUM) == Some(&Value::Bool(true))
}

/// The keywords a plain string has none of: with any of them an open enum's wrapper is no longer
/// read as a string by every generator.
const NOT_PLAIN: &[&str] = &[
    "enum",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "$ref",
    "items",
    "properties",
];

/// The wording an open enum's wrapper lists its known values in, before the enum's name:
/// "(`success`, `pending`: `TransactionStatus` names them)".
const NAMES_THEM: &str = "names them)";

/// Every `x-known-values` (see [`open_enums`]) is on a component schema `Open<Name>` that is a
/// plain `type: string` with `x-extensible-enum: true`, and names `'#/components/schemas/<Name>'`,
/// an open enum. A plain string carries no values to generated clients, so its description lists
/// the values known today, exactly the enum's and in its order, as "(`a`, `b`: `<Name>` names
/// them)": what partners read in their generated docs. The code generator types the wrapper as
/// the enum it names, so it runs this rule first (`codegen/precheck.rs`).
pub(super) fn known_values(document: &Document<'_>, sink: &mut Sink) {
    let schemas = document
        .doc
        .pointer("/components/schemas")
        .and_then(Value::as_object);
    known_values_placed(document, sink);
    let Some(schemas) = schemas else {
        return;
    };
    for (wrapper, schema) in schemas {
        let Some(known) = schema.get(KNOWN_VALUES) else {
            continue;
        };
        let location = format!("{COMPONENT_SCHEMA_PREFIX}{}", crate::spec::escape(wrapper));
        let not_plain: Vec<&str> = NOT_PLAIN
            .iter()
            .copied()
            .filter(|keyword| schema.get(*keyword).is_some())
            .collect();
        if schema.get("type") != Some(&Value::from("string"))
            || schema.get(crate::breaking::EXTENSIBLE_ENUM) != Some(&Value::Bool(true))
            || !not_plain.is_empty()
        {
            sink.report(
                &location,
                format!(
                    "has `{KNOWN_VALUES}`, so it must be a plain `type: string` with \
                     `x-extensible-enum: true`{}: every generated client then keeps a value added \
                     later",
                    if not_plain.is_empty() {
                        String::new()
                    } else {
                        format!(", without `{}`", not_plain.join("`, `"))
                    }
                ),
            );
        }
        let name = known
            .as_str()
            .and_then(|reference| reference.strip_prefix(COMPONENT_SCHEMA_PREFIX))
            .filter(|name| !name.contains('/'));
        let Some((name, values)) = name.and_then(|name| {
            let target = schemas.get(name).filter(|target| is_open_enum(target))?;
            Some((name, target.get("enum")?.as_array()?))
        }) else {
            sink.report(
                &location,
                format!(
                    "`{KNOWN_VALUES}: {known}` must name an open enum, \
                     `'{COMPONENT_SCHEMA_PREFIX}<Name>'` of a schema with `enum` and \
                     `x-extensible-enum: true`"
                ),
            );
            continue;
        };
        if *wrapper != format!("Open{name}") {
            sink.report(
                &location,
                format!(
                    "names the known values of `{name}`, so it must be called `Open{name}` (what \
                     `open-enums` looks for)"
                ),
            );
        }
        let values: Vec<String> = values
            .iter()
            .map(|value| {
                value
                    .as_str()
                    .map_or_else(|| value.to_string(), str::to_string)
            })
            .collect();
        description_lists(&location, schema, name, &values, sink);
    }
}

/// `x-known-values` only on a component schema: anywhere else the code generator would not
/// read it.
fn known_values_placed(document: &Document<'_>, sink: &mut Sink) {
    super::walk_where(document.doc, &mut String::new(), &mut |pointer, value| {
        if pointer.ends_with("/example") || pointer.ends_with("/examples") {
            return false;
        }
        let on_component = pointer
            .strip_prefix("/components/schemas/")
            .is_some_and(|name| !name.contains('/'));
        if value.get(KNOWN_VALUES).is_some() && !on_component {
            sink.report(
                format!("#{pointer}"),
                format!(
                    "`{KNOWN_VALUES}` belongs on a component schema `Open<Name>` only (the code \
                     generator reads it there)"
                ),
            );
        }
        true
    });
}

/// The description of `schema` (at `location`, the wrapper of open enum `name`) lists
/// `values`, the values known today, in their order.
fn description_lists(
    location: &str,
    schema: &Value,
    name: &str,
    values: &[String],
    sink: &mut Sink,
) {
    let quoted = |values: &[String]| {
        values
            .iter()
            .map(|value| format!("`{value}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let description = schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match listed_values(description, name) {
        None => sink.report(
            location,
            format!(
                "its description must list the values known today, as \
                 \"({}: `{name}` {NAMES_THEM}\": a plain string shows partners no values",
                quoted(values)
            ),
        ),
        Some(listed) if listed != values => {
            let missing: Vec<String> = values
                .iter()
                .filter(|value| !listed.contains(value))
                .cloned()
                .collect();
            let extra: Vec<String> = listed
                .iter()
                .filter(|value| !values.contains(value))
                .cloned()
                .collect();
            let mut differences = Vec::new();
            if !missing.is_empty() {
                differences.push(format!("missing {}", quoted(&missing)));
            }
            if !extra.is_empty() {
                differences.push(format!("not in `{name}`: {}", quoted(&extra)));
            }
            if differences.is_empty() {
                differences.push(format!("in another order than `{name}`'s"));
            }
            sink.report(
                location,
                format!(
                    "its description's values known today are not `{name}`'s ({}): list \
                     \"({}: `{name}` {NAMES_THEM}\"",
                    differences.join("; "),
                    quoted(values)
                ),
            );
        }
        Some(_) => {}
    }
}

/// The values a description lists before "`<name>` names them)", back to the opening
/// parenthesis, each in backticks; `None` without that wording.
fn listed_values(description: &str, name: &str) -> Option<Vec<String>> {
    let end = description.find(&format!("`{name}` {NAMES_THEM}"))?;
    let list = &description[..end];
    let list = &list[list.rfind('(')? + 1..];
    let list = list.trim_end().strip_suffix(':')?;
    Some(
        list.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect(),
    )
}
