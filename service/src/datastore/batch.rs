//! A [`Batch`] of typed writes run together: on PostgreSQL as one statement (one round trip),
//! on SQLite one statement after another in the writer's transaction (in process, a round trip
//! is a function call).

use super::contract::*;

use chrono::{DateTime, Utc};

use super::ledger::{HeadsAndMoney, Money};
pub use kobo_store::batch::{
    Answer, Batch, KeyClaim, NewActivity, NewAudit, NewEntry, NewEvent, Write,
};

/// A payout whose ledger head the transaction foresees ([`Tx::known_head`], its last sequence
/// `foreseen`): the movement of `datastore::ledger::advance_and_move` and `batch`, written with
/// the places that head gives, in one statement on PostgreSQL
/// (`kobo_store_postgres::batch::run_moving`). `None` when the head was elsewhere and nothing
/// was written, and on SQLite, which foresees no head: the caller takes the two steps. A
/// transaction that held the head before ([`Tx::holds_head`]) writes nothing either if the
/// payout would be refused.
pub async fn run_moving(
    tx: &mut Tx,
    batch: Batch,
    businesses: &[(&str, i64)],
    now: DateTime<Utc>,
    money: &Money<'_>,
    foreseen: i64,
) -> Result<Option<HeadsAndMoney>, StoreError> {
    let holds_head = tx.holds_head(money.business_id);
    match tx.on() {
        On::Sqlite(_) => Ok(None),
        On::Postgres(tx) => {
            kobo_store_postgres::batch::run_moving(
                tx, batch, businesses, now, money, foreseen, holds_head,
            )
            .await
        }
    }
}

kobo_store::batch_functions!(dispatch);
