//! The per-operation tables generated from the spec: listed response codes and request examples,
//! which tests and the conformance suite read instead of walking the spec's `$ref`s.

use generated_server::{Operation, RequestExample, ResponseCode, OPENAPI_JSON};
use serde_json::{json, Value};

#[test]
fn every_request_example_is_valid_for_its_operation() {
    for &operation in Operation::ALL {
        let examples = operation.request_examples();
        assert!(
            !examples.is_empty(),
            "{} has no request example",
            operation.id()
        );
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .build(&operation.request_json_schema())
            .expect("the request schema compiles");
        for example in examples {
            let errors: Vec<String> = validator
                .iter_errors(&example.value())
                .map(|error| format!("at `{}`: {error}", error.instance_path()))
                .collect();
            assert!(
                errors.is_empty(),
                "{} example {:?}: {errors:?}",
                operation.id(),
                example.name
            );
        }
    }
}

#[test]
fn request_examples_are_the_specs_with_refs_resolved() {
    // Inline under the operation.
    assert_eq!(
        Operation::Login
            .request_example("owner")
            .map(RequestExample::value),
        Some(json!({"email": "adaeze.okafor@adaezefoods.ng", "password": "Jollof-Rice-2026"}))
    );
    // Through `#/components/requestBodies/Empty`.
    assert_eq!(
        Operation::Logout.request_examples(),
        &[RequestExample {
            name: "empty",
            json: "{}"
        }]
    );
    assert_eq!(Operation::Login.request_example("nobody"), None);
}

#[test]
fn response_codes_are_the_lists_of_the_embedded_spec() {
    let spec: Value = serde_json::from_str(OPENAPI_JSON).unwrap();
    for &operation in Operation::ALL {
        let listed = &spec["paths"][operation.path()]["post"]["x-response-codes"];
        let generated: Vec<&str> = operation
            .response_codes()
            .iter()
            .map(|code| code.as_str())
            .collect();
        assert_eq!(json!(generated), *listed, "{}", operation.id());
    }
    assert_eq!(
        Operation::Login.response_codes(),
        ["00", "01", "29", "41", "96", "97"].map(|code| ResponseCode::from_code(code).unwrap())
    );
}
