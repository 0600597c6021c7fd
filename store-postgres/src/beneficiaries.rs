//! `beneficiaries`: accounts a business saved to pay again (see `kobo_store::beneficiaries`).

use kobo_store::paging::Cursor;

use crate::{id, new_id, StoreError, Tx};
pub use kobo_store::beneficiaries::{BeneficiaryRow, NewBeneficiary};

kobo_store::beneficiaries_functions!(backend crate::Backend);

/// The columns of a [`BeneficiaryRow`], as `query_as!` reads them, between `$head` (a
/// `SELECT`, or a write's `RETURNING`) and `$tail`.
macro_rules! beneficiary_row {
    ($head:literal, $tail:literal $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            BeneficiaryRow,
            $head + r#" id AS "id!", business_id::text AS "business_id!", bank_code AS "bank_code!",
                 bank_name AS "bank_name!", account_number AS "account_number!",
                 account_name AS "account_name!", nickname, enquired_at AS "enquired_at!",
                 created_by AS "created_by!", created_at AS "created_at!",
                 updated_at AS "updated_at!" "# + $tail,
            $($arg),*
        )
    };
}

impl kobo_store::beneficiaries::Beneficiaries for crate::Backend {
    async fn save(
        tx: &mut Tx,
        new: &NewBeneficiary,
        max: i64,
    ) -> Result<Option<BeneficiaryRow>, StoreError> {
        let business_id = new_id(&new.business_id)?;
        // Two saves of one business wait for each other here, so each counts the other.
        sqlx::query!(
            "SELECT pg_advisory_xact_lock(hashtextextended('beneficiaries ' || $1::uuid::text, 0))",
            business_id
        )
        .execute(&mut **tx)
        .await?;
        let refreshed = beneficiary_row!(
            "UPDATE beneficiaries SET account_name = $4, bank_name = $5, enquired_at = $6, \
               updated_at = $6, nickname = COALESCE($7, nickname) \
             WHERE business_id = $1 AND bank_code = $2 AND account_number = $3 RETURNING",
            "",
            business_id,
            new.bank_code,
            new.account_number,
            new.account_name,
            new.bank_name,
            new.now,
            new.nickname
        )
        .fetch_optional(&mut **tx)
        .await?;
        if refreshed.is_some() {
            return Ok(refreshed);
        }
        Ok(beneficiary_row!(
            "INSERT INTO beneficiaries (id, business_id, bank_code, bank_name, account_number, \
               account_name, nickname, enquired_at, created_by, created_at, updated_at) \
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $8, $8 \
             WHERE (SELECT count(*) FROM beneficiaries WHERE business_id = $2) < $10 \
             RETURNING",
            "",
            new.id,
            business_id,
            new.bank_code,
            new.bank_name,
            new.account_number,
            new.account_name,
            new.nickname,
            new.now,
            new.created_by,
            max
        )
        .fetch_optional(&mut **tx)
        .await?)
    }

    async fn get(
        conn: Self::Conn<'_>,
        business_id: &str,
        beneficiary_id: &uuid::Uuid,
    ) -> Result<Option<BeneficiaryRow>, StoreError> {
        let business_id = id(business_id);
        conn.run(async |conn| {
            Ok(beneficiary_row!(
                "SELECT",
                "FROM beneficiaries WHERE business_id = $1 AND id = $2",
                business_id,
                beneficiary_id
            )
            .fetch_optional(&mut *conn)
            .await?)
        })
        .await
    }

    async fn list(
        conn: Self::Conn<'_>,
        business_id: &str,
        pattern: Option<&str>,
        bank_code: Option<&str>,
        cursor: Option<&Cursor>,
        limit: u64,
    ) -> Result<Vec<BeneficiaryRow>, StoreError> {
        let business_id = id(business_id);
        let (after_at, after_id) = cursor.map(|c| (c.created_at, c.id)).unzip();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        conn.run(async |conn| {
            Ok(beneficiary_row!(
                "SELECT",
                r"FROM beneficiaries WHERE business_id = $1
                   AND ($2::text IS NULL OR LOWER(account_name) LIKE $2 ESCAPE ''
                        OR LOWER(COALESCE(nickname, '')) LIKE $2 ESCAPE ''
                        OR account_number LIKE $2 ESCAPE '')
                   AND ($3::text IS NULL OR bank_code = $3)
                   AND ($4::timestamptz IS NULL OR (created_at, id) < ($4, $5))
                 ORDER BY created_at DESC, id DESC LIMIT $6",
                business_id,
                pattern,
                bank_code,
                after_at,
                after_id,
                limit
            )
            .fetch_all(&mut *conn)
            .await?)
        })
        .await
    }

    async fn delete(
        tx: &mut Tx,
        business_id: &str,
        beneficiary_id: &uuid::Uuid,
    ) -> Result<Option<BeneficiaryRow>, StoreError> {
        Ok(beneficiary_row!(
            "DELETE FROM beneficiaries WHERE business_id = $1 AND id = $2 RETURNING",
            "",
            id(business_id),
            beneficiary_id
        )
        .fetch_optional(&mut **tx)
        .await?)
    }
}
