//! The generated server and the generated client against each other, over a real socket.
//!
//! The bank here is a [`JsonApi`] that answers every operation with the first example of its
//! `200` response in the spec (so a success must come back exactly as the spec shows it), except
//! `name_enquiry`, which fails with `06`.

use std::net::SocketAddr;
use std::sync::Arc;

use generated_client::{error_envelope, types, ClientInfo, Kobo};
use generated_server::{
    router, ApiError, JsonAdapter, JsonApi, JsonSuccess, Operation, Permission, RequestContext,
    ResponseCode, TokenFamily, OPENAPI_JSON,
};
use serde_json::{json, Value};

const INTEGRATION_TOKEN: &str = "integration-token";
const DASHBOARD_TOKEN: &str = "dashboard-token";

struct ExampleBank;

impl JsonApi for ExampleBank {
    type Principal = TokenFamily;

    async fn authenticate(
        &self,
        family: TokenFamily,
        token: &str,
    ) -> Result<TokenFamily, ApiError> {
        match (family, token) {
            (TokenFamily::Integration, INTEGRATION_TOKEN)
            | (TokenFamily::Dashboard, DASHBOARD_TOKEN) => Ok(family),
            _ => Err(ApiError::new(code("41"))),
        }
    }

    async fn authorize(&self, _: &TokenFamily, _: Permission) -> Result<(), ApiError> {
        Ok(())
    }

    async fn call(
        &self,
        ctx: RequestContext<Option<TokenFamily>>,
        _body: Value,
    ) -> Result<JsonSuccess, ApiError> {
        if ctx.operation == Operation::NameEnquiry {
            return Err(ApiError::new(code("06")));
        }
        if ctx.idempotency_key.as_deref() == Some("seen-before") {
            ctx.mark_replayed();
        }
        let example = example(ctx.operation);
        Ok(JsonSuccess {
            data: example["data"].clone(),
            pagination: example.get("pagination").cloned(),
        })
    }
}

fn code(code: &str) -> ResponseCode {
    ResponseCode::from_code(code).expect("the catalog has the code")
}

/// The first example envelope of the operation's `200` response in the spec.
fn example(operation: Operation) -> Value {
    let spec: Value = serde_json::from_str(OPENAPI_JSON).unwrap();
    let content =
        &spec["paths"][operation.path()]["post"]["responses"]["200"]["content"]["application/json"];
    match content["examples"].as_object() {
        Some(examples) => examples.values().next().unwrap()["value"].clone(),
        None => content["example"].clone(),
    }
}

fn error_envelope_json(code: &str, message: &str) -> Value {
    json!({"status": false, "response_code": code, "message": message, "data": null})
}

/// Serves the router on a free loopback port; returns its base URL.
async fn serve() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let app = router(Arc::new(JsonAdapter(ExampleBank)));
    tokio::spawn(async move {
        let service = app.into_make_service_with_connect_info::<SocketAddr>();
        axum::serve(listener, service).await.unwrap();
    });
    format!("http://{address}")
}

fn client(base_url: &str, token: Option<&str>) -> generated_client::Client {
    let kobo = Kobo::new(base_url);
    match token {
        Some(token) => kobo.with_token(token),
        None => kobo,
    }
    .build()
    .unwrap()
}

fn as_json(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap()
}

#[tokio::test]
async fn a_public_operation_answers_the_spec_example_envelope() {
    let base = serve().await;
    let response = client(&base, None)
        .generate_token()
        .body_map(|body| body.client_id("kb_test_client").client_secret("s3cret"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.headers().contains_key("x-request-id"));
    assert_eq!(
        as_json(&response.into_inner()),
        example(Operation::GenerateToken)
    );
}

#[tokio::test]
async fn a_list_operation_answers_data_and_pagination() {
    let base = serve().await;
    let response = client(&base, Some(INTEGRATION_TOKEN))
        .fetch_customer_accounts()
        .send()
        .await
        .unwrap();
    let envelope = as_json(&response.into_inner());
    assert_eq!(envelope, example(Operation::FetchCustomerAccounts));
    assert!(envelope["pagination"].is_object());
}

#[tokio::test]
async fn an_error_from_the_bank_gets_its_code_and_http_status() {
    let base = serve().await;
    let error = client(&base, Some(INTEGRATION_TOKEN))
        .name_enquiry()
        .body_map(|body| {
            body.beneficiary_account_number("1000000021")
                .bank_code("090823")
                .source_account_number("1000000014")
        })
        .send()
        .await
        .unwrap_err();
    assert_eq!(error.status().unwrap(), code("06").http_status());
    assert_eq!(
        as_json(error_envelope(&error).unwrap()),
        error_envelope_json("06", code("06").default_message())
    );
}

#[tokio::test]
async fn a_validation_error_names_the_field() {
    let base = serve().await;
    let error = client(&base, Some(DASHBOARD_TOKEN))
        .add_member()
        .body_map(|body| {
            body.email("not-an-email")
                .first_name("Ada")
                .last_name("Obi")
                .role_id(uuid::Uuid::nil())
        })
        .send()
        .await
        .unwrap_err();
    assert_eq!(error.status().unwrap(), 400);
    assert_eq!(
        as_json(error_envelope(&error).unwrap()),
        error_envelope_json("01", "`email`: must be a valid email")
    );
}

#[tokio::test]
async fn a_missing_token_is_refused() {
    let base = serve().await;
    let error = client(&base, None)
        .name_enquiry()
        .body_map(|body| {
            body.beneficiary_account_number("1000000021")
                .bank_code("090823")
                .source_account_number("1000000014")
        })
        .send()
        .await
        .unwrap_err();
    assert_eq!(error.status().unwrap(), 401);
    assert_eq!(
        as_json(error_envelope(&error).unwrap()),
        error_envelope_json("41", code("41").default_message())
    );
}

#[tokio::test]
async fn a_token_of_the_other_family_is_refused() {
    let base = serve().await;
    let error = client(&base, Some(DASHBOARD_TOKEN))
        .fetch_banks()
        .send()
        .await
        .unwrap_err();
    assert_eq!(error.status().unwrap(), 401);
    assert_eq!(
        error_envelope(&error).unwrap().response_code.to_string(),
        "41"
    );
}

#[tokio::test]
async fn an_unknown_path_gets_the_error_envelope() {
    let base = serve().await;
    let client = client(&base, Some(INTEGRATION_TOKEN));
    let response = client
        .client()
        .post(format!("{}/api/v1/no_such_operation", client.baseurl()))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    assert!(response.headers().contains_key("x-request-id"));
    let envelope: types::ErrorEnvelope = response.json().await.unwrap();
    assert_eq!(
        as_json(&envelope),
        error_envelope_json("04", code("04").default_message())
    );
}

#[tokio::test]
async fn idempotent_operations_say_whether_they_replayed() {
    let base = serve().await;
    let client = client(&base, Some(INTEGRATION_TOKEN));
    for (key, replayed) in [("seen-before", "true"), ("first-time", "false")] {
        let response = client
            .create_account_api()
            .idempotency_key(key)
            .send()
            .await
            .unwrap();
        assert_eq!(response.headers()["idempotent-replayed"], replayed);
    }
}

#[tokio::test]
async fn the_client_request_id_is_echoed() {
    let base = serve().await;
    let response = Kobo::new(&base)
        .with_request_id("trace-42.a_b")
        .build()
        .unwrap()
        .generate_token()
        .body_map(|body| body.client_id("kb_test_client").client_secret("s3cret"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["x-request-id"], "trace-42.a_b");
}
