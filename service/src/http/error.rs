//! The one place a domain [`Error`] becomes the API's error: a refusal keeps its code, message
//! and `Retry-After`; the database out of reach is `97` with `Retry-After`, logged as a warning
//! with its cause; any other failure is `96`, logged by the router with its source chain and
//! the place in the code that raised it, never shown to the client. A domain [`paging::Page`]
//! becomes the router's `Page` here too.

use generated_server::{models, ApiError, Page, ResponseCode};

use crate::error::Error;
use crate::kernel::paging;
use crate::kernel::store::UNAVAILABLE_RETRY_AFTER_SECONDS;

impl From<Error> for ApiError {
    fn from(error: Error) -> ApiError {
        match &error {
            Error::Refused {
                code,
                message,
                retry_after_seconds,
            } => {
                let refused = ApiError::new(*code).with_message(message.clone());
                match retry_after_seconds {
                    Some(seconds) => refused.with_retry_after_seconds(*seconds),
                    None => refused,
                }
            }
            Error::Unavailable { location, .. } => {
                tracing::warn!(
                    error = %error.chain(),
                    at = %location,
                    "the database is unavailable: answered 97"
                );
                ApiError::new(ResponseCode::ServiceUnavailable)
                    .with_retry_after_seconds(UNAVAILABLE_RETRY_AFTER_SECONDS)
            }
            Error::Conflict { location, .. } | Error::Bug { location, .. } => {
                ApiError::internal_at(error.chain(), location)
            }
        }
    }
}

/// An operation's result as the router takes it.
pub(crate) fn answer<T>(result: Result<T, Error>) -> Result<T, ApiError> {
    result.map_err(ApiError::from)
}

/// A list operation's result as the router takes it.
pub(crate) fn answer_page<T>(result: Result<paging::Page<T>, Error>) -> Result<Page<T>, ApiError> {
    let page = result?;
    let pagination = page.pagination;
    Ok(Page {
        data: page.data,
        pagination: models::Pagination {
            has_more: pagination.has_more,
            next_cursor_created_at: pagination.next_cursor_created_at,
            next_cursor_id: pagination.next_cursor_id,
            page: pagination.page,
            page_size: pagination.page_size,
        },
    })
}
