//! `bulk_transfers` and `bulk_transfer_items`: batches of payments, validated before anything
//! moves (see `kobo_store::bulk_transfers`).

use chrono::{DateTime, Utc};
use kobo_store::paging::Cursor;

use crate::{id, new_id, StoreError, Tx};
pub use kobo_store::bulk_transfers::{
    Authorisation, BulkItemRow, BulkTransferRow, HoldEnd, Judgement, NewBulkItem, NewBulkTransfer,
    Outcomes,
};

kobo_store::bulk_transfers_functions!(backend crate::Backend);

/// The columns of a [`BulkTransferRow`], as `query_as!` reads them.
macro_rules! batch_row {
    ($where:literal $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            BulkTransferRow,
            r#"SELECT id, business_id::text AS "business_id!", reference,
                 source_account_id::text AS "source_account_id!", source_account_number, on_invalid, status, narration,
                 item_count, valid_count, invalid_count, total_amount, total_fee, total_vat,
                 created_by, created_via, attempts, validated_at, cancelled_at, created_at,
                 updated_at, authorised_by, credential_issued_by, authorised_at, reviewed_by,
                 reviewed_at, review_reason, expires_at, execute_at, reserved, paid, released, next_index, executed_at,
                 completed_at, created_by_name, authorised_by_name, reviewed_by_name
               FROM bulk_transfers "# + $where,
            $($arg),*
        )
    };
}

/// The batch a conditional write of `tx` returned the id of, as it is now; `None` when the
/// write changed nothing.
async fn reread(
    tx: &mut Tx,
    id: Option<uuid::Uuid>,
) -> Result<Option<BulkTransferRow>, StoreError> {
    let Some(id) = id else {
        return Ok(None);
    };
    Ok(batch_row!("WHERE id = $1", id)
        .fetch_optional(&mut **tx)
        .await?)
}

impl kobo_store::bulk_transfers::BulkTransfers for crate::Backend {
    async fn create(
        tx: &mut Tx,
        batch: &NewBulkTransfer,
        items: &[NewBulkItem],
    ) -> Result<(), StoreError> {
        sqlx::query!(
            "INSERT INTO bulk_transfers (id, business_id, reference, source_account_id, \
               on_invalid, status, narration, item_count, created_by, created_via, \
               next_attempt_at, created_at, updated_at, source_account_number, created_by_name, \
               execute_at) \
             VALUES ($1, $2, $3, $4, $5, 'validating', $6, $7, $8, $9, $10, $10, $10, $11, $12, $13)",
            batch.id,
            new_id(&batch.business_id)?,
            batch.reference,
            new_id(&batch.source_account_id)?,
            batch.on_invalid,
            batch.narration,
            items.len() as i64,
            batch.created_by,
            batch.created_via,
            batch.now,
            batch.source_account_number,
            batch.created_by_name,
            batch.execute_at
        )
        .execute(&mut **tx)
        .await?;
        let column = |f: fn(&NewBulkItem) -> Option<String>| -> Vec<Option<String>> {
            items.iter().map(f).collect()
        };
        sqlx::query!(
            "INSERT INTO bulk_transfer_items (bulk_transfer_id, idx, transfer_id, beneficiary_id, \
               account_number, bank_code, account_name, amount, narration, reference, validation) \
             SELECT $1, i.* , 'pending' FROM unnest($2::bigint[], $3::uuid[], $4::uuid[], \
               $5::text[], $6::text[], $7::text[], $8::bigint[], $9::text[], $10::text[]) AS i",
            batch.id,
            &items.iter().map(|item| item.idx).collect::<Vec<_>>(),
            &items
                .iter()
                .map(|item| item.transfer_id)
                .collect::<Vec<_>>(),
            &items
                .iter()
                .map(|item| item.beneficiary_id)
                .collect::<Vec<_>>() as &[Option<uuid::Uuid>],
            &items
                .iter()
                .map(|item| item.account_number.clone())
                .collect::<Vec<_>>(),
            &items
                .iter()
                .map(|item| item.bank_code.clone())
                .collect::<Vec<_>>(),
            &items
                .iter()
                .map(|item| item.account_name.clone())
                .collect::<Vec<_>>(),
            &items.iter().map(|item| item.amount).collect::<Vec<_>>(),
            &column(|item| item.narration.clone()) as &[Option<String>],
            &column(|item| item.reference.clone()) as &[Option<String>],
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn get(
        conn: Self::Conn<'_>,
        business_id: &str,
        batch_id: &uuid::Uuid,
    ) -> Result<Option<BulkTransferRow>, StoreError> {
        let business_id = id(business_id);
        conn.run(async |conn| {
            Ok(
                batch_row!("WHERE business_id = $1 AND id = $2", business_id, batch_id)
                    .fetch_optional(&mut *conn)
                    .await?,
            )
        })
        .await
    }

    async fn by_reference(
        conn: Self::Conn<'_>,
        business_id: &str,
        reference: &str,
    ) -> Result<Option<BulkTransferRow>, StoreError> {
        let business_id = id(business_id);
        conn.run(async |conn| {
            Ok(batch_row!(
                "WHERE reference = $2 AND business_id = $1",
                business_id,
                reference
            )
            .fetch_optional(&mut *conn)
            .await?)
        })
        .await
    }

    async fn list(
        conn: Self::Conn<'_>,
        business_id: &str,
        status: Option<&str>,
        cursor: Option<&Cursor>,
        limit: u64,
    ) -> Result<Vec<BulkTransferRow>, StoreError> {
        let business_id = id(business_id);
        let (after_at, after_id) = cursor.map(|c| (c.created_at, c.id)).unzip();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        conn.run(async |conn| {
            Ok(batch_row!(
                "WHERE business_id = $1 AND ($2::text IS NULL OR status = $2)
                   AND ($3::timestamptz IS NULL OR (created_at, id) < ($3, $4))
                 ORDER BY created_at DESC, id DESC LIMIT $5",
                business_id,
                status,
                after_at,
                after_id,
                limit
            )
            .fetch_all(&mut *conn)
            .await?)
        })
        .await
    }

    async fn items(
        conn: Self::Conn<'_>,
        batch_id: &uuid::Uuid,
        validation: Option<&str>,
        from_idx: i64,
        limit: u64,
    ) -> Result<Vec<BulkItemRow>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        conn.run(async |conn| {
            Ok(sqlx::query_as!(
                BulkItemRow,
                r#"SELECT i.idx, i.transfer_id, i.beneficiary_id, i.account_number, i.bank_code,
                   i.account_name, i.amount, i.narration, i.reference, i.validation, i.bank_name,
                   i.transfer_type, i.confirmed_name, i.enquired_at, i.fee, i.vat, i.refusal_code,
                   i.refusal_message, i.failure_code, i.failure_message,
                   t.transfer_status AS "transfer_status?", t.reference_number AS "reference_number?"
                 FROM bulk_transfer_items i LEFT JOIN transfers t ON t.id = i.transfer_id
                 WHERE i.bulk_transfer_id = $1 AND i.idx >= $2
                   AND ($3::text IS NULL OR i.validation = $3)
                 ORDER BY i.idx LIMIT $4"#,
                batch_id,
                from_idx,
                validation,
                limit
            )
            .fetch_all(&mut *conn)
            .await?)
        })
        .await
    }

    async fn claim(
        tx: &mut Tx,
        status: &str,
        owner: &str,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Option<BulkTransferRow>, StoreError> {
        let claimed = sqlx::query_scalar!(
            "UPDATE bulk_transfers SET lease_owner = $1, lease_until = $3, \
               attempts = attempts + 1 \
             WHERE id = (SELECT id FROM bulk_transfers \
                 WHERE status = $4 AND next_attempt_at <= $2 \
                   AND (lease_until IS NULL OR lease_until < $2) \
                 ORDER BY next_attempt_at, id LIMIT 1 FOR UPDATE SKIP LOCKED) \
             RETURNING id",
            owner,
            now,
            until,
            status
        )
        .fetch_optional(&mut **tx)
        .await?;
        reread(tx, claimed).await
    }

    async fn judge(
        tx: &mut Tx,
        batch_id: &uuid::Uuid,
        owner: &str,
        judged: &[Judgement],
        until: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let held = sqlx::query!(
            "UPDATE bulk_transfers SET lease_until = $3 \
             WHERE id = $1 AND status = 'validating' AND lease_owner = $2",
            batch_id,
            owner,
            until
        )
        .execute(&mut **tx)
        .await?;
        if held.rows_affected() != 1 {
            return Ok(false);
        }
        let text = |f: fn(&Judgement) -> Option<String>| -> Vec<Option<String>> {
            judged.iter().map(f).collect()
        };
        let number = |f: fn(&Judgement) -> Option<i64>| -> Vec<Option<i64>> {
            judged.iter().map(f).collect()
        };
        sqlx::query!(
            "UPDATE bulk_transfer_items i SET validation = j.validation, bank_name = j.bank_name, \
               transfer_type = j.transfer_type, confirmed_name = j.confirmed_name, \
               enquired_at = j.enquired_at, fee = j.fee, vat = j.vat, \
               refusal_code = j.refusal_code, refusal_message = j.refusal_message \
             FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], \
               $7::timestamptz[], $8::bigint[], $9::bigint[], $10::text[], $11::text[]) \
               AS j (idx, validation, bank_name, transfer_type, confirmed_name, enquired_at, fee, \
                 vat, refusal_code, refusal_message) \
             WHERE i.bulk_transfer_id = $1 AND i.idx = j.idx AND i.validation = 'pending'",
            batch_id,
            &judged.iter().map(|j| j.idx).collect::<Vec<_>>(),
            &judged
                .iter()
                .map(|j| j.validation.clone())
                .collect::<Vec<_>>(),
            &text(|j| j.bank_name.clone()) as &[Option<String>],
            &text(|j| j.transfer_type.clone()) as &[Option<String>],
            &text(|j| j.confirmed_name.clone()) as &[Option<String>],
            &judged.iter().map(|j| j.enquired_at).collect::<Vec<_>>() as &[Option<DateTime<Utc>>],
            &number(|j| j.fee) as &[Option<i64>],
            &number(|j| j.vat) as &[Option<i64>],
            &text(|j| j.refusal_code.clone()) as &[Option<String>],
            &text(|j| j.refusal_message.clone()) as &[Option<String>],
        )
        .execute(&mut **tx)
        .await?;
        Ok(true)
    }

    async fn later(
        tx: &mut Tx,
        batch_id: &uuid::Uuid,
        owner: &str,
        due: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let moved = sqlx::query!(
            "UPDATE bulk_transfers SET next_attempt_at = $3, lease_owner = NULL, \
               lease_until = NULL \
             WHERE id = $1 AND status IN ('validating', 'executing') AND lease_owner = $2",
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
        let finished = sqlx::query_scalar!(
            "WITH judged AS (
               SELECT count(*) FILTER (WHERE validation = 'pending') AS pending,
                 count(*) FILTER (WHERE validation = 'valid') AS valid,
                 count(*) FILTER (WHERE validation = 'invalid') AS invalid,
                 coalesce(sum(amount) FILTER (WHERE validation = 'valid'), 0)::bigint AS amount,
                 coalesce(sum(fee) FILTER (WHERE validation = 'valid'), 0)::bigint AS fee,
                 coalesce(sum(vat) FILTER (WHERE validation = 'valid'), 0)::bigint AS vat
               FROM bulk_transfer_items WHERE bulk_transfer_id = $1)
             UPDATE bulk_transfers b SET
               status = CASE WHEN j.valid = 0 OR (j.invalid > 0 AND b.on_invalid = 'refuse_batch')
                 THEN 'invalid' ELSE 'validated' END,
               valid_count = j.valid, invalid_count = j.invalid, total_amount = j.amount,
               total_fee = j.fee, total_vat = j.vat, validated_at = $3, updated_at = $3,
               lease_owner = NULL, lease_until = NULL, next_attempt_at = NULL
             FROM judged j
             WHERE b.id = $1 AND b.status = 'validating' AND b.lease_owner = $2 AND j.pending = 0
             RETURNING b.id",
            batch_id,
            owner,
            now
        )
        .fetch_optional(&mut **tx)
        .await?;
        reread(tx, finished).await
    }

    async fn cancel(
        tx: &mut Tx,
        business_id: &str,
        batch_id: &uuid::Uuid,
        from: &[&str],
        now: DateTime<Utc>,
    ) -> Result<Option<BulkTransferRow>, StoreError> {
        let from: Vec<String> = from.iter().map(|status| status.to_string()).collect();
        let cancelled = sqlx::query_scalar!(
            "UPDATE bulk_transfers SET status = 'cancelled', cancelled_at = $4, updated_at = $4, \
               lease_owner = NULL, lease_until = NULL, next_attempt_at = NULL \
             WHERE business_id = $1 AND id = $2 AND status = ANY($3) RETURNING id",
            id(business_id),
            batch_id,
            &from,
            now
        )
        .fetch_optional(&mut **tx)
        .await?;
        reread(tx, cancelled).await
    }
    async fn authorise(
        tx: &mut Tx,
        business_id: &str,
        batch_id: &uuid::Uuid,
        authorisation: &Authorisation<'_>,
    ) -> Result<Option<BulkTransferRow>, StoreError> {
        let moved = sqlx::query_scalar!(
            "UPDATE bulk_transfers SET status = $3, authorised_by = $4, credential_issued_by = $5, \
               authorised_at = $6::timestamptz, reserved = $7, updated_at = $6, \
               authorised_by_name = $8, expires_at = $9, \
               next_attempt_at = $10 \
             WHERE business_id = $1 AND id = $2 AND status = 'validated' RETURNING id",
            id(business_id),
            batch_id,
            authorisation.to,
            authorisation.by,
            authorisation.credential_issued_by,
            authorisation.at,
            authorisation.reserved,
            authorisation.by_name,
            authorisation.expires_at,
            authorisation.due
        )
        .fetch_optional(&mut **tx)
        .await?;
        reread(tx, moved).await
    }

    async fn end_hold(
        tx: &mut Tx,
        business_id: &str,
        batch_id: &uuid::Uuid,
        end: &HoldEnd<'_>,
    ) -> Result<Option<BulkTransferRow>, StoreError> {
        let moved = sqlx::query_scalar!(
            "UPDATE bulk_transfers SET status = $3, reviewed_by = COALESCE($4, reviewed_by), \
               reviewed_at = CASE WHEN $4::text IS NULL THEN reviewed_at ELSE $7::timestamptz END, \
               review_reason = COALESCE($5, review_reason), released = released + $6, \
               updated_at = $7, reviewed_by_name = COALESCE($8, reviewed_by_name), \
               expires_at = NULL, \
               cancelled_at = CASE WHEN $3 = 'cancelled' THEN $7::timestamptz END, \
               next_attempt_at = $10 \
             WHERE business_id = $1 AND id = $2 AND status = $9 RETURNING id",
            id(business_id),
            batch_id,
            end.to,
            end.reviewer,
            end.reason,
            end.released,
            end.at,
            end.reviewer_name,
            end.from,
            end.due
        )
        .fetch_optional(&mut **tx)
        .await?;
        reread(tx, moved).await
    }

    async fn start_scheduled(tx: &mut Tx, now: DateTime<Utc>) -> Result<u64, StoreError> {
        let started = sqlx::query!(
            "UPDATE bulk_transfers SET status = 'executing', updated_at = $1 \
             WHERE status = 'scheduled' AND next_attempt_at <= $1",
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
        let passed = sqlx::query!(
            "UPDATE bulk_transfers SET next_index = $3 + 1, paid = paid + $4, lease_until = $5 \
             WHERE id = $1 AND status = 'executing' AND lease_owner = $2 AND next_index <= $3",
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
                "UPDATE bulk_transfer_items SET failure_code = $3, failure_message = $4 \
                 WHERE bulk_transfer_id = $1 AND idx = $2",
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
        let released = sqlx::query!(
            "UPDATE bulk_transfers SET released = released + $3, executed_at = $4, \
               next_index = item_count, updated_at = $4 \
             WHERE id = $1 AND status = 'executing' AND lease_owner = $2 AND executed_at IS NULL",
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
        let completed = sqlx::query_scalar!(
            "UPDATE bulk_transfers SET status = 'completed', completed_at = $3, updated_at = $3, \
               lease_owner = NULL, lease_until = NULL, next_attempt_at = NULL \
             WHERE id = $1 AND status = 'executing' AND lease_owner = $2 \
               AND executed_at IS NOT NULL RETURNING id",
            batch_id,
            owner,
            now
        )
        .fetch_optional(&mut **tx)
        .await?;
        reread(tx, completed).await
    }

    async fn outcomes(
        conn: Self::Conn<'_>,
        ids: &[uuid::Uuid],
    ) -> Result<Vec<Outcomes>, StoreError> {
        conn.run(async |conn| {
            Ok(sqlx::query_as!(
                Outcomes,
                r#"SELECT i.bulk_transfer_id AS "bulk_transfer_id!",
                   count(*) FILTER (WHERE t.transfer_status = 'success') AS "succeeded!",
                   count(*) FILTER (WHERE t.transfer_status = 'processing') AS "processing!",
                   count(*) FILTER (WHERE i.failure_code IS NOT NULL
                     OR t.transfer_status = 'failed') AS "failed!",
                   count(*) FILTER (WHERE t.transfer_status = 'reversed') AS "reversed!"
                 FROM bulk_transfer_items i LEFT JOIN transfers t ON t.id = i.transfer_id
                 WHERE i.bulk_transfer_id = ANY($1)
                   AND (t.id IS NOT NULL OR i.failure_code IS NOT NULL)
                 GROUP BY i.bulk_transfer_id"#,
                ids
            )
            .fetch_all(&mut *conn)
            .await?)
        })
        .await
    }
    async fn reserving(tx: &mut Tx, account_id: &str) -> Result<Option<uuid::Uuid>, StoreError> {
        Ok(sqlx::query_scalar!(
            "SELECT id FROM bulk_transfers WHERE source_account_id = $1 \
               AND (status IN ('pending_approval', 'scheduled') \
                    OR (status = 'executing' AND executed_at IS NULL)) \
             LIMIT 1",
            id(account_id)
        )
        .fetch_optional(&mut **tx)
        .await?)
    }
    async fn due_holds(
        pool: &crate::Pool,
        now: DateTime<Utc>,
    ) -> Result<Vec<(String, uuid::Uuid)>, StoreError> {
        pool.run(async |conn| {
            let rows = sqlx::query!(
                r#"SELECT business_id::text AS "business_id!", id FROM bulk_transfers
                   WHERE status = 'pending_approval' AND expires_at <= $1
                   ORDER BY expires_at LIMIT 100"#,
                now
            )
            .fetch_all(&mut *conn)
            .await?;
            Ok(rows
                .into_iter()
                .map(|row| (row.business_id, row.id))
                .collect())
        })
        .await
    }
}
