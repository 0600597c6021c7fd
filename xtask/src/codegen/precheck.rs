//! Checks the spec against what the generators can express, before any of them runs.
//!
//! progenitor panics (or silently produces something else) on shapes it does not support: more
//! than one success body type, more than one error body type, OpenAPI other than 3.0.x. The
//! generated code has its own needs: POST only, a required JSON body that is a component `$ref`,
//! snake_case operationIds, bearer token families, catalogs whose entries name enum variants.
//! The lint already has a rule for each of those: the precheck runs them by name
//! ([`LINT_RULES`]), then the few checks only the generators need ([`GENERATOR_RULES`]: the
//! router's own codes, the success envelope's `data`, header parameters, path items and
//! statuses). Every problem is reported as the lint reports it, with the operation it is in, all
//! at once, instead of a panic from deep inside a generator.

use anyhow::{bail, Result};
use serde_json::Value;

use crate::lint::{self, Rule, Sink};
use crate::spec::{component_name, object, Document, ROUTER_ROLES};

/// The lint's rules whose shapes the generators rely on, in the order they run.
pub const LINT_RULES: &[&str] = &[
    // progenitor reads OpenAPI 3.0 only, through the `openapiv3` model.
    "openapi-version",
    // Every reader below follows `$ref`s and skips the ones that do not resolve.
    "refs-resolve",
    // typify panics on a schema that is not one (`type: strng`, `required: name`).
    "schema-keywords",
    // The router has one `POST` route per path.
    "post-only",
    // operationIds name the trait's and the client's methods.
    "operation-id",
    // progenitor always sends a body; the trait method takes its named type.
    "request-body",
    // One success body type per operation (progenitor panics otherwise).
    "success-response",
    // One error body type (progenitor panics otherwise).
    "error-envelope",
    // `TokenFamily` and the router's bearer check.
    "security",
    // `Permission`: one variant per code.
    "permission-catalog",
    // `Operation::permission` names a `Permission` variant.
    "permission",
    // `ResponseCode`: one variant per code, named by `name`.
    "response-code-catalog",
    // `Operation::response_codes` names `ResponseCode` variants.
    "response-codes",
    // `Operation::success_message`.
    "success-message",
    // `close_open_enums`: an open enum's wrapper is typed as the enum its `x-known-values` names.
    "known-values",
];

/// The checks only the generators need; the lint has no opinion on these shapes.
#[rustfmt::skip]
pub const GENERATOR_RULES: &[Rule] = &[
    Rule { name: "codegen-router-codes", check: router_codes },
    Rule { name: "codegen-path-items", check: path_items },
    Rule { name: "codegen-statuses", check: statuses },
    Rule { name: "codegen-envelope", check: envelope },
    Rule { name: "codegen-parameters", check: parameters },
];

/// Checks `document`, whose YAML is `text` (problems at a JSON pointer name its line and column);
/// the error lists every problem found.
pub fn check(target: &crate::spec::Target, document: &Document<'_>, text: &str) -> Result<()> {
    let rules = LINT_RULES
        .iter()
        .map(|name| lint::rule(name))
        .chain(GENERATOR_RULES);
    let mut problems = lint::run_rules(document, rules);
    lint::locate(&mut problems, text);
    if problems.is_empty() {
        return Ok(());
    }
    let listed: Vec<String> = problems.iter().map(ToString::to_string).collect();
    bail!(
        "{} is outside what the code generators support:\n  - {}",
        target.spec,
        listed.join("\n  - ")
    )
}

/// The catalog gives one code to every role the router answers with by itself.
fn router_codes(document: &Document<'_>, sink: &mut Sink) {
    for role in ROUTER_ROLES {
        match document.router_codes(role.name).as_slice() {
            [_] => {}
            [] => sink.report(
                "#/x-response-codes",
                format!(
                    "no code names router role `{}` (`router: [{}]`), which the router answers \
                     with for: {}",
                    role.name, role.name, role.answers
                ),
            ),
            codes => sink.report(
                "#/x-response-codes",
                format!(
                    "router role `{}` is named by {} codes ({}): one answers it",
                    role.name,
                    codes.len(),
                    codes.join(", ")
                ),
            ),
        }
    }
}

/// Path items are written in place, without path-level `parameters`: progenitor does not follow
/// a path item's `$ref`, and the generated model reads an operation's own parameters.
fn path_items(document: &Document<'_>, sink: &mut Sink) {
    for (path, item) in object(document.doc.get("paths")) {
        if item.get("$ref").is_some() {
            sink.report(
                format!("path `{path}`"),
                "is a `$ref`: progenitor does not follow those; write the path item in place",
            );
        }
        if item.get("parameters").is_some() {
            sink.report(
                format!("path `{path}`"),
                "declares path-level `parameters`: declare them on the operation",
            );
        }
    }
}

/// No informational or redirection responses: the router answers `200` or an error envelope.
fn statuses(document: &Document<'_>, sink: &mut Sink) {
    for operation in &document.operations {
        for (status, _) in operation.responses() {
            if status.starts_with(['1', '3']) {
                sink.report(
                    operation.label(),
                    format!(
                        "response {status} is not supported: the router answers 200 or an error \
                         envelope"
                    ),
                );
            }
        }
    }
}

/// The success envelope's `data` is a component `$ref` or an array of them (the trait returns
/// that model, a `Vec` of it, or `()`); `pagination`, if any, is a required `$ref` (the trait
/// returns a `Page`).
fn envelope(document: &Document<'_>, sink: &mut Sink) {
    for operation in &document.operations {
        // Without a component success schema, `success-response` says why.
        let Some(name) = document
            .response_media(operation, "200")
            .and_then(|media| media.get("schema"))
            .and_then(component_name)
        else {
            continue;
        };
        let Some(schema) = document.component_schema(name) else {
            continue; // `refs-resolve` reports it.
        };
        let label = operation.label();
        let Some(data) = schema.pointer("/properties/data") else {
            sink.report(
                label,
                format!(
                    "its success schema `{name}` has no `data` property: it must be the envelope \
                     {{status, response_code, message, data}}"
                ),
            );
            continue;
        };
        let data_ok = component_name(data).is_some()
            || (data.get("type").and_then(Value::as_str) == Some("array")
                && data.get("items").and_then(component_name).is_some());
        if !data_ok {
            sink.report(
                &label,
                format!(
                    "`{name}.data` must be a `$ref` to a component schema or an array of them \
                     (the trait returns that model)"
                ),
            );
        }
        if let Some(pagination) = schema.pointer("/properties/pagination") {
            if component_name(pagination).is_none() {
                sink.report(
                    &label,
                    format!("`{name}.pagination` must be a `$ref` to a component schema"),
                );
            }
            let required = object(Some(schema))
                .get("required")
                .and_then(Value::as_array)
                .is_some_and(|list| list.iter().any(|field| field == "pagination"));
            if !required {
                sink.report(&label, format!("`{name}.pagination` must be required"));
            }
        }
    }
}

/// Parameters are headers with a schema: the trait receives the JSON body and nothing else, and
/// the router validates declared headers against their schema.
fn parameters(document: &Document<'_>, sink: &mut Sink) {
    for operation in &document.operations {
        for parameter in operation.parameters() {
            let Some(parameter) = document.deref(parameter) else {
                continue; // `refs-resolve` reports it.
            };
            let name = parameter.get("name").and_then(Value::as_str).unwrap_or("?");
            if parameter.get("in").and_then(Value::as_str) != Some("header") {
                sink.report(
                    operation.label(),
                    format!(
                        "parameter `{name}`: only header parameters are supported (the trait \
                         receives the JSON body, nothing else)"
                    ),
                );
            } else if parameter.get("schema").is_none() {
                sink.report(operation.label(), format!("header `{name}` has no schema"));
            }
        }
    }
}

/// Runs `generate` (the generators), turning a panic inside them into an error naming the spec and
/// where the generator stopped, without the panic's message and backtrace on stderr: the
/// precheck let the document through, so the panic is a limit it does not know yet.
pub fn without_panics<T>(generate: impl FnOnce() -> Result<T>) -> Result<T> {
    install_quiet_hook();
    QUIET.with(|quiet| quiet.set(true));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(generate));
    QUIET.with(|quiet| quiet.set(false));
    outcome.unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(ToString::to_string)
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".to_string());
        let place = LAST_PANIC
            .with(|last| last.take())
            .map(|place| format!(" at {place}"))
            .unwrap_or_default();
        bail!(
            "a code generator failed on spec/openapi.yaml{place}: {message}\n\
             The precheck let the document through: run `cargo xtask lint` for its problems; if \
             it has none, this shape is a limit of the generators the precheck should refuse \
             (codegen/precheck.rs)."
        )
    })
}

thread_local! {
    /// Whether a panic on this thread is being caught by [`without_panics`].
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The source location of the last panic [`without_panics`] caught on this thread.
    static LAST_PANIC: std::cell::Cell<Option<String>> = const { std::cell::Cell::new(None) };
}

/// Installs, once, a panic hook that stays silent on threads inside [`without_panics`] and is
/// the previous hook everywhere else.
fn install_quiet_hook() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if QUIET.with(std::cell::Cell::get) {
                let place = info.location().map(ToString::to_string);
                LAST_PANIC.with(|last| last.set(place));
            } else {
                previous(info);
            }
        }));
    });
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::json;

    use super::*;
    use crate::spec;

    const TOKEN: &str = "/v1/auth/api/generate_token";
    const UPDATE_ROLE: &str = "/v1/team/web/update_member_role";
    const ACCOUNTS: &str = "/v1/accounts/api/fetch_accounts";
    const TRANSFER: &str = "/v1/transfers/api/create_transfer";

    fn fixture() -> Value {
        let text = include_str!("../../tests/fixtures/codegen/fixture.yaml");
        spec::parse(text).unwrap()
    }

    fn run(doc: &Value) -> Result<()> {
        check(&crate::spec::KOBO, &Document::new(doc), "")
    }

    /// Edits the fixture and asserts the precheck refuses it with a problem of `rule` that
    /// contains `expected`.
    #[track_caller]
    fn check_error(edit: impl FnOnce(&mut Value), rule: &str, expected: &str) {
        let mut doc = fixture();
        edit(&mut doc);
        let error = run(&doc).expect_err("the edited fixture must be refused");
        let message = format!("{error:#}");
        let wanted = format!("[{rule}] ");
        assert!(
            message
                .lines()
                .any(|line| line.contains(&wanted) && line.contains(expected)),
            "expected a `{rule}` problem containing {expected:?} in:\n{message}"
        );
    }

    fn operation<'a>(doc: &'a mut Value, path: &str) -> &'a mut Value {
        &mut doc["paths"][path]["post"]
    }

    #[test]
    fn the_fixture_passes() {
        run(&fixture()).unwrap();
    }

    #[test]
    fn the_named_lint_rules_exist_and_generator_rules_have_names_of_their_own() {
        let lint_names: BTreeSet<&str> = lint::RULES.iter().map(|rule| rule.name).collect();
        for name in LINT_RULES {
            assert!(lint_names.contains(name), "the lint has no rule `{name}`");
        }
        let mut names = BTreeSet::new();
        for rule in GENERATOR_RULES {
            assert!(
                !lint_names.contains(rule.name),
                "`{}` is a lint rule",
                rule.name
            );
            assert!(
                names.insert(rule.name),
                "two rules are named `{}`",
                rule.name
            );
            // Each has a test below that makes it fire: `check_error(edit, "name", "text")`,
            // which reads `"name","text"` without whitespace (the table above does not).
            let tests: String = include_str!("precheck.rs").split_whitespace().collect();
            assert!(
                tests.contains(&format!("\"{}\",\"", rule.name)),
                "no test expects a `{}` problem",
                rule.name
            );
        }
    }

    // The lint's rules, run by the precheck.

    #[test]
    fn openapi_3_1_is_refused() {
        check_error(
            |doc| doc["openapi"] = "3.1.0".into(),
            "openapi-version",
            "`openapi: 3.1.0`: the client generator accepts OpenAPI 3.0.x only",
        );
    }

    #[test]
    fn a_second_success_response_names_the_operation() {
        check_error(
            |doc| {
                let responses = &mut operation(doc, TRANSFER)["responses"];
                responses["201"] = responses["200"].clone();
            },
            "success-response",
            "operation `create_transfer`: has success responses [\"200\", \"201\"]: exactly one \
             is allowed",
        );
    }

    #[test]
    fn a_second_error_schema_is_refused() {
        check_error(
            |doc| {
                operation(doc, TRANSFER)["responses"]["409"] = json!({
                    "description": "x",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Account"}}}
                });
            },
            "error-envelope",
            "operation `create_transfer`: response 409 must use the shared error envelope",
        );
    }

    #[test]
    fn an_optional_body_names_the_operation() {
        check_error(
            |doc| operation(doc, TOKEN)["requestBody"]["required"] = false.into(),
            "request-body",
            "operation `generate_token`: `requestBody` must be `required: true`",
        );
    }

    #[test]
    fn a_missing_body_names_the_operation() {
        check_error(
            |doc| {
                operation(doc, TOKEN)
                    .as_object_mut()
                    .unwrap()
                    .remove("requestBody");
            },
            "request-body",
            "operation `generate_token`: has no `requestBody`",
        );
    }

    #[test]
    fn an_inline_body_schema_is_refused() {
        check_error(
            |doc| {
                operation(doc, TOKEN)["requestBody"]["content"]["application/json"]["schema"] =
                    json!({"type": "object"});
            },
            "request-body",
            "operation `generate_token`: the request body schema must be a `$ref`",
        );
    }

    #[test]
    fn get_operations_are_refused() {
        check_error(
            |doc| {
                let post = operation(doc, TOKEN).clone();
                doc["paths"][TOKEN]["get"] = post;
            },
            "post-only",
            "path `/v1/auth/api/generate_token`: has operations [\"get\", \"post\"]",
        );
    }

    #[test]
    fn an_operation_id_that_is_not_snake_case_is_refused() {
        check_error(
            |doc| operation(doc, ACCOUNTS)["operationId"] = "fetchAccounts".into(),
            "operation-id",
            "`operationId: fetchAccounts` must be snake_case",
        );
    }

    #[test]
    fn unknown_permissions_are_refused() {
        check_error(
            |doc| operation(doc, UPDATE_ROLE)["x-permission"] = "x.y".into(),
            "permission",
            "operation `update_member_role`: `x-permission: x.y` is not in the catalog",
        );
    }

    #[test]
    fn a_listed_code_outside_the_catalog_is_refused() {
        check_error(
            |doc| operation(doc, ACCOUNTS)["x-response-codes"] = json!(["00", "77"]),
            "response-codes",
            "operation `fetch_accounts`: `x-response-codes` lists `77`, which is not in the catalog",
        );
    }

    #[test]
    fn a_catalog_code_without_a_name_is_refused() {
        check_error(
            |doc| {
                doc["x-response-codes"]["43"]
                    .as_object_mut()
                    .unwrap()
                    .remove("name");
            },
            "response-code-catalog",
            "#/x-response-codes/43: `name` must be a snake_case identifier",
        );
    }

    #[test]
    fn a_missing_success_message_is_refused() {
        check_error(
            |doc| {
                operation(doc, ACCOUNTS)
                    .as_object_mut()
                    .unwrap()
                    .remove("x-success-message");
            },
            "success-message",
            "operation `fetch_accounts`: has no `x-success-message`",
        );
    }

    // The generators' own checks.

    #[test]
    fn every_router_role_needs_a_code_of_the_catalog() {
        check_error(
            |doc| {
                doc["x-response-codes"]
                    .as_object_mut()
                    .unwrap()
                    .remove("08");
            },
            "codegen-router-codes",
            "#/x-response-codes: no code names router role `body_too_large` (`router: \
             [body_too_large]`), which the router answers with for: request body too large",
        );
    }

    #[test]
    fn a_router_role_answered_by_two_codes_is_refused() {
        check_error(
            |doc| doc["x-response-codes"]["29"]["router"] = serde_json::json!(["internal_error"]),
            "codegen-router-codes",
            "#/x-response-codes: router role `internal_error` is named by 2 codes (29, 96): one \
             answers it",
        );
    }

    #[test]
    fn a_path_item_ref_is_refused() {
        check_error(
            |doc| {
                let item = doc["paths"][ACCOUNTS].clone();
                doc["components"]["pathItems"] = json!({ "Accounts": item });
                doc["paths"][ACCOUNTS] = json!({"$ref": "#/components/pathItems/Accounts"});
            },
            "codegen-path-items",
            "path `/v1/accounts/api/fetch_accounts`: is a `$ref`",
        );
    }

    #[test]
    fn path_level_parameters_are_refused() {
        check_error(
            |doc| {
                doc["paths"][TRANSFER]["parameters"] =
                    json!([{"$ref": "#/components/parameters/IdempotencyKey"}]);
            },
            "codegen-path-items",
            "path `/v1/transfers/api/create_transfer`: declares path-level `parameters`",
        );
    }

    #[test]
    fn a_redirection_is_refused() {
        check_error(
            |doc| {
                operation(doc, ACCOUNTS)["responses"]["302"] =
                    json!({"$ref": "#/components/responses/Error"});
            },
            "codegen-statuses",
            "operation `fetch_accounts`: response 302 is not supported",
        );
    }

    #[test]
    fn an_inline_data_schema_is_refused() {
        check_error(
            |doc| {
                doc["components"]["schemas"]["GenerateTokenResponse"]["properties"]["data"] =
                    json!({"type": "object"});
            },
            "codegen-envelope",
            "operation `generate_token`: `GenerateTokenResponse.data` must be a `$ref` to a \
             component schema or an array of them",
        );
    }

    #[test]
    fn a_success_schema_without_data_is_refused() {
        check_error(
            |doc| {
                doc["components"]["schemas"]["GenerateTokenResponse"]["properties"]
                    .as_object_mut()
                    .unwrap()
                    .remove("data");
            },
            "codegen-envelope",
            "operation `generate_token`: its success schema `GenerateTokenResponse` has no `data` \
             property",
        );
    }

    #[test]
    fn optional_pagination_is_refused() {
        check_error(
            |doc| {
                doc["components"]["schemas"]["FetchAccountsResponse"]["required"] =
                    json!(["status", "response_code", "message", "data"]);
            },
            "codegen-envelope",
            "operation `fetch_accounts`: `FetchAccountsResponse.pagination` must be required",
        );
    }

    #[test]
    fn query_parameters_are_refused() {
        check_error(
            |doc| {
                operation(doc, TOKEN)["parameters"] =
                    json!([{"name": "q", "in": "query", "schema": {"type": "string"}}]);
            },
            "codegen-parameters",
            "operation `generate_token`: parameter `q`: only header parameters are supported",
        );
    }

    #[test]
    fn a_header_without_a_schema_is_refused() {
        check_error(
            |doc| {
                doc["components"]["parameters"]["IdempotencyKey"]
                    .as_object_mut()
                    .unwrap()
                    .remove("schema");
            },
            "codegen-parameters",
            "operation `create_transfer`: header `Idempotency-Key` has no schema",
        );
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let mut doc = fixture();
        operation(&mut doc, TOKEN)["requestBody"]["required"] = false.into();
        operation(&mut doc, ACCOUNTS)
            .as_object_mut()
            .unwrap()
            .remove("x-success-message");
        doc["x-response-codes"]
            .as_object_mut()
            .unwrap()
            .remove("96");
        let message = format!("{:#}", run(&doc).unwrap_err());
        assert!(
            message.contains("[request-body] operation `generate_token`"),
            "{message}"
        );
        assert!(
            message.contains("[success-message] operation `fetch_accounts`"),
            "{message}"
        );
        assert!(
            message.contains(
                "[codegen-router-codes] #/x-response-codes: no code names router role \
                 `internal_error`"
            ),
            "{message}"
        );
    }

    // Schemas, checked before typify reads them.

    #[test]
    fn a_schema_type_typo_is_refused_at_its_line_without_a_panic() {
        let text = include_str!("../../tests/fixtures/codegen/fixture.yaml").replace(
            "\n  schemas:\n",
            "\n  schemas:\n    Hold:\n      type: object\n      properties:\n        reason: {type: strng}\n",
        );
        let line = 1 + text
            .lines()
            .position(|line| line.contains("{type: strng}"))
            .unwrap();
        let doc = spec::parse(&text).unwrap();
        let error = check(&crate::spec::KOBO, &Document::new(&doc), &text)
            .expect_err("a typo'd type is refused");
        let message = format!("{error:#}");
        let problems: Vec<&str> = message.lines().skip(1).collect();
        assert_eq!(problems.len(), 1, "{message}");
        assert!(
            problems[0].contains(&format!(
                "[schema-keywords] #/components/schemas/Hold/properties/reason/type (line {line}, \
                 column 18): `strng` is not a schema type: did you mean `string`?"
            )),
            "{message}"
        );
        check_error(
            |doc| doc["components"]["schemas"]["Hold"] = json!({"type": "object", "required": "x"}),
            "schema-keywords",
            "#/components/schemas/Hold/required: `required` must be a list of property names",
        );
    }

    #[test]
    fn a_generator_panic_is_an_error_naming_the_spec() {
        let error = without_panics::<()>(|| panic!("not yet implemented: invalid type: strng"))
            .expect_err("the panic is caught");
        let message = format!("{error:#}");
        assert!(
            message.starts_with("a code generator failed on spec/openapi.yaml at ")
                && message.contains(": not yet implemented: invalid type: strng\n"),
            "{message}"
        );
        assert_eq!(without_panics(|| Ok(7)).unwrap(), 7);
    }
}
