//! What the bank answers instead of a result: a refusal, with its code of the spec's catalog
//! and the message the client reads; or a failure of the bank itself (the database out of
//! reach, an unexpected conflict, a bug), whose source chain and place in the code are kept
//! for the log and never shown.
//!
//! Failures are classified where they arise, by type: a store error is unavailable,
//! conflicting or failed when the store sees it (`kernel::store::StoreError`), and each
//! conversion keeps the place of the `?` (or `.or_internal()`) that raised it. `http` is the
//! one place that turns an [`Error`] into the API's error envelope.

use std::borrow::Cow;
use std::fmt;
use std::panic::Location;

use generated_server::ResponseCode;

use crate::kernel::secrets::PasswordError;
use crate::kernel::store::StoreError;
use crate::kernel::Invalid;

/// A failure's source, kept for the log.
pub type Source = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The bank's answer when it gives no result.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The bank refuses the request: a code of the catalog and a message for the client.
    #[error("{code}: {message}")]
    Refused {
        code: ResponseCode,
        message: Cow<'static, str>,
        /// For `29`: how long the client should wait.
        retry_after_seconds: Option<u64>,
    },
    /// The database cannot be reached or written now (`97`): the client retries.
    #[error("the database is unavailable, at {location}")]
    Unavailable {
        #[source]
        source: StoreError,
        location: &'static Location<'static>,
    },
    /// The call's time ran out before it was done (`97`, with `Retry-After`): what it began
    /// was dropped, and nothing it wrote was kept (a payment whose commit was under way is
    /// [`Error::OutcomeUnknown`] instead).
    #[error("the request's time ran out, at {location}")]
    OutOfTime {
        location: &'static Location<'static>,
    },
    /// The database's answer to the commit was lost and whether it was kept could not be
    /// found out in time (`98`): the client looks before sending again, or retries with the
    /// same key.
    #[error("the outcome of the commit is unknown, at {location}")]
    OutcomeUnknown {
        #[source]
        source: StoreError,
        location: &'static Location<'static>,
    },
    /// A uniqueness refused a write the code did not expect it to (`96`).
    #[error("an unexpected conflict, at {location}")]
    Conflict {
        #[source]
        source: StoreError,
        location: &'static Location<'static>,
    },
    /// A bug, or data the bank cannot read (`96`).
    #[error("{detail}, at {location}")]
    Bug {
        detail: Cow<'static, str>,
        #[source]
        source: Option<Source>,
        location: &'static Location<'static>,
    },
}

/// The bank's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A refusal with the code's default message.
    pub fn new(code: ResponseCode) -> Error {
        Error::Refused {
            code,
            message: Cow::Borrowed(code.default_message()),
            retry_after_seconds: None,
        }
    }

    /// A bug: `detail` and the place of the call go to the log.
    #[track_caller]
    pub fn internal(detail: impl Into<Cow<'static, str>>) -> Error {
        Error::Bug {
            detail: detail.into(),
            source: None,
            location: Location::caller(),
        }
    }

    /// The refusal's message (a failure's has no client message: this leaves it as it is).
    pub fn with_message(mut self, message: impl Into<Cow<'static, str>>) -> Error {
        if let Error::Refused { message: kept, .. } = &mut self {
            *kept = message.into();
        }
        self
    }

    /// For `29`: how long the client should wait (`Retry-After`).
    pub fn with_retry_after_seconds(mut self, seconds: u64) -> Error {
        if let Error::Refused {
            retry_after_seconds,
            ..
        } = &mut self
        {
            *retry_after_seconds = Some(seconds);
        }
        self
    }

    /// The code the client gets.
    pub fn code(&self) -> ResponseCode {
        match self {
            Error::Refused { code, .. } => *code,
            Error::Unavailable { .. } | Error::OutOfTime { .. } => ResponseCode::ServiceUnavailable,
            Error::OutcomeUnknown { .. } => ResponseCode::OutcomeUnknown,
            Error::Conflict { .. } | Error::Bug { .. } => ResponseCode::InternalError,
        }
    }

    /// A refusal's message; for a failure, what the log says of it.
    pub fn message(&self) -> Cow<'_, str> {
        match self {
            Error::Refused { message, .. } => Cow::Borrowed(message),
            failure => Cow::Owned(failure.to_string()),
        }
    }

    pub fn retry_after_seconds(&self) -> Option<u64> {
        match self {
            Error::Refused {
                retry_after_seconds,
                ..
            } => *retry_after_seconds,
            _ => None,
        }
    }

    /// Where a failure arose; `None` for a refusal.
    pub fn location(&self) -> Option<&'static Location<'static>> {
        match self {
            Error::Refused { .. } => None,
            Error::Unavailable { location, .. }
            | Error::OutOfTime { location }
            | Error::OutcomeUnknown { location, .. }
            | Error::Conflict { location, .. }
            | Error::Bug { location, .. } => Some(location),
        }
    }

    /// Whether a uniqueness refused a write (a race the caller may answer as a duplicate).
    pub fn is_conflict(&self) -> bool {
        matches!(self, Error::Conflict { .. })
    }

    /// Whether a batch's key claim found the key claimed by a transaction that committed
    /// first (`StoreError::KeyTaken`): the operation's transaction must not be kept, and the
    /// key's stored answer is the answer.
    pub fn is_key_taken(&self) -> bool {
        matches!(
            self,
            Error::Conflict {
                source: StoreError::KeyTaken,
                ..
            }
        )
    }

    /// The error and its sources, for the log: `a: b: c`.
    pub fn chain(&self) -> String {
        let mut text = self.to_string();
        let mut source = std::error::Error::source(self);
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        text
    }
}

impl From<StoreError> for Error {
    #[track_caller]
    fn from(source: StoreError) -> Error {
        let location = Location::caller();
        match source {
            StoreError::Unavailable(_) | StoreError::GroupUndone { retry: true, .. } => {
                Error::Unavailable { source, location }
            }
            StoreError::OutcomeUnknown(_) => Error::OutcomeUnknown { source, location },
            StoreError::Conflict(_) | StoreError::KeyTaken => Error::Conflict { source, location },
            StoreError::Failed(_)
            | StoreError::Unreadable(_)
            | StoreError::GroupUndone { retry: false, .. }
            | StoreError::Stopped(_)
            | StoreError::Misuse(_) => Error::Bug {
                detail: Cow::Borrowed("a store failure"),
                source: Some(Box::new(source)),
                location,
            },
        }
    }
}

impl From<Invalid> for Error {
    fn from(invalid: Invalid) -> Error {
        Error::new(ResponseCode::InvalidRequest).with_message(invalid.0)
    }
}

impl From<PasswordError> for Error {
    #[track_caller]
    fn from(error: PasswordError) -> Error {
        match error {
            PasswordError::Busy {
                retry_after_seconds,
            } => Error::new(ResponseCode::TooManyRequests)
                .with_message("Too many sign-ins at once: try again in 1 second")
                .with_retry_after_seconds(retry_after_seconds),
            PasswordError::Failed(detail) => Error::Bug {
                detail: Cow::Owned(detail),
                source: None,
                location: Location::caller(),
            },
        }
    }
}

/// Errors of libraries that only a bug could cause here (a value the bank wrote that it cannot
/// read back, a task that panicked): each a [`Error::Bug`] keeping its source.
macro_rules! bugs {
    ($($source:ty => $what:literal),+ $(,)?) => {$(
        impl From<$source> for Error {
            #[track_caller]
            fn from(source: $source) -> Error {
                Error::Bug {
                    detail: Cow::Borrowed($what),
                    source: Some(Box::new(source)),
                    location: Location::caller(),
                }
            }
        }
    )+};
}

bugs!(
    serde_json::Error => "a JSON value the bank made",
    uuid::Error => "an id the bank stored",
    chrono::ParseError => "a time the bank stored",
    chrono::RoundingError => "a time rounded",
    chrono::OutOfRangeError => "a duration out of range",
    std::num::TryFromIntError => "a number out of range",
    std::num::ParseIntError => "a number the bank stored",
    tokio::task::JoinError => "a task of the bank's",
    fmt::Error => "text the bank wrote",
    generated_server::models::error::ConversionError => "a value of the spec's types",
);

/// `.or_internal()`: the `Err` of a result as an [`Error`], by its type's conversion, keeping
/// the place of this call (what `.map_err(Error::from)` cannot).
pub trait OrInternal<T> {
    fn or_internal(self) -> Result<T>;
}

impl<T, E> OrInternal<T> for std::result::Result<T, E>
where
    Error: From<E>,
{
    #[track_caller]
    fn or_internal(self) -> Result<T> {
        match self {
            Ok(value) => Ok(value),
            Err(error) => Err(Error::from(error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_keep_their_place_and_their_source() {
        fn read() -> Result<i64> {
            let value: i64 = "twelve".parse()?;
            Ok(value)
        }
        let line = line!() - 3;
        let error = read().unwrap_err();
        let location = error.location().expect("a location");
        assert_eq!((location.file(), location.line()), (file!(), line));
        assert_eq!(error.code(), ResponseCode::InternalError);
        assert!(error.chain().contains("invalid digit"), "{}", error.chain());

        let lost: std::result::Result<(), StoreError> =
            Err(StoreError::from(sqlx::Error::PoolTimedOut));
        let unavailable = lost.or_internal().unwrap_err();
        let line = line!() - 1;
        assert_eq!(unavailable.code(), ResponseCode::ServiceUnavailable);
        assert_eq!(unavailable.location().map(|l| l.line()), Some(line));
    }

    #[test]
    fn refusals_carry_their_code_and_message() {
        let refused = Error::new(ResponseCode::NotFound).with_message("No such transfer");
        assert_eq!(refused.code(), ResponseCode::NotFound);
        assert_eq!(refused.message(), "No such transfer");
        assert_eq!(refused.location(), None);
        let invalid = Error::from(Invalid::new("`amount`: must be positive"));
        assert_eq!(invalid.code(), ResponseCode::InvalidRequest);
        assert_eq!(invalid.message(), "`amount`: must be positive");
    }
}
