//! A mock of the whole API from the spec's own examples, for partners and front-ends that build
//! against Kobo before an operation is implemented (`kobo mock`).
//!
//! [`mock_router`] is the generated router over a [`JsonApi`] whose every answer is an example of
//! the operation's responses in the spec: the same paths, token check, request validation,
//! envelopes, HTTP statuses and `X-Request-Id` as the real server, and no state. Without a
//! preference an operation answers the first example of its `200` response; the header
//! `Prefer: example=<name>` chooses any example of its responses by name, a success or an error
//! (`Prefer: example=wrong_credentials` on `generate_token` answers `41`). A name the operation
//! does not have is answered `01`, listing the names it has. Any bearer token is accepted for
//! either family (a missing or malformed one is still `41`), and every permission is held.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::middleware::{self, Next};
use axum::response::Response;
use serde_json::Value;

use super::RequestId;
use super::{assign_request_id, ApiError, JsonAdapter, JsonApi, JsonSuccess, RequestContext};
use crate::{Operation, Permission, ResponseCode, TokenFamily};

/// The request header that chooses an example (RFC 7240's `Prefer`, as other mock servers use it).
pub const PREFER_HEADER: &str = "prefer";

/// One example of an operation's responses.
#[derive(Clone, Debug)]
pub struct MockExample {
    /// Its name: its key under `examples`, or `example` for a lone `example`.
    pub name: String,
    /// The HTTP status of the response it is an example of.
    pub status: u16,
    /// The example envelope.
    pub value: Value,
}

/// Every operation's response examples, read from the spec once, and the preference of each
/// request in flight (by request id: the middleware sees the header, the operation only its
/// context).
pub struct MockApi {
    examples: HashMap<&'static str, Vec<MockExample>>,
    preferred: Mutex<HashMap<String, String>>,
}

impl MockApi {
    /// The examples of the spec this crate was generated from.
    pub fn new() -> MockApi {
        MockApi::from_spec_json(crate::OPENAPI_JSON)
    }

    /// The examples of `spec` (the spec as JSON text), for the operations this crate knows.
    pub fn from_spec_json(spec: &str) -> MockApi {
        let spec: Value = serde_json::from_str(spec).expect("the spec is JSON");
        let mut examples = HashMap::new();
        for operation in Operation::ALL {
            let responses = &spec["paths"][operation.path()]["post"]["responses"];
            let mut found = Vec::new();
            for (status, response) in responses.as_object().into_iter().flatten() {
                let Ok(status) = status.parse::<u16>() else {
                    // `default`: the transport's answers, which the router gives by itself.
                    continue;
                };
                let content = &follow(&spec, response)["content"]["application/json"];
                if let Some(named) = content["examples"].as_object() {
                    for (name, example) in named {
                        found.push(MockExample {
                            name: name.clone(),
                            status,
                            value: follow(&spec, example)["value"].clone(),
                        });
                    }
                } else if !content["example"].is_null() {
                    found.push(MockExample {
                        name: "example".to_string(),
                        status,
                        value: content["example"].clone(),
                    });
                }
            }
            examples.insert(operation.id(), found);
        }
        MockApi {
            examples,
            preferred: Mutex::new(HashMap::new()),
        }
    }

    /// The examples `operation` can answer, in the spec's order of responses and examples.
    pub fn examples(&self, operation: Operation) -> &[MockExample] {
        self.examples
            .get(operation.id())
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    fn answer(
        &self,
        operation: Operation,
        preferred: Option<&str>,
    ) -> Result<JsonSuccess, ApiError> {
        let examples = self.examples(operation);
        let chosen = match preferred {
            Some(name) => examples
                .iter()
                .find(|example| example.name == name)
                .ok_or_else(|| {
                    let names: Vec<&str> = examples.iter().map(|e| e.name.as_str()).collect();
                    ApiError::new(code("01")).with_message(format!(
                        "`Prefer: example={name}`: `{}` has no example of that name; it has {}",
                        operation.id(),
                        names.join(", ")
                    ))
                })?,
            None => examples
                .iter()
                .find(|example| example.status == 200)
                .ok_or_else(|| {
                    ApiError::internal(format!("`{}` has no 200 example", operation.id()))
                })?,
        };
        let envelope = &chosen.value;
        if (200..300).contains(&chosen.status) {
            return Ok(JsonSuccess {
                data: envelope["data"].clone(),
                pagination: envelope.get("pagination").cloned(),
            });
        }
        let code = envelope["response_code"]
            .as_str()
            .and_then(ResponseCode::from_code)
            .ok_or_else(|| {
                ApiError::internal(format!(
                    "the example `{}` of `{}` has no response code of the catalog",
                    chosen.name,
                    operation.id()
                ))
            })?;
        let message = envelope["message"].as_str().unwrap_or_default().to_string();
        Err(ApiError::new(code).with_message(message))
    }
}

impl Default for MockApi {
    fn default() -> Self {
        MockApi::new()
    }
}

impl JsonApi for MockApi {
    type Principal = TokenFamily;

    async fn authenticate(
        &self,
        family: TokenFamily,
        _token: &str,
    ) -> Result<TokenFamily, ApiError> {
        Ok(family)
    }

    async fn authorize(&self, _: &TokenFamily, _: Permission) -> Result<(), ApiError> {
        Ok(())
    }

    async fn call(
        &self,
        ctx: RequestContext<Option<TokenFamily>>,
        _body: Value,
    ) -> Result<JsonSuccess, ApiError> {
        let preferred = self
            .preferred
            .lock()
            .expect("no panic while holding it")
            .remove(&ctx.request_id);
        self.answer(ctx.operation, preferred.as_deref())
    }
}

/// The mock as a router: the generated router over [`MockApi`], with the `Prefer` middleware
/// and the request id made before it (so the operation finds the preference by request id).
pub fn mock_router(mock: Arc<MockApi>) -> axum::Router {
    crate::router(Arc::new(JsonAdapter(mock.clone())))
        .layer(middleware::from_fn_with_state(mock, remember_preference))
        .layer(middleware::from_fn(assign_request_id))
}

async fn remember_preference(
    State(mock): State<Arc<MockApi>>,
    request: Request,
    next: Next,
) -> Response {
    let id = request
        .extensions()
        .get::<RequestId>()
        .map(|id| id.as_str().to_string());
    let preferred = preferred_example(request.headers());
    let remembered = match (id, preferred) {
        (Some(id), Some(name)) => {
            mock.preferred
                .lock()
                .expect("no panic while holding it")
                .insert(id.clone(), name);
            Some(id)
        }
        _ => None,
    };
    let response = next.run(request).await;
    if let Some(id) = remembered {
        // Refused before the operation ran (a bad token, an invalid body): forget it.
        mock.preferred
            .lock()
            .expect("no panic while holding it")
            .remove(&id);
    }
    response
}

/// The `example=<name>` preference of a `Prefer` header (`Prefer: example=wrong_credentials`;
/// other preferences, separated by `,` or `;`, are ignored).
fn preferred_example(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(PREFER_HEADER)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split([',', ';']))
        .filter_map(|preference| {
            let (key, value) = preference.split_once('=')?;
            (key.trim().eq_ignore_ascii_case("example"))
                .then(|| value.trim().trim_matches('"').to_string())
        })
        .find(|name| !name.is_empty())
}

/// `value`, or what its `$ref` (a local JSON pointer) points at.
fn follow<'a>(spec: &'a Value, value: &'a Value) -> &'a Value {
    let mut value = value;
    for _ in 0..8 {
        let Some(reference) = value["$ref"].as_str() else {
            break;
        };
        match reference
            .strip_prefix('#')
            .and_then(|pointer| spec.pointer(pointer))
        {
            Some(target) => value = target,
            None => break,
        }
    }
    value
}

fn code(code: &str) -> ResponseCode {
    ResponseCode::from_code(code).expect("the catalog has the code")
}
