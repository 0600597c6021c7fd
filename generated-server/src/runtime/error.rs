use std::borrow::Cow;
use std::fmt;
use std::panic::Location;

use axum::response::{IntoResponse, Response};

use crate::ResponseCode;

/// What an operation, or a hook, answers instead of its data: a response code of the catalog,
/// a message, and for `29` how long to wait.
///
/// The router turns it into the error envelope with the HTTP status the catalog gives the code.
/// An internal error (`96`) never shows its message to the client: the router logs it, with the
/// place in the code that made it ([`ApiError::location`]), and sends the code's default
/// message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    code: ResponseCode,
    message: Cow<'static, str>,
    retry_after_seconds: Option<u64>,
    location: Option<&'static Location<'static>>,
}

impl ApiError {
    /// An error with the code's default message.
    pub fn new(code: ResponseCode) -> Self {
        ApiError {
            code,
            message: Cow::Borrowed(code.default_message()),
            retry_after_seconds: None,
            location: None,
        }
    }

    /// Not implemented yet (`09`, HTTP 501): the operation is in the spec but this server does
    /// not serve it. What the stub `cargo xtask codegen` prints for a new operation answers, so a
    /// server built before the operation is implemented tells its caller so instead of panicking
    /// into an internal error (`96`).
    pub fn not_implemented() -> Self {
        ApiError::new(ResponseCode::NOT_IMPLEMENTED)
    }

    /// An internal error (`96`): `detail` (the source error, as text) and the file, line and
    /// column of the call are logged with the request id, never sent.
    ///
    /// The location is the caller's, or its caller's when that is `#[track_caller]` too (as
    /// [`OrInternal::or_internal`] is). Passed as a function value (`.map_err(ApiError::internal)`)
    /// it can only see the standard library's closure machinery: use `.or_internal()` there.
    #[track_caller]
    pub fn internal(detail: impl fmt::Display) -> Self {
        let mut error =
            ApiError::new(ResponseCode::INTERNAL_ERROR).with_message(detail.to_string());
        error.location = Some(Location::caller());
        error
    }

    /// An internal error (`96`) that arose at `location` (the application kept it from where
    /// its own error was raised): `detail` and the location are logged, never sent.
    pub fn internal_at(detail: impl fmt::Display, location: &'static Location<'static>) -> Self {
        let mut error =
            ApiError::new(ResponseCode::INTERNAL_ERROR).with_message(detail.to_string());
        error.location = Some(location);
        error
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

    /// Where [`ApiError::internal`] was called, for the server log; `None` for other errors.
    pub fn location(&self) -> Option<&'static Location<'static>> {
        self.location
    }
}

/// `.or_internal()`: an `Err` of any displayable error becomes [`ApiError::internal`], with the
/// location of this call (what `.map_err(ApiError::internal)` cannot give). An application
/// that tells some failures from bugs (a database out of reach is `97`) converts its own
/// errors instead.
pub trait OrInternal<T> {
    fn or_internal(self) -> Result<T, ApiError>;
}

impl<T, E: fmt::Display + 'static> OrInternal<T> for Result<T, E> {
    #[track_caller]
    fn or_internal(self) -> Result<T, ApiError> {
        match self {
            Ok(value) => Ok(value),
            Err(error) => Err(ApiError::internal(error)),
        }
    }
}

/// The error envelope with the catalog's HTTP status (and `Retry-After` when set), for layers
/// and routes outside the generated ones. An internal error's detail is logged, not sent.
impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if self.code == ResponseCode::INTERNAL_ERROR {
            super::http::log_internal(&self, None);
        }
        super::http::error_response(&self)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_errors_know_the_line_that_made_them() {
        let direct = ApiError::internal("boom");
        let line = line!() - 1;
        let failed: Result<(), &str> = Err("the disk is full");
        let converted = failed.or_internal().unwrap_err();
        let converted_line = line!() - 1;

        let location = direct.location().expect("a location");
        assert_eq!((location.file(), location.line()), (file!(), line));
        let location = converted.location().expect("a location");
        assert_eq!(
            (location.file(), location.line()),
            (file!(), converted_line)
        );
        assert_eq!(converted.message(), "the disk is full");
        assert_eq!(
            converted.public_message(),
            converted.code().default_message()
        );
        assert_eq!(
            ApiError::new(ResponseCode::UNKNOWN_OPERATION).location(),
            None
        );
    }
}
