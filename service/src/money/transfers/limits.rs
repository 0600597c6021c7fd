//! The daily limit: a running total per business and Lagos day (`daily_transfer_totals`),
//! raised in the transaction that moves a transfer's money and lowered in the one that fails
//! or reverses it.

use super::checks::*;
use crate::error::{Error, OrInternal};
use crate::kernel::store::Tx;
use crate::money::amount::amount_text;

/// Adds `amount` to the business's total of `day` (`daily_transfer_totals`), inside the
/// transaction that moves the money (a payout, or a held transfer's approval): `83` when the
/// total would pass `limit`. One conditional upsert, whose row lock makes concurrent payouts
/// of the business count one after another.
pub(crate) async fn count_toward_daily_limit(
    tx: &mut Tx,
    business_id: &str,
    day: &str,
    amount: i64,
    limit: i64,
) -> Result<(), Error> {
    let counted = amount <= limit
        && sqlx::query(
            "INSERT INTO daily_transfer_totals (business_id, day, amount) VALUES ($1, $2, $3) \
             ON CONFLICT (business_id, day) DO UPDATE \
               SET amount = daily_transfer_totals.amount + excluded.amount \
               WHERE daily_transfer_totals.amount + excluded.amount <= $4",
        )
        .bind(business_id)
        .bind(day)
        .bind(amount)
        .bind(limit)
        .execute(&mut **tx)
        .await
        .or_internal()?
        .rows_affected()
            == 1;
    if counted {
        return Ok(());
    }
    let spent: Option<i64> = sqlx::query_scalar(
        "SELECT amount FROM daily_transfer_totals WHERE business_id = $1 AND day = $2",
    )
    .bind(business_id)
    .bind(day)
    .fetch_optional(&mut **tx)
    .await
    .or_internal()?;
    Err(refused(format!(
        "The daily transfer limit of NGN {} would be exceeded (NGN {} sent today)",
        amount_text(i128::from(limit)),
        amount_text(i128::from(spent.unwrap_or(0)))
    )))
}

/// Takes transfer `id`'s amount back from its business's daily total of the day it counted
/// on, inside the transaction that moves it out of the counted statuses (failed, reversed).
pub(crate) async fn uncount(tx: &mut Tx, id: &str) -> Result<(), Error> {
    sqlx::query(
        "UPDATE daily_transfer_totals \
         SET amount = amount - (SELECT t.amount FROM transfers t WHERE t.id = $1) \
         WHERE business_id = (SELECT t.business_id FROM transfers t WHERE t.id = $1) \
           AND day = (SELECT t.day FROM transfers t WHERE t.id = $1)",
    )
    .bind(id)
    .execute(&mut **tx)
    .await
    .or_internal()?;
    Ok(())
}
