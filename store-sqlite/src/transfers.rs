//! `transfers`: every payout, held, settled, failed or reversed, with its NIP bookkeeping
//! (submitted, attempts, the worker's lease) and its review.

use chrono::{DateTime, Utc};

use crate::paging::Cursor;
use crate::{first_rows, json_array, on, timestamp, Store, StoreError, Tx, NO_TIME_BOUND};
pub use kobo_store::transfers::{
    Filters, HeldRow, LeasedRow, Lookup, NewTransfer, Review, TransferRow,
};

pub use kobo_store::batch::transfer_into as insert_into;

/// [`Write::Transfer`], run in `tx` ([`crate::batch::run`]).
pub(crate) async fn write(tx: &mut Tx, new: NewTransfer) -> Result<(), StoreError> {
    let row = &new.row;
    let expires_at = row.expires_at.map(timestamp);
    let created_at = timestamp(row.created_at);
    let updated_at = timestamp(row.updated_at);
    sqlx::query!(
        "INSERT INTO transfers (id, business_id, reference_number, reference, \
           source_account_id, beneficiary_account_number, beneficiary_account_name, \
           beneficiary_account_id, bank_code, bank_name, transfer_type, amount, fee, vat, \
           narration, transfer_status, approval_status, session_id, failure_reason, \
           reversal_reference_number, debit_transaction_id, fee_transaction_id, initiated_by, \
           initiated_via, reviewed_by, expires_at, day, submitted, attempts, next_attempt_at, \
           lease_until, created_at, updated_at, credential_issued_by) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, \
           ?17, NULL, NULL, NULL, ?18, ?19, ?20, ?21, NULL, ?22, ?23, 0, 0, NULL, NULL, \
           ?24, ?25, ?26)",
        row.id,
        new.business_id,
        row.reference_number,
        row.reference,
        new.source_account_id,
        row.beneficiary_account_number,
        row.beneficiary_account_name,
        new.beneficiary_account_id,
        row.bank_code,
        row.bank_name,
        row.transfer_type,
        row.amount,
        row.fee,
        row.vat,
        row.narration,
        row.transfer_status,
        row.approval_status,
        new.debit_transaction_id,
        new.fee_transaction_id,
        row.initiated_by,
        row.initiated_via,
        expires_at,
        new.day,
        created_at,
        updated_at,
        new.credential_issued_by
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}

kobo_store::transfers_functions!(backend crate::Backend);

impl kobo_store::transfers::Transfers for crate::Backend {
    async fn find(
        conn: Self::Conn<'_>,
        business_id: &str,
        lookup: Lookup<'_>,
    ) -> Result<Option<TransferRow>, StoreError> {
        Ok(match lookup {
            Lookup::Id(key) => on!(
                conn,
                sqlx::query_as!(
                    TransferRow,
                    r#"SELECT t.id AS "id!", t.reference_number, t.reference, t.amount, t.fee, t.vat,
             t.transfer_status, t.approval_status, t.transfer_type,
             a.account_number AS source_account_number, t.beneficiary_account_number,
             t.beneficiary_account_name, t.bank_code, t.bank_name, t.narration, t.session_id,
             t.failure_reason, t.reversal_reference_number, t.initiated_by, t.initiated_via,
             t.reviewed_by, t.expires_at AS "expires_at: DateTime<Utc>",
             t.created_at AS "created_at: DateTime<Utc>", t.updated_at AS "updated_at: DateTime<Utc>"
           FROM transfers t JOIN accounts a ON a.id = t.source_account_id
           WHERE t.business_id = ?1 AND t.id = ?2"#,
                    business_id,
                    key
                ),
                fetch_optional
            )?,
            Lookup::ReferenceNumber(key) => on!(
                conn,
                sqlx::query_as!(
                    TransferRow,
                    r#"SELECT t.id AS "id!", t.reference_number, t.reference, t.amount, t.fee, t.vat,
             t.transfer_status, t.approval_status, t.transfer_type,
             a.account_number AS source_account_number, t.beneficiary_account_number,
             t.beneficiary_account_name, t.bank_code, t.bank_name, t.narration, t.session_id,
             t.failure_reason, t.reversal_reference_number, t.initiated_by, t.initiated_via,
             t.reviewed_by, t.expires_at AS "expires_at: DateTime<Utc>",
             t.created_at AS "created_at: DateTime<Utc>", t.updated_at AS "updated_at: DateTime<Utc>"
           FROM transfers t JOIN accounts a ON a.id = t.source_account_id
           WHERE t.business_id = ?1 AND t.reference_number = ?2"#,
                    business_id,
                    key
                ),
                fetch_optional
            )?,
            Lookup::Reference(key) => on!(
                conn,
                sqlx::query_as!(
                    TransferRow,
                    r#"SELECT t.id AS "id!", t.reference_number, t.reference, t.amount, t.fee, t.vat,
             t.transfer_status, t.approval_status, t.transfer_type,
             a.account_number AS source_account_number, t.beneficiary_account_number,
             t.beneficiary_account_name, t.bank_code, t.bank_name, t.narration, t.session_id,
             t.failure_reason, t.reversal_reference_number, t.initiated_by, t.initiated_via,
             t.reviewed_by, t.expires_at AS "expires_at: DateTime<Utc>",
             t.created_at AS "created_at: DateTime<Utc>", t.updated_at AS "updated_at: DateTime<Utc>"
           FROM transfers t JOIN accounts a ON a.id = t.source_account_id
           WHERE t.business_id = ?1 AND t.reference = ?2"#,
                    business_id,
                    key
                ),
                fetch_optional
            )?,
        })
    }

    async fn reference_owner(
        conn: Self::Conn<'_>,
        business_id: &str,
        reference: &str,
    ) -> Result<Option<String>, StoreError> {
        let query = sqlx::query_scalar!(
            "SELECT reference_number FROM transfers WHERE business_id = ?1 AND reference = ?2",
            business_id,
            reference
        );
        Ok(on!(conn, query, fetch_optional)?)
    }

    async fn list(
        store: &Store,
        business_id: &str,
        filters: &Filters,
        cursor: Option<Cursor>,
        limit: u64,
    ) -> Result<Vec<TransferRow>, StoreError> {
        let from = filters.from.map(timestamp);
        let until = filters.until.map(timestamp);
        let cursor_at = cursor.as_ref().map(|c| timestamp(c.created_at));
        let cursor_id = cursor.as_ref().map(|c| c.id.to_string());
        let query = sqlx::query_as!(
            TransferRow,
            r#"SELECT t.id AS "id!", t.reference_number, t.reference, t.amount, t.fee, t.vat,
             t.transfer_status, t.approval_status, t.transfer_type,
             a.account_number AS source_account_number, t.beneficiary_account_number,
             t.beneficiary_account_name, t.bank_code, t.bank_name, t.narration, t.session_id,
             t.failure_reason, t.reversal_reference_number, t.initiated_by, t.initiated_via,
             t.reviewed_by, t.expires_at AS "expires_at: DateTime<Utc>",
             t.created_at AS "created_at: DateTime<Utc>", t.updated_at AS "updated_at: DateTime<Utc>"
           FROM transfers t JOIN accounts a ON a.id = t.source_account_id
           WHERE t.business_id = ?1
             AND (?2 IS NULL OR t.transfer_status = ?2)
             AND (?3 IS NULL OR t.approval_status = ?3)
             AND (t.created_at, t.id) < (COALESCE(?9, ?11), COALESCE(?10, ''))
             AND t.created_at >= COALESCE(?4, '') AND t.created_at < COALESCE(?5, ?11)
             AND (?6 IS NULL OR a.account_number = ?6)
             AND (?7 IS NULL OR t.reference = ?7)
             AND (?8 IS NULL OR t.reference_number = ?8)
           ORDER BY t.created_at DESC, t.id DESC"#,
            business_id,
            filters.transfer_status,
            filters.approval_status,
            from,
            until,
            filters.source_account_number,
            filters.reference,
            filters.reference_number,
            cursor_at,
            cursor_id,
            NO_TIME_BOUND
        );
        first_rows(query.fetch(store.pool()), limit + 1).await
    }

    async fn pending_references(
        store: &Store,
        business_id: &str,
        source_account_number: Option<&str>,
        cursor: Option<Cursor>,
        limit: u64,
    ) -> Result<Vec<String>, StoreError> {
        let cursor_at = cursor.as_ref().map(|c| timestamp(c.created_at));
        let cursor_id = cursor.as_ref().map(|c| c.id.to_string());
        let query = sqlx::query_scalar!(
            r#"SELECT t.reference_number FROM transfers t
           JOIN accounts a ON a.id = t.source_account_id
           WHERE t.business_id = ?1 AND t.transfer_status = 'pending_approval'
             AND (?2 IS NULL OR a.account_number = ?2)
             AND (t.created_at, t.id) > (COALESCE(?3, ''), COALESCE(?4, ''))
           ORDER BY t.created_at, t.id"#,
            business_id,
            source_account_number,
            cursor_at,
            cursor_id
        );
        first_rows(query.fetch(store.pool()), limit + 1).await
    }

    async fn held(
        conn: Self::Conn<'_>,
        business_id: &str,
        reference: &str,
    ) -> Result<Option<HeldRow>, StoreError> {
        let query = sqlx::query_as!(
            HeldRow,
            r#"SELECT id AS "id!", business_id, source_account_id, beneficiary_account_id,
             beneficiary_account_number, beneficiary_account_name, bank_code, transfer_type,
             amount, fee, vat, narration, reference_number, debit_transaction_id,
             fee_transaction_id, initiated_by, credential_issued_by, transfer_status,
             expires_at AS "expires_at: DateTime<Utc>"
           FROM transfers WHERE business_id = ?1 AND reference_number = ?2"#,
            business_id,
            reference
        );
        Ok(on!(conn, query, fetch_optional)?)
    }

    async fn review(tx: &mut Tx, id: &str, review: &Review<'_>) -> Result<bool, StoreError> {
        let at = timestamp(review.at);
        let changed = sqlx::query!(
            "UPDATE transfers SET transfer_status = ?2, approval_status = ?3, reviewed_by = ?4, \
           failure_reason = ?5, updated_at = ?6, day = COALESCE(?7, day) \
         WHERE id = ?1 AND transfer_status = ?8",
            id,
            review.to,
            review.approval_status,
            review.reviewer,
            review.reason,
            at,
            review.day,
            review.from
        )
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(changed == 1)
    }

    async fn due_expiries(
        store: &Store,
        now: DateTime<Utc>,
    ) -> Result<Vec<(String, String)>, StoreError> {
        let now = timestamp(now);
        let rows = sqlx::query!(
            "SELECT business_id, reference_number FROM transfers \
         WHERE transfer_status = 'pending_approval' AND expires_at <= ?1 LIMIT 100",
            now
        )
        .fetch_all(store.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|row| (row.business_id, row.reference_number))
            .collect())
    }

    async fn first_reserving(tx: &mut Tx, account_id: &str) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar!(
            "SELECT reference_number FROM transfers \
         WHERE source_account_id = ?1 AND transfer_status IN ('pending_approval', 'processing') \
         ORDER BY created_at LIMIT 1",
            account_id
        )
        .fetch_optional(&mut **tx)
        .await?)
    }

    async fn lease_due(
        store: &Store,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
        limit: i64,
    ) -> Result<Vec<String>, StoreError> {
        let until = timestamp(until);
        let now = timestamp(now);
        let _turn = store.write_turn().await;
        Ok(sqlx::query_scalar!(
            r#"UPDATE transfers SET lease_until = ?1 WHERE id IN (SELECT id FROM transfers
             WHERE transfer_status = 'processing'
               AND (next_attempt_at IS NULL OR next_attempt_at <= ?2)
               AND (lease_until IS NULL OR lease_until < ?2)
             ORDER BY created_at LIMIT ?3)
           RETURNING id AS "id!""#,
            until,
            now,
            limit
        )
        .fetch_all(store.pool())
        .await?)
    }

    async fn leased(store: &Store, ids: &[String]) -> Result<Vec<LeasedRow>, StoreError> {
        let ids = json_array(ids.iter().map(String::as_str));
        Ok(sqlx::query_as!(
            LeasedRow,
            r#"SELECT t.id AS "id!", t.business_id, t.source_account_id,
             t.submitted AS "submitted: bool", t.attempts, t.fee, t.vat,
             t.debit_transaction_id, t.fee_transaction_id, t.reference_number,
             a.account_number AS source_account_number, a.account_name AS source_account_name,
             b.name AS business_name, t.beneficiary_account_number, t.beneficiary_account_name,
             t.bank_code, t.amount, t.narration
           FROM transfers t JOIN accounts a ON a.id = t.source_account_id
             JOIN businesses b ON b.id = t.business_id
           WHERE t.id IN (SELECT value FROM json_each(?1)) ORDER BY t.created_at, t.id"#,
            ids
        )
        .fetch_all(store.pool())
        .await?)
    }

    async fn wait(
        store: &Store,
        id: &str,
        submitted: bool,
        next_attempt_at: DateTime<Utc>,
        session_id: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let next_attempt_at = timestamp(next_attempt_at);
        let now = timestamp(now);
        let _turn = store.write_turn().await;
        sqlx::query!(
            "UPDATE transfers SET submitted = (submitted OR ?2), attempts = attempts + 1, \
           next_attempt_at = ?3, \
           lease_until = NULL, session_id = COALESCE(?4, session_id), updated_at = ?5 \
         WHERE id = ?1 AND transfer_status = 'processing'",
            id,
            submitted,
            next_attempt_at,
            session_id,
            now
        )
        .execute(store.pool())
        .await?;
        Ok(())
    }

    async fn decide(
        tx: &mut Tx,
        id: &str,
        from: &str,
        to: &str,
        at: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let at = timestamp(at);
        let decided = sqlx::query!(
            "UPDATE transfers SET transfer_status = ?2, submitted = 1, lease_until = NULL, \
           updated_at = ?3 WHERE id = ?1 AND transfer_status = ?4",
            id,
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
            "UPDATE transfers SET session_id = ?2 WHERE id = ?1",
            id,
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
            "UPDATE transfers SET failure_reason = ?2, reversal_reference_number = ?3, \
           session_id = COALESCE(?4, session_id) WHERE id = ?1",
            id,
            reason,
            reversal_reference,
            session_id
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }
}
