//! The provider's generated server and generated client against each other, over a real
//! socket: the toolkit on a second document. What the runtime answers by itself (a wrong
//! secret, an unknown path, a malformed body) carries the code this document's catalog names
//! for it (NIP's `63`, `18`, `12`), not Kobo's.

use std::net::SocketAddr;
use std::sync::Arc;

use provider_client::{error_envelope, types, Provider};
use provider_server::{
    router, ApiError, JsonAdapter, JsonApi, JsonSuccess, Operation, Permission, RequestContext,
    ResponseCode, TokenFamily,
};
use serde_json::{json, Value};

const SECRET: &str = "shared-secret";

/// Answers `verify_identity` from a one-row table, `name_enquiry` with `07`.
struct OneHolder;

impl JsonApi for OneHolder {
    type Principal = ();

    async fn authenticate(&self, _: TokenFamily, token: &str) -> Result<(), ApiError> {
        match token {
            SECRET => Ok(()),
            _ => Err(ApiError::new(ResponseCode::SecurityViolation)),
        }
    }

    async fn authorize(&self, _: &(), permission: Permission) -> Result<(), ApiError> {
        match permission {}
    }

    async fn call(
        &self,
        ctx: RequestContext<Option<()>>,
        body: Value,
    ) -> Result<JsonSuccess, ApiError> {
        match ctx.operation {
            Operation::VerifyIdentity if body["bvn"] == "22212345678" => {
                Ok(JsonSuccess::data(json!({"name": "Adaeze Okafor"})))
            }
            Operation::VerifyIdentity | Operation::NameEnquiry => {
                Err(ApiError::new(ResponseCode::InvalidAccount))
            }
            _ => Err(ApiError::not_implemented()),
        }
    }
}

async fn serve() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let app = router(Arc::new(JsonAdapter(OneHolder)));
    tokio::spawn(async move {
        let service = app.into_make_service_with_connect_info::<SocketAddr>();
        axum::serve(listener, service).await.unwrap();
    });
    format!("http://{address}")
}

fn client(base: &str, secret: &str) -> provider_client::Client {
    Provider::new(base).with_token(secret).build().unwrap()
}

fn bvn(number: &str) -> types::VerifyIdentityRequest {
    types::VerifyIdentityRequest {
        bvn: Some(number.parse().unwrap()),
        nin: None,
    }
}

#[tokio::test]
async fn an_operation_answers_through_the_generated_pair() {
    let base = serve().await;
    let answer = client(&base, SECRET)
        .verify_identity()
        .body(bvn("22212345678"))
        .send()
        .await
        .unwrap();
    assert!(answer.headers().contains_key("x-request-id"));
    let envelope = answer.into_inner();
    assert_eq!(envelope.data.name, "Adaeze Okafor");
    assert_eq!(envelope.message, "Identity verified");
}

#[tokio::test]
async fn an_error_carries_its_nip_code_and_http_status() {
    let base = serve().await;
    let error = client(&base, SECRET)
        .verify_identity()
        .body(bvn("22200000000"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(error.status().map(|s| s.as_u16()), Some(404));
    let envelope = error_envelope(&error).expect("an error envelope");
    assert_eq!(envelope.response_code, types::ResponseCode::X07);
}

#[tokio::test]
async fn the_runtime_answers_with_the_documents_own_codes() {
    let base = serve().await;
    let http = reqwest::Client::new();
    let post = |path: &str, secret: Option<&str>, body: &str| {
        let mut request = http
            .post(format!("{base}{path}"))
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(secret) = secret {
            request = request.bearer_auth(secret);
        }
        request.send()
    };
    let cases = [
        (
            "/v1/identity/verify",
            Some("wrong"),
            r#"{"bvn":"22212345678"}"#,
            401,
            "63",
        ),
        (
            "/v1/identity/verify",
            None,
            r#"{"bvn":"22212345678"}"#,
            401,
            "63",
        ),
        ("/v1/no/such_operation", Some(SECRET), "{}", 404, "18"),
        (
            "/v1/identity/verify",
            Some(SECRET),
            r#"{"bvn":"12"}"#,
            400,
            "12",
        ),
        ("/v1/nip/funds_transfer", Some(SECRET), "{", 400, "12"),
        (
            "/v1/accounts/open",
            Some(SECRET),
            r#"{"account_name":"A","account_type":"virtual","business_id":"7f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f"}"#,
            501,
            "21",
        ),
    ];
    for (path, secret, body, status, code) in cases {
        let response = post(path, secret, body).await.unwrap();
        assert_eq!(response.status().as_u16(), status, "{path} {body}");
        let envelope: Value = response.json().await.unwrap();
        assert_eq!(envelope["response_code"], code, "{path} {body}: {envelope}");
        assert_eq!(envelope["status"], false);
        assert_eq!(envelope["data"], Value::Null);
    }
}
