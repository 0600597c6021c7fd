//! Rules about the two catalogs at the root of the document (`x-permissions`,
//! `x-response-codes`) and how operations use them, plus the examples every operation must have.

use std::collections::BTreeSet;

use serde_json::Value;

use super::Sink;
use crate::spec::{examples_of, is_snake_case, json_media, Access, Document, ROUTER_ROLES};

/// `x-permissions` is a list of `{code, name, description}` (optionally `implicit: true`) with
/// unique `resource.action` codes. A document needs one when a token family's operations name
/// permissions (`x-token-families.<scheme>.permissions`).
pub(super) fn permission_catalog(document: &Document<'_>, sink: &mut Sink) {
    let needed = document
        .token_families()
        .iter()
        .any(|family| family.permissions);
    if !needed && document.doc.get("x-permissions").is_none() {
        return;
    }
    let Some(entries) = document.doc.get("x-permissions").and_then(Value::as_array) else {
        sink.report(
            "#/x-permissions",
            "the permission catalog is missing or not a list of `{code, name, description}`",
        );
        return;
    };
    let mut seen = BTreeSet::new();
    for (index, entry) in entries.iter().enumerate() {
        let location = format!("#/x-permissions/{index}");
        for field in ["code", "name", "description"] {
            if is_blank(entry.get(field)) {
                sink.report(&location, format!("`{field}` is missing or empty"));
            }
        }
        if entry
            .get("implicit")
            .is_some_and(|implicit| !implicit.is_boolean())
        {
            sink.report(&location, "`implicit` must be a boolean");
        }
        let Some(code) = entry.get("code").and_then(Value::as_str) else {
            continue;
        };
        if !is_permission_code(code) {
            sink.report(
                &location,
                format!(
                    "`code: {code}` must have the form `resource.action` (^[a-z_]+\\.[a-z_]+$)"
                ),
            );
        }
        if !seen.insert(code) {
            sink.report(&location, format!("`code: {code}` appears more than once"));
        }
    }
}

/// Missing, not a string, or only whitespace.
fn is_blank(text: Option<&Value>) -> bool {
    text.and_then(Value::as_str)
        .is_none_or(|text| text.trim().is_empty())
}

fn is_permission_code(code: &str) -> bool {
    let word =
        |part: &str| !part.is_empty() && part.chars().all(|c| c.is_ascii_lowercase() || c == '_');
    code.split_once('.')
        .is_some_and(|(resource, action)| word(resource) && word(action))
}

/// Every operation of a family with `permissions: true` (Kobo's dashboard) names a catalog
/// permission in `x-permission`; no other operation has one.
pub(super) fn permission(document: &Document<'_>, sink: &mut Sink) {
    let catalog: BTreeSet<&str> = document
        .doc
        .get("x-permissions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.get("code")?.as_str())
        .collect();
    for operation in &document.operations {
        let label = operation.label();
        let declared = operation.value.get("x-permission");
        // Without a valid `security` the family is unknown; the `security` rule reports that.
        let family = match operation.access() {
            None | Some(Access::Other) => continue,
            Some(Access::Public) => None,
            Some(Access::Scheme(scheme)) => match document.token_family(scheme) {
                Some(family) => Some(family),
                None => continue,
            },
        };
        let Some(family) = family.filter(|family| family.permissions) else {
            if declared.is_some() {
                sink.report(
                    label,
                    "is not of a token family with permissions (`x-token-families`), so it \
                     must not declare `x-permission`",
                );
            }
            continue;
        };
        match declared.map(|code| (code, code.as_str())) {
            None => sink.report(
                label,
                format!(
                    "is a `{}` operation without `x-permission`: name the permission code that \
                     guards it",
                    family.scheme
                ),
            ),
            Some((code, None)) => {
                sink.report(label, format!("`x-permission: {code}` must be a string"))
            }
            Some((_, Some(code))) if !catalog.contains(code) => sink.report(
                label,
                format!("`x-permission: {code}` is not in the catalog #/x-permissions"),
            ),
            Some(_) => {}
        }
    }
}

/// `x-response-codes` maps two-digit codes to `{name, http_status, meaning}`, with `origin` in a
/// document that extends another (`x-source-document`) and the `router` roles a code answers;
/// `00` is 200.
pub(super) fn response_code_catalog(document: &Document<'_>, sink: &mut Sink) {
    let extends = document.doc.get("x-source-document").is_some();
    let Some(catalog) = document
        .doc
        .get("x-response-codes")
        .and_then(Value::as_object)
    else {
        sink.report(
            "#/x-response-codes",
            "the response code catalog is missing or not a map from code to \
             `{http_status, meaning, origin}`",
        );
        return;
    };
    let mut names = BTreeSet::new();
    for (code, entry) in catalog {
        let location = format!("#/x-response-codes/{code}");
        if !is_response_code(code) {
            sink.report(&location, format!("`{code}` is not a two-digit code"));
        }
        // The name becomes the generated `ResponseCode` variant, so it must be an identifier.
        match entry.get("name").and_then(Value::as_str) {
            Some(name) if is_snake_case(name) => {
                if !names.insert(name) {
                    sink.report(&location, format!("`name: {name}` is used by another code"));
                }
            }
            _ => sink.report(
                &location,
                "`name` must be a snake_case identifier (it names the generated variant)",
            ),
        }
        match entry.get("http_status").and_then(Value::as_u64) {
            Some(status) if (100..=599).contains(&status) => {}
            _ => sink.report(&location, "`http_status` must be an HTTP status number"),
        }
        if is_blank(entry.get("meaning")) {
            sink.report(&location, "`meaning` is missing or empty");
        }
        match (extends, entry.get("origin")) {
            (true, Some(origin)) if origin == "source" || origin == "extension" => {}
            (true, _) => sink.report(&location, "`origin` must be `source` or `extension`"),
            (false, None) => {}
            (false, Some(_)) => sink.report(
                &location,
                "`origin` says whether a code comes from the document this one extends, and \
                 it declares none (`x-source-document`)",
            ),
        }
        router_roles(entry, &location, sink);
    }
    match document.http_status_of("00") {
        Some(200) => {}
        _ => sink.report(
            "#/x-response-codes/00",
            "`00` must be in the catalog with `http_status: 200`",
        ),
    }
}

/// `router`, when present, lists roles of [`ROUTER_ROLES`] the generated router answers with
/// this code.
fn router_roles(entry: &Value, location: &str, sink: &mut Sink) {
    let Some(roles) = entry.get("router") else {
        return;
    };
    let known = || ROUTER_ROLES.iter().map(|role| role.name);
    let valid = roles.as_array().is_some_and(|roles| {
        roles
            .iter()
            .all(|role| role.as_str().is_some_and(|role| known().any(|k| k == role)))
    });
    if !valid {
        let names: Vec<&str> = known().collect();
        sink.report(
            location,
            format!(
                "`router` must be a list of router roles: {}",
                names.join(", ")
            ),
        );
    }
}

/// `x-enum-varnames` (the member names generated clients give an enum's values: openapi-python-client,
/// openapi-generator, openapi-typescript with `--enum`) has one UPPER_SNAKE name per value, each
/// once. An enum of response codes (every value in the catalog, as `ResponseCode` and
/// `SuccessCode`) must have them, and they are the catalog's names in upper case: without them
/// generators number the members by position (`VALUE_11` for `41`), which shifts when a code is
/// added. Every other enum of strings must have them too, each the schema's name then the value,
/// in UPPER_SNAKE (`TRANSACTION_STATUS_SUCCESS`): openapi-generator's Go client makes each member
/// a constant of one package, so two enums with a value in common (`success`, `pending`) did not
/// compile without a flag. No name may name members of two enums.
pub(super) fn enum_varnames(document: &Document<'_>, sink: &mut Sink) {
    let mut owners: std::collections::BTreeMap<String, String> = std::collections::BTreeMap::new();
    let catalog = document.response_code_catalog();
    let schemas = document
        .doc
        .pointer("/components/schemas")
        .and_then(Value::as_object);
    for (name, schema) in schemas.into_iter().flatten() {
        let Some(values) = schema.get("enum").and_then(Value::as_array) else {
            continue;
        };
        let location = format!("#/components/schemas/{name}");
        let codes: Option<Vec<&str>> = values
            .iter()
            .map(|value| value.as_str().filter(|code| catalog.contains_key(*code)))
            .collect();
        let varnames = schema.get("x-enum-varnames");
        if let Some(codes) = codes.filter(|codes| !codes.is_empty()) {
            let expected: Vec<String> = codes
                .iter()
                .map(|code| {
                    catalog[*code]
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_uppercase()
                })
                .collect();
            if varnames != Some(&Value::from(expected.clone())) {
                sink.report(
                    &location,
                    format!(
                        "an enum of response codes needs `x-enum-varnames: [{}]` (the catalog's \
                         names, in the order of `enum`), so generated clients name each code",
                        expected.join(", ")
                    ),
                );
                continue;
            }
        } else if let Some(strings) = values
            .iter()
            .map(Value::as_str)
            .collect::<Option<Vec<&str>>>()
            .filter(|strings| !strings.iter().any(|value| catalog.contains_key(*value)))
        {
            let expected: Vec<String> = strings
                .iter()
                .map(|value| enum_member_name(name, value))
                .collect();
            if varnames != Some(&Value::from(expected.clone())) {
                sink.report(
                    &location,
                    format!(
                        "needs `x-enum-varnames: [{}]` (the schema's name, then each value, in \
                         UPPER_SNAKE): openapi-generator's Go client makes every member a constant \
                         of one package, so members of two enums must never share a name",
                        expected.join(", ")
                    ),
                );
                continue;
            }
        }
        let Some(varnames) = varnames else { continue };
        let names: Option<Vec<&str>> = varnames
            .as_array()
            .and_then(|names| names.iter().map(Value::as_str).collect());
        let Some(names) = names.filter(|names| names.len() == values.len()) else {
            sink.report(
                &location,
                format!(
                    "`x-enum-varnames` must list one name per `enum` value ({}); generators \
                     ignore it otherwise",
                    values.len()
                ),
            );
            continue;
        };
        varnames_are_names(&location, name, &names, &mut owners, sink);
    }
}

/// Each of `names` (the `x-enum-varnames` of schema `schema`) is UPPER_SNAKE, names one value,
/// and no value of another enum (`owners`: each name's schema so far).
fn varnames_are_names(
    location: &str,
    schema: &str,
    names: &[&str],
    owners: &mut std::collections::BTreeMap<String, String>,
    sink: &mut Sink,
) {
    let mut seen = BTreeSet::new();
    for &varname in names {
        let upper_snake = varname.starts_with(|c: char| c.is_ascii_uppercase())
            && varname
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        if !upper_snake {
            sink.report(
                location,
                format!("`x-enum-varnames`: `{varname}` is not an UPPER_SNAKE name"),
            );
        }
        if !seen.insert(varname) {
            sink.report(
                location,
                format!("`x-enum-varnames`: `{varname}` names two values"),
            );
        } else if let Some(owner) = owners.insert(varname.to_string(), schema.to_owned()) {
            sink.report(
                location,
                format!(
                    "`x-enum-varnames`: `{varname}` also names a value of `{owner}` (Go's \
                     generated constants share one namespace)"
                ),
            );
        }
    }
}

/// The member name `x-enum-varnames` gives `value` of the enum schema `schema`: both in
/// UPPER_SNAKE, joined by `_` (`TransactionStatus`, `pending_approval`:
/// `TRANSACTION_STATUS_PENDING_APPROVAL`; `WebhookEventType`, `account.created`:
/// `WEBHOOK_EVENT_TYPE_ACCOUNT_CREATED`).
pub fn enum_member_name(schema: &str, value: &str) -> String {
    let mut name = String::new();
    let mut previous_lower = false;
    for c in schema.chars() {
        if c.is_ascii_uppercase() && previous_lower {
            name.push('_');
        }
        previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        name.push(c.to_ascii_uppercase());
    }
    let mut member = String::new();
    for c in value.chars() {
        if c.is_ascii_alphanumeric() {
            member.push(c.to_ascii_uppercase());
        } else if !member.is_empty() && !member.ends_with('_') {
            member.push('_');
        }
    }
    let member = member.trim_end_matches('_');
    if member.is_empty() {
        name
    } else {
        format!("{name}_{member}")
    }
}

fn is_response_code(code: &str) -> bool {
    code.len() == 2 && code.bytes().all(|b| b.is_ascii_digit())
}

/// Every operation lists its codes in `x-response-codes`: strings, once each, `00` and catalog
/// codes only (the generated `Operation::response_codes` names each).
pub(super) fn response_codes(document: &Document<'_>, sink: &mut Sink) {
    let catalog = document.response_code_catalog();
    for operation in &document.operations {
        let label = operation.label();
        let Some(listed) = operation
            .value
            .get("x-response-codes")
            .and_then(Value::as_array)
        else {
            sink.report(
                label,
                "has no `x-response-codes`: list every response code it can return, `00` included",
            );
            continue;
        };
        let mut seen = BTreeSet::new();
        for code in listed {
            let Some(code) = code.as_str() else {
                sink.report(
                    &label,
                    format!(
                        "`x-response-codes` entry {code} is not a string (quote codes in YAML: \
                         `00` unquoted is the number 0)"
                    ),
                );
                continue;
            };
            if !seen.insert(code) {
                sink.report(&label, format!("`x-response-codes` lists `{code}` twice"));
            }
            if code != "00" && !catalog.contains_key(code) {
                sink.report(
                    &label,
                    format!("`x-response-codes` lists `{code}`, which is not in the catalog #/x-response-codes"),
                );
            }
        }
        if !seen.contains("00") {
            sink.report(&label, "`x-response-codes` must include `00`");
        }
    }
}

/// Each error code an operation lists has a response under its HTTP status, with an example of
/// it.
pub(super) fn response_codes_exemplified(document: &Document<'_>, sink: &mut Sink) {
    for operation in &document.operations {
        let mut seen = BTreeSet::new();
        let codes = operation.response_codes().unwrap_or_default();
        for code in codes.into_iter().filter(|code| seen.insert(*code)) {
            // `00` is the success examples' (`examples-present`); codes outside the catalog are
            // reported by `response-codes`.
            let Some(status) = document.http_status_of(code).filter(|_| code != "00") else {
                continue;
            };
            let Some(response) = operation.response(&status.to_string()) else {
                sink.report(
                    operation.label(),
                    format!(
                        "lists response code `{code}` (HTTP {status}) but has no {status} response"
                    ),
                );
                continue;
            };
            let exemplified = document.deref(response).is_none_or(|response| {
                json_media(response).is_ok_and(|media| {
                    examples_of(document.doc, media)
                        .iter()
                        .any(|(_, value)| response_code_of(value) == Some(code))
                })
            });
            if !exemplified {
                sink.report(
                    operation.label(),
                    format!(
                        "lists response code `{code}` but its {status} response has no example \
                         with `response_code: \"{code}\"`"
                    ),
                );
            }
        }
    }
}

fn response_code_of(example: &Value) -> Option<&str> {
    example.get("response_code")?.as_str()
}

/// Every error example's `response_code` is listed by its operation, and sits under the HTTP
/// status the catalog gives it. Examples under `default` (transport errors) need only be in the
/// catalog.
pub(super) fn response_code_examples(document: &Document<'_>, sink: &mut Sink) {
    for operation in &document.operations {
        let Some(listed) = operation.response_codes() else {
            continue; // `response-codes` reports the missing list.
        };
        for (status, response) in operation.responses() {
            if status.starts_with('2') {
                continue;
            }
            let Some(Ok(media)) = document.deref(response).map(json_media) else {
                continue;
            };
            for (name, value) in examples_of(document.doc, media) {
                let place = format!("response {status} example `{name}`");
                let Some(code) = response_code_of(value) else {
                    sink.report(
                        operation.label(),
                        format!("{place} has no string `response_code`"),
                    );
                    continue;
                };
                // `default` describes transport errors any path can produce before an operation
                // runs (unknown path, wrong method, ...): their codes need only be in the catalog.
                if status == "default" {
                    if document.http_status_of(code).is_none() {
                        sink.report(
                            operation.label(),
                            format!(
                                "{place} has `response_code: \"{code}\"`, which is not in the \
                                 `x-response-codes` catalog"
                            ),
                        );
                    }
                    continue;
                }
                if !listed.contains(&code) {
                    sink.report(
                        operation.label(),
                        format!(
                            "{place} has `response_code: \"{code}\"`, which the operation's \
                             `x-response-codes` does not list"
                        ),
                    );
                }
                match document.http_status_of(code) {
                    Some(expected) if status != "default" && status != expected.to_string() => sink
                        .report(
                            operation.label(),
                            format!(
                                "{place} has `response_code: \"{code}\"`, which the catalog \
                                 gives HTTP {expected}, not {status}"
                            ),
                        ),
                    _ => {}
                }
            }
        }
    }
}

/// The operation's `description` mentions each error code it lists, as "`NN`", so partners
/// reading the docs see them.
pub(super) fn response_codes_documented(document: &Document<'_>, sink: &mut Sink) {
    for operation in &document.operations {
        let description = operation.text("description").unwrap_or_default();
        for code in operation.response_codes().unwrap_or_default() {
            if code != "00" && !description.contains(&format!("`{code}`")) {
                sink.report(
                    operation.label(),
                    format!(
                        "lists response code `{code}` but its `description` does not mention it \
                         (write it in backticks: `{code}`)"
                    ),
                );
            }
        }
    }
}

/// Every operation has a string `x-success-message`: the `message` of its success envelope.
pub(super) fn success_message(document: &Document<'_>, sink: &mut Sink) {
    for operation in &document.operations {
        if operation.text("x-success-message").is_none() {
            sink.report(
                operation.label(),
                "has no `x-success-message` (the `message` of its success envelope)",
            );
        }
    }
}

/// Each operation has a request example and a 200 example; the 200 examples carry `00` and the
/// operation's `x-success-message`.
pub(super) fn examples_present(document: &Document<'_>, sink: &mut Sink) {
    for operation in &document.operations {
        let label = operation.label();
        let success_message = operation.text("x-success-message");
        let request = document.request_media(operation);
        if request.is_some_and(|media| examples_of(document.doc, media).is_empty()) {
            sink.report(
                &label,
                "its request body has no example (`example` or `examples`)",
            );
        }
        let Some(success) = document.response_media(operation, "200") else {
            continue; // `success-response` reports it.
        };
        let examples = examples_of(document.doc, success);
        if examples.is_empty() {
            sink.report(
                &label,
                "its 200 response has no example (`example` or `examples`)",
            );
        }
        for (name, value) in examples {
            if response_code_of(value) != Some("00") {
                sink.report(
                    &label,
                    format!("response 200 example `{name}` must have `response_code: \"00\"`"),
                );
            }
            let message = value.get("message").and_then(Value::as_str);
            if let Some(expected) = success_message.filter(|expected| message != Some(*expected)) {
                sink.report(
                    &label,
                    format!(
                        "response 200 example `{name}` has `message: {}` but `x-success-message` \
                         is {expected:?}",
                        value.get("message").unwrap_or(&Value::Null)
                    ),
                );
            }
        }
    }
}
