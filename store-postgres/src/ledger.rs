//! The ledger's tables: `ledger_heads` (each business's place in its ledger), `journal_entries`
//! and their `postings`, and `internal_accounts` (the bank's own accounts, seeded by migration).
//! Customer accounts' balances are `accounts`' ([`crate::accounts`]).

use chrono::{DateTime, Utc};
use kobo_store::batch::{Batch, NewEntry, Write};

use crate::{id, new_id, StoreError, Tx};
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
    let ids = businesses
        .iter()
        .map(|(business_id, _)| new_id(business_id))
        .collect::<Result<Vec<_>, _>>()?;
    let places: Vec<i64> = businesses.iter().map(|(_, places)| *places).collect();
    // A new head's `last_sequence` is its places, which the update reads back as `excluded`.
    // The rows are inserted (and their heads locked) in the order given (`ORDER BY n`).
    Ok(sqlx::query_as!(
        AdvancedHead,
        r#"INSERT INTO ledger_heads (business_id, last_sequence, last_posted_at, last_posted_micros)
         SELECT h.business_id, h.places, $1, $2 + h.places - 1
         FROM unnest($3::uuid[], $4::bigint[]) WITH ORDINALITY AS h (business_id, places, n)
         ORDER BY h.n
         ON CONFLICT (business_id) DO UPDATE SET
           last_sequence = ledger_heads.last_sequence + excluded.last_sequence,
           last_posted_micros = CASE
             WHEN ledger_heads.last_posted_micros IS NULL THEN NULL
             WHEN ledger_heads.last_posted_micros < $2 THEN $2 + excluded.last_sequence - 1
             ELSE ledger_heads.last_posted_micros + excluded.last_sequence END
         RETURNING business_id::text AS "business_id!", last_sequence, last_posted_micros,
           last_posted_at"#,
        now,
        now.timestamp_micros(),
        &ids,
        &places
    )
    .fetch_all(&mut **tx)
    .await?)
}

/// Sets a head's time (both columns) to `last_place`: once, for a head from before migration
/// 0010.
pub async fn set_head_time(
    tx: &mut Tx,
    business_id: &str,
    last_place: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query!(
        "UPDATE ledger_heads SET last_posted_at = $2, last_posted_micros = $3 \
         WHERE business_id = $1",
        id(business_id),
        last_place,
        last_place.timestamp_micros()
    )
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
    let entry_id = uuid::Uuid::new_v4().to_string();
    batch.push(Write::Entry(NewEntry {
        id: entry_id.clone(),
        business_id: business_id.to_owned(),
        kind: kind.to_owned(),
        postings: postings
            .iter()
            .map(|(account_id, amount)| {
                (
                    uuid::Uuid::new_v4().to_string(),
                    (*account_id).to_owned(),
                    *amount,
                )
            })
            .collect(),
        at,
    }));
    entry_id
}
