//! `daily_transfer_totals`: what each business has sent on each Lagos day, the running total
//! its daily limit is checked against.

use kobo_store::daily_totals::DailyTotals;

use crate::{Backend, StoreError, Tx};

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
            "INSERT INTO daily_transfer_totals (business_id, day, amount) VALUES (?1, ?2, ?3) \
         ON CONFLICT (business_id, day) DO UPDATE \
           SET amount = daily_transfer_totals.amount + excluded.amount \
           WHERE daily_transfer_totals.amount + excluded.amount <= ?4",
            business_id,
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
            "SELECT amount FROM daily_transfer_totals WHERE business_id = ?1 AND day = ?2",
            business_id,
            day
        )
        .fetch_optional(&mut **tx)
        .await?)
    }

    async fn subtract_transfer(tx: &mut Tx, transfer_id: &str) -> Result<(), StoreError> {
        sqlx::query!(
            "UPDATE daily_transfer_totals \
         SET amount = amount - (SELECT t.amount FROM transfers t WHERE t.id = ?1) \
         WHERE business_id = (SELECT t.business_id FROM transfers t WHERE t.id = ?1) \
           AND day = (SELECT t.day FROM transfers t WHERE t.id = ?1)",
            transfer_id
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }
}
