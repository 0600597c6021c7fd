//! `daily_transfer_totals`: what each business has sent on each Lagos day, the running total
//! its daily limit is checked against.

use kobo_store::daily_totals::DailyTotals;

use crate::{id, Backend, StoreError, Tx};

kobo_store::daily_totals_functions!(backend Backend);

impl DailyTotals for Backend {
    async fn add_within(
        tx: &mut Tx,
        business_id: &str,
        day: &str,
        amount: i64,
        limit: i64,
    ) -> Result<bool, StoreError> {
        let counted = sqlx::query!(
            "INSERT INTO daily_transfer_totals (business_id, day, amount) \
         VALUES ($1, $2::text::date, $3) \
         ON CONFLICT (business_id, day) DO UPDATE \
           SET amount = daily_transfer_totals.amount + excluded.amount \
           WHERE daily_transfer_totals.amount + excluded.amount <= $4",
            id(business_id),
            day,
            amount,
            limit
        )
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(counted == 1)
    }

    async fn spent(tx: &mut Tx, business_id: &str, day: &str) -> Result<Option<i64>, StoreError> {
        Ok(sqlx::query_scalar!(
        "SELECT amount FROM daily_transfer_totals WHERE business_id = $1 AND day = $2::text::date",
        id(business_id),
        day
    )
        .fetch_optional(&mut **tx)
        .await?)
    }

    async fn subtract_transfer(tx: &mut Tx, transfer_id: &str) -> Result<(), StoreError> {
        sqlx::query!(
            "UPDATE daily_transfer_totals d SET amount = d.amount - t.amount \
         FROM transfers t \
         WHERE t.id = $1 AND d.business_id = t.business_id AND d.day = t.day",
            id(transfer_id)
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }
}
