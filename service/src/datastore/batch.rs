//! A [`Batch`] of typed writes run together: on PostgreSQL as one statement (one round trip),
//! on SQLite one statement after another in the writer's transaction (in process, a round trip
//! is a function call).

use super::{dispatch, StoreError, Tx};
pub use kobo_store::batch::{
    Answer, Batch, KeyClaim, NewActivity, NewAudit, NewEntry, NewEvent, Write,
};

/// Runs every write of `batch` in `tx`, in the order pushed, in one round trip.
pub async fn run(tx: &mut Tx, batch: Batch) -> Result<(), StoreError> {
    dispatch!(tx.on(), batch::run(batch))
}
