//! `transactions` (one account's side of a journal entry, as a business lists it) and
//! `settlements` (the cleared inbound credits, one per collection, sharing its id).

use super::batch::{Batch, Write};
use super::{dispatch, Conn, Store, StoreError, Tx};
pub use kobo_store::transactions::{
    Filters, Listing, NewTransaction, Originator, SessionCredit, TransactionRow, Window,
};

/// Changes the status of transaction `id` (`pending` becoming `success`, `reversed` or
/// `failed`): its amount and place in the listing never change.
pub async fn set_status(tx: &mut Tx, id: &str, status: &str) -> Result<(), StoreError> {
    dispatch!(tx.on(), transactions::set_status(id, status))
}

/// The credit booked for NIP session `session_id`, if one was.
pub async fn credit_of_session(
    conn: impl Into<Conn<'_>>,
    session_id: &str,
) -> Result<Option<SessionCredit>, StoreError> {
    dispatch!(
        conn.into().on(),
        transactions::credit_of_session(session_id)
    )
}

/// Gives transaction `id` the NIP session id its transfer got.
pub async fn set_session_id(tx: &mut Tx, id: &str, session_id: &str) -> Result<(), StoreError> {
    dispatch!(tx.on(), transactions::set_session_id(id, session_id))
}

/// One page of the business's transactions or settlements, newest first by
/// `(created_at, id)`, at most `window.size + 1` rows.
pub async fn list(
    store: &Store,
    listing: Listing,
    business_id: &str,
    filters: &Filters,
    window: &Window,
) -> Result<Vec<TransactionRow>, StoreError> {
    dispatch!(
        store.on(),
        transactions::list(listing, business_id, filters, window)
    )
}

/// Writes `new` (and its settlement when it is one) as a write of `batch`.
pub fn record_into(batch: &mut Batch, new: NewTransaction) {
    batch.push(Write::Transaction(Box::new(new)));
}
