//! JSON Schema validation of request bodies and headers, compiled once from the spec's schemas
//! with `jsonschema` (the engine the conformance suite uses too), and the messages that name
//! the offending field.

use std::collections::HashMap;

use jsonschema::error::ValidationErrorKind;
use jsonschema::paths::LocationSegment;
use jsonschema::{ValidationError, Validator};
use serde_json::Value;

use crate::{schemas, Operation};

/// A self-contained JSON Schema for one component of the spec: a `$ref` to it beside every
/// component under `$defs` (the request and response schemas of [`Operation`] are components).
pub fn component_schema(name: &str) -> Value {
    let mut root: serde_json::Map<String, Value> =
        serde_json::from_str(schemas::COMPONENTS).expect("the embedded schemas are JSON");
    root.insert("$ref".into(), Value::String(format!("#/$defs/{name}")));
    Value::Object(root)
}

impl Operation {
    /// The JSON Schema of the operation's request body.
    pub fn request_json_schema(self) -> Value {
        component_schema(self.request_schema())
    }

    /// The JSON Schema of the operation's success envelope.
    pub fn response_json_schema(self) -> Value {
        component_schema(self.response_schema())
    }
}

/// The compiled validators of every operation.
pub(crate) struct Validators {
    bodies: HashMap<Operation, Validator>,
    headers: HashMap<(Operation, &'static str), Validator>,
}

impl Validators {
    /// Compiles every operation's schemas, once, at router construction.
    pub(crate) fn compile() -> Validators {
        let components: Value =
            serde_json::from_str(schemas::COMPONENTS).expect("the embedded schemas are JSON");
        let mut bodies = HashMap::new();
        let mut headers = HashMap::new();
        for &operation in Operation::ALL {
            let mut schema = components.clone();
            schema["$ref"] = Value::String(format!("#/$defs/{}", operation.request_schema()));
            bodies.insert(operation, compile(&schema, operation.request_schema()));
            for header in operation.header_parameters() {
                let schema: Value =
                    serde_json::from_str(header.schema).expect("the embedded schemas are JSON");
                headers.insert((operation, header.name), compile(&schema, header.name));
            }
        }
        Validators { bodies, headers }
    }

    /// Checks a request body; the error names the first offending field.
    pub(crate) fn check_body(&self, operation: Operation, body: &Value) -> Result<(), String> {
        let validator = &self.bodies[&operation];
        match validator.iter_errors(body).next() {
            None => Ok(()),
            Some(error) => Err(describe(&error)),
        }
    }

    /// Checks a header value (as a JSON string) against the operation's declared schema.
    pub(crate) fn check_header(
        &self,
        operation: Operation,
        name: &'static str,
        value: &str,
    ) -> Result<(), String> {
        let instance = Value::String(value.to_string());
        let validator = &self.headers[&(operation, name)];
        let problem = validator
            .iter_errors(&instance)
            .next()
            .map(|error| format!("`{name}` header: {error}"));
        problem.map_or(Ok(()), Err)
    }
}

fn compile(schema: &Value, what: &str) -> Validator {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .unwrap_or_else(|error| panic!("the embedded schema of `{what}` does not compile: {error}"))
}

/// "`filters.start_date`: "x" is not a "date"", "`amount` is required", ...
fn describe(error: &ValidationError<'_>) -> String {
    let path = field_path(error);
    match error.kind() {
        ValidationErrorKind::Required { property } => {
            let property = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_string);
            format!("`{}` is required", join(&path, &property))
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let fields: Vec<String> = unexpected
                .iter()
                .map(|name| format!("`{}`", join(&path, name)))
                .collect();
            format!("unknown field {}", fields.join(", "))
        }
        _ if path.is_empty() => format!("request body: {error}"),
        _ => format!("`{path}`: {error}"),
    }
}

/// The instance path as a field name: `/filters/start_date` -> `filters.start_date`,
/// `/items/0/amount` -> `items[0].amount`.
fn field_path(error: &ValidationError<'_>) -> String {
    let mut path = String::new();
    for segment in error.instance_path().iter() {
        match segment {
            LocationSegment::Property(name) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&name);
            }
            LocationSegment::Index(index) => path.push_str(&format!("[{index}]")),
        }
    }
    path
}

fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_string()
    } else {
        format!("{path}.{field}")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn message(schema: Value, instance: Value) -> String {
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
            .unwrap();
        let message = describe(&validator.iter_errors(&instance).next().expect("invalid"));
        message
    }

    #[test]
    fn messages_name_the_field() {
        let schema = json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["amount"],
            "properties": {
                "amount": {"type": "string", "pattern": "^[0-9]+$"},
                "filters": {"type": "object", "properties": {
                    "start_date": {"type": "string", "format": "date"},
                }},
                "items": {"type": "array", "items": {"type": "object", "required": ["id"]}},
            },
        });
        let check = |instance: Value, expected: &str| {
            assert_eq!(message(schema.clone(), instance), expected);
        };
        check(json!({}), "`amount` is required");
        check(
            json!({"amount": "abc"}),
            r#"`amount`: "abc" does not match "^[0-9]+$""#,
        );
        check(
            json!({"amount": "1", "filters": {"start_date": "yesterday"}}),
            r#"`filters.start_date`: "yesterday" is not a "date""#,
        );
        check(
            json!({"amount": "1", "items": [{}]}),
            "`items[0].id` is required",
        );
        check(
            json!({"amount": "1", "colour": 1}),
            "unknown field `colour`",
        );
        check(json!([]), r#"request body: [] is not of type "object""#);
    }
}
