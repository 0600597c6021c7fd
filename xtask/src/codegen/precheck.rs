//! Checks the spec against what the generators can express, before any of them runs.
//!
//! progenitor panics (or silently produces something else) on shapes it does not support: more
//! than one success body type, more than one error body type, OpenAPI other than 3.0.x. The
//! generated router has its own limits: POST only, a required JSON body that is a component
//! `$ref`, one success envelope whose `data` is a `$ref` or an array of `$ref`s, bearer token
//! families, header parameters only. Every problem is reported with the operation it is in, all
//! at once, instead of a panic from deep inside a generator.

use std::collections::BTreeSet;

use anyhow::{bail, Result};
use serde_json::Value;

use crate::spec;

/// The catalog codes the generated router answers with by itself, what for, and the name the
/// runtime knows each by; the spec must define them.
pub const ROUTER_CODES: &[(&str, &str, &str)] = &[
    ("00", "success", "SUCCESS"),
    (
        "01",
        "invalid request (malformed JSON, validation failure)",
        "INVALID_REQUEST",
    ),
    (
        "04",
        "unknown operation (no such path)",
        "UNKNOWN_OPERATION",
    ),
    ("05", "method not allowed", "METHOD_NOT_ALLOWED"),
    ("07", "unsupported media type", "UNSUPPORTED_MEDIA_TYPE"),
    ("08", "request body too large", "BODY_TOO_LARGE"),
    ("41", "missing or rejected bearer token", "UNAUTHENTICATED"),
    ("96", "internal error", "INTERNAL_ERROR"),
];

/// Checks `doc`; the error lists every problem found.
pub fn check(doc: &Value) -> Result<()> {
    let mut problems = Problems::default();
    check_version(doc, &mut problems);
    check_catalog(doc, &mut problems);
    check_paths(doc, &mut problems);
    if problems.0.is_empty() {
        return Ok(());
    }
    bail!(
        "spec/openapi.yaml is outside what the code generators support:\n  - {}",
        problems.0.join("\n  - ")
    )
}

#[derive(Default)]
struct Problems(Vec<String>);

impl Problems {
    fn push(&mut self, problem: impl Into<String>) {
        self.0.push(problem.into());
    }
}

fn check_version(doc: &Value, problems: &mut Problems) {
    let version = doc.get("openapi").and_then(Value::as_str).unwrap_or("");
    if !version.starts_with("3.0.") {
        problems.push(format!(
            "`openapi: {version}`: the client generator (progenitor) reads OpenAPI 3.0.x only"
        ));
    }
}

fn check_catalog(doc: &Value, problems: &mut Problems) {
    let Some(codes) = doc.get("x-response-codes").and_then(Value::as_object) else {
        problems
            .push("the root extension `x-response-codes` (the response code catalog) is missing");
        return;
    };
    for (code, entry) in codes {
        let status = entry.get("http_status").and_then(Value::as_u64);
        if !status.is_some_and(|status| (100..=599).contains(&status)) {
            problems.push(format!(
                "`x-response-codes.{code}.http_status` must be an HTTP status (100-599)"
            ));
        }
        if entry.get("meaning").and_then(Value::as_str).is_none() {
            problems.push(format!(
                "`x-response-codes.{code}.meaning` must be a string"
            ));
        }
    }
    for (code, role, _) in ROUTER_CODES {
        if !codes.contains_key(*code) {
            problems.push(format!(
                "`x-response-codes` has no `{code}`, which the router answers with for: {role}"
            ));
        }
    }
    if let Some(permissions) = doc.get("x-permissions") {
        let valid = permissions.as_array().is_some_and(|list| {
            list.iter()
                .all(|entry| entry.get("code").and_then(Value::as_str).is_some())
        });
        if !valid {
            problems.push("`x-permissions` must be a list of objects with a string `code`");
        }
    }
}

fn check_paths(doc: &Value, problems: &mut Problems) {
    let Some(paths) = doc.get("paths").and_then(Value::as_object) else {
        problems.push("the spec has no `paths`");
        return;
    };
    let mut ids = BTreeSet::new();
    let mut error_schemas = BTreeSet::new();
    for (path, item) in paths {
        if item.get("$ref").is_some() {
            problems.push(format!(
                "path `{path}` is a `$ref`; progenitor does not follow those"
            ));
            continue;
        }
        let Some(item) = item.as_object() else {
            problems.push(format!("path `{path}` is not an object"));
            continue;
        };
        for (key, operation) in item {
            match key.as_str() {
                "post" => {
                    let id = operation.get("operationId").and_then(Value::as_str);
                    let Some(id) = id else {
                        problems.push(format!("POST {path} has no `operationId`"));
                        continue;
                    };
                    if !ids.insert(id.to_string()) {
                        problems.push(format!("operationId `{id}` is used twice"));
                    }
                    let context = format!("operation `{id}` (POST {path})");
                    check_operation(doc, &context, operation, &mut error_schemas, problems);
                }
                "get" | "put" | "delete" | "options" | "head" | "patch" | "trace" => {
                    let id = operation.get("operationId").and_then(Value::as_str);
                    problems.push(format!(
                        "operation `{}` ({} {path}): only POST operations are supported",
                        id.unwrap_or("?"),
                        key.to_uppercase()
                    ));
                }
                "parameters" => problems.push(format!(
                    "path `{path}`: path-level `parameters` are not supported; declare them on \
                     the operation"
                )),
                _ => {}
            }
        }
    }
    if error_schemas.len() > 1 {
        let names: Vec<_> = error_schemas.into_iter().collect();
        problems.push(format!(
            "error responses use several schemas ({}); every non-2xx response must share one \
             error envelope",
            names.join(", ")
        ));
    }
}

fn check_operation(
    doc: &Value,
    context: &str,
    operation: &Value,
    error_schemas: &mut BTreeSet<String>,
    problems: &mut Problems,
) {
    let id = operation["operationId"].as_str().unwrap_or_default();
    if !is_snake_case(id) {
        problems.push(format!("{context}: `operationId` must be snake_case"));
    }
    if operation
        .get("x-success-message")
        .and_then(Value::as_str)
        .is_none()
    {
        problems.push(format!(
            "{context}: `x-success-message` (a string) is missing"
        ));
    }
    check_request_body(doc, context, operation, problems);
    check_responses(doc, context, operation, error_schemas, problems);
    check_parameters(doc, context, operation, problems);
    check_security(doc, context, operation, problems);
}

fn check_request_body(doc: &Value, context: &str, operation: &Value, problems: &mut Problems) {
    let Some(body) = operation.get("requestBody") else {
        problems.push(format!(
            "{context}: `requestBody` is missing; progenitor always sends a body, so every \
             operation takes one (`{{}}` when there is nothing to say)"
        ));
        return;
    };
    let body = spec::deref(doc, body);
    if body.get("required").and_then(Value::as_bool) != Some(true) {
        problems.push(format!("{context}: `requestBody.required` must be true"));
    }
    match json_schema_ref(body) {
        Ok(name) => {
            if doc
                .pointer(&format!("/components/schemas/{name}"))
                .is_none()
            {
                problems.push(format!("{context}: request schema `{name}` does not exist"));
            }
        }
        Err(problem) => problems.push(format!("{context}: request body: {problem}")),
    }
}

fn check_responses(
    doc: &Value,
    context: &str,
    operation: &Value,
    error_schemas: &mut BTreeSet<String>,
    problems: &mut Problems,
) {
    let Some(responses) = operation.get("responses").and_then(Value::as_object) else {
        problems.push(format!("{context}: `responses` is missing"));
        return;
    };
    let successes: Vec<&String> = responses.keys().filter(|s| s.starts_with('2')).collect();
    if successes.len() != 1 || successes[0] != "200" {
        problems.push(format!(
            "{context}: exactly one success response, `200`, is supported (found: {}); \
             progenitor panics on more than one success body type",
            successes
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    for (status, response) in responses {
        let response = spec::deref(doc, response);
        let schema = match json_schema_ref(response) {
            Ok(name) => name,
            Err(problem) => {
                problems.push(format!("{context}: response `{status}`: {problem}"));
                continue;
            }
        };
        if status == "200" {
            check_envelope(doc, context, &schema, problems);
        } else if status.starts_with('2') {
            // Reported above.
        } else if status.starts_with(['1', '3']) {
            problems.push(format!("{context}: response `{status}` is not supported"));
        } else {
            error_schemas.insert(schema);
        }
    }
}

/// The success envelope: `data` is a `$ref`, or an array of `$ref`s; `pagination`, if any, is a
/// required `$ref`.
fn check_envelope(doc: &Value, context: &str, name: &str, problems: &mut Problems) {
    let Some(schema) = doc.pointer(&format!("/components/schemas/{name}")) else {
        problems.push(format!("{context}: success schema `{name}` does not exist"));
        return;
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(data) = schema.pointer("/properties/data") else {
        problems.push(format!(
            "{context}: success schema `{name}` has no `data` property; it must be the envelope \
             {{status, response_code, message, data}}"
        ));
        return;
    };
    let data_ok = data.get("$ref").and_then(Value::as_str).is_some()
        || (data.get("type").and_then(Value::as_str) == Some("array")
            && data
                .pointer("/items/$ref")
                .and_then(Value::as_str)
                .is_some());
    if !data_ok {
        problems.push(format!(
            "{context}: `{name}.data` must be a `$ref` to a component schema or an array of them"
        ));
    }
    if let Some(pagination) = schema.pointer("/properties/pagination") {
        if pagination.get("$ref").and_then(Value::as_str).is_none() {
            problems.push(format!("{context}: `{name}.pagination` must be a `$ref`"));
        }
        if !required.contains(&"pagination") {
            problems.push(format!("{context}: `{name}.pagination` must be required"));
        }
    }
}

fn check_parameters(doc: &Value, context: &str, operation: &Value, problems: &mut Problems) {
    let Some(parameters) = operation.get("parameters").and_then(Value::as_array) else {
        return;
    };
    for parameter in parameters {
        let parameter = spec::deref(doc, parameter);
        let name = parameter.get("name").and_then(Value::as_str).unwrap_or("?");
        if parameter.get("in").and_then(Value::as_str) != Some("header") {
            problems.push(format!(
                "{context}: parameter `{name}`: only header parameters are supported (the \
                 trait receives the JSON body, nothing else)"
            ));
        } else if parameter.get("schema").is_none() {
            problems.push(format!("{context}: header `{name}` has no schema"));
        }
    }
}

fn check_security(doc: &Value, context: &str, operation: &Value, problems: &mut Problems) {
    let security = operation.get("security").or_else(|| doc.get("security"));
    let Some(requirements) = security.and_then(Value::as_array) else {
        problems.push(format!(
            "{context}: `security` is missing: use `[]` for a public operation or one bearer \
             scheme"
        ));
        return;
    };
    let permission = operation.get("x-permission").and_then(Value::as_str);
    match requirements.as_slice() {
        [] => {
            if permission.is_some() {
                problems.push(format!(
                    "{context}: a public operation (`security: []`) cannot require an \
                     `x-permission`"
                ));
            }
        }
        [requirement] => {
            let schemes: Vec<&String> = requirement
                .as_object()
                .map(|o| o.keys().collect())
                .unwrap_or_default();
            match schemes.as_slice() {
                [scheme] => {
                    let declared = doc.pointer(&format!("/components/securitySchemes/{scheme}"));
                    let bearer = declared.is_some_and(|s| {
                        s.get("type").and_then(Value::as_str) == Some("http")
                            && s.get("scheme")
                                .and_then(Value::as_str)
                                .is_some_and(|s| s.eq_ignore_ascii_case("bearer"))
                    });
                    if !bearer {
                        problems.push(format!(
                            "{context}: security scheme `{scheme}` must be declared as an HTTP \
                             bearer scheme"
                        ));
                    }
                }
                _ => problems.push(format!(
                    "{context}: a security requirement must name exactly one scheme"
                )),
            }
        }
        _ => problems.push(format!(
            "{context}: exactly one security requirement (one token family) is supported"
        )),
    }
    if let Some(code) = permission {
        let known = doc
            .get("x-permissions")
            .and_then(Value::as_array)
            .is_some_and(|list| {
                list.iter()
                    .any(|p| p.get("code").and_then(Value::as_str) == Some(code))
            });
        if !known {
            problems.push(format!(
                "{context}: `x-permission: {code}` is not listed in `x-permissions`"
            ));
        }
    }
}

/// The component name that a request body or response's `application/json` schema references.
fn json_schema_ref(body: &Value) -> Result<String, String> {
    let content = body
        .get("content")
        .and_then(Value::as_object)
        .ok_or("it has no `content`")?;
    if content.len() != 1 {
        return Err("exactly one media type, `application/json`, is supported".into());
    }
    let schema = content
        .get("application/json")
        .ok_or("the media type must be `application/json`")?
        .get("schema")
        .ok_or("`application/json` has no schema")?;
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/components/schemas/"))
        .map(str::to_string)
        .ok_or_else(|| "the schema must be a `$ref` to `#/components/schemas/...`".into())
}

fn is_snake_case(id: &str) -> bool {
    id.starts_with(|c: char| c.is_ascii_lowercase())
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> Value {
        let text = include_str!("../../tests/fixtures/codegen/fixture.yaml");
        spec::parse(text).unwrap()
    }

    fn check_error(edit: impl FnOnce(&mut Value), expected: &str) {
        let mut doc = fixture();
        edit(&mut doc);
        let error = check(&doc).expect_err("the edited fixture must be refused");
        let message = format!("{error:#}");
        assert!(
            message.contains(expected),
            "expected {expected:?} in:\n{message}"
        );
    }

    fn operation<'a>(doc: &'a mut Value, path: &str) -> &'a mut Value {
        &mut doc["paths"][path]["post"]
    }

    #[test]
    fn the_fixture_passes() {
        check(&fixture()).unwrap();
    }

    #[test]
    fn openapi_3_1_is_refused() {
        check_error(
            |doc| doc["openapi"] = "3.1.0".into(),
            "`openapi: 3.1.0`: the client generator (progenitor) reads OpenAPI 3.0.x only",
        );
    }

    #[test]
    fn a_second_success_response_names_the_operation() {
        check_error(
            |doc| {
                let responses = &mut operation(doc, "/v1/api/transfers/create")["responses"];
                responses["201"] = responses["200"].clone();
            },
            "operation `create_transfer` (POST /v1/api/transfers/create): exactly one success \
             response, `200`, is supported (found: 200, 201)",
        );
    }

    #[test]
    fn a_second_error_schema_is_refused() {
        check_error(
            |doc| {
                let responses = &mut operation(doc, "/v1/api/transfers/create")["responses"];
                responses["409"] = serde_json::json!({
                    "description": "x",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Account"}}}
                });
            },
            "error responses use several schemas (Account, ErrorEnvelope)",
        );
    }

    #[test]
    fn an_optional_body_names_the_operation() {
        check_error(
            |doc| operation(doc, "/v1/auth/token")["requestBody"]["required"] = false.into(),
            "operation `generate_token` (POST /v1/auth/token): `requestBody.required` must be true",
        );
    }

    #[test]
    fn a_missing_body_names_the_operation() {
        check_error(
            |doc| {
                operation(doc, "/v1/auth/token")
                    .as_object_mut()
                    .unwrap()
                    .remove("requestBody");
            },
            "operation `generate_token` (POST /v1/auth/token): `requestBody` is missing",
        );
    }

    #[test]
    fn an_inline_body_schema_is_refused() {
        check_error(
            |doc| {
                operation(doc, "/v1/auth/token")["requestBody"]["content"]["application/json"]
                    ["schema"] = serde_json::json!({"type": "object"});
            },
            "operation `generate_token` (POST /v1/auth/token): request body: the schema must be \
             a `$ref`",
        );
    }

    #[test]
    fn get_operations_are_refused() {
        check_error(
            |doc| {
                let post = operation(doc, "/v1/auth/token").clone();
                doc["paths"]["/v1/auth/token"]["get"] = post;
            },
            "operation `generate_token` (GET /v1/auth/token): only POST operations are supported",
        );
    }

    #[test]
    fn query_parameters_are_refused() {
        check_error(
            |doc| {
                operation(doc, "/v1/auth/token")["parameters"] =
                    serde_json::json!([{"name": "q", "in": "query", "schema": {"type": "string"}}]);
            },
            "parameter `q`: only header parameters are supported",
        );
    }

    #[test]
    fn unknown_permissions_are_refused() {
        check_error(
            |doc| operation(doc, "/v1/web/members/update_role")["x-permission"] = "x.y".into(),
            "`x-permission: x.y` is not listed in `x-permissions`",
        );
    }

    #[test]
    fn router_codes_must_be_in_the_catalog() {
        check_error(
            |doc| {
                doc["x-response-codes"]
                    .as_object_mut()
                    .unwrap()
                    .remove("08");
            },
            "`x-response-codes` has no `08`, which the router answers with for: request body too \
             large",
        );
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let mut doc = fixture();
        operation(&mut doc, "/v1/auth/token")["requestBody"]["required"] = false.into();
        operation(&mut doc, "/v1/api/accounts/fetch")
            .as_object_mut()
            .unwrap()
            .remove("x-success-message");
        let message = format!("{:#}", check(&doc).unwrap_err());
        assert!(message.contains("`generate_token`"), "{message}");
        assert!(message.contains("`fetch_accounts`"), "{message}");
    }
}
