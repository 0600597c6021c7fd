//! Kobo's client of the core banking provider.
//!
//! `src/generated.rs` is written by `cargo xtask codegen` with progenitor (builder style) from
//! `spec/provider.yaml`, and never edited by hand: [`Client`] has one method per operation and
//! every error response decodes into [`types::ErrorEnvelope`], NIP's code in it. This file is the
//! small hand-written part: [`Provider`] configures the base URL, the shared secret and a
//! request id once, for every call.
//!
//! HTTPS needs the `rustls` feature.

#[rustfmt::skip]
mod generated;

use std::fmt;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION};

pub use generated::*;

/// The error of every operation: a transport problem, or an error envelope from the API.
pub type ApiError = Error<types::ErrorEnvelope>;

/// The error envelope of an error response, if that is what `error` is.
pub fn error_envelope(error: &ApiError) -> Option<&types::ErrorEnvelope> {
    match error {
        Error::ErrorResponse(response) => Some(response),
        _ => None,
    }
}

/// How to reach the provider: base URL, bearer token, request id, timeout. [`Provider::build`] makes a
/// [`Client`] that sends them with every request.
#[derive(Clone, Debug)]
pub struct Provider {
    base_url: String,
    token: Option<String>,
    request_id: Option<String>,
    timeout: Duration,
}

impl Provider {
    /// The provider at `base_url` (scheme, host, port, and path prefix if any), no token yet.
    pub fn new(base_url: impl Into<String>) -> Provider {
        Provider {
            base_url: base_url.into().trim_end_matches('/').to_string(),
            token: None,
            request_id: None,
            timeout: Duration::from_secs(15),
        }
    }

    /// Sends `Authorization: Bearer <token>` (the secret Kobo and the provider share).
    pub fn with_token(mut self, token: impl Into<String>) -> Provider {
        self.token = Some(token.into());
        self
    }

    /// Sends `X-Request-Id: <id>`, which the provider echoes and logs.
    pub fn with_request_id(mut self, id: impl Into<String>) -> Provider {
        self.request_id = Some(id.into());
        self
    }

    /// Connection and whole-request timeout (15 seconds by default).
    pub fn with_timeout(mut self, timeout: Duration) -> Provider {
        self.timeout = timeout;
        self
    }

    pub fn build(&self) -> Result<Client, BuildError> {
        let mut headers = HeaderMap::new();
        if let Some(token) = &self.token {
            let mut value = HeaderValue::from_str(&format!("Bearer {token}"))
                .map_err(|_| BuildError::InvalidHeader("the token"))?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        if let Some(id) = &self.request_id {
            let value = HeaderValue::from_str(id)
                .map_err(|_| BuildError::InvalidHeader("the request id"))?;
            headers.insert("x-request-id", value);
        }
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .connect_timeout(self.timeout)
            .timeout(self.timeout)
            .build()
            .map_err(BuildError::Http)?;
        Ok(Client::new_with_client(&self.base_url, http))
    }
}

/// Why [`Provider::build`] failed.
#[derive(Debug)]
pub enum BuildError {
    /// The value cannot be sent in an HTTP header.
    InvalidHeader(&'static str),
    /// The HTTP client could not be set up.
    Http(reqwest::Error),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::InvalidHeader(what) => write!(f, "{what} cannot be sent in a header"),
            BuildError::Http(_) => f.write_str("the HTTP client could not be set up"),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::InvalidHeader(_) => None,
            BuildError::Http(error) => Some(error),
        }
    }
}
