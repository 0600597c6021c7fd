//! Between the router and the domain: a request's context becomes a [`Caller`], and what the
//! domain answers becomes what the router sends. This is the one place a domain [`Error`]
//! becomes the API's error: a refusal keeps its code, message and `Retry-After`; the database
//! out of reach is `97` with `Retry-After`, logged as a warning with its cause; a commit whose
//! outcome could not be found out is `98`, logged as an error; any other
//! failure is `96`, logged by the router with its source chain and the place in the code that
//! raised it, never shown to the client. A domain [`paging::Page`] becomes the router's `Page`.

use generated_server::{models, ApiError, Page, RequestContext, ResponseCode};

use crate::error::Error;
use crate::kernel::paging;
use crate::kernel::store::{StoreError, UNAVAILABLE_RETRY_AFTER_SECONDS};
use crate::platform::caller::Caller;

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
            Error::Unavailable { location, .. } | Error::OutOfTime { location } => {
                tracing::warn!(
                    error = %error.chain(),
                    at = %location,
                    "the database is unavailable or did not answer in time: answered 97"
                );
                ApiError::new(ResponseCode::ServiceUnavailable)
                    .with_retry_after_seconds(UNAVAILABLE_RETRY_AFTER_SECONDS)
            }
            Error::OutcomeUnknown { location, .. } => {
                tracing::error!(
                    error = %error.chain(),
                    at = %location,
                    "a commit's outcome is unknown: answered 98"
                );
                ApiError::new(ResponseCode::OutcomeUnknown)
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

/// Runs `operation` as the call of `ctx`: the domain sees a [`Caller`]; an answer it
/// replayed from an `Idempotency-Key` marks the response, and a success it logged with its
/// own work is not logged again (`logs::on_response`).
pub(crate) async fn serve<P: Clone, T>(
    ctx: &RequestContext<P>,
    operation: impl AsyncFnOnce(&Caller<P>) -> Result<T, Error>,
) -> Result<T, ApiError> {
    let caller = Caller::new(
        ctx.principal.clone(),
        ctx.operation,
        ctx.request_id.clone(),
        ctx.idempotency_key.clone(),
        ctx.client_ip,
    );
    // Boxed: an operation's future is large (a payout's most), and is moved into the timeout
    // that bounds it; on the heap it is moved once, as a pointer.
    let result = in_time(ctx.deadline, &caller, Box::pin(operation(&caller))).await;
    if caller.replayed() {
        ctx.mark_replayed();
    }
    if caller.logged() {
        ctx.mark_recorded();
    }
    answer(result)
}

/// How long before the request's deadline (the router's `96`) a call still at work is
/// answered: a call waiting on the database then (a pooler gone, a server restarting) gets
/// `97` with `Retry-After`, or `98` if its payment was being committed.
pub const ANSWER_BEFORE_DEADLINE: std::time::Duration = std::time::Duration::from_millis(500);

/// `work`, or, if it is not done [`ANSWER_BEFORE_DEADLINE`] before `deadline`, what the call
/// can truthfully say: its payment's outcome unknown if it was being committed, otherwise
/// that nothing was kept and it may be sent again (`work` is dropped: an open transaction
/// rolls back, and a commit under way is finished by the store).
async fn in_time<P, T>(
    deadline: Option<tokio::time::Instant>,
    caller: &Caller<P>,
    work: impl std::future::Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    let Some(deadline) = deadline else {
        return work.await;
    };
    let answer_at = deadline
        .checked_sub(ANSWER_BEFORE_DEADLINE)
        .unwrap_or(deadline);
    match tokio::time::timeout_at(answer_at, work).await {
        Ok(result) => result,
        Err(_) if caller.committing() => Err(Error::OutcomeUnknown {
            source: StoreError::OutcomeUnknown(
                "the request's time ran out while its payment's commit was under way".into(),
            ),
            location: std::panic::Location::caller(),
        }),
        Err(_) => Err(Error::OutOfTime {
            location: std::panic::Location::caller(),
        }),
    }
}

/// [`serve`] for a list operation.
pub(crate) async fn serve_page<P: Clone, T>(
    ctx: &RequestContext<P>,
    operation: impl AsyncFnOnce(&Caller<P>) -> Result<paging::Page<T>, Error>,
) -> Result<Page<T>, ApiError> {
    let page = serve(ctx, operation).await?;
    answer_page(Ok(page))
}

#[cfg(test)]
mod tests {
    use generated_server::{Api, CallRecord, Operation, ResponseCode, TokenFamily};

    use crate::testkit::TestKit;

    /// What every authenticated request's pipeline holds across its awaits, whatever its
    /// operation: authentication and the answer's log entry. Their rare paths (a session read
    /// from the store, a claim of the shared request budget, an entry written without the
    /// log's writer) are boxed, so that their store futures, several kilobytes each, are not
    /// part of every request's state, moved at each await (docs/decisions.md, "Cold paths
    /// boxed"). A read put inline on these paths makes this fail.
    #[tokio::test]
    async fn every_requests_own_futures_stay_small() {
        const MOST_BYTES: usize = 2048;
        let kit = TestKit::sqlite().await;
        let authenticate = kit
            .api
            .authenticate(TokenFamily::Dashboard, &kit.owner_token);
        let authenticated = std::mem::size_of_val(&authenticate);
        let principal = authenticate.await.expect("the owner's token is good");
        let record = CallRecord {
            operation: Operation::GetProfile,
            family: Some(TokenFamily::Dashboard),
            principal: Some(&principal),
            http_status: 200,
            response_code: ResponseCode::Success,
            message: "Profile retrieved",
            client_ip: std::net::Ipv4Addr::LOCALHOST.into(),
            request_id: "r",
            idempotency_key: None,
            replayed: false,
            recorded: false,
        };
        let on_response = kit.api.on_response(&record);
        let logged = std::mem::size_of_val(&on_response);
        on_response.await;
        assert!(
            authenticated <= MOST_BYTES && logged <= MOST_BYTES,
            "authenticate's future is {authenticated} bytes, on_response's {logged}: at most \
             {MOST_BYTES} each"
        );
    }
}
