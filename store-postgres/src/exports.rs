//! `exports` and `export_parts`: files written in the background, a part at a time (see
//! `kobo_store::exports`).

use chrono::{DateTime, Utc};
use kobo_store::paging::Cursor;
use kobo_store::transactions::TransactionRow;

use crate::{id, new_id, new_opt_id, StoreError, Tx};
pub use kobo_store::exports::{ExportRow, NewExport, NewPart};

kobo_store::exports_functions!(backend crate::Backend);

/// The columns of an [`ExportRow`], as `query_as!` reads them.
macro_rules! export_row {
    ($where:literal $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            ExportRow,
            r#"SELECT id, business_id::text AS "business_id!", category, status,
                 account_id::text AS account_id, account_number, start_date, end_date, row_count,
                 size_bytes, parts, cursor_created_at, cursor_id, file_name, content_type,
                 failure_reason, attempts, requested_by, created_at, completed_at, expires_at
               FROM exports "# + $where,
            $($arg),*
        )
    };
}

impl kobo_store::exports::Exports for crate::Backend {
    async fn create(
        tx: &mut Tx,
        export: &NewExport,
        max_unfinished: i64,
    ) -> Result<bool, StoreError> {
        let business_id = new_id(&export.business_id)?;
        // Two creations of one business wait for each other here, so each counts the other.
        sqlx::query!(
            "SELECT pg_advisory_xact_lock(hashtextextended('exports ' || $1::uuid::text, 0))",
            business_id
        )
        .execute(&mut **tx)
        .await?;
        let written = sqlx::query!(
            "INSERT INTO exports (id, business_id, category, status, account_id, account_number, \
               start_date, end_date, file_name, content_type, requested_by, created_at) \
             SELECT $1, $2, $3, 'pending', $4, $5, $6, $7, $8, $9, $10, $11 \
             WHERE (SELECT count(*) FROM exports \
                    WHERE business_id = $2 AND status IN ('pending', 'running')) < $12",
            export.id,
            business_id,
            export.category,
            new_opt_id(export.account_id.as_deref())?,
            export.account_number,
            export.start_date,
            export.end_date,
            export.file_name,
            export.content_type,
            export.requested_by,
            export.created_at,
            max_unfinished
        )
        .execute(&mut **tx)
        .await?;
        Ok(written.rows_affected() == 1)
    }

    async fn get(
        conn: Self::Conn<'_>,
        business_id: &str,
        export_id: &uuid::Uuid,
    ) -> Result<Option<ExportRow>, StoreError> {
        let business_id = id(business_id);
        conn.run(async |conn| {
            Ok(
                export_row!("WHERE business_id = $1 AND id = $2", business_id, export_id)
                    .fetch_optional(&mut *conn)
                    .await?,
            )
        })
        .await
    }

    async fn list(
        conn: Self::Conn<'_>,
        business_id: &str,
        status: Option<&str>,
        cursor: Option<&Cursor>,
        limit: u64,
    ) -> Result<Vec<ExportRow>, StoreError> {
        let business_id = id(business_id);
        let (after_at, after_id) = cursor.map(|c| (c.created_at, c.id)).unzip();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        conn.run(async |conn| {
            Ok(export_row!(
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

    async fn claim(
        tx: &mut Tx,
        owner: &str,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Option<ExportRow>, StoreError> {
        let claimed = sqlx::query_scalar!(
            "UPDATE exports SET status = 'running', lease_owner = $1, lease_until = $3, \
               attempts = attempts + 1 \
             WHERE id = (SELECT id FROM exports \
                 WHERE status IN ('pending', 'running') \
                   AND (status = 'pending' OR lease_until IS NULL OR lease_until < $2) \
                 ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED) \
             RETURNING id",
            owner,
            now,
            until
        )
        .fetch_optional(&mut **tx)
        .await?;
        let Some(claimed) = claimed else {
            return Ok(None);
        };
        Ok(export_row!("WHERE id = $1", claimed)
            .fetch_optional(&mut **tx)
            .await?)
    }

    async fn append(
        tx: &mut Tx,
        export_id: &uuid::Uuid,
        owner: &str,
        part: &NewPart<'_>,
        until: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let size = i64::try_from(part.content.len()).unwrap_or(i64::MAX);
        let (cursor_at, cursor_id) = part.cursor.as_ref().map(|c| (c.created_at, c.id)).unzip();
        let moved = sqlx::query!(
            "UPDATE exports SET parts = $3::bigint, row_count = row_count + $4, \
               size_bytes = size_bytes + $5, cursor_created_at = $6, cursor_id = $7, \
               lease_until = $8 \
             WHERE id = $1 AND status = 'running' AND lease_owner = $2 AND parts = $3::bigint - 1",
            export_id,
            owner,
            part.part,
            part.rows,
            size,
            cursor_at,
            cursor_id,
            until
        )
        .execute(&mut **tx)
        .await?;
        if moved.rows_affected() != 1 {
            return Ok(false);
        }
        sqlx::query!(
            "INSERT INTO export_parts (export_id, part, rows, content) VALUES ($1, $2, $3, $4)",
            export_id,
            part.part,
            part.rows,
            part.content
        )
        .execute(&mut **tx)
        .await?;
        Ok(true)
    }

    async fn finish(
        tx: &mut Tx,
        export_id: &uuid::Uuid,
        owner: &str,
        now: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query!(
            "UPDATE exports SET status = 'ready', completed_at = $3, expires_at = $4, \
               lease_owner = NULL, lease_until = NULL \
             WHERE id = $1 AND status = 'running' AND lease_owner = $2",
            export_id,
            owner,
            now,
            expires_at
        )
        .execute(&mut **tx)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn fail(
        tx: &mut Tx,
        export_id: &uuid::Uuid,
        owner: Option<&str>,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let failed = sqlx::query!(
            "UPDATE exports SET status = 'failed', failure_reason = $3, completed_at = $4, \
               lease_owner = NULL, lease_until = NULL \
             WHERE id = $1 AND status IN ('pending', 'running') \
               AND ($2::text IS NULL OR lease_owner = $2)",
            export_id,
            owner,
            reason,
            now
        )
        .execute(&mut **tx)
        .await?;
        if failed.rows_affected() != 1 {
            return Ok(false);
        }
        sqlx::query!("DELETE FROM export_parts WHERE export_id = $1", export_id)
            .execute(&mut **tx)
            .await?;
        Ok(true)
    }

    async fn part(
        conn: Self::Conn<'_>,
        export_id: &uuid::Uuid,
        part: i64,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        conn.run(async |conn| {
            Ok(sqlx::query_scalar!(
                "SELECT content FROM export_parts WHERE export_id = $1 AND part = $2",
                export_id,
                part
            )
            .fetch_optional(&mut *conn)
            .await?)
        })
        .await
    }

    async fn expire(tx: &mut Tx, now: DateTime<Utc>, limit: i64) -> Result<u64, StoreError> {
        let expired = sqlx::query_scalar!(
            "UPDATE exports SET status = 'expired' WHERE id IN (SELECT id FROM exports \
               WHERE status = 'ready' AND expires_at < $1 ORDER BY expires_at LIMIT $2 \
               FOR UPDATE SKIP LOCKED) RETURNING id",
            now,
            limit
        )
        .fetch_all(&mut **tx)
        .await?;
        if !expired.is_empty() {
            sqlx::query!(
                "DELETE FROM export_parts WHERE export_id = ANY($1)",
                &expired
            )
            .execute(&mut **tx)
            .await?;
        }
        Ok(expired.len() as u64)
    }

    async fn rows(
        conn: Self::Conn<'_>,
        business_id: &str,
        account_id: Option<&str>,
        after: &Cursor,
        until: DateTime<Utc>,
        limit: u64,
    ) -> Result<Vec<TransactionRow>, StoreError> {
        let business_id = id(business_id);
        let account_id = account_id.map(id);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        conn.run(async |conn| {
            Ok(match account_id {
                Some(account_id) => {
                    sqlx::query_as!(
                        TransactionRow,
                        "SELECT t.id, t.reference_number, t.transaction_type, t.category, \
                           t.status, t.channel, t.amount, t.narration, t.session_id, \
                           t.originator_account_number, t.originator_account_name, \
                           t.originator_bank_code, t.originator_bank_name, t.created_at, \
                           a.account_number, a.account_name, t.balance_after \
                         FROM transactions t JOIN accounts a ON a.id = t.account_id \
                         WHERE t.account_id = $1 AND a.business_id = $2 \
                           AND (t.created_at, t.id) > ($3, $4) AND t.created_at < $5 \
                         ORDER BY t.created_at, t.id LIMIT $6",
                        account_id,
                        business_id,
                        after.created_at,
                        after.id,
                        until,
                        limit
                    )
                    .fetch_all(&mut *conn)
                    .await?
                }
                None => {
                    sqlx::query_as!(
                        TransactionRow,
                        "SELECT t.id, t.reference_number, t.transaction_type, t.category, \
                           t.status, t.channel, t.amount, t.narration, t.session_id, \
                           t.originator_account_number, t.originator_account_name, \
                           t.originator_bank_code, t.originator_bank_name, t.created_at, \
                           a.account_number, a.account_name, t.balance_after \
                         FROM transactions t JOIN accounts a ON a.id = t.account_id \
                         WHERE t.business_id = $1 \
                           AND (t.created_at, t.id) > ($2, $3) AND t.created_at < $4 \
                         ORDER BY t.created_at, t.id LIMIT $5",
                        business_id,
                        after.created_at,
                        after.id,
                        until,
                        limit
                    )
                    .fetch_all(&mut *conn)
                    .await?
                }
            })
        })
        .await
    }
}
