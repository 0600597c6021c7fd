//! A [`Batch`] of typed writes run in one round trip, as one static statement
//! (`src/batch.sql`).
//!
//! Each kind of write is grouped into one parameter per table, its rows as a JSON array of
//! objects in the order pushed ([`rows`]), and each table is written by a data-modifying part
//! of one `WITH` reading them with `json_to_recordset`. That one statement does what the writes
//! run one after another would do:
//! - every write but the answers inserts new rows, and none reads a row another write of the
//!   batch writes (an event reads `webhook_configurations`, which no write touches; the
//!   answers update `idempotency_keys` rows claimed before the batch, which no write inserts;
//!   a key claimed with its answer is inserted, or replaces an expired row), so their order
//!   within the statement cannot change what each one does;
//! - a posting may name its entry and a transfer its transactions, whatever order the parts
//!   run in: no foreign key checks them (migration 0022);
//! - a uniqueness refused fails the whole statement, as it failed the transaction before;
//! - an answer pushed twice for one key keeps the last (`DISTINCT ON` the newest);
//! - the statement counts the keys it claimed with their answers: fewer than the batch's
//!   claims is `StoreError::KeyTaken` (a transaction that committed first holds one), and the
//!   caller rolls back;
//! - an entry's postings to customer accounts, and its row, are carried by the transactions
//!   the batch writes with them where they say the same (migration 0025): only the rest become
//!   rows of `postings` and `journal_entries`;
//! - a payout's audit entry, and an integration payout's activity entry, are carried by its
//!   transfer where they say what it says (migration 0026): only the rest become rows of
//!   `audit_logs` and `activity_logs`.
//!
//! A payout's own rows run `payout_batch.sql`, and with its movement `payout_in_one.sql`: both
//! made from `batch.sql` and `advance_and_move.sql` by `cargo xtask codegen`.

mod rows;

use chrono::{DateTime, Utc};

use crate::ledger::{MoneyArgs, MovedRow};
use crate::{id, StoreError, Tx};
pub use kobo_store::batch::{
    Answer, Batch, KeyClaim, NewActivity, NewAudit, NewEntry, NewEvent, Write,
};
use kobo_store::ledger::{HeadsAndMoney, InOne, Money};
use rows::{json, Parts};

/// A payout whose ledger head is foreseen ([`crate::groups::Member::known_head`]: its last
/// sequence before the payout is `foreseen`): its head, daily total and balances as
/// `ledger::advance_and_move` moves them, and `batch`, written with the places that head gives,
/// in one statement (`src/payout_in_one.sql`) where they take two: an intra-bank payout not
/// held, to its own business's ledger alone (any other batch is refused).
/// [`InOne::HeadElsewhere`] when the head was elsewhere (nothing written, the head locked):
/// the caller then takes the two statements.
/// The caller checks that the head advanced to the places it wrote, and rolls back on any
/// refusal: the batch's rows are written whatever the movement decided, unless `holds_head`
/// (the transaction held the head before the payout: [`crate::groups::Member::holds_head`]).
/// Then the statement's gate first checks, from what it reads, every condition its writes
/// check, and writes nothing ([`InOne::Gated`]) if one fails: a payout that would be refused
/// writes nothing, and needs no savepoint to undo.
pub async fn run_moving(
    tx: &mut Tx,
    batch: Batch,
    businesses: &[(&str, i64)],
    now: DateTime<Utc>,
    money: &Money<'_>,
    foreseen: i64,
    holds_head: bool,
) -> Result<InOne, StoreError> {
    let parts = Parts::of(batch)?;
    if !parts.is_a_payouts() || businesses.len() != 1 {
        return Err(StoreError::Misuse(
            "only an intra-bank payout to its own business's ledger is written in one statement"
                .into(),
        ));
    }
    // A transaction's balance after it is read from its account as the movement left it
    // (`moved`): a row on an account the movement does not move would not be written.
    if !parts.transactions_move_only(money.changes) {
        return Err(StoreError::Misuse(
            "a payout in one statement writes transactions only on the accounts it moves".into(),
        ));
    }
    let Some((moved, claimed)) =
        run_payout_in_one(tx, &parts, businesses, now, money, foreseen, holds_head).await?
    else {
        // The statement returns no row when its head was not at `foreseen`, or when its gate
        // refused; a transaction that holds the head finds it where it left it.
        return Ok(if holds_head {
            InOne::Gated
        } else {
            InOne::HeadElsewhere
        });
    };
    parts.check_claimed(claimed)?;
    Ok(InOne::Written(moved))
}

/// Every part, in one statement (`src/batch.sql`). Returns the keys claimed.
async fn run_all(tx: &mut Tx, parts: &Parts) -> Result<i64, StoreError> {
    let claimed = sqlx::query_file!(
        "src/batch.sql",
        json(&parts.entries)?,
        json(&parts.postings)?,
        json(&parts.transactions)?,
        json(&parts.transfers)?,
        json(&parts.events)?,
        json(&parts.audits)?,
        json(&parts.activities)?,
        json(&parts.answers)?,
        json(&parts.claims)?,
        parts.expired_before
    )
    .fetch_one(&mut **tx)
    .await?;
    Ok(claimed.claimed)
}

/// A payout's parts alone ([`Parts::is_a_payouts`]), in one statement (`src/payout_batch.sql`,
/// made from `batch.sql`'s parts). Returns the keys claimed.
async fn run_payout(tx: &mut Tx, parts: &Parts) -> Result<i64, StoreError> {
    let claimed = sqlx::query_file!(
        "src/payout_batch.sql",
        json(&parts.transactions)?,
        json(&parts.transfers)?,
        json(&parts.events)?,
        json(&parts.claims)?,
        parts.expired_before
    )
    .fetch_one(&mut **tx)
    .await?;
    Ok(claimed.claimed)
}

/// A payout's movement and its batch's parts in one statement (`src/payout_in_one.sql`):
/// [`run_moving`]. Returns what the movement decided, and the keys claimed; `None` when the head
/// was not where foreseen, or (`holds_head`) the gate found the payout would be refused.
async fn run_payout_in_one(
    tx: &mut Tx,
    parts: &Parts,
    businesses: &[(&str, i64)],
    now: DateTime<Utc>,
    money: &Money<'_>,
    foreseen: i64,
    holds_head: bool,
) -> Result<Option<(HeadsAndMoney, i64)>, StoreError> {
    let args = MoneyArgs::of(businesses, money)?;
    let rows = sqlx::query_file!(
        "src/payout_in_one.sql",
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
        money.business_must_be_active,
        json(&parts.transactions)?,
        json(&parts.transfers)?,
        json(&parts.events)?,
        json(&parts.claims)?,
        parts.expired_before,
        foreseen,
        holds_head
    )
    .fetch_all(&mut **tx)
    .await?;
    let Some(claimed) = rows.first().map(|row| row.claimed) else {
        return Ok(None);
    };
    let rows = rows
        .into_iter()
        .map(|row| MovedRow {
            business_id: row.business_id,
            last_sequence: row.last_sequence,
            last_posted_micros: row.last_posted_micros,
            last_posted_at: row.last_posted_at,
            business_active: row.business_active,
            business_daily_limit: row.business_daily_limit,
            counted: row.counted,
            moved: row.moved,
        })
        .collect();
    Ok(Some((MovedRow::read(rows, money), claimed)))
}

kobo_store::batch_functions!(backend crate::Backend);

impl kobo_store::batch::Batches for crate::Backend {
    async fn run(tx: &mut Tx, batch: Batch) -> Result<(), StoreError> {
        if batch.is_empty() {
            return Ok(());
        }
        let parts = Parts::of(batch)?;
        let claimed = if parts.is_a_payouts() {
            run_payout(tx, &parts).await?
        } else {
            run_all(tx, &parts).await?
        };
        parts.check_claimed(claimed)
    }
}
