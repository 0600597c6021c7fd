//! The ledger's tables: `ledger_heads` (each business's place in its ledger), `journal_entries`
//! and their `postings`, and `internal_accounts` (the bank's own accounts, seeded by migration).
//! Customer accounts' balances are `accounts`' ([`crate::accounts`]).

use chrono::{DateTime, Utc};

use crate::{timestamp, StoreError, Tx};
use kobo_store::batch::NewEntry;
pub use kobo_store::ledger::AdvancedHead;
use kobo_store::ledger::{lagos_day, HeadsAndMoney, Money};

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
    /// The steps one statement after another, in the writer's transaction, which holds the
    /// whole database: the heads, the business (its status and limit), the daily total, the
    /// balances.
    async fn advance_and_move(
        tx: &mut Tx,
        businesses: &[(&str, i64)],
        now: DateTime<Utc>,
        money: &Money<'_>,
    ) -> Result<HeadsAndMoney, StoreError> {
        let mut heads = advance_heads(tx, businesses, now).await?;
        for (head, (_, places)) in heads.iter_mut().zip(businesses) {
            if head.last_posted_micros.is_none() {
                timed_once(tx, head, *places, now).await?;
            }
        }
        let at = heads
            .iter()
            .find(|head| head.business_id == money.business_id)
            .and_then(|head| head.last_posted_micros)
            .and_then(|last| DateTime::from_timestamp_micros(last - money.places + 1))
            .ok_or_else(|| {
                StoreError::Misuse("a posting's heads leave out its own business".into())
            })?;
        let standing = if money.business_must_be_active || money.daily.is_some() {
            let (status, limit) = crate::businesses::locked_for_execution(
                tx,
                money.business_id,
                money.default_daily_limit,
            )
            .await?;
            Some((status == "active", limit))
        } else {
            None
        };
        let counted = match (money.daily, standing) {
            (None, _) => true,
            (Some(amount), Some((true, limit))) if amount <= limit => {
                let day = lagos_day(at);
                crate::daily_totals::add_within(tx, money.business_id, &day, amount, limit).await?
            }
            (Some(_), _) => false,
        };
        let may_move = counted
            && !(money.business_must_be_active && standing.is_some_and(|(active, _)| !active));
        let moved = if may_move && !money.changes.is_empty() {
            crate::accounts::apply_balance_changes(tx, money.changes, money.max_balance, at).await?
        } else {
            Vec::new()
        };
        Ok(HeadsAndMoney {
            heads,
            business: standing.filter(|_| money.business_must_be_active),
            counted,
            moved,
        })
    }

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

/// Times `head`, last advanced before migration 0010 (no microseconds), once: its `places` from
/// `now`, or just after its last place's time if that is not before `now`.
async fn timed_once(
    tx: &mut Tx,
    head: &mut AdvancedHead,
    places: i64,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let first = now.max(head.last_posted_at + chrono::Duration::microseconds(1));
    let last = first + chrono::Duration::microseconds(places - 1);
    set_head_time(tx, &head.business_id, last).await?;
    head.last_posted_micros = Some(last.timestamp_micros());
    head.last_posted_at = last;
    Ok(())
}
