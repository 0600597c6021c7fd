//! The ledger's tables: `ledger_heads` (each business's place in its ledger), `journal_entries`
//! and their `postings`, and `internal_accounts` (the bank's own accounts, seeded by migration).
//! Customer accounts' balances are `accounts`' ([`crate::accounts`]).

use chrono::{DateTime, Utc};

use crate::{id, new_id, StoreError, Tx};
pub use kobo_store::ledger::{AdvancedHead, HeadsAndMoney, Money};

/// The parameters of `advance_and_move` that are arrays, in its statement's order.
pub(crate) struct MoneyArgs {
    pub(crate) ids: Vec<uuid::Uuid>,
    pub(crate) places: Vec<i64>,
    pub(crate) accounts: Vec<uuid::Uuid>,
    pub(crate) amounts: Vec<i64>,
    pub(crate) must_be_active: Vec<bool>,
}

impl MoneyArgs {
    pub(crate) fn of(businesses: &[(&str, i64)], money: &Money<'_>) -> Result<Self, StoreError> {
        Ok(MoneyArgs {
            ids: businesses
                .iter()
                .map(|(business_id, _)| new_id(business_id))
                .collect::<Result<Vec<_>, _>>()?,
            places: businesses.iter().map(|(_, places)| *places).collect(),
            accounts: money
                .changes
                .iter()
                .map(|change| id(change.account_id))
                .collect(),
            amounts: money.changes.iter().map(|change| change.amount).collect(),
            must_be_active: money
                .changes
                .iter()
                .map(|change| change.must_be_active)
                .collect(),
        })
    }
}

/// A row of `advance_and_move`'s answer: a head as advanced, and on every row what the
/// statement decided.
pub(crate) struct MovedRow {
    pub(crate) business_id: String,
    pub(crate) last_sequence: i64,
    pub(crate) last_posted_micros: Option<i64>,
    pub(crate) last_posted_at: DateTime<Utc>,
    pub(crate) business_active: Option<bool>,
    pub(crate) business_daily_limit: Option<i64>,
    pub(crate) counted: bool,
    pub(crate) moved: Option<Vec<uuid::Uuid>>,
}

impl MovedRow {
    pub(crate) fn read(rows: Vec<MovedRow>, money: &Money<'_>) -> HeadsAndMoney {
        let counted = rows.first().is_some_and(|row| row.counted);
        let business = rows.first().and_then(|row| {
            money
                .business_must_be_active
                .then_some((row.business_active?, row.business_daily_limit?))
        });
        let moved = rows
            .first()
            .and_then(|row| row.moved.clone())
            .unwrap_or_default();
        HeadsAndMoney {
            heads: rows
                .into_iter()
                .map(|row| AdvancedHead {
                    business_id: row.business_id,
                    last_sequence: row.last_sequence,
                    last_posted_micros: row.last_posted_micros,
                    last_posted_at: row.last_posted_at,
                })
                .collect(),
            business,
            counted,
            moved: crate::text_ids(moved),
        }
    }
}

pub use kobo_store::ledger::record_entry_into;

kobo_store::ledger_functions!(backend crate::Backend);

impl kobo_store::ledger::Ledger for crate::Backend {
    /// One round trip for what were three (`src/advance_and_move.sql`). The row locks are
    /// taken in the ledger's order: the heads (in the order given), the daily total, the
    /// accounts. Every head has its microseconds (migration 0017), so the times are computed
    /// here.
    async fn advance_and_move(
        tx: &mut Tx,
        businesses: &[(&str, i64)],
        now: DateTime<Utc>,
        money: &Money<'_>,
    ) -> Result<HeadsAndMoney, StoreError> {
        let args = MoneyArgs::of(businesses, money)?;
        // `place` aggregates every head, so all are locked before the daily total and the
        // accounts; `business` reads the standing the transaction's lock holds still; `moved` asks
        // `business` and `daily` first (evaluated before a row is locked). The Lagos day: UTC+1,
        // no daylight saving, as `fees::lagos_day`.
        let rows = sqlx::query_file_as!(
            MovedRow,
            "src/advance_and_move.sql",
            now,
            now.timestamp_micros(),
            &args.ids,
            &args.places,
            id(money.business_id),
            money.places,
            money.daily,
            money.default_daily_limit,
            &args.accounts,
            &args.amounts,
            &args.must_be_active,
            money.max_balance,
            money.business_must_be_active
        )
        .fetch_all(&mut **tx)
        .await?;
        Ok(MovedRow::read(rows, money))
    }

    async fn advance_heads(
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

    async fn set_head_time(
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
}
