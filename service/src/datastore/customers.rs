//! `customers`: a business's customers, each verified by BVN or NIN (kept as salted hashes)
//! and holding one virtual account.

use super::{dispatch, Conn, StoreError, Tx};
pub use kobo_store::customers::{Contact, Identity, NewCustomer};

pub async fn insert(tx: &mut Tx, new: &NewCustomer<'_>) -> Result<(), StoreError> {
    dispatch!(tx.on(), customers::insert(new))
}

/// The number of the account of the business's customer whose identity of `kind` hashes to
/// `hash`, if there is one.
pub async fn account_number_of(
    tx: &mut Tx,
    business_id: &str,
    kind: Identity,
    hash: &str,
) -> Result<Option<String>, StoreError> {
    dispatch!(
        tx.on(),
        customers::account_number_of(business_id, kind, hash)
    )
}

pub async fn contact(conn: impl Into<Conn<'_>>, id: &str) -> Result<Option<Contact>, StoreError> {
    dispatch!(conn.into().on(), customers::contact(id))
}
