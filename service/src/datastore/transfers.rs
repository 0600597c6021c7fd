//! `transfers`: every payout, held, settled, failed or reversed, with its NIP bookkeeping
//! (submitted, attempts, the worker's lease) and its review.

use super::batch::{Batch, Write};
use super::{dispatch, Conn, Store, StoreError, Tx};
use crate::kernel::paging::Cursor;
use chrono::{DateTime, Utc};
pub use kobo_store::transfers::{
    Filters, HeldRow, LeasedRow, Lookup, NewTransfer, Review, TransferRow,
};

/// The business's transfer found by `lookup`.
pub async fn find(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
    lookup: Lookup<'_>,
) -> Result<Option<TransferRow>, StoreError> {
    dispatch!(conn.into().on(), transfers::find(business_id, lookup))
}

/// The reference number of the business's transfer that holds the client `reference`.
///
/// Not a prepared statement: PostgreSQL keeps one plan for a prepared statement (its generic
/// plan), made once on each connection, and on a young table every index that starts with
/// `business_id` costs the same as the unique one. The kept plan took `transfers_day`, then
/// (that index dropped) `transfers_keyset`, and filtered every transfer of the business on the
/// reference, for each payout: quadratic, found by the soak (515 million index entries read for
/// 60,000 payouts). Planned each time, with the parameters and the table's size, the unique
/// index wins; planning costs far less.
pub async fn reference_owner(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
    reference: &str,
) -> Result<Option<String>, StoreError> {
    dispatch!(
        conn.into().on(),
        transfers::reference_owner(business_id, reference)
    )
}

/// One keyset page of the business's transfers, newest first: at most `limit + 1` rows.
pub async fn list(
    store: &Store,
    business_id: &str,
    filters: &Filters,
    cursor: Option<Cursor>,
    limit: u64,
) -> Result<Vec<TransferRow>, StoreError> {
    dispatch!(
        store.on(),
        transfers::list(business_id, filters, cursor, limit)
    )
}

/// The reference numbers of one page of the business's held transfers (from
/// `source_account_number` when given), oldest first after `cursor`: at most `limit + 1`.
pub async fn pending_references(
    store: &Store,
    business_id: &str,
    source_account_number: Option<&str>,
    cursor: Option<Cursor>,
    limit: u64,
) -> Result<Vec<String>, StoreError> {
    dispatch!(
        store.on(),
        transfers::pending_references(business_id, source_account_number, cursor, limit)
    )
}

/// The business's transfer with this reference number, as a review reads it.
pub async fn held(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
    reference: &str,
) -> Result<Option<HeldRow>, StoreError> {
    dispatch!(conn.into().on(), transfers::held(business_id, reference))
}

/// Applies `review` to transfer `id` if its status is still `review.from`; `false` if not.
pub async fn review(tx: &mut Tx, id: &str, review: &Review<'_>) -> Result<bool, StoreError> {
    dispatch!(tx.on(), transfers::review(id, review))
}

/// Held transfers past their `expires_at` at `now`, as `(business, reference number)`: at
/// most 100.
pub async fn due_expiries(
    store: &Store,
    now: DateTime<Utc>,
) -> Result<Vec<(String, String)>, StoreError> {
    dispatch!(store.on(), transfers::due_expiries(now))
}

/// The reference of a transfer whose money account `account_id` still owns though its
/// balance no longer shows it: reserved for a held transfer (`pending_approval`) or in flight
/// to NIP (`processing`).
pub async fn first_reserving(tx: &mut Tx, account_id: &str) -> Result<Option<String>, StoreError> {
    dispatch!(tx.on(), transfers::first_reserving(account_id))
}

/// Leases, until `until`, at most `limit` `processing` transfers due at `now` (not leased by
/// another worker), oldest first (`FOR UPDATE SKIP LOCKED` on PostgreSQL, so several
/// processes share the work; SQLite has one writer, whose turn this takes). Returns their ids.
pub async fn lease_due(
    store: &Store,
    now: DateTime<Utc>,
    until: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<String>, StoreError> {
    dispatch!(store.on(), transfers::lease_due(now, until, limit))
}

/// The transfers `ids`, oldest first, in one query.
pub async fn leased(store: &Store, ids: &[String]) -> Result<Vec<LeasedRow>, StoreError> {
    dispatch!(store.on(), transfers::leased(ids))
}

/// Releases `id`'s lease, still `processing`, to be asked again at `next_attempt_at`: one more
/// attempt, `submitted` as given, the session id when NIP gave one.
pub async fn wait(
    store: &Store,
    id: &str,
    submitted: bool,
    next_attempt_at: DateTime<Utc>,
    session_id: Option<&str>,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    dispatch!(
        store.on(),
        transfers::wait(id, submitted, next_attempt_at, session_id, now)
    )
}

/// NIP decided transfer `id`: from `from` to `to`, submitted, its lease released, if it was
/// still `from`; `false` if another worker decided first.
pub async fn decide(
    tx: &mut Tx,
    id: &str,
    from: &str,
    to: &str,
    at: DateTime<Utc>,
) -> Result<bool, StoreError> {
    dispatch!(tx.on(), transfers::decide(id, from, to, at))
}

/// Gives transfer `id` the session id NIP answered.
pub async fn set_session_id(tx: &mut Tx, id: &str, session_id: &str) -> Result<(), StoreError> {
    dispatch!(tx.on(), transfers::set_session_id(id, session_id))
}

/// Records why transfer `id` failed at NIP and the reference of its reversal (and NIP's
/// session id, when it gave one).
pub async fn set_reversal(
    tx: &mut Tx,
    id: &str,
    reason: &str,
    reversal_reference: &str,
    session_id: Option<&str>,
) -> Result<(), StoreError> {
    dispatch!(
        tx.on(),
        transfers::set_reversal(id, reason, reversal_reference, session_id)
    )
}

/// Writes `new` as a write of `batch`: not yet submitted to NIP, no attempt made.
pub fn insert_into(batch: &mut Batch, new: NewTransfer) {
    batch.push(Write::Transfer(Box::new(new)));
}
