//! The daily limit: a running total per business and Lagos day (`daily_transfer_totals`),
//! raised in the transaction that moves a transfer's money and lowered in the one that fails
//! or reverses it.

use super::checks::*;
use crate::datastore::daily_totals;
use crate::error::Error;
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
    if amount <= limit && daily_totals::add_within(tx, business_id, day, amount, limit).await? {
        return Ok(());
    }
    Err(over_daily_limit(tx, business_id, day, limit).await?)
}

/// The refusal of an amount the business's total of `day` could not take under `limit`
/// (`83`), with what was sent that day.
pub(crate) async fn over_daily_limit(
    tx: &mut Tx,
    business_id: &str,
    day: &str,
    limit: i64,
) -> Result<Error, Error> {
    let spent = daily_totals::spent(tx, business_id, day).await?;
    Ok(refused(format!(
        "The daily transfer limit of NGN {} would be exceeded (NGN {} sent today)",
        amount_text(i128::from(limit)),
        amount_text(i128::from(spent.unwrap_or(0)))
    )))
}

/// Takes transfer `id`'s amount back from its business's daily total of the day it counted
/// on, inside the transaction that moves it out of the counted statuses (failed, reversed).
pub(crate) async fn uncount(tx: &mut Tx, id: &str) -> Result<(), Error> {
    daily_totals::subtract_transfer(tx, id).await?;
    Ok(())
}
