//! The ledger's tables: `ledger_heads` (each business's place in its ledger), `journal_entries`
//! and their `postings`, and `internal_accounts` (the bank's own accounts, seeded by migration).
//! Customer accounts' balances are `accounts`' (`datastore::accounts`).

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::batch::{Batch, NewEntry, SqlBatch, Write};
use super::{StoreError, Tx};
use crate::kernel::store;
pub use kobo_store::ledger::AdvancedHead;

/// Advances each business's head by its places, in one statement that locks the heads until
/// `tx` ends (in the order given, which must be the businesses' id order): a new head starts
/// at its places, an existing one moves on by them, its time to `now` (`$2`, microseconds)
/// or past its last. Returns the heads as advanced, in no particular order.
pub async fn advance_heads(
    tx: &mut Tx,
    businesses: &[(&str, i64)],
    now: DateTime<Utc>,
) -> Result<Vec<AdvancedHead>, StoreError> {
    // `$1` the time, `$2` in microseconds; then each business and its places. A new head's
    // `last_sequence` is its places, which the update reads back as `excluded`.
    let values: Vec<String> = (0..businesses.len())
        .map(|index| {
            let id = 3 + 2 * index;
            format!("(${id}, ${}, $1, $2 + ${} - 1)", id + 1, id + 1)
        })
        .collect();
    let sql = format!(
        "INSERT INTO ledger_heads (business_id, last_sequence, last_posted_at, last_posted_micros) \
         VALUES {} \
         ON CONFLICT (business_id) DO UPDATE SET \
           last_sequence = ledger_heads.last_sequence + excluded.last_sequence, \
           last_posted_micros = CASE \
             WHEN ledger_heads.last_posted_micros IS NULL THEN NULL \
             WHEN ledger_heads.last_posted_micros < $2 THEN $2 + excluded.last_sequence - 1 \
             ELSE ledger_heads.last_posted_micros + excluded.last_sequence END \
         RETURNING business_id, last_sequence, last_posted_at, last_posted_micros",
        values.join(", ")
    );
    let mut upsert = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(store::timestamp(now))
        .bind(now.timestamp_micros());
    for (business_id, places) in businesses {
        upsert = upsert.bind(*business_id).bind(*places);
    }
    let rows = upsert.fetch_all(&mut **tx).await?;
    rows.iter()
        .map(|row| {
            Ok(AdvancedHead {
                business_id: store::text(row, "business_id")?,
                last_sequence: row.try_get("last_sequence")?,
                last_posted_micros: row.try_get("last_posted_micros")?,
                last_posted_at: store::time(row, "last_posted_at")?,
            })
        })
        .collect()
}

/// Sets a head's time (both columns) to `last_place`: once, for a head from before migration
/// 0010.
pub async fn set_head_time(
    tx: &mut Tx,
    business_id: &str,
    last_place: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE ledger_heads SET last_posted_at = $2, last_posted_micros = $3 \
         WHERE business_id = $1",
    )
    .bind(business_id)
    .bind(store::timestamp(last_place))
    .bind(last_place.timestamp_micros())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Writes a journal entry and its postings (`(account id, signed kobo)`, credit positive) as
/// a write of `batch`, all at `at`. Returns the entry's id.
pub fn record_entry_into(
    batch: &mut Batch,
    business_id: &str,
    kind: &str,
    postings: &[(&str, i64)],
    at: DateTime<Utc>,
) -> String {
    let entry_id = store::new_id();
    batch.push(Write::Entry(NewEntry {
        id: entry_id.clone(),
        business_id: business_id.to_owned(),
        kind: kind.to_owned(),
        postings: postings
            .iter()
            .map(|(account_id, amount)| (store::new_id(), (*account_id).to_owned(), *amount))
            .collect(),
        at,
    }));
    entry_id
}

/// [`Write::Entry`] as two statements of `sql`.
pub(super) fn render_entry(sql: &mut SqlBatch, entry: NewEntry) {
    let at = store::timestamp(entry.at);
    sql.push(
        "INSERT INTO journal_entries (id, business_id, kind, created_at) \
         VALUES ($1, $2, $3, $4)",
    )
    .bind(entry.id.clone())
    .bind(entry.business_id)
    .bind(entry.kind)
    .bind(at.clone());
    // All the postings in one statement.
    let values: Vec<String> = (0..entry.postings.len())
        .map(|index| {
            let first = 3 + 3 * index;
            format!("(${}, $1, ${}, ${}, $2)", first, first + 1, first + 2)
        })
        .collect();
    let statement = format!(
        "INSERT INTO postings (id, entry_id, account_id, amount, created_at) VALUES {}",
        values.join(", ")
    );
    sql.push(&statement).bind(entry.id).bind(at);
    for (id, account_id, amount) in entry.postings {
        sql.bind(id).bind(account_id).bind(amount);
    }
}
