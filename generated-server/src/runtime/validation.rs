//! JSON Schema validation of request bodies and headers, each compiled once, at its
//! operation's first call, from the spec's schemas with `jsonschema` (the engine the
//! conformance suite uses too), and the messages that name the offending field.

use std::collections::HashMap;
use std::sync::OnceLock;

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

/// The validators of every operation, each compiled from the spec's schemas the first time its
/// operation is called: compiling all of them (about 100, each against every component) took
/// 1.6 s at every router's construction, which every `kobo` process and every test's kit paid
/// whatever operations it then served.
pub(crate) struct Validators {
    components: Value,
    bodies: HashMap<Operation, OnceLock<Validator>>,
    headers: HashMap<(Operation, &'static str), OnceLock<Validator>>,
}

impl Validators {
    /// Every operation's validators, to be compiled on first use.
    pub(crate) fn new() -> Validators {
        let components: Value =
            serde_json::from_str(schemas::COMPONENTS).expect("the embedded schemas are JSON");
        let mut bodies = HashMap::new();
        let mut headers = HashMap::new();
        for &operation in Operation::ALL {
            bodies.insert(operation, OnceLock::new());
            for header in operation.header_parameters() {
                headers.insert((operation, header.name), OnceLock::new());
            }
        }
        Validators {
            components,
            bodies,
            headers,
        }
    }

    /// The validator of `operation`'s request body, compiled now if it was not yet.
    fn body(&self, operation: Operation) -> &Validator {
        self.bodies[&operation].get_or_init(|| {
            let mut schema = self.components.clone();
            schema["$ref"] = Value::String(format!("#/$defs/{}", operation.request_schema()));
            compile(&schema, operation.request_schema())
        })
    }

    /// The validator of `operation`'s header `name`, compiled now if it was not yet.
    fn header(&self, operation: Operation, name: &'static str) -> &Validator {
        self.headers[&(operation, name)].get_or_init(|| {
            let header = operation
                .header_parameters()
                .iter()
                .find(|header| header.name == name)
                .expect("a header the operation declares");
            let schema: Value =
                serde_json::from_str(header.schema).expect("the embedded schemas are JSON");
            compile(&schema, name)
        })
    }

    /// Checks a request body; the error names the first offending field. Control characters
    /// are refused in every string first, the same whatever store is behind the API
    /// (PostgreSQL cannot store `\u0000` in text at all).
    pub(crate) fn check_body(&self, operation: Operation, body: &Value) -> Result<(), String> {
        if let Some(path) = control_character_at(body, &mut String::new()) {
            let field = if path.is_empty() {
                "request body"
            } else {
                &path
            };
            return Err(format!("`{field}`: must not contain control characters"));
        }
        let validator = self.body(operation);
        match validator.iter_errors(body).next() {
            None => Ok(()),
            Some(error) => Err(describe(&error, body)),
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
        let validator = self.header(operation, name);
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

/// The path of the first string (or object key) holding a control character other than tab,
/// line feed and carriage return; `None` when there is none.
fn control_character_at(value: &Value, path: &mut String) -> Option<String> {
    let forbidden = |text: &str| {
        text.chars()
            .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
    };
    match value {
        Value::String(text) if forbidden(text) => Some(path.clone()),
        Value::Array(items) => items.iter().enumerate().find_map(|(index, item)| {
            let length = path.len();
            path.push_str(&format!("[{index}]"));
            let found = control_character_at(item, path);
            path.truncate(length);
            found
        }),
        Value::Object(fields) => fields.iter().find_map(|(name, item)| {
            let length = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            if forbidden(name) {
                path.push_str("(a field name)");
                return Some(path.clone());
            }
            path.push_str(name);
            let found = control_character_at(item, path);
            path.truncate(length);
            found
        }),
        _ => None,
    }
}

/// "`filters.start_date`: must be a date", "`amount` is required", ... The rejected value is
/// never repeated: it may be a password or a secret, and it may be a megabyte long.
fn describe(error: &ValidationError<'_>, body: &Value) -> String {
    let path = field_path(error);
    let field = if path.is_empty() {
        "request body".to_string()
    } else {
        format!("`{path}`")
    };
    match error.kind() {
        ValidationErrorKind::Required { property } => {
            let property = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_string);
            format!("`{}` is required", join(&path, &property))
        }
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            let fields: Vec<String> = unexpected
                .iter()
                .map(|name| format!("`{}`", join(&path, &capped(name))))
                .collect();
            format!("unknown field {}", fields.join(", "))
        }
        ValidationErrorKind::FalseSchema if !path.is_empty() => {
            format!("unknown field {field}")
        }
        // An object that allows no field at all reports the value, not the field: name the
        // body's first field.
        ValidationErrorKind::FalseSchema => match body.as_object().and_then(|f| f.keys().next()) {
            Some(name) => format!("unknown field `{}`", capped(name)),
            None => "request body: must be `{}`".to_string(),
        },
        ValidationErrorKind::Type { kind } => format!("{field}: must be {}", type_name(kind)),
        ValidationErrorKind::MinLength { limit } => {
            format!("{field}: must be at least {limit} characters")
        }
        ValidationErrorKind::MaxLength { limit } => {
            format!("{field}: must be at most {limit} characters")
        }
        ValidationErrorKind::Pattern { pattern } => {
            format!("{field}: must match `{}`", capped(pattern))
        }
        ValidationErrorKind::Format { format } => format!("{field}: must be a valid {format}"),
        ValidationErrorKind::Enum { options } => {
            format!("{field}: must be one of {}", capped(&options.to_string()))
        }
        ValidationErrorKind::Constant { expected_value } => {
            format!("{field}: must be {}", capped(&expected_value.to_string()))
        }
        ValidationErrorKind::Minimum { limit } => format!("{field}: must be at least {limit}"),
        ValidationErrorKind::Maximum { limit } => format!("{field}: must be at most {limit}"),
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            format!("{field}: must be more than {limit}")
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => {
            format!("{field}: must be less than {limit}")
        }
        ValidationErrorKind::MinItems { limit } => {
            format!("{field}: must have at least {limit} items")
        }
        ValidationErrorKind::MaxItems { limit } => {
            format!("{field}: must have at most {limit} items")
        }
        ValidationErrorKind::UniqueItems => format!("{field}: must not repeat an item"),
        ValidationErrorKind::MinProperties { limit } => {
            format!("{field}: must have at least {limit} fields")
        }
        _ => format!("{field}: is not valid here"),
    }
}

/// `string`, `an integer`, `one of: string, null`.
fn type_name(kind: &jsonschema::error::TypeKind) -> String {
    match kind {
        jsonschema::error::TypeKind::Single(single) => with_article(&single.to_string()),
        jsonschema::error::TypeKind::Multiple(types) => {
            let names: Vec<String> = types.iter().map(|t| t.to_string()).collect();
            format!("one of: {}", names.join(", "))
        }
    }
}

fn with_article(type_name: &str) -> String {
    match type_name {
        "integer" | "array" | "object" => format!("an {type_name}"),
        "null" => "null".to_string(),
        other => format!("a {other}"),
    }
}

/// Text from the request (a field name) or the schema, cut to a readable length.
fn capped(text: &str) -> String {
    const MAX_CHARS: usize = 64;
    if text.chars().count() <= MAX_CHARS {
        return text.to_string();
    }
    let cut: String = text.chars().take(MAX_CHARS).collect();
    format!("{cut}…")
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
        let message = describe(
            &validator.iter_errors(&instance).next().expect("invalid"),
            &instance,
        );
        message
    }

    /// Compiled on first use, every validator still compiles (`cargo xtask codegen` rules out
    /// a broken schema; this is where one would show).
    #[test]
    fn every_operations_validators_compile() {
        let validators = Validators::new();
        for &operation in Operation::ALL {
            validators.body(operation);
            for header in operation.header_parameters() {
                validators.header(operation, header.name);
            }
        }
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
        check(json!({"amount": "abc"}), "`amount`: must match `^[0-9]+$`");
        check(
            json!({"amount": "1", "filters": {"start_date": "yesterday"}}),
            "`filters.start_date`: must be a valid date",
        );
        check(
            json!({"amount": "1", "items": [{}]}),
            "`items[0].id` is required",
        );
        check(
            json!({"amount": "1", "colour": 1}),
            "unknown field `colour`",
        );
        check(json!([]), "request body: must be an object");
        check(json!({"amount": 1}), "`amount`: must be a string");
    }

    #[test]
    fn rejected_values_are_never_repeated() {
        let schema = json!({
            "type": "object",
            "properties": {
                "password": {"type": "string", "maxLength": 128, "format": "password"},
                "otp": {"type": "string", "pattern": "^[0-9]{6}$"},
            },
        });
        let long = "S3cret-".repeat(100_000);
        let message = message(schema.clone(), json!({"password": long}));
        assert_eq!(message, "`password`: must be at most 128 characters");
        let message = self::message(schema, json!({"otp": "my-secret-otp"}));
        assert!(!message.contains("my-secret-otp"), "{message}");
        // An unknown field's name comes back cut short.
        let closed = json!({"type": "object", "additionalProperties": false});
        let message = self::message(closed, json!({"x".repeat(10_000): 1}));
        assert!(message.len() < 100, "{message}");
    }

    #[test]
    fn an_empty_object_names_what_it_refuses() {
        let empty = json!({"type": "object", "additionalProperties": false});
        assert_eq!(
            message(empty.clone(), json!({"page": 1})),
            "unknown field `page`"
        );
        assert_eq!(
            message(empty, json!(false)),
            "request body: must be an object"
        );
    }

    #[test]
    fn control_characters_are_found_with_their_path() {
        let find = |value: Value| control_character_at(&value, &mut String::new());
        assert_eq!(find(json!({"name": "Ife"})), None);
        assert_eq!(find(json!({"note": "two\nlines\tand a tab"})), None);
        assert_eq!(find(json!({"name": "I\u{0}fe"})), Some("name".into()));
        assert_eq!(
            find(json!({"filters": {"search": "x\u{1b}[2J"}})),
            Some("filters.search".into())
        );
        assert_eq!(
            find(json!({"items": ["ok", "\u{85}"]})),
            Some("items[1]".into())
        );
        assert_eq!(find(json!("\u{7f}")), Some(String::new()));
    }
}
