//! `businesses`: each business with its status, its integration credentials (the client id
//! and the hash of its secret) and its daily transfer limit.

use super::contract::*;

use chrono::{DateTime, Utc};
pub use kobo_store::businesses::{Business, Credentials, NewBusiness};

/// Holds the business's standing (its status and daily limit) alone until `tx` ends, as a
/// change of them does: on PostgreSQL its standing lock, which every payout of the business
/// holds shared from its start (`Store::begin_payout`); on SQLite nothing (the write
/// transaction holds the database).
pub async fn hold_standing(tx: &mut Tx, id: &str) -> Result<(), StoreError> {
    match tx.on() {
        On::Sqlite(_) => Ok(()),
        On::Postgres(tx) => kobo_store_postgres::businesses::hold_standing(tx, id).await,
    }
}

kobo_store::businesses_functions!(dispatch);
