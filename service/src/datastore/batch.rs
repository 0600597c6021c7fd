//! A [`Batch`] of typed writes run in one round trip: here, each write becomes its statement
//! (rendered by the module of its table) and the statements run as one
//! (`kernel::batch::SqlBatch`).

pub use kobo_store::batch::{Answer, Batch, NewAudit, NewEntry, NewEvent, Write};

pub(super) use crate::kernel::batch::Batch as SqlBatch;

use super::{events, idempotency_keys, ledger, logs, transactions, transfers, StoreError, Tx};

/// Runs every write of `batch` in `tx`, in the order pushed, in one round trip.
pub async fn run(tx: &mut Tx, batch: Batch) -> Result<(), StoreError> {
    let mut sql = SqlBatch::new();
    for write in batch.into_writes() {
        match write {
            Write::Entry(entry) => ledger::render_entry(&mut sql, entry),
            Write::Transaction(transaction) => transactions::render(&mut sql, *transaction),
            Write::Transfer(transfer) => transfers::render(&mut sql, *transfer),
            Write::Event(event) => events::render(&mut sql, event),
            Write::Audit(audit) => logs::render_audit(&mut sql, audit),
            Write::Answer(answer) => idempotency_keys::render_answer(&mut sql, answer),
        }
    }
    sql.run(tx).await
}
