//! A [`Batch`] of typed writes run together: on PostgreSQL as one statement (one round trip),
//! on SQLite one statement after another in the writer's transaction (in process, a round trip
//! is a function call).

use super::contract::*;

use chrono::{DateTime, Utc};

use super::ledger::{InOne, Money};
pub use kobo_store::batch::{
    Answer, Batch, KeyClaim, NewActivity, NewAudit, NewEntry, NewEvent, Write,
};

/// A payout whose ledger head the transaction foresees ([`Tx::known_head`], its last sequence
/// `foreseen`): the movement of `datastore::ledger::advance_and_move` and `batch`, written with
/// the places that head gives, in one statement on PostgreSQL
/// (`kobo_store_postgres::batch::run_moving`). Nothing is written when the head was elsewhere,
/// when a transaction that held the head before ([`Tx::holds_head`]) finds the payout would be
/// refused, and on SQLite, which foresees no head ([`InOne`] says which): the caller then takes
/// the two steps.
pub async fn run_moving(
    tx: &mut Tx,
    batch: Batch,
    businesses: &[(&str, i64)],
    now: DateTime<Utc>,
    money: &Money<'_>,
    foreseen: i64,
) -> Result<InOne, StoreError> {
    let holds_head = tx.holds_head(money.business_id);
    match tx.on() {
        On::Sqlite(_) => Ok(InOne::NotOffered),
        On::Postgres(tx) => {
            kobo_store_postgres::batch::run_moving(
                tx, batch, businesses, now, money, foreseen, holds_head,
            )
            .await
        }
    }
}

kobo_store::batch_functions!(dispatch);
