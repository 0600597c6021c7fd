//! `beneficiaries`: accounts a business saved to pay again (see `kobo_store::beneficiaries`).

use chrono::{DateTime, Utc};
use kobo_store::paging::Cursor;

use crate::{on, timestamp, uuid, StoreError, Tx};
pub use kobo_store::beneficiaries::{BeneficiaryRow, NewBeneficiary};

kobo_store::beneficiaries_functions!(backend crate::Backend);

/// A [`BeneficiaryRow`] as read, its id still text.
struct Stored {
    id: String,
    business_id: String,
    bank_code: String,
    bank_name: String,
    account_number: String,
    account_name: String,
    nickname: Option<String>,
    enquired_at: DateTime<Utc>,
    created_by: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl Stored {
    fn into_row(self) -> Result<BeneficiaryRow, StoreError> {
        Ok(BeneficiaryRow {
            id: uuid(&self.id)?,
            business_id: self.business_id,
            bank_code: self.bank_code,
            bank_name: self.bank_name,
            account_number: self.account_number,
            account_name: self.account_name,
            nickname: self.nickname,
            enquired_at: self.enquired_at,
            created_by: self.created_by,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// The columns of a [`Stored`], as `query_as!` reads them, between `$head` (a `SELECT`, or a
/// write's `RETURNING`) and `$tail`.
macro_rules! stored {
    ($head:literal, $tail:literal $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            Stored,
            $head + r#" id AS "id!", business_id AS "business_id!", bank_code AS "bank_code!",
                 bank_name AS "bank_name!", account_number AS "account_number!",
                 account_name AS "account_name!", nickname,
                 enquired_at AS "enquired_at!: DateTime<Utc>", created_by AS "created_by!",
                 created_at AS "created_at!: DateTime<Utc>",
                 updated_at AS "updated_at!: DateTime<Utc>" "# + $tail,
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
        // SQLite writes one transaction at a time: the count cannot race.
        let now = timestamp(new.now);
        let refreshed = stored!(
            "UPDATE beneficiaries SET account_name = ?4, bank_name = ?5, enquired_at = ?6, \
               updated_at = ?6, nickname = COALESCE(?7, nickname) \
             WHERE business_id = ?1 AND bank_code = ?2 AND account_number = ?3 RETURNING",
            "",
            new.business_id,
            new.bank_code,
            new.account_number,
            new.account_name,
            new.bank_name,
            now,
            new.nickname
        )
        .fetch_optional(&mut **tx)
        .await?;
        if let Some(refreshed) = refreshed {
            return refreshed.into_row().map(Some);
        }
        let id = new.id.to_string();
        stored!(
            "INSERT INTO beneficiaries (id, business_id, bank_code, bank_name, account_number, \
               account_name, nickname, enquired_at, created_by, created_at, updated_at) \
             SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?8, ?8 \
             WHERE (SELECT count(*) FROM beneficiaries WHERE business_id = ?2) < ?10 \
             RETURNING",
            "",
            id,
            new.business_id,
            new.bank_code,
            new.bank_name,
            new.account_number,
            new.account_name,
            new.nickname,
            now,
            new.created_by,
            max
        )
        .fetch_optional(&mut **tx)
        .await?
        .map(Stored::into_row)
        .transpose()
    }

    async fn get(
        conn: Self::Conn<'_>,
        business_id: &str,
        beneficiary_id: &uuid::Uuid,
    ) -> Result<Option<BeneficiaryRow>, StoreError> {
        let beneficiary_id = beneficiary_id.to_string();
        let query = stored!(
            "SELECT",
            "FROM beneficiaries WHERE business_id = ?1 AND id = ?2",
            business_id,
            beneficiary_id
        );
        on!(conn, query, fetch_optional)?
            .map(Stored::into_row)
            .transpose()
    }

    async fn list(
        conn: Self::Conn<'_>,
        business_id: &str,
        pattern: Option<&str>,
        bank_code: Option<&str>,
        cursor: Option<&Cursor>,
        limit: u64,
    ) -> Result<Vec<BeneficiaryRow>, StoreError> {
        let after_at = cursor.map(|c| timestamp(c.created_at));
        let after_id = cursor.map(|c| c.id.to_string());
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let query = stored!(
            "SELECT",
            r"FROM beneficiaries WHERE business_id = ?1
               AND (?2 IS NULL OR LOWER(account_name) LIKE ?2 ESCAPE '\'
                    OR LOWER(COALESCE(nickname, '')) LIKE ?2 ESCAPE '\'
                    OR account_number LIKE ?2 ESCAPE '\')
               AND (?3 IS NULL OR bank_code = ?3)
               AND (?4 IS NULL OR (created_at, id) < (?4, ?5))
             ORDER BY created_at DESC, id DESC LIMIT ?6",
            business_id,
            pattern,
            bank_code,
            after_at,
            after_id,
            limit
        );
        on!(conn, query, fetch_all)?
            .into_iter()
            .map(Stored::into_row)
            .collect()
    }

    async fn delete(
        tx: &mut Tx,
        business_id: &str,
        beneficiary_id: &uuid::Uuid,
    ) -> Result<Option<BeneficiaryRow>, StoreError> {
        let beneficiary_id = beneficiary_id.to_string();
        stored!(
            "DELETE FROM beneficiaries WHERE business_id = ?1 AND id = ?2 RETURNING",
            "",
            business_id,
            beneficiary_id
        )
        .fetch_optional(&mut **tx)
        .await?
        .map(Stored::into_row)
        .transpose()
    }
}
