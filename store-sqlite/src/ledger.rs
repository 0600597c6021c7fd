//! The ledger's tables: `ledger_heads` (each business's place in its ledger), `journal_entries`
//! and their `postings`, and `internal_accounts` (the bank's own accounts, seeded by migration).
//! Customer accounts' balances are `accounts`' ([`crate::accounts`]).

use chrono::{DateTime, Utc};

use crate::{timestamp, StoreError, Tx};
use kobo_store::batch::NewEntry;
pub use kobo_store::ledger::AdvancedHead;

pub use kobo_store::ledger::record_entry_into;

/// [`Write::Entry`], run in `tx` ([`crate::batch::run`]): the entry, then each posting.
pub(crate) async fn write_entry(tx: &mut Tx, entry: NewEntry) -> Result<(), StoreError> {
    let at = timestamp(entry.at);
    sqlx::query!(
        "INSERT INTO journal_entries (id, business_id, kind, created_at) \
         VALUES (?1, ?2, ?3, ?4)",
        entry.id,
        entry.business_id,
        entry.kind,
        at
    )
    .execute(&mut **tx)
    .await?;
    for (id, account_id, amount) in entry.postings {
        sqlx::query!(
            "INSERT INTO postings (id, entry_id, account_id, amount, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
            id,
            entry.id,
            account_id,
            amount,
            at
        )
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

kobo_store::ledger_functions!(backend crate::Backend);

impl kobo_store::ledger::Ledger for crate::Backend {
    async fn advance_heads(
        tx: &mut Tx,
        businesses: &[(&str, i64)],
        now: DateTime<Utc>,
    ) -> Result<Vec<AdvancedHead>, StoreError> {
        let at = timestamp(now);
        let micros = now.timestamp_micros();
        let mut heads = Vec::with_capacity(businesses.len());
        for (business_id, places) in businesses {
            // A new head's `last_sequence` is its places, which the update reads back as
            // `excluded`.
            let row = sqlx::query!(
                r#"INSERT INTO ledger_heads
                 (business_id, last_sequence, last_posted_at, last_posted_micros)
               VALUES (?3, ?4, ?1, ?2 + ?4 - 1)
               ON CONFLICT (business_id) DO UPDATE SET
                 last_sequence = ledger_heads.last_sequence + excluded.last_sequence,
                 last_posted_micros = CASE
                   WHEN ledger_heads.last_posted_micros IS NULL THEN NULL
                   WHEN ledger_heads.last_posted_micros < ?2 THEN ?2 + excluded.last_sequence - 1
                   ELSE ledger_heads.last_posted_micros + excluded.last_sequence END
               RETURNING business_id AS "business_id!", last_sequence AS "last_sequence!",
                 last_posted_at AS "last_posted_at!: DateTime<Utc>",
                 last_posted_micros AS "last_posted_micros?: i64""#,
                at,
                micros,
                business_id,
                places
            )
            .fetch_one(&mut **tx)
            .await?;
            heads.push(AdvancedHead {
                business_id: row.business_id,
                last_sequence: row.last_sequence,
                last_posted_micros: row.last_posted_micros,
                last_posted_at: row.last_posted_at,
            });
        }
        Ok(heads)
    }

    async fn set_head_time(
        tx: &mut Tx,
        business_id: &str,
        last_place: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let at = timestamp(last_place);
        let micros = last_place.timestamp_micros();
        sqlx::query!(
            "UPDATE ledger_heads SET last_posted_at = ?2, last_posted_micros = ?3 \
         WHERE business_id = ?1",
            business_id,
            at,
            micros
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }
}
