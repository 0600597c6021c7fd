//! Each rule against the valid fixture broken in one place: `check(edit, expected)` applies the
//! edit and asserts the problems found are exactly the expected ones (rule + text each).

use serde_json::{json, Value};

use super::Problem;
use crate::spec;

const VALID: &str = include_str!("../../tests/fixtures/lint/valid.yaml");

/// The dashboard operation of the fixture.
const GET_ACCOUNT: &str = "/paths/~1api~1v1~1account~1web~1get_account/post";
/// The integration operation of the fixture.
const CREATE_TRANSFER: &str = "/paths/~1api~1v1~1transaction~1transfer~1api~1create_transfer/post";
const JSON_MEDIA: &str = "content/application~1json";

fn valid() -> Value {
    spec::parse(VALID).expect("the fixture parses")
}

#[track_caller]
fn check(edit: impl FnOnce(&mut Value), expected: &[(&str, &str)]) {
    let mut doc = valid();
    edit(&mut doc);
    let problems = super::check(&doc);
    let render = |problems: &[&Problem]| {
        problems
            .iter()
            .map(|problem| format!("  {problem}\n"))
            .collect::<String>()
    };
    let mut unmatched: Vec<&Problem> = problems.iter().collect();
    for (rule, text) in expected {
        let found = unmatched
            .iter()
            .position(|problem| problem.rule == *rule && problem.to_string().contains(text));
        match found {
            Some(index) => {
                unmatched.remove(index);
            }
            None => panic!(
                "expected a `{rule}` problem containing {text:?}; found:\n{}",
                render(&problems.iter().collect::<Vec<_>>())
            ),
        }
    }
    assert!(
        unmatched.is_empty(),
        "unexpected problems:\n{}",
        render(&unmatched)
    );
}

/// Sets (inserts or replaces) the value at `pointer`; its parent must exist.
fn set(doc: &mut Value, pointer: &str, value: Value) {
    let (parent, key) = split(pointer);
    match doc.pointer_mut(parent) {
        Some(Value::Object(map)) => {
            map.insert(key, value);
        }
        Some(Value::Array(items)) => {
            let index: usize = key.parse().expect("an array index");
            if index == items.len() {
                items.push(value);
            } else {
                items[index] = value;
            }
        }
        _ => panic!("no object or array at {parent}"),
    }
}

/// Removes the value at `pointer` and returns it.
fn remove(doc: &mut Value, pointer: &str) -> Value {
    let (parent, key) = split(pointer);
    match doc.pointer_mut(parent) {
        Some(Value::Object(map)) => map
            .shift_remove(&key)
            .unwrap_or_else(|| panic!("nothing at {pointer}")),
        Some(Value::Array(items)) => items.remove(key.parse().expect("an array index")),
        _ => panic!("no object or array at {parent}"),
    }
}

fn split(pointer: &str) -> (&str, String) {
    let (parent, key) = pointer.rsplit_once('/').expect("a JSON pointer");
    (parent, key.replace("~1", "/").replace("~0", "~"))
}

fn at(operation: &str, rest: &str) -> String {
    format!("{operation}/{rest}")
}

/// An inline error response (no examples) for the tests that need one.
fn error_response(schema: &str) -> Value {
    json!({
        "description": "An error.",
        "headers": {"X-Request-Id": {"$ref": "#/components/headers/XRequestId"}},
        "content": {"application/json": {"schema": {"$ref": schema}}}
    })
}

#[test]
fn the_fixture_satisfies_every_rule() {
    check(|_| {}, &[]);
}

// openapi-version

#[test]
fn openapi_3_1_is_refused() {
    check(
        |doc| set(doc, "/openapi", json!("3.1.0")),
        &[(
            "openapi-version",
            "`openapi: 3.1.0`: the client generator accepts OpenAPI 3.0.x only",
        )],
    );
}

#[test]
fn a_document_the_openapi_model_cannot_read_is_refused_with_its_path() {
    check(
        |doc| {
            remove(doc, "/info/title");
        },
        &[(
            "openapi-version",
            "#/info: does not deserialize as OpenAPI 3.0",
        )],
    );
}

// refs-resolve

#[test]
fn a_dangling_or_external_ref_is_refused() {
    check(
        |doc| {
            set(
                doc,
                "/x-webhooks",
                json!({
                    "transfer.success": {"$ref": "#/components/schemas/Missing"},
                    "transfer.failed": {"$ref": "other.yaml#/components/schemas/Transfer"},
                }),
            )
        },
        &[
            ("refs-resolve", "#/x-webhooks/transfer.success: `$ref: #/components/schemas/Missing` does not resolve"),
            ("refs-resolve", "`$ref: other.yaml#/components/schemas/Transfer` does not resolve"),
        ],
    );
}

/// `Account.account_number`'s `$ref`, which the success example of `get_account` reaches.
const ACCOUNT_NUMBER_REF: &str = "/components/schemas/Account/properties/account_number/$ref";

#[test]
fn a_misspelt_ref_is_one_problem_with_the_name_it_meant() {
    // The examples that reach it are not reported as well, nor does the `jsonschema` crate's
    // `Pointer '/$defs/AccountNumbr' does not exist` show.
    for (written, meant) in [
        ("AccountNumbr", "AccountNumber"),
        ("accountNumber", "AccountNumber"),
    ] {
        check(
            |doc| {
                set(
                    doc,
                    ACCOUNT_NUMBER_REF,
                    json!(format!("#/components/schemas/{written}")),
                )
            },
            &[(
                "refs-resolve",
                &format!(
                    "#/components/schemas/Account/properties/account_number: `$ref: \
                     #/components/schemas/{written}` does not resolve: there is no schema \
                     `{written}`; did you mean `{meant}`?"
                ),
            )],
        );
    }
    // Through the text, as `cargo xtask lint` reads it: one line, no internal text.
    let written = "        account_number:\n          $ref: '#/components/schemas/AccountNumber'\n        created_at:";
    assert_eq!(VALID.matches(written).count(), 1);
    let problems = problems_of(&VALID.replace(written, &written.replace("Number'", "Numbr'")));
    let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(shown.len(), 1, "{shown:#?}");
    assert!(
        shown[0].contains("did you mean `AccountNumber`?"),
        "{shown:#?}"
    );
    assert!(
        !shown[0].contains("$defs") && !shown[0].contains("Pointer"),
        "{shown:#?}"
    );
}

#[test]
fn a_ref_suggests_a_name_of_its_own_kind_only_when_one_is_close() {
    // Of the same kind: `InvalidRequest` is a response, not a schema.
    check(
        |doc| {
            set(
                doc,
                &at(GET_ACCOUNT, "responses/400/$ref"),
                json!("#/components/responses/InvalidRequst"),
            )
        },
        &[(
            "refs-resolve",
            "`$ref: #/components/responses/InvalidRequst` does not resolve: there is no \
             response `InvalidRequst`; did you mean `InvalidRequest`?",
        )],
    );
    // Nothing close: no guess.
    check(
        |doc| set(doc, ACCOUNT_NUMBER_REF, json!("#/components/schemas/Iban")),
        &[(
            "refs-resolve",
            "`$ref: #/components/schemas/Iban` does not resolve: there is no schema `Iban` in \
             `#/components/schemas`",
        )],
    );
    // A misspelt kind: the reference it meant.
    check(
        |doc| {
            set(
                doc,
                ACCOUNT_NUMBER_REF,
                json!("#/components/schema/AccountNumber"),
            )
        },
        &[(
            "refs-resolve",
            "`$ref: #/components/schema/AccountNumber` does not resolve: `schema` is not a kind \
             of component; did you mean `#/components/schemas/AccountNumber`?",
        )],
    );
}

#[test]
fn a_schema_ref_to_another_kind_of_component_is_one_problem() {
    // It resolves, but not to a schema: the examples' validators could not compile it.
    check(
        |doc| {
            set(
                doc,
                ACCOUNT_NUMBER_REF,
                json!("#/components/headers/XRequestId"),
            )
        },
        &[(
            "schema-keywords",
            "#/components/schemas/Account/properties/account_number/$ref: `$ref: \
             #/components/headers/XRequestId` is not a schema: a schema's `$ref` points into \
             `#/components/schemas`",
        )],
    );
}

#[test]
fn a_compile_error_names_the_document_not_the_translation() {
    assert_eq!(
        super::examples::plain("Pointer '/$defs/AccountNumbr' does not exist"),
        "it refers to `#/components/schemas/AccountNumbr`, which does not exist"
    );
    assert_eq!(
        super::examples::plain("Pointer '/components/headers/X' does not exist"),
        "it refers to `#/components/headers/X`, which is not a schema of `#/components/schemas`"
    );
    assert_eq!(
        super::examples::plain("\"[\" is not a \"regex\" at #/$defs/Code/pattern"),
        "\"[\" is not a \"regex\" at #/components/schemas/Code/pattern"
    );
}

// post-only

#[test]
fn an_operation_other_than_post_is_refused() {
    check(
        |doc| {
            let operation = remove(doc, GET_ACCOUNT);
            set(doc, &GET_ACCOUNT.replace("/post", "/get"), operation);
        },
        &[(
            "post-only",
            "path `/api/v1/account/web/get_account`: has operations [\"get\"]",
        )],
    );
}

// operation-id

#[test]
fn an_operation_without_operation_id_is_refused() {
    check(
        |doc| {
            remove(doc, &at(GET_ACCOUNT, "operationId"));
        },
        &[(
            "operation-id",
            "path `/api/v1/account/web/get_account`: has an operation without `operationId`",
        )],
    );
}

#[test]
fn a_duplicate_operation_id_is_refused() {
    check(
        |doc| set(doc, &at(CREATE_TRANSFER, "operationId"), json!("get_account")),
        &[(
            "operation-id",
            "`operationId: get_account` is also the operationId of `/api/v1/account/web/get_account`",
        )],
    );
}

#[test]
fn an_operation_id_that_is_not_snake_case_is_refused() {
    check(
        |doc| set(doc, &at(GET_ACCOUNT, "operationId"), json!("getAccount")),
        &[(
            "operation-id",
            "`operationId: getAccount` must be snake_case",
        )],
    );
}

// request-body

#[test]
fn an_operation_without_request_body_is_refused() {
    check(
        |doc| {
            remove(doc, &at(GET_ACCOUNT, "requestBody"));
        },
        &[
            (
                "request-body",
                "operation `get_account`: has no `requestBody`",
            ),
            (
                "unused-components",
                "#/components/schemas/GetAccountRequest",
            ),
        ],
    );
}

#[test]
fn an_optional_request_body_is_refused_through_its_ref() {
    check(
        |doc| {
            set(
                doc,
                "/components/requestBodies/CreateTransfer/required",
                json!(false),
            )
        },
        &[(
            "request-body",
            "operation `create_transfer`: `requestBody` must be `required: true`",
        )],
    );
}

#[test]
fn an_optional_request_body_is_accepted_when_its_schema_requires_nothing() {
    check(
        |doc| {
            set(doc, &at(GET_ACCOUNT, "requestBody/required"), json!(false));
            remove(doc, "/components/schemas/GetAccountRequest/required");
        },
        &[],
    );
}

#[test]
fn a_request_body_with_another_media_type_is_refused() {
    check(
        |doc| {
            set(
                doc,
                &at(GET_ACCOUNT, "requestBody/content/text~1plain"),
                json!({"schema": {"type": "string"}}),
            )
        },
        &[(
            "request-body",
            "operation `get_account`: `requestBody` has content [\"application/json\", \"text/plain\"]",
        )],
    );
}

#[test]
fn an_inline_request_schema_is_refused() {
    check(
        |doc| {
            set(
                doc,
                &at(GET_ACCOUNT, &format!("requestBody/{JSON_MEDIA}/schema")),
                json!({"type": "object"}),
            )
        },
        &[
            (
                "request-body",
                "operation `get_account`: the request body schema must be a `$ref`",
            ),
            (
                "unused-components",
                "#/components/schemas/GetAccountRequest",
            ),
        ],
    );
}

// success-response

#[test]
fn a_second_success_response_is_refused() {
    check(
        |doc| {
            set(
                doc,
                &at(GET_ACCOUNT, "responses/201"),
                json!({"$ref": "#/components/responses/InvalidRequest"}),
            )
        },
        &[(
            "success-response",
            "operation `get_account`: has success responses [\"200\", \"201\"]: exactly one is allowed",
        )],
    );
}

#[test]
fn an_inline_success_schema_is_refused() {
    check(
        |doc| {
            set(
                doc,
                &at(
                    CREATE_TRANSFER,
                    &format!("responses/200/{JSON_MEDIA}/schema"),
                ),
                json!({"type": "object"}),
            )
        },
        &[
            (
                "success-response",
                "operation `create_transfer`: the response 200 schema must be a `$ref`",
            ),
            ("unused-components", "#/components/schemas/TransferEnvelope"),
        ],
    );
}

// error-envelope

#[test]
fn an_error_response_with_its_own_schema_is_refused() {
    check(
        |doc| {
            set(
                doc,
                &at(GET_ACCOUNT, "responses/404"),
                error_response("#/components/schemas/AccountEnvelope"),
            )
        },
        &[(
            "error-envelope",
            "operation `get_account`: response 404 must use the shared error envelope \
             #/components/schemas/ErrorEnvelope",
        )],
    );
}

#[test]
fn a_default_response_through_a_ref_must_use_the_envelope_too() {
    check(
        |doc| {
            set(
                doc,
                "/components/responses/Unauthorized/content/text~1plain",
                json!({}),
            );
        },
        &[
            (
                "error-envelope",
                "operation `get_account`: response 401 must use the shared error envelope",
            ),
            // The examples are no longer the only content, so the 41 example is not found.
            (
                "response-codes-exemplified",
                "operation `get_account`: lists response code `41`",
            ),
        ],
    );
}

// security

#[test]
fn an_operation_without_security_is_refused() {
    check(
        |doc| {
            remove(doc, &at(CREATE_TRANSFER, "security"));
        },
        &[
            (
                "security",
                "operation `create_transfer`: declares no `security`",
            ),
            (
                "unused-components",
                "#/components/securitySchemes/integrationToken",
            ),
        ],
    );
}

#[test]
fn an_integration_token_on_a_dashboard_path_is_refused() {
    check(
        |doc| {
            set(
                doc,
                &at(GET_ACCOUNT, "security"),
                json!([{"integrationToken": []}]),
            )
        },
        &[
            (
                "security",
                "operation `get_account`: uses `integrationToken` but its path \
                 `/api/v1/account/web/get_account` is a `dashboardToken` (`/web/`) path",
            ),
            (
                "permission",
                "operation `get_account`: is not of a token family with permissions",
            ),
            (
                "unused-components",
                "#/components/securitySchemes/dashboardToken",
            ),
        ],
    );
}

#[test]
fn a_dashboard_token_on_an_integration_path_is_refused() {
    check(
        |doc| {
            set(
                doc,
                &at(CREATE_TRANSFER, "security"),
                json!([{"dashboardToken": []}]),
            );
            set(
                doc,
                &at(CREATE_TRANSFER, "x-permission"),
                json!("account.read"),
            );
        },
        &[
            (
                "security",
                "operation `create_transfer`: uses `dashboardToken` but its path",
            ),
            (
                "unused-components",
                "#/components/securitySchemes/integrationToken",
            ),
        ],
    );
}

#[test]
fn an_unknown_security_scheme_is_refused() {
    check(
        |doc| {
            set(
                doc,
                &at(CREATE_TRANSFER, "security"),
                json!([{"apiKey": []}]),
            )
        },
        &[
            (
                "security",
                "operation `create_transfer`: `security` names `apiKey`, which is not a family of \
                 #/x-token-families: use one of `[]` (public), `[{dashboardToken: []}]`, \
                 `[{integrationToken: []}]`",
            ),
            (
                "unused-components",
                "#/components/securitySchemes/integrationToken",
            ),
        ],
    );
}

#[test]
fn a_security_scheme_other_than_http_bearer_is_refused() {
    check(
        |doc| {
            set(
                doc,
                "/components/securitySchemes/integrationToken",
                json!({"type": "apiKey", "in": "header", "name": "X-Api-Key"}),
            )
        },
        &[(
            "security",
            "#/x-token-families/integrationToken: security scheme `integrationToken` must be \
             `type: http` with `scheme: bearer`",
        )],
    );
}

#[test]
fn a_path_outside_both_families_is_refused() {
    check(
        |doc| {
            let item = remove(doc, "/paths/~1api~1v1~1account~1web~1get_account");
            set(doc, "/paths/~1api~1v1~1account~1get_account", item);
        },
        &[(
            "security",
            "operation `get_account`: path `/api/v1/account/get_account` must have one of `web`, \
             `api` (its token family) as its second-to-last segment",
        )],
    );
}

#[test]
fn a_public_operation_is_allowed_in_either_family() {
    check(
        |doc| set(doc, &at(CREATE_TRANSFER, "security"), json!([])),
        &[(
            "unused-components",
            "#/components/securitySchemes/integrationToken",
        )],
    );
}

// permission-catalog

#[test]
fn a_permission_code_not_of_the_form_resource_action_is_refused() {
    check(
        |doc| set(doc, "/x-permissions/0/code", json!("Account-Read")),
        &[
            (
                "permission-catalog",
                "#/x-permissions/0: `code: Account-Read` must have the form `resource.action`",
            ),
            (
                "permission",
                "operation `get_account`: `x-permission: account.read` is not in the catalog",
            ),
        ],
    );
}

#[test]
fn a_duplicate_or_incomplete_permission_is_refused() {
    check(
        |doc| {
            set(
                doc,
                "/x-permissions/1",
                json!({"code": "account.read", "name": "", "description": "Again.", "implicit": "yes"}),
            )
        },
        &[
            (
                "permission-catalog",
                "#/x-permissions/1: `name` is missing or empty",
            ),
            (
                "permission-catalog",
                "#/x-permissions/1: `implicit` must be a boolean",
            ),
            (
                "permission-catalog",
                "#/x-permissions/1: `code: account.read` appears more than once",
            ),
        ],
    );
}

#[test]
fn a_missing_permission_catalog_is_refused() {
    check(
        |doc| {
            remove(doc, "/x-permissions");
        },
        &[
            (
                "permission-catalog",
                "#/x-permissions: the permission catalog is missing",
            ),
            (
                "permission",
                "operation `get_account`: `x-permission: account.read` is not in the catalog",
            ),
        ],
    );
}

// permission

#[test]
fn a_dashboard_operation_without_permission_is_refused() {
    check(
        |doc| {
            remove(doc, &at(GET_ACCOUNT, "x-permission"));
        },
        &[(
            "permission",
            "operation `get_account`: is a `dashboardToken` operation without `x-permission`",
        )],
    );
}

#[test]
fn a_permission_outside_the_catalog_is_refused() {
    check(
        |doc| {
            set(
                doc,
                &at(GET_ACCOUNT, "x-permission"),
                json!("account.write"),
            )
        },
        &[(
            "permission",
            "operation `get_account`: `x-permission: account.write` is not in the catalog",
        )],
    );
}

#[test]
fn an_integration_operation_with_a_permission_is_refused() {
    check(
        |doc| {
            set(
                doc,
                &at(CREATE_TRANSFER, "x-permission"),
                json!("account.read"),
            )
        },
        &[(
            "permission",
            "operation `create_transfer`: is not of a token family with permissions",
        )],
    );
}

// response-code-catalog

#[test]
fn code_00_must_be_http_200() {
    check(
        |doc| set(doc, "/x-response-codes/00/http_status", json!(201)),
        &[(
            "response-code-catalog",
            "`00` must be in the catalog with `http_status: 200`",
        )],
    );
}

#[test]
fn malformed_catalog_entries_are_refused() {
    check(
        |doc| {
            set(
                doc,
                "/x-response-codes/1",
                json!({"name": "one", "http_status": 400, "meaning": "x", "origin": "source"}),
            );
            set(doc, "/x-response-codes/01/origin", json!("invented"));
            set(doc, "/x-response-codes/29/http_status", json!("429"));
            set(doc, "/x-response-codes/41/meaning", json!(" "));
        },
        &[
            (
                "response-code-catalog",
                "#/x-response-codes/1: `1` is not a two-digit code",
            ),
            (
                "response-code-catalog",
                "#/x-response-codes/01: `origin` must be `source` or `extension`",
            ),
            (
                "response-code-catalog",
                "#/x-response-codes/29: `http_status` must be an HTTP status number",
            ),
            (
                "response-code-catalog",
                "#/x-response-codes/41: `meaning` is missing or empty",
            ),
        ],
    );
}

#[test]
fn catalog_names_must_be_unique_snake_case_identifiers() {
    check(
        |doc| {
            set(doc, "/x-response-codes/29/name", json!("invalid_request"));
            set(doc, "/x-response-codes/41/name", json!("Not Authenticated"));
        },
        &[
            (
                "response-code-catalog",
                "#/x-response-codes/29: `name: invalid_request` is used by another code",
            ),
            (
                "response-code-catalog",
                "#/x-response-codes/41: `name` must be a snake_case identifier",
            ),
        ],
    );
}

// response-codes

#[test]
fn an_operation_without_response_codes_is_refused() {
    check(
        |doc| {
            remove(doc, &at(CREATE_TRANSFER, "x-response-codes"));
        },
        &[(
            "response-codes",
            "operation `create_transfer`: has no `x-response-codes`",
        )],
    );
}

#[test]
fn response_codes_must_include_00() {
    check(
        |doc| {
            set(
                doc,
                &at(GET_ACCOUNT, "x-response-codes"),
                json!(["01", "41"]),
            )
        },
        &[(
            "response-codes",
            "operation `get_account`: `x-response-codes` must include `00`",
        )],
    );
}

#[test]
fn a_listed_code_outside_the_catalog_is_refused() {
    check(
        |doc| set(doc, &at(GET_ACCOUNT, "x-response-codes"), json!(["00", "01", "41", "77"])),
        &[
            ("response-codes", "operation `get_account`: `x-response-codes` lists `77`, which is not in the catalog"),
            ("response-codes-documented", "operation `get_account`: lists response code `77`"),
        ],
    );
}

#[test]
fn an_unquoted_code_is_refused() {
    check(
        |doc| {
            set(
                doc,
                &at(GET_ACCOUNT, "x-response-codes"),
                json!(["00", 1, "41"]),
            )
        },
        &[
            (
                "response-codes",
                "operation `get_account`: `x-response-codes` entry 1 is not a string",
            ),
            (
                "response-code-examples",
                "operation `get_account`: response 400 example `invalid`",
            ),
        ],
    );
}

// response-codes-exemplified

#[test]
fn a_listed_code_needs_a_response_under_its_status() {
    check(
        |doc| {
            set(doc, &at(CREATE_TRANSFER, "x-response-codes"), json!(["00", "01", "29", "41"]));
            set(doc, &at(CREATE_TRANSFER, "description"), json!("Fails with `01`, `29` or `41`."));
        },
        &[(
            "response-codes-exemplified",
            "operation `create_transfer`: lists response code `41` (HTTP 401) but has no 401 response",
        )],
    );
}

#[test]
fn a_listed_code_needs_an_example() {
    check(
        |doc| {
            set(
                doc,
                &at(GET_ACCOUNT, "responses/401"),
                error_response("#/components/schemas/ErrorEnvelope"),
            )
        },
        &[
            (
                "response-codes-exemplified",
                "operation `get_account`: lists response code `41` but its 401 response has no \
                 example with `response_code: \"41\"`",
            ),
            ("unused-components", "#/components/responses/Unauthorized"),
        ],
    );
}

// response-code-examples

#[test]
fn an_error_example_with_an_unlisted_code_is_refused() {
    check(
        |doc| {
            set(
                doc,
                &at(GET_ACCOUNT, "x-response-codes"),
                json!(["00", "41"]),
            );
            set(
                doc,
                &at(GET_ACCOUNT, "description"),
                json!("Fails with `41`."),
            );
        },
        &[(
            "response-code-examples",
            "operation `get_account`: response 400 example `invalid` has `response_code: \"01\"`, \
             which the operation's `x-response-codes` does not list",
        )],
    );
}

#[test]
fn an_error_example_under_the_wrong_status_is_refused() {
    check(
        |doc| {
            set(
                doc,
                &at(GET_ACCOUNT, "responses/401"),
                json!({"$ref": "#/components/responses/InvalidRequest"}),
            )
        },
        &[
            (
                "response-code-examples",
                "operation `get_account`: response 401 example `invalid` has `response_code: \"01\"`, \
                 which the catalog gives HTTP 400, not 401",
            ),
            ("response-codes-exemplified", "operation `get_account`: lists response code `41`"),
            ("unused-components", "#/components/responses/Unauthorized"),
        ],
    );
}

#[test]
fn an_error_example_under_default_may_have_any_listed_code() {
    check(
        |doc| {
            set(
                doc,
                &at(GET_ACCOUNT, "responses/default"),
                json!({"$ref": "#/components/responses/Unauthorized"}),
            )
        },
        &[],
    );
}

fn transport_error_with_code(code: &str) -> Value {
    json!({
        "description": "Transport errors.",
        "headers": {"X-Request-Id": {"$ref": "#/components/headers/XRequestId"}},
        "content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/ErrorEnvelope"},
            "examples": {"transport": {"value": {
                "status": false, "response_code": code, "message": "Too many requests", "data": null
            }}}
        }}
    })
}

#[test]
fn an_error_example_under_default_needs_only_a_catalog_code() {
    // `29` is in the catalog but `get_account` does not list it: transport errors may use it.
    check(
        |doc| {
            set(
                doc,
                &at(GET_ACCOUNT, "responses/default"),
                transport_error_with_code("29"),
            )
        },
        &[],
    );
}

#[test]
fn an_error_example_under_default_with_an_unknown_code_is_refused() {
    check(
        |doc| {
            set(
                doc,
                &at(GET_ACCOUNT, "responses/default"),
                transport_error_with_code("77"),
            )
        },
        &[(
            "response-code-examples",
            "operation `get_account`: response default example `transport` has `response_code: \"77\"`, \
             which is not in the `x-response-codes` catalog",
        )],
    );
}

// response-codes-documented

#[test]
fn a_listed_code_missing_from_the_description_is_refused() {
    check(
        |doc| set(doc, &at(GET_ACCOUNT, "description"), json!("Fails with `01` or 41.")),
        &[(
            "response-codes-documented",
            "operation `get_account`: lists response code `41` but its `description` does not mention it",
        )],
    );
}

// examples-present

#[test]
fn an_operation_without_a_request_example_is_refused() {
    check(
        |doc| {
            remove(
                doc,
                &at(GET_ACCOUNT, &format!("requestBody/{JSON_MEDIA}/examples")),
            );
        },
        &[(
            "examples-present",
            "operation `get_account`: its request body has no example",
        )],
    );
}

#[test]
fn an_operation_without_a_success_example_is_refused() {
    check(
        |doc| {
            remove(
                doc,
                &at(
                    CREATE_TRANSFER,
                    &format!("responses/200/{JSON_MEDIA}/example"),
                ),
            );
        },
        &[(
            "examples-present",
            "operation `create_transfer`: its 200 response has no example",
        )],
    );
}

#[test]
fn a_success_example_must_carry_the_success_message() {
    check(
        |doc| set(doc, &at(GET_ACCOUNT, "x-success-message"), json!("Account fetched")),
        &[(
            "examples-present",
            "operation `get_account`: response 200 example `found` has `message: \"Account retrieved \
             successfully\"` but `x-success-message` is \"Account fetched\"",
        )],
    );
}

#[test]
fn a_success_example_must_carry_code_00() {
    check(
        |doc| {
            set(
                doc,
                &at(GET_ACCOUNT, &format!("responses/200/{JSON_MEDIA}/examples/found/value/response_code")),
                json!("01"),
            )
        },
        &[("examples-present", "operation `get_account`: response 200 example `found` must have `response_code: \"00\"`")],
    );
}

// success-message

#[test]
fn an_operation_without_success_message_is_refused() {
    check(
        |doc| {
            remove(doc, &at(CREATE_TRANSFER, "x-success-message"));
        },
        &[(
            "success-message",
            "operation `create_transfer`: has no `x-success-message`",
        )],
    );
}

// examples-valid

#[test]
fn a_success_example_with_a_bad_uuid_is_refused() {
    check(
        |doc| {
            let data = format!("responses/200/{JSON_MEDIA}/examples/found/value/data");
            set(
                doc,
                &at(GET_ACCOUNT, &format!("{data}/id")),
                json!("not-a-uuid"),
            );
            set(
                doc,
                &at(GET_ACCOUNT, &format!("{data}/created_at")),
                json!("yesterday"),
            );
        },
        &[(
            "examples-valid",
            "operation `get_account`: response 200: example `found` does not match its schema: \
             at `/data/id`: \"not-a-uuid\" is not a \"uuid\"; at `/data/created_at`: \"yesterday\" \
             is not a \"date-time\"",
        )],
    );
}

#[test]
fn a_response_example_with_a_field_its_schema_lost_is_refused() {
    check(
        |doc| {
            let data = format!("responses/200/{JSON_MEDIA}/examples/found/value/data");
            set(
                doc,
                &at(GET_ACCOUNT, &format!("{data}/nickname")),
                json!("Payroll"),
            );
        },
        &[(
            "examples-declared",
            "operation `get_account`: response 200: example `found` carries `/data/nickname`, \
             which its schema does not declare",
        )],
    );
}

#[test]
fn a_request_example_with_an_unknown_field_is_refused() {
    check(
        |doc| {
            set(
                doc,
                &at(GET_ACCOUNT, &format!("requestBody/{JSON_MEDIA}/examples/by_number/value/extra")),
                json!(1),
            )
        },
        &[("examples-valid", "operation `get_account`: request body: example `by_number` does not match its schema: at `/`")],
    );
}

#[test]
fn a_component_request_body_example_with_a_bad_email_is_refused() {
    check(
        |doc| {
            set(
                doc,
                "/components/requestBodies/CreateTransfer/content/application~1json/example/beneficiary_email",
                json!("not an email"),
            )
        },
        &[(
            "examples-valid",
            "request body `#/components/requestBodies/CreateTransfer`: example `example` does not \
             match its schema: at `/beneficiary_email`: \"not an email\" is not a \"email\"",
        )],
    );
}

#[test]
fn a_component_example_is_checked_where_it_is_used() {
    check(
        |doc| set(doc, "/components/examples/TooManyRequests/value/status", json!("no")),
        &[(
            "examples-valid",
            "operation `create_transfer`: response 429: example `throttled` does not match its schema: at `/status`",
        )],
    );
}

#[test]
fn a_schema_example_is_checked_against_its_schema() {
    check(
        |doc| {
            set(doc, "/components/schemas/AccountNumber/example", json!("12345"));
            set(
                doc,
                "/components/schemas/CreateTransferRequest/properties/amount/example",
                json!("1.234"),
            );
        },
        &[
            (
                "examples-valid",
                "schema `#/components/schemas/AccountNumber`: its `example` does not match its schema",
            ),
            (
                "examples-valid",
                "schema `#/components/schemas/CreateTransferRequest`: the `example` at \
                 `/properties/amount` does not match its schema",
            ),
        ],
    );
}

#[test]
fn an_inline_schema_example_is_checked() {
    check(
        |doc| {
            set(
                doc,
                &at(
                    CREATE_TRANSFER,
                    "responses/200/headers/Idempotent-Replayed/schema/example",
                ),
                json!("yes"),
            )
        },
        &[(
            "examples-valid",
            "operation `create_transfer`: response 200 header `Idempotent-Replayed` schema: its \
             `example` does not match its schema",
        )],
    );
}

#[test]
fn parameter_and_header_examples_are_checked() {
    check(
        |doc| {
            set(
                doc,
                "/components/parameters/IdempotencyKey/example",
                json!(""),
            );
            set(doc, "/components/headers/XRequestId/example", json!("abc"));
            set(
                doc,
                &at(CREATE_TRANSFER, "responses/429/headers/Retry-After/example"),
                json!(-1),
            );
        },
        &[
            (
                "examples-valid",
                "`#/components/parameters/IdempotencyKey`: parameter `Idempotency-Key`: example \
                 `example` does not match its schema",
            ),
            (
                "examples-valid",
                "header `#/components/headers/XRequestId`: example `example` does not match its \
                 schema: at `/`: \"abc\" is not a \"uuid\"",
            ),
            (
                "examples-valid",
                "operation `create_transfer`: response 429 header `Retry-After`: example `example`",
            ),
        ],
    );
}

#[test]
fn nullable_follows_openapi_3_0() {
    check(
        |doc| {
            let example = "/components/examples/TooManyRequests/value/data";
            set(doc, example, json!(null));
            set(doc, "/components/responses/InvalidRequest/content/application~1json/examples/invalid/value/message", json!(null));
        },
        &[(
            "examples-valid",
            "response `#/components/responses/InvalidRequest`: example `invalid` does not match its \
             schema: at `/message`: null is not of type \"string\"",
        )],
    );
}

// headers

#[test]
fn a_component_response_without_request_id_is_refused() {
    check(
        |doc| {
            remove(doc, "/components/responses/Unauthorized/headers");
        },
        &[(
            "headers",
            "response `#/components/responses/Unauthorized`: does not declare the `X-Request-Id` header",
        )],
    );
}

#[test]
fn an_inline_response_without_request_id_is_refused() {
    check(
        |doc| {
            remove(doc, &at(GET_ACCOUNT, "responses/200/headers"));
        },
        &[(
            "headers",
            "operation `get_account`: response 200: does not declare the `X-Request-Id` header",
        )],
    );
}

#[test]
fn header_names_are_case_insensitive() {
    check(
        |doc| {
            let header = remove(doc, &at(GET_ACCOUNT, "responses/200/headers/X-Request-Id"));
            set(
                doc,
                &at(GET_ACCOUNT, "responses/200/headers/x-request-id"),
                header,
            );
        },
        &[],
    );
}

#[test]
fn a_429_without_retry_after_is_refused() {
    check(
        |doc| {
            remove(doc, &at(CREATE_TRANSFER, "responses/429/headers/Retry-After"));
        },
        &[(
            "headers",
            "operation `create_transfer`: response 429: is a 429 response and does not declare the \
             `Retry-After` header",
        )],
    );
}

#[test]
fn a_shared_429_without_retry_after_is_refused_once() {
    check(
        |doc| {
            let mut response = remove(doc, &at(CREATE_TRANSFER, "responses/429"));
            remove(&mut response, "/headers/Retry-After");
            set(doc, "/components/responses/TooManyRequests", response);
            let reference = json!({"$ref": "#/components/responses/TooManyRequests"});
            set(
                doc,
                &at(CREATE_TRANSFER, "responses/429"),
                reference.clone(),
            );
            set(doc, &at(GET_ACCOUNT, "responses/429"), reference);
            set(doc, &at(GET_ACCOUNT, "x-response-codes/3"), json!("29"));
            set(
                doc,
                &at(GET_ACCOUNT, "description"),
                json!("Fails with `01`, `29` or `41`."),
            );
        },
        &[(
            "headers",
            "response `#/components/responses/TooManyRequests`: is a 429 response and does not \
             declare the `Retry-After` header",
        )],
    );
}

#[test]
fn idempotent_replayed_without_idempotency_key_is_refused() {
    check(
        |doc| {
            remove(doc, &at(CREATE_TRANSFER, "parameters"));
        },
        &[
            (
                "headers",
                "operation `create_transfer`: its 200 response declares `Idempotent-Replayed` but it \
                 does not take the `Idempotency-Key` header parameter",
            ),
            ("unused-components", "#/components/parameters/IdempotencyKey"),
        ],
    );
}

#[test]
fn idempotency_key_without_idempotent_replayed_is_refused() {
    check(
        |doc| {
            remove(
                doc,
                &at(CREATE_TRANSFER, "responses/200/headers/Idempotent-Replayed"),
            );
        },
        &[(
            "headers",
            "operation `create_transfer`: takes the `Idempotency-Key` header but its 200 response \
             does not declare `Idempotent-Replayed`",
        )],
    );
}

// unused-components

#[test]
fn every_kind_of_unused_component_is_refused() {
    check(
        |doc| {
            set(doc, "/components/schemas/Orphan", json!({"type": "string"}));
            set(
                doc,
                "/components/responses/Orphan",
                error_response("#/components/schemas/ErrorEnvelope"),
            );
            let parameter =
                json!({"name": "X-Orphan", "in": "header", "schema": {"type": "string"}});
            set(doc, "/components/parameters/Orphan", parameter);
            set(doc, "/components/examples/Orphan", json!({"value": {}}));
            let body = json!({"required": true, "content": {"application/json": {"schema": {"type": "object"}}}});
            set(doc, "/components/requestBodies/Orphan", body);
            set(
                doc,
                "/components/headers/Orphan",
                json!({"schema": {"type": "string"}}),
            );
            let scheme = json!({"type": "apiKey", "in": "cookie", "name": "kobo"});
            set(doc, "/components/securitySchemes/cookieToken", scheme);
        },
        &[
            (
                "unused-components",
                "#/components/schemas/Orphan: is never referenced",
            ),
            (
                "unused-components",
                "#/components/responses/Orphan: is never referenced",
            ),
            (
                "unused-components",
                "#/components/parameters/Orphan: is never referenced",
            ),
            (
                "unused-components",
                "#/components/examples/Orphan: is never referenced",
            ),
            (
                "unused-components",
                "#/components/requestBodies/Orphan: is never referenced",
            ),
            (
                "unused-components",
                "#/components/headers/Orphan: is never referenced",
            ),
            (
                "unused-components",
                "#/components/securitySchemes/cookieToken: is not used",
            ),
        ],
    );
}

#[test]
fn a_schema_referenced_only_by_itself_is_unused() {
    check(
        |doc| {
            let node = json!({"type": "object", "properties": {"next": {"$ref": "#/components/schemas/Node"}}});
            set(doc, "/components/schemas/Node", node);
        },
        &[(
            "unused-components",
            "#/components/schemas/Node: is never referenced",
        )],
    );
}

#[test]
fn a_reference_from_a_root_extension_counts() {
    check(
        |doc| {
            set(
                doc,
                "/components/schemas/TransferEvent",
                json!({"type": "object"}),
            );
            let webhooks =
                json!({"transfer.success": {"$ref": "#/components/schemas/TransferEvent"}});
            set(doc, "/x-webhooks", webhooks);
        },
        &[],
    );
}

// x-origin

#[test]
fn x_origin_other_than_extension_is_refused_anywhere() {
    check(
        |doc| {
            set(doc, &at(CREATE_TRANSFER, "x-origin"), json!("source"));
            set(
                doc,
                "/components/schemas/CreateTransferRequest/properties/beneficiary_email/x-origin",
                json!(true),
            );
        },
        &[
            (
                "x-origin",
                "#/paths/~1api~1v1~1transaction~1transfer~1api~1create_transfer/post/x-origin: \
                 `x-origin: \"source\"`: the only value is `extension`",
            ),
            (
                "x-origin",
                "#/components/schemas/CreateTransferRequest/properties/beneficiary_email/x-origin",
            ),
        ],
    );
}

// The document as a whole

#[test]
fn every_problem_is_reported_not_just_the_first() {
    check(
        |doc| {
            remove(doc, &at(GET_ACCOUNT, "x-permission"));
            remove(doc, &at(CREATE_TRANSFER, "x-success-message"));
            set(doc, &at(GET_ACCOUNT, "operationId"), json!("GetAccount"));
        },
        &[
            (
                "operation-id",
                "`operationId: GetAccount` must be snake_case",
            ),
            (
                "permission",
                "operation `GetAccount`: is a `dashboardToken` operation without `x-permission`",
            ),
            (
                "success-message",
                "operation `create_transfer`: has no `x-success-message`",
            ),
        ],
    );
}

#[test]
fn yaml_keys_that_look_like_numbers_are_read_as_strings() {
    // Response keys written `200:` unquoted must still be found.
    let text = VALID.replace("'200':", "200:").replace("'400':", "400:");
    assert_ne!(text, VALID);
    let doc = spec::parse(&text).expect("the fixture parses");
    assert_eq!(super::check(&doc), Vec::<Problem>::new());
}

#[test]
fn every_rule_has_a_unique_name_and_a_test_that_makes_it_fire() {
    // Expectations read `("rule", "text")`, however rustfmt wraps them.
    let tests: String = include_str!("tests.rs").split_whitespace().collect();
    let mut names = std::collections::BTreeSet::new();
    for rule in super::RULES {
        assert!(
            names.insert(rule.name),
            "two rules are named `{}`",
            rule.name
        );
        assert!(
            tests.contains(&format!("(\"{}\",", rule.name)),
            "no test expects a `{}` problem",
            rule.name
        );
    }
}

// request-defaults

#[test]
fn a_default_is_refused_and_a_server_default_must_be_described() {
    check(
        |doc| {
            set(
                doc,
                "/components/schemas/Paging",
                json!({"type": "object", "x-origin": "extension", "properties": {
                    "limit": {"type": "integer", "default": 20},
                    "page": {"type": "integer", "x-server-default": 1},
                    "page_size": {"type": "integer", "x-server-default": 20, "description": "Default: `20`."},
                }}),
            )
        },
        &[
            (
                "request-defaults",
                "#/components/schemas/Paging/properties/limit: has a `default`",
            ),
            (
                "request-defaults",
                "#/components/schemas/Paging/properties/page: has an `x-server-default` its description",
            ),
            ("unused-components", "Paging"),
        ],
    );
}

#[test]
fn the_error_envelope_has_no_example_of_its_own() {
    check(
        |doc| {
            set(
                doc,
                "/components/schemas/ErrorEnvelope/example",
                json!({"status": false, "response_code": "41", "message": "x", "data": null}),
            )
        },
        &[(
            "error-envelope",
            "#/components/schemas/ErrorEnvelope: must have no schema-level `example`",
        )],
    );
}

// open-enums

/// `Status`, an open enum, its wrapper `OpenStatus` (a plain string naming it by `x-known-values`,
/// its description listing the values), and `Account.status` using `field`.
fn with_open_status(doc: &mut Value, field: Value) {
    set(
        doc,
        "/components/schemas/Status",
        json!({"type": "string", "x-origin": "extension", "x-extensible-enum": true,
               "enum": ["a", "b"], "x-enum-varnames": ["STATUS_A", "STATUS_B"]}),
    );
    set(
        doc,
        "/components/schemas/OpenStatus",
        json!({"type": "string", "x-origin": "extension", "x-extensible-enum": true,
               "x-known-values": "#/components/schemas/Status",
               "description": "A `Status`: a plain string, one of the values known today (`a`,\n`b`: `Status` names them) or a value added later.\n"}),
    );
    set(doc, "/components/schemas/Account/properties/status", field);
}

#[test]
fn a_response_names_an_open_enum_through_its_wrapper() {
    // `Status` is used only through `x-known-values`: that counts as a use.
    check(
        |doc| with_open_status(doc, json!({"$ref": "#/components/schemas/OpenStatus"})),
        &[],
    );
    check(
        |doc| with_open_status(doc, json!({"$ref": "#/components/schemas/Status"})),
        &[
            (
                "open-enums",
                "#/components/schemas/Account: a response reaches the open enum `Status` directly: use `OpenStatus`",
            ),
            ("unused-components", "OpenStatus"),
        ],
    );
}

#[test]
fn an_open_enum_needs_its_wrapper() {
    // Today's shape before 2.5.0: an `anyOf` of the enum and a string, no `x-known-values`.
    check(
        |doc| {
            with_open_status(doc, json!({"$ref": "#/components/schemas/OpenStatus"}));
            remove(doc, "/components/schemas/OpenStatus/x-known-values");
            set(
                doc,
                "/components/schemas/OpenStatus/anyOf",
                json!([{"$ref": "#/components/schemas/Status"}, {"type": "string"}]),
            );
        },
        &[(
            "open-enums",
            "#/components/schemas/Status: is an open enum: it needs `OpenStatus` (`type: string`, \
             `x-extensible-enum: true`, `x-known-values: '#/components/schemas/Status'`, no `anyOf`)",
        )],
    );
    // No wrapper names it: nothing uses the enum either.
    check(
        |doc| {
            with_open_status(doc, json!({"$ref": "#/components/schemas/OpenStatus"}));
            remove(doc, "/components/schemas/OpenStatus/x-known-values");
        },
        &[
            (
                "open-enums",
                "#/components/schemas/Status: is an open enum: it needs `OpenStatus`",
            ),
            ("unused-components", "#/components/schemas/Status"),
        ],
    );
}

// known-values

#[test]
fn a_wrapper_with_known_values_is_a_plain_string() {
    check(
        |doc| {
            with_open_status(doc, json!({"$ref": "#/components/schemas/OpenStatus"}));
            set(
                doc,
                "/components/schemas/OpenStatus/anyOf",
                json!([{"$ref": "#/components/schemas/Status"}, {"type": "string"}]),
            );
        },
        &[(
            "known-values",
            "#/components/schemas/OpenStatus: has `x-known-values`, so it must be a plain `type: \
             string` with `x-extensible-enum: true`, without `anyOf`: every generated client then \
             keeps a value added later",
        )],
    );
    check(
        |doc| {
            with_open_status(doc, json!({"$ref": "#/components/schemas/OpenStatus"}));
            remove(doc, "/components/schemas/OpenStatus/x-extensible-enum");
            set(doc, "/components/schemas/OpenStatus/type", json!("integer"));
        },
        &[(
            "known-values",
            "#/components/schemas/OpenStatus: has `x-known-values`, so it must be a plain `type: \
             string` with `x-extensible-enum: true`: every",
        )],
    );
}

#[test]
fn known_values_name_an_open_enum() {
    for target in [
        // Not an enum.
        "#/components/schemas/AccountNumber",
        // A closed enum.
        "#/components/schemas/ResponseCode",
        // Nothing there.
        "#/components/schemas/Missing",
        // Not a reference to a component schema.
        "Status",
    ] {
        check(
            |doc| {
                with_open_status(doc, json!({"$ref": "#/components/schemas/OpenStatus"}));
                set(
                    doc,
                    "/components/schemas/OpenStatus/x-known-values",
                    json!(target),
                );
            },
            &[
                (
                    "open-enums",
                    "#/components/schemas/Status: is an open enum: it needs `OpenStatus`",
                ),
                (
                    "known-values",
                    &format!(
                        "#/components/schemas/OpenStatus: `x-known-values: \"{target}\"` must name \
                         an open enum, `'#/components/schemas/<Name>'` of a schema with `enum` and \
                         `x-extensible-enum: true`"
                    ),
                ),
                // Nothing names the enum now.
                ("unused-components", "#/components/schemas/Status"),
            ],
        );
    }
}

#[test]
fn a_wrapper_is_named_after_its_enum() {
    check(
        |doc| {
            with_open_status(doc, json!({"$ref": "#/components/schemas/StatusLater"}));
            let wrapper = remove(doc, "/components/schemas/OpenStatus");
            set(doc, "/components/schemas/StatusLater", wrapper);
        },
        &[
            (
                "open-enums",
                "#/components/schemas/Status: is an open enum: it needs `OpenStatus`",
            ),
            (
                "known-values",
                "#/components/schemas/StatusLater: names the known values of `Status`, so it must \
                 be called `OpenStatus`",
            ),
        ],
    );
}

#[test]
fn a_wrapper_lists_the_values_known_today() {
    let with_description = |description: &'static str| {
        move |doc: &mut Value| {
            with_open_status(doc, json!({"$ref": "#/components/schemas/OpenStatus"}));
            set(
                doc,
                "/components/schemas/OpenStatus/description",
                json!(description),
            );
        }
    };
    check(
        with_description("A `Status` (`a`, `b`, `c`: `Status` names them)."),
        &[(
            "known-values",
            "#/components/schemas/OpenStatus: its description's values known today are not \
             `Status`'s (not in `Status`: `c`): list \"(`a`, `b`: `Status` names them)\"",
        )],
    );
    check(
        with_description("A `Status` (`a`: `Status` names them)."),
        &[(
            "known-values",
            "its description's values known today are not `Status`'s (missing `b`)",
        )],
    );
    check(
        with_description("A `Status` (`b`, `a`: `Status` names them)."),
        &[(
            "known-values",
            "its description's values known today are not `Status`'s (in another order than \
             `Status`'s)",
        )],
    );
    check(
        with_description("A `Status` (`a`, `x`: `Status` names them)."),
        &[("known-values", "(missing `b`; not in `Status`: `x`)")],
    );
    for unlisted in ["A `Status`: one of `a`, `b`.", ""] {
        check(
            with_description(unlisted),
            &[(
                "known-values",
                "#/components/schemas/OpenStatus: its description must list the values known \
                 today, as \"(`a`, `b`: `Status` names them)\": a plain string shows partners no \
                 values",
            )],
        );
    }
}

#[test]
fn known_values_sit_on_a_component_schema() {
    check(
        |doc| {
            with_open_status(doc, json!({"$ref": "#/components/schemas/OpenStatus"}));
            set(
                doc,
                "/components/schemas/Account/properties/later",
                json!({"type": "string", "x-known-values": "#/components/schemas/Status"}),
            );
        },
        &[(
            "known-values",
            "#/components/schemas/Account/properties/later: `x-known-values` belongs on a \
             component schema `Open<Name>` only",
        )],
    );
}

// schema-names

#[test]
fn a_schema_named_like_a_go_test_file_is_refused() {
    check(
        |doc| {
            set(
                doc,
                "/components/schemas/WebhookTest",
                json!({"type": "object", "x-origin": "extension"}),
            )
        },
        &[
            (
                "schema-names",
                "#/components/schemas/WebhookTest: a schema name must not end in `Test`",
            ),
            ("unused-components", "WebhookTest"),
        ],
    );
}

// enum-varnames

#[test]
fn an_enum_of_strings_is_named_by_its_schema_and_value() {
    check(
        |doc| {
            set(
                doc,
                "/components/schemas/TransferStatus",
                json!({"type": "string", "x-origin": "extension", "enum": ["pending_approval", "success"]}),
            );
            set(
                doc,
                "/components/schemas/Holder",
                json!({"type": "object", "x-origin": "extension", "properties": {
                    "status": {"$ref": "#/components/schemas/TransferStatus"}}}),
            );
        },
        &[
            (
                "enum-varnames",
                "#/components/schemas/TransferStatus: needs `x-enum-varnames: \
                 [TRANSFER_STATUS_PENDING_APPROVAL, TRANSFER_STATUS_SUCCESS]`",
            ),
            ("unused-components", "Holder"),
        ],
    );
    assert_eq!(
        super::catalogs::enum_member_name("WebhookEventType", "account.status_changed"),
        "WEBHOOK_EVENT_TYPE_ACCOUNT_STATUS_CHANGED"
    );
}

#[test]
fn no_name_names_members_of_two_enums() {
    check(
        |doc| {
            set(
                doc,
                "/components/schemas/ResponseCode",
                json!({
                    "type": "string",
                    "enum": ["00", "01", "29", "41", "x"],
                    "x-enum-varnames": ["SUCCESS", "A", "B", "C", "D"],
                }),
            );
            set(
                doc,
                "/components/schemas/Other",
                json!({
                    "type": "string",
                    "enum": ["00", "01", "y"],
                    "x-enum-varnames": ["SUCCESS", "E", "F"],
                }),
            );
        },
        &[
            ("enum-varnames", "#/components/schemas/Other: `x-enum-varnames`: `SUCCESS` also names a value of `ResponseCode`"),
            ("unused-components", "Other"),
        ],
    );
}

#[test]
fn an_enum_of_response_codes_without_varnames_is_refused() {
    check(
        |doc| {
            set(
                doc,
                "/components/schemas/ResponseCode",
                json!({"type": "string", "enum": ["00", "01", "29", "41"]}),
            )
        },
        &[(
            "enum-varnames",
            "#/components/schemas/ResponseCode: an enum of response codes needs \
             `x-enum-varnames: [SUCCESS, INVALID_REQUEST, TOO_MANY_REQUESTS, UNAUTHENTICATED]`",
        )],
    );
}

#[test]
fn an_enum_of_response_codes_with_other_names_is_refused() {
    check(
        |doc| {
            set(
                doc,
                "/components/schemas/ResponseCode",
                json!({
                    "type": "string",
                    "enum": ["00", "01", "29", "41"],
                    "x-enum-varnames": ["SUCCESS", "INVALID_REQUEST", "TOO_MANY_REQUESTS", "CUSTOMER_NOT_FOUND"],
                }),
            )
        },
        &[(
            "enum-varnames",
            "`x-enum-varnames: [SUCCESS, INVALID_REQUEST, TOO_MANY_REQUESTS, UNAUTHENTICATED]`",
        )],
    );
}

#[test]
fn an_enum_of_response_codes_named_by_the_catalog_is_accepted() {
    check(
        |doc| {
            set(
                doc,
                "/components/schemas/ResponseCode",
                json!({
                    "type": "string",
                    "enum": ["00", "01", "29", "41"],
                    "x-enum-varnames": ["SUCCESS", "INVALID_REQUEST", "TOO_MANY_REQUESTS", "UNAUTHENTICATED"],
                }),
            )
        },
        &[],
    );
}

#[test]
fn enum_varnames_must_name_every_value_once_in_upper_snake_case() {
    check(
        |doc| {
            set(
                doc,
                "/components/schemas/ResponseCode",
                json!({"type": "string", "enum": ["00", "01", "29", "41", "x"], "x-enum-varnames": ["A"]}),
            )
        },
        &[("enum-varnames", "must list one name per `enum` value (5)")],
    );
    check(
        |doc| {
            set(
                doc,
                "/components/schemas/ResponseCode",
                json!({
                    "type": "string",
                    "enum": ["00", "01", "29", "41", "x"],
                    "x-enum-varnames": ["SUCCESS", "A", "A", "B", "C"],
                }),
            )
        },
        &[("enum-varnames", "`A` names two values")],
    );
    check(
        |doc| {
            set(
                doc,
                "/components/schemas/ResponseCode",
                json!({
                    "type": "string",
                    "enum": ["00", "01", "29", "41", "x"],
                    "x-enum-varnames": ["SUCCESS", "A", "B", "c", "D"],
                }),
            )
        },
        &[("enum-varnames", "`c` is not an UPPER_SNAKE name")],
    );
}

/// The fixture's text with a new schema `Hold`, referenced from the error envelope, whose
/// `reason` is `reason_yaml`.
fn with_hold_reason(reason_yaml: &str) -> String {
    let envelope =
        "    ErrorEnvelope:\n      type: object\n      required: [status, response_code, \
                    message, data]\n      properties:\n";
    let schemas = "    ResponseCode:\n";
    assert_eq!(VALID.matches(envelope).count(), 1);
    assert_eq!(VALID.matches(schemas).count(), 1);
    VALID
        .replace(
            envelope,
            &format!("{envelope}        hold:\n          $ref: '#/components/schemas/Hold'\n"),
        )
        .replace(
            schemas,
            &format!(
                "    Hold:\n      type: object\n      properties:\n        reason: {reason_yaml}\n{schemas}"
            ),
        )
}

/// Every problem of the document `text`, located in it.
fn problems_of(text: &str) -> Vec<Problem> {
    let mut problems = super::check(&spec::parse(text).expect("the edited fixture parses"));
    super::locate(&mut problems, text);
    problems
}

#[test]
fn a_type_typo_is_one_problem_at_its_line_with_a_suggestion() {
    let text = with_hold_reason("{type: strng}");
    let line = 1 + text
        .lines()
        .position(|line| line == "        reason: {type: strng}")
        .unwrap();
    let problems = problems_of(&text);
    let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [format!(
            "[schema-keywords] #/components/schemas/Hold/properties/reason/type (line {line}, \
             column 18): `strng` is not a schema type: did you mean `string`? the types are \
             array, boolean, integer, number, object, string"
        )
        .replace("? the", "?; the")],
        "one mistake, one problem"
    );
    // Valid, the same document has none: the example noise came from the typo alone.
    assert_eq!(problems_of(&with_hold_reason("{type: string}")), []);
}

#[test]
fn schema_keywords_are_checked_wherever_a_schema_is() {
    let pointer = "/components/schemas/ResponseCode";
    check(
        |doc| set(doc, &format!("{pointer}/maxLenght"), json!(2)),
        &[(
            "schema-keywords",
            "#/components/schemas/ResponseCode/maxLenght: `maxLenght` is not an OpenAPI 3.0 \
             schema keyword: did you mean `maxLength`?",
        )],
    );
    check(
        |doc| set(doc, &format!("{pointer}/type"), json!(["string", "null"])),
        &[("schema-keywords", "`type` must be one type name")],
    );
    check(
        |doc| set(doc, &format!("{pointer}/type"), json!("null")),
        &[("schema-keywords", "write `nullable: true` beside the type")],
    );
    check(
        |doc| {
            let schema = format!("{GET_ACCOUNT}/requestBody/{JSON_MEDIA}/schema");
            set(
                doc,
                &schema,
                json!({"type": "object", "properties": {"a": {"type": "integr"}}}),
            );
        },
        &[
            (
                "schema-keywords",
                "#/paths/~1api~1v1~1account~1web~1get_account/post/requestBody/content/\
                 application~1json/schema/properties/a/type: `integr` is not a schema type: did \
                 you mean `integer`?",
            ),
            ("request-body", "must be a `$ref`"),
            ("unused-components", "GetAccountRequest"),
        ],
    );
}

// What a document says of itself: its token families, its source, its router's codes.

#[test]
fn a_document_without_token_families_is_told_to_declare_them() {
    check(
        |doc| {
            remove(doc, "/x-token-families");
        },
        &[
            (
                "security",
                "#/x-token-families: the token families are missing",
            ),
            (
                "security",
                "operation `get_account`: `security` names `dashboardToken`",
            ),
            (
                "security",
                "operation `create_transfer`: `security` names `integrationToken`",
            ),
        ],
    );
}

#[test]
fn families_without_path_segments_or_permissions_need_neither() {
    check(
        |doc| {
            set(doc, "/x-token-families", json!({"integrationToken": {}}));
            remove(doc, "/x-permissions");
            let item = remove(doc, "/paths/~1api~1v1~1account~1web~1get_account");
            set(doc, "/paths/~1v1~1accounts~1get", item);
            set(
                doc,
                &at("/paths/~1v1~1accounts~1get/post", "security"),
                json!([]),
            );
            remove(doc, &at("/paths/~1v1~1accounts~1get/post", "x-permission"));
            remove(doc, "/components/securitySchemes/dashboardToken");
        },
        &[],
    );
}

#[test]
fn origins_need_a_source_document() {
    check(
        |doc| {
            remove(doc, "/x-source-document");
        },
        &[
            (
                "response-code-catalog",
                "#/x-response-codes/00: `origin` says",
            ),
            (
                "response-code-catalog",
                "#/x-response-codes/01: `origin` says",
            ),
            (
                "response-code-catalog",
                "#/x-response-codes/29: `origin` says",
            ),
            (
                "response-code-catalog",
                "#/x-response-codes/41: `origin` says",
            ),
        ],
    );
}

#[test]
fn a_router_role_must_be_one_the_router_has() {
    check(
        |doc| set(doc, "/x-response-codes/01/router", json!(["bad_request"])),
        &[(
            "response-code-catalog",
            "#/x-response-codes/01: `router` must be a list of router roles: success, \
             invalid_request,",
        )],
    );
}
