//! [`run`]: a [`Batch`] of typed writes run in a transaction, each write its own checked
//! statement, in the order pushed. SQLite runs in this process: a statement is a function call,
//! not a round trip, so nothing is joined into one string and no placeholder is renumbered.

pub use kobo_store::batch::{
    Answer, Batch, KeyClaim, NewActivity, NewAudit, NewEntry, NewEvent, Write,
};

use crate::{events, idempotency_keys, ledger, logs, transactions, transfers, StoreError, Tx};

kobo_store::batch_functions!(backend crate::Backend);

impl kobo_store::batch::Batches for crate::Backend {
    async fn run(tx: &mut Tx, batch: Batch) -> Result<(), StoreError> {
        let writes = batch.into_writes();
        let later = kobo_store::batch::later_on_account(&writes);
        for (write, later) in writes.into_iter().zip(later) {
            match write {
                Write::Entry(entry) => ledger::write_entry(tx, entry).await?,
                Write::Transaction(new) => transactions::write(tx, *new, later).await?,
                Write::Transfer(transfer) => transfers::write(tx, *transfer).await?,
                Write::Event(event) => events::write(tx, event).await?,
                Write::Audit(audit) => logs::write_audit(tx, audit).await?,
                Write::Activity(new) => logs::write_activity(tx, new).await?,
                Write::Answer(answer) => idempotency_keys::write_answer(tx, answer).await?,
            }
        }
        Ok(())
    }
}
