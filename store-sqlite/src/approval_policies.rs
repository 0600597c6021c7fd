//! `approval_policies`: a business's maker-checker policy, at most one per business.

use chrono::{DateTime, Utc};

use crate::{new_id, on, timestamp, uuid, StoreError, Tx};
pub use kobo_store::approval_policies::ApprovalPolicy;

kobo_store::approval_policies_functions!(backend crate::Backend);

impl kobo_store::approval_policies::ApprovalPolicies for crate::Backend {
    async fn find(
        conn: Self::Conn<'_>,
        business_id: &str,
    ) -> Result<Option<ApprovalPolicy>, StoreError> {
        let query = sqlx::query!(
            r#"SELECT id AS "id!", is_active AS "is_active: bool", min_amount,
             created_at AS "created_at: DateTime<Utc>", updated_at AS "updated_at: DateTime<Utc>"
           FROM approval_policies WHERE business_id = ?1"#,
            business_id
        );
        let row = on!(conn, query, fetch_optional)?;
        row.map(|row| {
            Ok(ApprovalPolicy {
                id: uuid(&row.id)?,
                is_active: row.is_active,
                min_amount: row.min_amount,
                created_at: row.created_at,
                updated_at: row.updated_at,
            })
        })
        .transpose()
    }

    async fn insert(
        tx: &mut Tx,
        business_id: &str,
        is_active: bool,
        min_amount: i64,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let id = new_id();
        let now = timestamp(now);
        let inserted = sqlx::query!(
            "INSERT INTO approval_policies (id, business_id, is_active, min_amount, created_at, \
           updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5) ON CONFLICT (business_id) DO NOTHING",
            id,
            business_id,
            is_active,
            min_amount,
            now
        )
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(inserted == 1)
    }

    async fn update(
        tx: &mut Tx,
        business_id: &str,
        min_amount: Option<i64>,
        is_active: Option<bool>,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let now = timestamp(now);
        let updated = sqlx::query!(
            "UPDATE approval_policies SET min_amount = COALESCE(?2, min_amount), \
           is_active = COALESCE(?3, is_active), updated_at = ?4 WHERE business_id = ?1",
            business_id,
            min_amount,
            is_active,
            now
        )
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(updated == 1)
    }
}
