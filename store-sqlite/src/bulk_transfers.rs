//! `bulk_transfers` and `bulk_transfer_items`: batches of payments, validated before anything
//! moves (see `kobo_store::bulk_transfers`).

use chrono::{DateTime, Utc};
use kobo_store::paging::Cursor;

use crate::{on, timestamp, uuid, StoreError, Tx};
pub use kobo_store::bulk_transfers::{
    Authorisation, BulkItemRow, BulkTransferRow, HoldEnd, Judgement, NewBulkItem, NewBulkTransfer,
    Outcomes,
};

kobo_store::bulk_transfers_functions!(backend crate::Backend);

/// A [`BulkTransferRow`] as read, its id still text.
struct Stored {
    id: String,
    business_id: String,
    reference: Option<String>,
    source_account_id: String,
    source_account_number: String,
    on_invalid: String,
    status: String,
    narration: Option<String>,
    item_count: i64,
    valid_count: i64,
    invalid_count: i64,
    total_amount: i64,
    total_fee: i64,
    total_vat: i64,
    created_by: String,
    created_via: String,
    attempts: i64,
    validated_at: Option<DateTime<Utc>>,
    cancelled_at: Option<DateTime<Utc>>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    authorised_by: Option<String>,
    credential_issued_by: Option<String>,
    authorised_at: Option<DateTime<Utc>>,
    reviewed_by: Option<String>,
    reviewed_at: Option<DateTime<Utc>>,
    review_reason: Option<String>,
    expires_at: Option<DateTime<Utc>>,
    execute_at: Option<DateTime<Utc>>,
    reserved: i64,
    paid: i64,
    released: i64,
    next_index: i64,
    executed_at: Option<DateTime<Utc>>,
    completed_at: Option<DateTime<Utc>>,
    created_by_name: Option<String>,
    authorised_by_name: Option<String>,
    reviewed_by_name: Option<String>,
}

impl Stored {
    fn into_row(self) -> Result<BulkTransferRow, StoreError> {
        Ok(BulkTransferRow {
            id: uuid(&self.id)?,
            business_id: self.business_id,
            reference: self.reference,
            source_account_id: self.source_account_id,
            source_account_number: self.source_account_number,
            on_invalid: self.on_invalid,
            status: self.status,
            narration: self.narration,
            item_count: self.item_count,
            valid_count: self.valid_count,
            invalid_count: self.invalid_count,
            total_amount: self.total_amount,
            total_fee: self.total_fee,
            total_vat: self.total_vat,
            created_by: self.created_by,
            created_via: self.created_via,
            attempts: self.attempts,
            validated_at: self.validated_at,
            cancelled_at: self.cancelled_at,
            created_at: self.created_at,
            updated_at: self.updated_at,
            authorised_by: self.authorised_by,
            credential_issued_by: self.credential_issued_by,
            authorised_at: self.authorised_at,
            reviewed_by: self.reviewed_by,
            reviewed_at: self.reviewed_at,
            review_reason: self.review_reason,
            expires_at: self.expires_at,
            execute_at: self.execute_at,
            reserved: self.reserved,
            paid: self.paid,
            released: self.released,
            next_index: self.next_index,
            executed_at: self.executed_at,
            completed_at: self.completed_at,
            created_by_name: self.created_by_name,
            authorised_by_name: self.authorised_by_name,
            reviewed_by_name: self.reviewed_by_name,
        })
    }
}

/// The columns of a [`Stored`], as `query_as!` reads them.
macro_rules! stored {
    ($where:literal $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            Stored,
            r#"SELECT id AS "id!", business_id, reference, source_account_id, source_account_number, on_invalid, status,
                 narration, item_count, valid_count, invalid_count, total_amount, total_fee,
                 total_vat, created_by, created_via, attempts,
                 validated_at AS "validated_at: DateTime<Utc>",
                 cancelled_at AS "cancelled_at: DateTime<Utc>",
                 created_at AS "created_at: DateTime<Utc>",
                 updated_at AS "updated_at: DateTime<Utc>",
                 authorised_by, credential_issued_by,
                 authorised_at AS "authorised_at: DateTime<Utc>", reviewed_by,
                 reviewed_at AS "reviewed_at: DateTime<Utc>", review_reason,
                 expires_at AS "expires_at: DateTime<Utc>",
                 execute_at AS "execute_at: DateTime<Utc>", reserved, paid,
                 released, next_index, executed_at AS "executed_at: DateTime<Utc>",
                 completed_at AS "completed_at: DateTime<Utc>", created_by_name,
                 authorised_by_name, reviewed_by_name
               FROM bulk_transfers "# + $where,
            $($arg),*
        )
    };
}

/// A [`BulkItemRow`] as read, its ids still text.
struct StoredItem {
    idx: i64,
    transfer_id: String,
    beneficiary_id: Option<String>,
    account_number: String,
    bank_code: String,
    account_name: String,
    amount: i64,
    narration: Option<String>,
    reference: Option<String>,
    validation: String,
    bank_name: Option<String>,
    transfer_type: Option<String>,
    confirmed_name: Option<String>,
    enquired_at: Option<DateTime<Utc>>,
    fee: Option<i64>,
    vat: Option<i64>,
    refusal_code: Option<String>,
    refusal_message: Option<String>,
    failure_code: Option<String>,
    failure_message: Option<String>,
    transfer_status: Option<String>,
    reference_number: Option<String>,
}

impl StoredItem {
    fn into_row(self) -> Result<BulkItemRow, StoreError> {
        Ok(BulkItemRow {
            idx: self.idx,
            transfer_id: uuid(&self.transfer_id)?,
            beneficiary_id: self.beneficiary_id.as_deref().map(uuid).transpose()?,
            account_number: self.account_number,
            bank_code: self.bank_code,
            account_name: self.account_name,
            amount: self.amount,
            narration: self.narration,
            reference: self.reference,
            validation: self.validation,
            bank_name: self.bank_name,
            transfer_type: self.transfer_type,
            confirmed_name: self.confirmed_name,
            enquired_at: self.enquired_at,
            fee: self.fee,
            vat: self.vat,
            refusal_code: self.refusal_code,
            refusal_message: self.refusal_message,
            failure_code: self.failure_code,
            failure_message: self.failure_message,
            transfer_status: self.transfer_status,
            reference_number: self.reference_number,
        })
    }
}

/// Reads the batch `id` of `$tx` (written just now).
async fn reread(tx: &mut Tx, id: &str) -> Result<Option<BulkTransferRow>, StoreError> {
    stored!("WHERE id = ?1", id)
        .fetch_optional(&mut **tx)
        .await?
        .map(Stored::into_row)
        .transpose()
}

impl kobo_store::bulk_transfers::BulkTransfers for crate::Backend {
    async fn create(
        tx: &mut Tx,
        batch: &NewBulkTransfer,
        items: &[NewBulkItem],
    ) -> Result<(), StoreError> {
        let id = batch.id.to_string();
        let now = timestamp(batch.now);
        let count = items.len() as i64;
        let execute_at = batch.execute_at.map(timestamp);
        sqlx::query!(
            "INSERT INTO bulk_transfers (id, business_id, reference, source_account_id, \
               on_invalid, status, narration, item_count, created_by, created_via, \
               next_attempt_at, created_at, updated_at, source_account_number, created_by_name, \
               execute_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, 'validating', ?6, ?7, ?8, ?9, ?10, ?10, ?10, ?11, ?12, ?13)",
            id,
            batch.business_id,
            batch.reference,
            batch.source_account_id,
            batch.on_invalid,
            batch.narration,
            count,
            batch.created_by,
            batch.created_via,
            now,
            batch.source_account_number,
            batch.created_by_name,
            execute_at
        )
        .execute(&mut **tx)
        .await?;
        // One statement per item: SQLite runs them in process, about a microsecond each.
        for item in items {
            let transfer_id = item.transfer_id.to_string();
            let beneficiary_id = item.beneficiary_id.map(|id| id.to_string());
            sqlx::query!(
                "INSERT INTO bulk_transfer_items (bulk_transfer_id, idx, transfer_id, \
                   beneficiary_id, account_number, bank_code, account_name, amount, narration, \
                   reference, validation) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'pending')",
                id,
                item.idx,
                transfer_id,
                beneficiary_id,
                item.account_number,
                item.bank_code,
                item.account_name,
                item.amount,
                item.narration,
                item.reference
            )
            .execute(&mut **tx)
            .await?;
        }
        Ok(())
    }

    async fn get(
        conn: Self::Conn<'_>,
        business_id: &str,
        batch_id: &uuid::Uuid,
    ) -> Result<Option<BulkTransferRow>, StoreError> {
        let batch_id = batch_id.to_string();
        let query = stored!("WHERE business_id = ?1 AND id = ?2", business_id, batch_id);
        on!(conn, query, fetch_optional)?
            .map(Stored::into_row)
            .transpose()
    }

    async fn by_reference(
        conn: Self::Conn<'_>,
        business_id: &str,
        reference: &str,
    ) -> Result<Option<BulkTransferRow>, StoreError> {
        let query = stored!(
            "WHERE reference = ?2 AND business_id = ?1",
            business_id,
            reference
        );
        on!(conn, query, fetch_optional)?
            .map(Stored::into_row)
            .transpose()
    }

    async fn list(
        conn: Self::Conn<'_>,
        business_id: &str,
        status: Option<&str>,
        cursor: Option<&Cursor>,
        limit: u64,
    ) -> Result<Vec<BulkTransferRow>, StoreError> {
        let after_at = cursor.map(|c| timestamp(c.created_at));
        let after_id = cursor.map(|c| c.id.to_string());
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let query = stored!(
            "WHERE business_id = ?1 AND (?2 IS NULL OR status = ?2)
               AND (?3 IS NULL OR (created_at, id) < (?3, ?4))
             ORDER BY created_at DESC, id DESC LIMIT ?5",
            business_id,
            status,
            after_at,
            after_id,
            limit
        );
        on!(conn, query, fetch_all)?
            .into_iter()
            .map(Stored::into_row)
            .collect()
    }

    async fn items(
        conn: Self::Conn<'_>,
        batch_id: &uuid::Uuid,
        validation: Option<&str>,
        from_idx: i64,
        limit: u64,
    ) -> Result<Vec<BulkItemRow>, StoreError> {
        let batch_id = batch_id.to_string();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let query = sqlx::query_as!(
            StoredItem,
            r#"SELECT i.idx, i.transfer_id, i.beneficiary_id, i.account_number, i.bank_code,
                 i.account_name, i.amount, i.narration, i.reference, i.validation, i.bank_name,
                 i.transfer_type, i.confirmed_name,
                 i.enquired_at AS "enquired_at: DateTime<Utc>", i.fee, i.vat, i.refusal_code,
                 i.refusal_message, i.failure_code, i.failure_message,
                 t.transfer_status AS "transfer_status?", t.reference_number AS "reference_number?"
               FROM bulk_transfer_items i LEFT JOIN transfers t ON t.id = i.transfer_id
               WHERE i.bulk_transfer_id = ?1 AND i.idx >= ?2
                 AND (?3 IS NULL OR i.validation = ?3)
               ORDER BY i.idx LIMIT ?4"#,
            batch_id,
            from_idx,
            validation,
            limit
        );
        on!(conn, query, fetch_all)?
            .into_iter()
            .map(StoredItem::into_row)
            .collect()
    }

    async fn claim(
        tx: &mut Tx,
        status: &str,
        owner: &str,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Option<BulkTransferRow>, StoreError> {
        let now = timestamp(now);
        let until = timestamp(until);
        let claimed = sqlx::query_scalar!(
            r#"UPDATE bulk_transfers SET lease_owner = ?1, lease_until = ?3,
                 attempts = attempts + 1
               WHERE id = (SELECT id FROM bulk_transfers
                   WHERE status = ?4 AND next_attempt_at <= ?2
                     AND (lease_until IS NULL OR lease_until < ?2)
                   ORDER BY next_attempt_at, id LIMIT 1)
               RETURNING id AS "id!""#,
            owner,
            now,
            until,
            status
        )
        .fetch_optional(&mut **tx)
        .await?;
        match claimed {
            Some(claimed) => reread(tx, &claimed).await,
            None => Ok(None),
        }
    }

    async fn judge(
        tx: &mut Tx,
        batch_id: &uuid::Uuid,
        owner: &str,
        judged: &[Judgement],
        until: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let batch_id = batch_id.to_string();
        let until = timestamp(until);
        let held = sqlx::query!(
            "UPDATE bulk_transfers SET lease_until = ?3 \
             WHERE id = ?1 AND status = 'validating' AND lease_owner = ?2",
            batch_id,
            owner,
            until
        )
        .execute(&mut **tx)
        .await?;
        if held.rows_affected() != 1 {
            return Ok(false);
        }
        for judgement in judged {
            let enquired_at = judgement.enquired_at.map(timestamp);
            sqlx::query!(
                "UPDATE bulk_transfer_items SET validation = ?3, bank_name = ?4, \
                   transfer_type = ?5, confirmed_name = ?6, enquired_at = ?7, fee = ?8, \
                   vat = ?9, refusal_code = ?10, refusal_message = ?11 \
                 WHERE bulk_transfer_id = ?1 AND idx = ?2 AND validation = 'pending'",
                batch_id,
                judgement.idx,
                judgement.validation,
                judgement.bank_name,
                judgement.transfer_type,
                judgement.confirmed_name,
                enquired_at,
                judgement.fee,
                judgement.vat,
                judgement.refusal_code,
                judgement.refusal_message
            )
            .execute(&mut **tx)
            .await?;
        }
        Ok(true)
    }

    async fn later(
        tx: &mut Tx,
        batch_id: &uuid::Uuid,
        owner: &str,
        due: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let batch_id = batch_id.to_string();
        let due = timestamp(due);
        let moved = sqlx::query!(
            "UPDATE bulk_transfers SET next_attempt_at = ?3, lease_owner = NULL, \
               lease_until = NULL \
             WHERE id = ?1 AND status IN ('validating', 'executing') AND lease_owner = ?2",
            batch_id,
            owner,
            due
        )
        .execute(&mut **tx)
        .await?;
        Ok(moved.rows_affected() == 1)
    }

    async fn finish(
        tx: &mut Tx,
        batch_id: &uuid::Uuid,
        owner: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<BulkTransferRow>, StoreError> {
        let batch_id = batch_id.to_string();
        let now = timestamp(now);
        let finished = sqlx::query_scalar!(
            r#"WITH judged AS (
                 SELECT coalesce(sum(validation = 'pending'), 0) AS pending,
                   coalesce(sum(validation = 'valid'), 0) AS valid,
                   coalesce(sum(validation = 'invalid'), 0) AS invalid,
                   coalesce(sum(CASE WHEN validation = 'valid' THEN amount END), 0) AS amount,
                   coalesce(sum(CASE WHEN validation = 'valid' THEN fee END), 0) AS fee,
                   coalesce(sum(CASE WHEN validation = 'valid' THEN vat END), 0) AS vat
                 FROM bulk_transfer_items WHERE bulk_transfer_id = ?1)
               UPDATE bulk_transfers SET
                 status = CASE WHEN (SELECT valid FROM judged) = 0
                     OR ((SELECT invalid FROM judged) > 0 AND on_invalid = 'refuse_batch')
                   THEN 'invalid' ELSE 'validated' END,
                 valid_count = (SELECT valid FROM judged),
                 invalid_count = (SELECT invalid FROM judged),
                 total_amount = (SELECT amount FROM judged),
                 total_fee = (SELECT fee FROM judged), total_vat = (SELECT vat FROM judged),
                 validated_at = ?3, updated_at = ?3, lease_owner = NULL, lease_until = NULL,
                 next_attempt_at = NULL
               WHERE id = ?1 AND status = 'validating' AND lease_owner = ?2
                 AND (SELECT pending FROM judged) = 0
               RETURNING id AS "id!""#,
            batch_id,
            owner,
            now
        )
        .fetch_optional(&mut **tx)
        .await?;
        match finished {
            Some(finished) => reread(tx, &finished).await,
            None => Ok(None),
        }
    }

    async fn cancel(
        tx: &mut Tx,
        business_id: &str,
        batch_id: &uuid::Uuid,
        from: &[&str],
        now: DateTime<Utc>,
    ) -> Result<Option<BulkTransferRow>, StoreError> {
        let batch_id = batch_id.to_string();
        let now = timestamp(now);
        let from =
            serde_json::to_string(from).map_err(|e| StoreError::Unreadable(e.to_string()))?;
        let cancelled = sqlx::query_scalar!(
            r#"UPDATE bulk_transfers SET status = 'cancelled', cancelled_at = ?4, updated_at = ?4,
                 lease_owner = NULL, lease_until = NULL, next_attempt_at = NULL
               WHERE business_id = ?1 AND id = ?2
                 AND status IN (SELECT value FROM json_each(?3))
               RETURNING id AS "id!""#,
            business_id,
            batch_id,
            from,
            now
        )
        .fetch_optional(&mut **tx)
        .await?;
        match cancelled {
            Some(cancelled) => reread(tx, &cancelled).await,
            None => Ok(None),
        }
    }
    async fn authorise(
        tx: &mut Tx,
        business_id: &str,
        batch_id: &uuid::Uuid,
        authorisation: &Authorisation<'_>,
    ) -> Result<Option<BulkTransferRow>, StoreError> {
        let batch_id = batch_id.to_string();
        let at = timestamp(authorisation.at);
        let expires_at = authorisation.expires_at.map(timestamp);
        let due = authorisation.due.map(timestamp);
        let moved = sqlx::query_scalar!(
            r#"UPDATE bulk_transfers SET status = ?3, authorised_by = ?4,
                 credential_issued_by = ?5, authorised_at = ?6, reserved = ?7, updated_at = ?6,
                 authorised_by_name = ?8, expires_at = ?9, next_attempt_at = ?10
               WHERE business_id = ?1 AND id = ?2 AND status = 'validated'
               RETURNING id AS "id!""#,
            business_id,
            batch_id,
            authorisation.to,
            authorisation.by,
            authorisation.credential_issued_by,
            at,
            authorisation.reserved,
            authorisation.by_name,
            expires_at,
            due
        )
        .fetch_optional(&mut **tx)
        .await?;
        match moved {
            Some(moved) => reread(tx, &moved).await,
            None => Ok(None),
        }
    }

    async fn end_hold(
        tx: &mut Tx,
        business_id: &str,
        batch_id: &uuid::Uuid,
        end: &HoldEnd<'_>,
    ) -> Result<Option<BulkTransferRow>, StoreError> {
        let batch_id = batch_id.to_string();
        let at = timestamp(end.at);
        let due = end.due.map(timestamp);
        let moved = sqlx::query_scalar!(
            r#"UPDATE bulk_transfers SET status = ?3, reviewed_by = COALESCE(?4, reviewed_by),
                 reviewed_at = CASE WHEN ?4 IS NULL THEN reviewed_at ELSE ?7 END,
                 review_reason = COALESCE(?5, review_reason), released = released + ?6,
                 updated_at = ?7, reviewed_by_name = COALESCE(?8, reviewed_by_name),
                 expires_at = NULL,
                 cancelled_at = CASE WHEN ?3 = 'cancelled' THEN ?7 END,
                 next_attempt_at = ?10
               WHERE business_id = ?1 AND id = ?2 AND status = ?9
               RETURNING id AS "id!""#,
            business_id,
            batch_id,
            end.to,
            end.reviewer,
            end.reason,
            end.released,
            at,
            end.reviewer_name,
            end.from,
            due
        )
        .fetch_optional(&mut **tx)
        .await?;
        match moved {
            Some(moved) => reread(tx, &moved).await,
            None => Ok(None),
        }
    }

    async fn start_scheduled(tx: &mut Tx, now: DateTime<Utc>) -> Result<u64, StoreError> {
        let now = timestamp(now);
        let started = sqlx::query!(
            "UPDATE bulk_transfers SET status = 'executing', updated_at = ?1 \
             WHERE status = 'scheduled' AND next_attempt_at <= ?1",
            now
        )
        .execute(&mut **tx)
        .await?;
        Ok(started.rows_affected())
    }

    async fn pass_item(
        tx: &mut Tx,
        batch_id: &uuid::Uuid,
        owner: &str,
        idx: i64,
        paid: i64,
        failure: Option<(&str, &str)>,
        until: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let batch_id = batch_id.to_string();
        let until = timestamp(until);
        let passed = sqlx::query!(
            "UPDATE bulk_transfers SET next_index = ?3 + 1, paid = paid + ?4, lease_until = ?5 \
             WHERE id = ?1 AND status = 'executing' AND lease_owner = ?2 AND next_index <= ?3",
            batch_id,
            owner,
            idx,
            paid,
            until
        )
        .execute(&mut **tx)
        .await?;
        if passed.rows_affected() != 1 {
            return Ok(false);
        }
        if let Some((code, message)) = failure {
            sqlx::query!(
                "UPDATE bulk_transfer_items SET failure_code = ?3, failure_message = ?4 \
                 WHERE bulk_transfer_id = ?1 AND idx = ?2",
                batch_id,
                idx,
                code,
                message
            )
            .execute(&mut **tx)
            .await?;
        }
        Ok(true)
    }

    async fn release_rest(
        tx: &mut Tx,
        batch_id: &uuid::Uuid,
        owner: &str,
        released: i64,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let batch_id = batch_id.to_string();
        let now = timestamp(now);
        let released = sqlx::query!(
            "UPDATE bulk_transfers SET released = released + ?3, executed_at = ?4, \
               next_index = item_count, updated_at = ?4 \
             WHERE id = ?1 AND status = 'executing' AND lease_owner = ?2 \
               AND executed_at IS NULL",
            batch_id,
            owner,
            released,
            now
        )
        .execute(&mut **tx)
        .await?;
        Ok(released.rows_affected() == 1)
    }

    async fn complete(
        tx: &mut Tx,
        batch_id: &uuid::Uuid,
        owner: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<BulkTransferRow>, StoreError> {
        let batch_id = batch_id.to_string();
        let now = timestamp(now);
        let completed = sqlx::query_scalar!(
            r#"UPDATE bulk_transfers SET status = 'completed', completed_at = ?3,
                 updated_at = ?3, lease_owner = NULL, lease_until = NULL, next_attempt_at = NULL
               WHERE id = ?1 AND status = 'executing' AND lease_owner = ?2
                 AND executed_at IS NOT NULL
               RETURNING id AS "id!""#,
            batch_id,
            owner,
            now
        )
        .fetch_optional(&mut **tx)
        .await?;
        match completed {
            Some(completed) => reread(tx, &completed).await,
            None => Ok(None),
        }
    }

    async fn outcomes(
        conn: Self::Conn<'_>,
        ids: &[uuid::Uuid],
    ) -> Result<Vec<Outcomes>, StoreError> {
        let ids = serde_json::to_string(&ids.iter().map(|id| id.to_string()).collect::<Vec<_>>())
            .map_err(|e| StoreError::Unreadable(e.to_string()))?;
        let query = sqlx::query!(
            r#"SELECT i.bulk_transfer_id AS "bulk_transfer_id!",
                 coalesce(sum(t.transfer_status = 'success'), 0) AS "succeeded!: i64",
                 coalesce(sum(t.transfer_status = 'processing'), 0) AS "processing!: i64",
                 coalesce(sum(i.failure_code IS NOT NULL OR t.transfer_status = 'failed'), 0)
                   AS "failed!: i64",
                 coalesce(sum(t.transfer_status = 'reversed'), 0) AS "reversed!: i64"
               FROM bulk_transfer_items i LEFT JOIN transfers t ON t.id = i.transfer_id
               WHERE i.bulk_transfer_id IN (SELECT value FROM json_each(?1))
                 AND (t.id IS NOT NULL OR i.failure_code IS NOT NULL)
               GROUP BY i.bulk_transfer_id"#,
            ids
        );
        on!(conn, query, fetch_all)?
            .into_iter()
            .map(|row| {
                Ok(Outcomes {
                    bulk_transfer_id: uuid(&row.bulk_transfer_id)?,
                    succeeded: row.succeeded,
                    processing: row.processing,
                    failed: row.failed,
                    reversed: row.reversed,
                })
            })
            .collect()
    }
    async fn reserving(tx: &mut Tx, account_id: &str) -> Result<Option<uuid::Uuid>, StoreError> {
        let found = sqlx::query_scalar!(
            r#"SELECT id AS "id!" FROM bulk_transfers WHERE source_account_id = ?1
                 AND (status IN ('pending_approval', 'scheduled')
                      OR (status = 'executing' AND executed_at IS NULL))
               LIMIT 1"#,
            account_id
        )
        .fetch_optional(&mut **tx)
        .await?;
        found.as_deref().map(uuid).transpose()
    }
    async fn due_holds(
        store: &crate::Store,
        now: DateTime<Utc>,
    ) -> Result<Vec<(String, uuid::Uuid)>, StoreError> {
        let now = timestamp(now);
        let rows = sqlx::query!(
            r#"SELECT business_id, id AS "id!" FROM bulk_transfers
               WHERE status = 'pending_approval' AND expires_at <= ?1
               ORDER BY expires_at LIMIT 100"#,
            now
        )
        .fetch_all(store.pool())
        .await?;
        rows.into_iter()
            .map(|row| Ok((row.business_id, uuid(&row.id)?)))
            .collect()
    }
}
