//! The checks themselves must be able to fail: each bad response below is caught.

use conformance::{empty_where_the_spec_lists, listed_in_the_spec, Checker, Exchange};
use generated_server::Operation;
use serde_json::{json, Value};

fn check(status: u16, request_id: Option<&str>, body: Value, expect: &[&str]) {
    let checker = Checker::new();
    let problems = checker.problems(Operation::Login, status, request_id, &body);
    for expected in expect {
        assert!(
            problems.iter().any(|problem| problem.contains(expected)),
            "expected a problem containing {expected:?}, got {problems:?}"
        );
    }
    if expect.is_empty() {
        assert!(problems.is_empty(), "{problems:?}");
    }
}

fn error(code: &str) -> Value {
    json!({"status": false, "response_code": code, "message": "no", "data": null})
}

#[test]
fn the_spec_example_of_login_conforms() {
    let spec: Value = serde_json::from_str(generated_server::OPENAPI_JSON).unwrap();
    let example = spec["paths"][Operation::Login.path()]["post"]["responses"]["200"]["content"]
        ["application/json"]["examples"]["owner"]["value"]
        .clone();
    assert!(example.is_object(), "the spec has login's `owner` example");
    check(200, Some("r-1"), example, &[]);
    check(401, Some("r-1"), error("41"), &[]);
    // Transport codes are allowed on every operation.
    check(415, Some("r-1"), error("07"), &[]);
}

#[test]
fn bad_responses_are_caught() {
    check(
        200,
        Some("r-1"),
        json!({"status": true}),
        &["does not match LoginResponse"],
    );
    check(
        200,
        Some("r-1"),
        json!({"status": true, "response_code": "00", "message": "ok",
               "data": {"access_token": "t", "token_type": "Bearer", "expires_in": 1,
                        "member": {"id": "not-a-uuid"}, "permission_codes": []}}),
        &["does not match LoginResponse at `/data/member"],
    );
    check(
        400,
        Some("r-1"),
        error("41"),
        &["is HTTP 401 in the catalog"],
    );
    check(
        404,
        Some("r-1"),
        error("47"),
        &["not in the operation's x-response-codes"],
    );
    check(401, Some("r-1"), error("99"), &["not in the catalog"]);
    check(401, None, error("41"), &["no X-Request-Id"]);
    check(
        401,
        Some("r-1"),
        json!({"status": false, "response_code": "41", "message": "no", "data": {"x": 1}}),
        &["does not match ErrorEnvelope"],
    );
}

fn answer(operation: Operation, data: Value) -> Exchange {
    Exchange {
        operation,
        status: 200,
        request_id: "r-1".to_string(),
        body: json!({"status": true, "response_code": "00", "message": "ok", "data": data}),
    }
}

#[test]
fn an_empty_list_where_the_spec_lists_items_is_caught() {
    assert_eq!(
        listed_in_the_spec(Operation::FetchMembers),
        Some(("members", 3))
    );
    let problem = empty_where_the_spec_lists(
        &answer(Operation::FetchMembers, json!([])),
        "joined_in_october_by_email",
    )
    .expect("an empty list is caught");
    assert!(
        problem.starts_with("fetch_members: ")
            && problem.contains("\"joined_in_october_by_email\"")
            && problem.contains("\"members\" lists 3"),
        "{problem}"
    );
    // A list with items, an error, or an operation that answers no list: nothing to say.
    let one = json!([{"id": "9b2f4c1a-3d5e-4f60-8a71-b2c3d4e5f603"}]);
    assert_eq!(
        empty_where_the_spec_lists(&answer(Operation::FetchMembers, one), "all"),
        None
    );
    let refused = Exchange {
        body: error("41"),
        status: 401,
        ..answer(Operation::FetchMembers, json!(null))
    };
    assert_eq!(empty_where_the_spec_lists(&refused, "all"), None);
    assert_eq!(listed_in_the_spec(Operation::GetProfile), None);
    // The spec's only example of fetch_transfers_web is an empty list (`none`): an empty
    // answer is one it shows.
    assert_eq!(listed_in_the_spec(Operation::FetchTransfersWeb), None);
    assert_eq!(
        empty_where_the_spec_lists(
            &answer(Operation::FetchTransfersWeb, json!([])),
            "processing"
        ),
        None
    );
}
