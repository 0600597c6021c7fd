//! `transfers`: every payout, held, settled, failed or reversed, with its NIP bookkeeping
//! (submitted, attempts, the worker's lease) and its review.

use chrono::{DateTime, Utc};
use kobo_store::paging::Cursor;

use crate::Pool;
use crate::{id, text_ids, StoreError, Tx};
pub use kobo_store::transfers::{
    Filters, HeldRow, LeasedRow, Lookup, NewTransfer, Review, TransferRow,
};

pub use kobo_store::batch::transfer_into as insert_into;

kobo_store::transfers_functions!(backend crate::Backend);

impl kobo_store::transfers::Transfers for crate::Backend {
    /// The kept (generic) plan of a prepared statement may take any index that starts with
    /// `business_id` (see [`reference_owner`]); a checked query cannot be left unprepared, so the
    /// business is compared as `(t.business_id = $1) IS TRUE`, which no index answers, and the
    /// unique index of the reference number is the only one the plan can take.
    async fn find(
        conn: Self::Conn<'_>,
        business_id: &str,
        lookup: Lookup<'_>,
    ) -> Result<Option<TransferRow>, StoreError> {
        let business_id = id(business_id);
        conn.run(async |conn| {
            let row = match lookup {
                Lookup::Id(transfer_id) => sqlx::query_as!(
                    TransferRow,
                    r#"SELECT t.id::text AS "id!", t.reference_number, t.reference, t.amount, t.fee,
                   t.vat, t.transfer_status, t.approval_status, t.transfer_type,
                   a.account_number AS source_account_number, t.beneficiary_account_number,
                   t.beneficiary_account_name, t.bank_code, t.bank_name, t.narration,
                   t.session_id, t.failure_reason, t.reversal_reference_number, t.initiated_by,
                   t.initiated_via, t.reviewed_by, t.expires_at, t.created_at, t.updated_at
                 FROM transfers t JOIN accounts a ON a.id = t.source_account_id
                 WHERE t.business_id = $1 AND t.id = $2"#,
                    business_id,
                    id(transfer_id)
                )
                .fetch_optional(&mut *conn)
                .await?,
                Lookup::ReferenceNumber(reference) => sqlx::query_as!(
                    TransferRow,
                    r#"SELECT t.id::text AS "id!", t.reference_number, t.reference, t.amount, t.fee,
                   t.vat, t.transfer_status, t.approval_status, t.transfer_type,
                   a.account_number AS source_account_number, t.beneficiary_account_number,
                   t.beneficiary_account_name, t.bank_code, t.bank_name, t.narration,
                   t.session_id, t.failure_reason, t.reversal_reference_number, t.initiated_by,
                   t.initiated_via, t.reviewed_by, t.expires_at, t.created_at, t.updated_at
                 FROM transfers t JOIN accounts a ON a.id = t.source_account_id
                 WHERE t.reference_number = $2 AND (t.business_id = $1) IS TRUE"#,
                    business_id,
                    reference
                )
                .fetch_optional(&mut *conn)
                .await?,
                Lookup::Reference(reference) => {
                    // Found by `transfers_reference` (see [`reference_owner`]), then read by
                    // its number as above.
                    let number = sqlx::query_scalar!(
                "SELECT reference_number FROM transfers WHERE business_id = $1 AND reference = $2",
                business_id,
                reference
            )
                    .fetch_optional(&mut *conn)
                    .await?;
                    let Some(number) = number else {
                        return Ok(None);
                    };
                    sqlx::query_as!(
                TransferRow,
                r#"SELECT t.id::text AS "id!", t.reference_number, t.reference, t.amount, t.fee,
                   t.vat, t.transfer_status, t.approval_status, t.transfer_type,
                   a.account_number AS source_account_number, t.beneficiary_account_number,
                   t.beneficiary_account_name, t.bank_code, t.bank_name, t.narration,
                   t.session_id, t.failure_reason, t.reversal_reference_number, t.initiated_by,
                   t.initiated_via, t.reviewed_by, t.expires_at, t.created_at, t.updated_at
                 FROM transfers t JOIN accounts a ON a.id = t.source_account_id
                 WHERE t.reference_number = $2 AND (t.business_id = $1) IS TRUE"#,
                business_id,
                number
            )
            .fetch_optional(&mut *conn)
            .await?
                }
            };
            Ok(row)
        })
        .await
    }

    /// A prepared statement, whose generic plan PostgreSQL may keep: `transfers_reference` is the
    /// only index that leads with the reference (migration 0017), so no kept plan can read the
    /// business's transfers and filter them on it, as one did through `transfers_day` and then
    /// `transfers_keyset` when the index led with the business (quadratic, found by the soak: 515
    /// million index entries read for 60,000 payouts). `tests/plans.rs` holds it.
    async fn reference_owner(
        conn: Self::Conn<'_>,
        business_id: &str,
        reference: &str,
    ) -> Result<Option<String>, StoreError> {
        conn.run(async |conn| {
            Ok(sqlx::query_scalar!(
                "SELECT reference_number FROM transfers WHERE business_id = $1 AND reference = $2",
                id(business_id),
                reference
            )
            .fetch_optional(&mut *conn)
            .await?)
        })
        .await
    }

    async fn list(
        pool: &Pool,
        business_id: &str,
        filters: &Filters,
        cursor: Option<Cursor>,
        limit: u64,
    ) -> Result<Vec<TransferRow>, StoreError> {
        pool.run(async |pool| {
            let (cursor_at, cursor_id) = match cursor {
                Some(cursor) => (Some(cursor.created_at), Some(cursor.id)),
                None => (None, None),
            };
            Ok(sqlx::query_as!(
            TransferRow,
            r#"SELECT t.id::text AS "id!", t.reference_number, t.reference, t.amount, t.fee, t.vat,
           t.transfer_status, t.approval_status, t.transfer_type,
           a.account_number AS source_account_number, t.beneficiary_account_number,
           t.beneficiary_account_name, t.bank_code, t.bank_name, t.narration, t.session_id,
           t.failure_reason, t.reversal_reference_number, t.initiated_by, t.initiated_via,
           t.reviewed_by, t.expires_at, t.created_at, t.updated_at
         FROM transfers t JOIN accounts a ON a.id = t.source_account_id
         WHERE t.business_id = $1
           AND ($2::text IS NULL OR t.transfer_status = $2)
           AND ($3::text IS NULL OR t.approval_status = $3)
           AND t.created_at >= COALESCE($4::timestamptz, '-infinity')
           AND t.created_at < COALESCE($5::timestamptz, 'infinity')
           AND ($6::text IS NULL OR a.account_number = $6)
           AND ($7::text IS NULL OR t.reference = $7)
           AND ($8::text IS NULL OR t.reference_number = $8)
           AND (t.created_at, t.id) < (COALESCE($9::timestamptz, 'infinity'),
                COALESCE($10::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
         ORDER BY t.created_at DESC, t.id DESC
         LIMIT $11"#,
            id(business_id),
            filters.transfer_status.as_deref(),
            filters.approval_status.as_deref(),
            filters.from,
            filters.until,
            filters.source_account_number.as_deref(),
            filters.reference.as_deref(),
            filters.reference_number.as_deref(),
            cursor_at,
            cursor_id,
            (limit + 1) as i64
        )
        .fetch_all(&mut *pool)
        .await?)
        })
        .await
    }

    async fn pending_references(
        pool: &Pool,
        business_id: &str,
        source_account_number: Option<&str>,
        cursor: Option<Cursor>,
        limit: u64,
    ) -> Result<Vec<String>, StoreError> {
        pool.run(async |pool| {
            let (cursor_at, cursor_id) = match cursor {
                Some(cursor) => (Some(cursor.created_at), Some(cursor.id)),
                None => (None, None),
            };
            Ok(sqlx::query_scalar!(
                r#"SELECT t.reference_number FROM transfers t
           JOIN accounts a ON a.id = t.source_account_id
         WHERE t.business_id = $1 AND t.transfer_status = 'pending_approval'
           AND ($2::text IS NULL OR a.account_number = $2)
           AND (t.created_at, t.id) > (COALESCE($3::timestamptz, '-infinity'),
                COALESCE($4::uuid, '00000000-0000-0000-0000-000000000000'))
         ORDER BY t.created_at, t.id
         LIMIT $5"#,
                id(business_id),
                source_account_number,
                cursor_at,
                cursor_id,
                (limit + 1) as i64
            )
            .fetch_all(&mut *pool)
            .await?)
        })
        .await
    }

    async fn held(
        conn: Self::Conn<'_>,
        business_id: &str,
        reference: &str,
    ) -> Result<Option<HeldRow>, StoreError> {
        conn.run(async |conn| {
            // Several indexes start with `business_id`, and a kept plan could take one (see
            // [`reference_owner`]): the business is compared where no index answers it, so the unique
            // index of the reference number is the only one the plan can take.
            Ok(sqlx::query_as!(
                HeldRow,
                r#"SELECT id::text AS "id!", business_id::text AS "business_id!",
           source_account_id::text AS "source_account_id!",
           beneficiary_account_id::text AS beneficiary_account_id,
           beneficiary_account_number, beneficiary_account_name, bank_code, transfer_type,
           amount, fee, vat, narration, reference_number,
           debit_transaction_id::text AS debit_transaction_id,
           fee_transaction_id::text AS fee_transaction_id, initiated_by, credential_issued_by,
           transfer_status, expires_at
         FROM transfers WHERE reference_number = $2 AND (business_id = $1) IS TRUE"#,
                id(business_id),
                reference
            )
            .fetch_optional(&mut *conn)
            .await?)
        })
        .await
    }

    async fn review(tx: &mut Tx, id: &str, review: &Review<'_>) -> Result<bool, StoreError> {
        let changed = sqlx::query!(
            "UPDATE transfers SET transfer_status = $2, approval_status = $3, reviewed_by = $4, \
           failure_reason = $5, updated_at = $6, day = COALESCE($7::text::date, day) \
         WHERE id = $1 AND transfer_status = $8",
            crate::id(id),
            review.to,
            review.approval_status,
            review.reviewer,
            review.reason,
            review.at,
            review.day,
            review.from
        )
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(changed == 1)
    }

    async fn due_expiries(
        pool: &Pool,
        now: DateTime<Utc>,
    ) -> Result<Vec<(String, String)>, StoreError> {
        pool.run(async |pool| {
            let rows = sqlx::query!(
                r#"SELECT business_id::text AS "business_id!", reference_number FROM transfers
         WHERE transfer_status = 'pending_approval' AND expires_at <= $1 LIMIT 100"#,
                now
            )
            .fetch_all(&mut *pool)
            .await?;
            Ok(rows
                .into_iter()
                .map(|row| (row.business_id, row.reference_number))
                .collect())
        })
        .await
    }

    async fn first_reserving(tx: &mut Tx, account_id: &str) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar!(
            "SELECT reference_number FROM transfers \
         WHERE source_account_id = $1 AND transfer_status IN ('pending_approval', 'processing') \
         ORDER BY created_at LIMIT 1",
            id(account_id)
        )
        .fetch_optional(&mut **tx)
        .await?)
    }

    async fn lease_due(
        pool: &Pool,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
        limit: i64,
    ) -> Result<Vec<String>, StoreError> {
        pool.run(async |pool| {
            let leased = sqlx::query_scalar!(
                "UPDATE transfers SET lease_until = $1 WHERE id IN (SELECT id FROM transfers \
         WHERE transfer_status = 'processing' \
           AND (next_attempt_at IS NULL OR next_attempt_at <= $2) \
           AND (lease_until IS NULL OR lease_until < $2) \
         ORDER BY created_at LIMIT $3 FOR UPDATE SKIP LOCKED) RETURNING id",
                until,
                now,
                limit
            )
            .fetch_all(&mut *pool)
            .await?;
            Ok(text_ids(leased))
        })
        .await
    }

    async fn leased(pool: &Pool, ids: &[String]) -> Result<Vec<LeasedRow>, StoreError> {
        pool.run(async |pool| {
            let ids: Vec<uuid::Uuid> = ids.iter().map(|transfer| id(transfer)).collect();
            Ok(sqlx::query_as!(
                LeasedRow,
                r#"SELECT t.id::text AS "id!", t.business_id::text AS "business_id!",
           t.source_account_id::text AS "source_account_id!", t.submitted, t.attempts, t.fee,
           t.vat, t.debit_transaction_id::text AS debit_transaction_id,
           t.fee_transaction_id::text AS fee_transaction_id, t.reference_number,
           a.account_number AS source_account_number, a.account_name AS source_account_name,
           b.name AS business_name, t.beneficiary_account_number, t.beneficiary_account_name,
           t.bank_code, t.amount, t.narration
         FROM transfers t JOIN accounts a ON a.id = t.source_account_id
           JOIN businesses b ON b.id = t.business_id
         WHERE t.id = ANY($1) ORDER BY t.created_at, t.id"#,
                &ids
            )
            .fetch_all(&mut *pool)
            .await?)
        })
        .await
    }

    async fn wait(
        pool: &Pool,
        id: &str,
        submitted: bool,
        next_attempt_at: DateTime<Utc>,
        session_id: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        pool.run(async |pool| {
            sqlx::query!(
                "UPDATE transfers SET submitted = submitted OR $2, attempts = attempts + 1, \
           next_attempt_at = $3, \
           lease_until = NULL, session_id = COALESCE($4, session_id), updated_at = $5 \
         WHERE id = $1 AND transfer_status = 'processing'",
                crate::id(id),
                submitted,
                next_attempt_at,
                session_id,
                now
            )
            .execute(&mut *pool)
            .await?;
            Ok(())
        })
        .await
    }

    async fn decide(
        tx: &mut Tx,
        id: &str,
        from: &str,
        to: &str,
        at: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let decided = sqlx::query!(
            "UPDATE transfers SET transfer_status = $2, submitted = true, lease_until = NULL, \
           updated_at = $3 WHERE id = $1 AND transfer_status = $4",
            crate::id(id),
            to,
            at,
            from
        )
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(decided == 1)
    }

    async fn set_session_id(tx: &mut Tx, id: &str, session_id: &str) -> Result<(), StoreError> {
        sqlx::query!(
            "UPDATE transfers SET session_id = $2 WHERE id = $1",
            crate::id(id),
            session_id
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn set_reversal(
        tx: &mut Tx,
        id: &str,
        reason: &str,
        reversal_reference: &str,
        session_id: Option<&str>,
    ) -> Result<(), StoreError> {
        sqlx::query!(
            "UPDATE transfers SET failure_reason = $2, reversal_reference_number = $3, \
           session_id = COALESCE($4, session_id) WHERE id = $1",
            crate::id(id),
            reason,
            reversal_reference,
            session_id
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }
}
