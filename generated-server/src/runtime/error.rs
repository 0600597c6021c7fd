use std::borrow::Cow;
use std::fmt;

use crate::ResponseCode;

/// What an operation, or a hook, answers instead of its data: a response code of the catalog,
/// a message, and for `29` how long to wait.
///
/// The router turns it into the error envelope with the HTTP status the catalog gives the code.
/// An internal error (`96`) never shows its message to the client: the router logs it and sends
/// the code's default message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    code: ResponseCode,
    message: Cow<'static, str>,
    retry_after_seconds: Option<u64>,
}

impl ApiError {
    /// An error with the code's default message.
    pub fn new(code: ResponseCode) -> Self {
        ApiError {
            code,
            message: Cow::Borrowed(code.default_message()),
            retry_after_seconds: None,
        }
    }

    /// An internal error (`96`): `detail` is logged with the request id, never sent.
    pub fn internal(detail: impl fmt::Display) -> Self {
        ApiError::new(ResponseCode::INTERNAL_ERROR).with_message(detail.to_string())
    }

    /// Replaces the message (the envelope's `message`).
    pub fn with_message(mut self, message: impl Into<Cow<'static, str>>) -> Self {
        self.message = message.into();
        self
    }

    /// Sets the `Retry-After` header of the response (for `29`, too many requests).
    pub fn with_retry_after_seconds(mut self, seconds: u64) -> Self {
        self.retry_after_seconds = Some(seconds);
        self
    }

    pub fn code(&self) -> ResponseCode {
        self.code
    }

    /// The message as given; [`ApiError::public_message`] is what the client sees.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The message the envelope carries: the given one, except for internal errors.
    pub fn public_message(&self) -> &str {
        if self.code == ResponseCode::INTERNAL_ERROR {
            self.code.default_message()
        } else {
            &self.message
        }
    }

    pub fn retry_after_seconds(&self) -> Option<u64> {
        self.retry_after_seconds
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ApiError {}

impl From<ResponseCode> for ApiError {
    fn from(code: ResponseCode) -> Self {
        ApiError::new(code)
    }
}
