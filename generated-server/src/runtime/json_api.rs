use std::future::Future;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::{ApiError, CallRecord, RequestContext};
use crate::{Operation, Permission, TokenFamily};

/// Every operation through one method on JSON values, for tests, mocks and prototypes that do
/// not want a typed method per operation. Wrap it in [`JsonAdapter`] to get an [`crate::Api`].
///
/// The router validates bodies and answers envelopes exactly as for a typed implementation;
/// the adapter converts between the typed models and JSON on each call.
pub trait JsonApi: Send + Sync + 'static {
    type Principal: Clone + Send + Sync + 'static;

    /// As [`crate::Api::authenticate`].
    fn authenticate(
        &self,
        family: TokenFamily,
        token: &str,
    ) -> impl Future<Output = Result<Self::Principal, ApiError>> + Send;

    /// As [`crate::Api::authorize`].
    fn authorize(
        &self,
        principal: &Self::Principal,
        permission: Permission,
    ) -> impl Future<Output = Result<(), ApiError>> + Send;

    /// Runs `ctx.operation` on its (validated) request body. `ctx.principal` is `None` exactly
    /// for public operations.
    fn call(
        &self,
        ctx: RequestContext<Option<Self::Principal>>,
        body: Value,
    ) -> impl Future<Output = Result<JsonSuccess, ApiError>> + Send;

    /// As [`crate::Api::on_response`].
    fn on_response(
        &self,
        record: &CallRecord<'_, Self::Principal>,
    ) -> impl Future<Output = ()> + Send {
        let _ = record;
        async {}
    }
}

/// A shared bank is a bank: a test can keep an `Arc` to what the router owns.
impl<T: JsonApi> JsonApi for std::sync::Arc<T> {
    type Principal = T::Principal;

    fn authenticate(
        &self,
        family: TokenFamily,
        token: &str,
    ) -> impl Future<Output = Result<Self::Principal, ApiError>> + Send {
        T::authenticate(self, family, token)
    }

    fn authorize(
        &self,
        principal: &Self::Principal,
        permission: Permission,
    ) -> impl Future<Output = Result<(), ApiError>> + Send {
        T::authorize(self, principal, permission)
    }

    fn call(
        &self,
        ctx: RequestContext<Option<Self::Principal>>,
        body: Value,
    ) -> impl Future<Output = Result<JsonSuccess, ApiError>> + Send {
        T::call(self, ctx, body)
    }

    fn on_response(
        &self,
        record: &CallRecord<'_, Self::Principal>,
    ) -> impl Future<Output = ()> + Send {
        T::on_response(self, record)
    }
}

/// What a [`JsonApi`] answers: the envelope's `data` and, for list operations, `pagination`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JsonSuccess {
    pub data: Value,
    pub pagination: Option<Value>,
}

impl JsonSuccess {
    pub fn data(data: Value) -> JsonSuccess {
        JsonSuccess {
            data,
            pagination: None,
        }
    }

    pub fn page(data: Value, pagination: Value) -> JsonSuccess {
        JsonSuccess {
            data,
            pagination: Some(pagination),
        }
    }

    /// `data` as the operation's data type.
    #[doc(hidden)]
    pub fn decode<D: DeserializeOwned>(self, operation: Operation) -> Result<D, ApiError> {
        decode(operation, "data", self.data)
    }

    /// `data` and `pagination` as the operation's types.
    #[doc(hidden)]
    pub fn decode_page<D: DeserializeOwned, P: DeserializeOwned>(
        self,
        operation: Operation,
    ) -> Result<(D, P), ApiError> {
        let pagination = self.pagination.unwrap_or(Value::Null);
        Ok((
            decode(operation, "data", self.data)?,
            decode(operation, "pagination", pagination)?,
        ))
    }
}

/// An [`crate::Api`] made of a [`JsonApi`]: each generated method turns the typed body into
/// JSON, calls [`JsonApi::call`], and turns the answer back into the operation's types (an
/// answer that does not fit is an internal error).
#[derive(Clone, Debug, Default)]
pub struct JsonAdapter<T>(pub T);

#[doc(hidden)]
pub fn encode(operation: Operation, body: &impl Serialize) -> Result<Value, ApiError> {
    serde_json::to_value(body).map_err(|error| {
        ApiError::internal(format!(
            "the body of `{}` does not serialize: {error}",
            operation.id()
        ))
    })
}

fn decode<D: DeserializeOwned>(
    operation: Operation,
    what: &str,
    value: Value,
) -> Result<D, ApiError> {
    serde_json::from_value(value).map_err(|error| {
        ApiError::internal(format!(
            "the JSON answer of `{}` has a `{what}` that does not fit its schema: {error}",
            operation.id()
        ))
    })
}
