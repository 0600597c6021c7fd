//! `daily_transfer_totals`: what each business has sent on each Lagos day, the running total
//! its daily limit is checked against.

use super::{dispatch, StoreError, Tx};

/// Adds `amount` to the business's total of `day` unless the total would pass `limit`, in one
/// conditional upsert whose row lock makes concurrent payouts of the business count one after
/// another. Returns whether it was counted.
pub async fn add_within(
    tx: &mut Tx,
    business_id: &str,
    day: &str,
    amount: i64,
    limit: i64,
) -> Result<bool, StoreError> {
    dispatch!(
        tx.on(),
        daily_totals::add_within(business_id, day, amount, limit)
    )
}

/// The business's total of `day` (kobo), if anything was counted on it.
pub async fn spent(tx: &mut Tx, business_id: &str, day: &str) -> Result<Option<i64>, StoreError> {
    dispatch!(tx.on(), daily_totals::spent(business_id, day))
}

/// Takes transfer `transfer_id`'s amount back from its business's total of the day it counted
/// on.
pub async fn subtract_transfer(tx: &mut Tx, transfer_id: &str) -> Result<(), StoreError> {
    dispatch!(tx.on(), daily_totals::subtract_transfer(transfer_id))
}
