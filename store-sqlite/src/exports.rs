//! `exports` and `export_parts`: files written in the background, a part at a time (see
//! `kobo_store::exports`).

use chrono::{DateTime, NaiveDate, Utc};
use kobo_store::paging::Cursor;
use kobo_store::transactions::TransactionRow;

use crate::transactions::Listed;
use crate::{on, timestamp, uuid, StoreError, Tx};
pub use kobo_store::exports::{ExportRow, NewExport, NewPart};

kobo_store::exports_functions!(backend crate::Backend);

/// An [`ExportRow`] as read, its ids still text.
struct Stored {
    id: String,
    business_id: String,
    category: String,
    status: String,
    account_id: Option<String>,
    account_number: Option<String>,
    start_date: NaiveDate,
    end_date: NaiveDate,
    row_count: i64,
    size_bytes: i64,
    parts: i64,
    cursor_created_at: Option<DateTime<Utc>>,
    cursor_id: Option<String>,
    file_name: String,
    content_type: String,
    failure_reason: Option<String>,
    attempts: i64,
    requested_by: String,
    created_at: DateTime<Utc>,
    completed_at: Option<DateTime<Utc>>,
    expires_at: Option<DateTime<Utc>>,
}

impl Stored {
    fn into_row(self) -> Result<ExportRow, StoreError> {
        Ok(ExportRow {
            id: uuid(&self.id)?,
            business_id: self.business_id,
            category: self.category,
            status: self.status,
            account_id: self.account_id,
            account_number: self.account_number,
            start_date: self.start_date,
            end_date: self.end_date,
            row_count: self.row_count,
            size_bytes: self.size_bytes,
            parts: self.parts,
            cursor_created_at: self.cursor_created_at,
            cursor_id: self.cursor_id.as_deref().map(uuid).transpose()?,
            file_name: self.file_name,
            content_type: self.content_type,
            failure_reason: self.failure_reason,
            attempts: self.attempts,
            requested_by: self.requested_by,
            created_at: self.created_at,
            completed_at: self.completed_at,
            expires_at: self.expires_at,
        })
    }
}

/// The columns of a [`Stored`], as `query_as!` reads them.
macro_rules! stored {
    ($where:literal $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            Stored,
            r#"SELECT id AS "id!", business_id, category, status, account_id, account_number,
                 start_date AS "start_date: NaiveDate", end_date AS "end_date: NaiveDate",
                 row_count, size_bytes, parts,
                 cursor_created_at AS "cursor_created_at: DateTime<Utc>", cursor_id, file_name,
                 content_type, failure_reason, attempts, requested_by,
                 created_at AS "created_at: DateTime<Utc>",
                 completed_at AS "completed_at: DateTime<Utc>",
                 expires_at AS "expires_at: DateTime<Utc>"
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
        // SQLite writes one transaction at a time: the count cannot race.
        let id = export.id.to_string();
        let start_date = export.start_date.to_string();
        let end_date = export.end_date.to_string();
        let created_at = timestamp(export.created_at);
        let written = sqlx::query!(
            "INSERT INTO exports (id, business_id, category, status, account_id, account_number, \
               start_date, end_date, file_name, content_type, requested_by, created_at) \
             SELECT ?1, ?2, ?3, 'pending', ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11 \
             WHERE (SELECT count(*) FROM exports \
                    WHERE business_id = ?2 AND status IN ('pending', 'running')) < ?12",
            id,
            export.business_id,
            export.category,
            export.account_id,
            export.account_number,
            start_date,
            end_date,
            export.file_name,
            export.content_type,
            export.requested_by,
            created_at,
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
        let export_id = export_id.to_string();
        let query = stored!("WHERE business_id = ?1 AND id = ?2", business_id, export_id);
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
    ) -> Result<Vec<ExportRow>, StoreError> {
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

    async fn claim(
        tx: &mut Tx,
        owner: &str,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Option<ExportRow>, StoreError> {
        let now = timestamp(now);
        let until = timestamp(until);
        let claimed = sqlx::query_scalar!(
            r#"UPDATE exports SET status = 'running', lease_owner = ?1, lease_until = ?3,
                 attempts = attempts + 1
               WHERE id = (SELECT id FROM exports
                   WHERE status IN ('pending', 'running')
                     AND (status = 'pending' OR lease_until IS NULL OR lease_until < ?2)
                   ORDER BY created_at, id LIMIT 1)
               RETURNING id AS "id!""#,
            owner,
            now,
            until
        )
        .fetch_optional(&mut **tx)
        .await?;
        let Some(claimed) = claimed else {
            return Ok(None);
        };
        stored!("WHERE id = ?1", claimed)
            .fetch_optional(&mut **tx)
            .await?
            .map(Stored::into_row)
            .transpose()
    }

    async fn append(
        tx: &mut Tx,
        export_id: &uuid::Uuid,
        owner: &str,
        part: &NewPart<'_>,
        until: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let export_id = export_id.to_string();
        let size = i64::try_from(part.content.len()).unwrap_or(i64::MAX);
        let cursor_at = part.cursor.as_ref().map(|c| timestamp(c.created_at));
        let cursor_id = part.cursor.as_ref().map(|c| c.id.to_string());
        let until = timestamp(until);
        let moved = sqlx::query!(
            "UPDATE exports SET parts = ?3, row_count = row_count + ?4, \
               size_bytes = size_bytes + ?5, cursor_created_at = ?6, cursor_id = ?7, \
               lease_until = ?8 \
             WHERE id = ?1 AND status = 'running' AND lease_owner = ?2 AND parts = ?3 - 1",
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
            "INSERT INTO export_parts (export_id, part, rows, content) VALUES (?1, ?2, ?3, ?4)",
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
        let export_id = export_id.to_string();
        let now = timestamp(now);
        let expires_at = timestamp(expires_at);
        let done = sqlx::query!(
            "UPDATE exports SET status = 'ready', completed_at = ?3, expires_at = ?4, \
               lease_owner = NULL, lease_until = NULL \
             WHERE id = ?1 AND status = 'running' AND lease_owner = ?2",
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
        let export_id = export_id.to_string();
        let now = timestamp(now);
        let failed = sqlx::query!(
            "UPDATE exports SET status = 'failed', failure_reason = ?3, completed_at = ?4, \
               lease_owner = NULL, lease_until = NULL \
             WHERE id = ?1 AND status IN ('pending', 'running') \
               AND (?2 IS NULL OR lease_owner = ?2)",
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
        sqlx::query!("DELETE FROM export_parts WHERE export_id = ?1", export_id)
            .execute(&mut **tx)
            .await?;
        Ok(true)
    }

    async fn part(
        conn: Self::Conn<'_>,
        export_id: &uuid::Uuid,
        part: i64,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let export_id = export_id.to_string();
        let query = sqlx::query_scalar!(
            "SELECT content FROM export_parts WHERE export_id = ?1 AND part = ?2",
            export_id,
            part
        );
        Ok(on!(conn, query, fetch_optional)?)
    }

    async fn expire(tx: &mut Tx, now: DateTime<Utc>, limit: i64) -> Result<u64, StoreError> {
        let now = timestamp(now);
        let expired = sqlx::query_scalar!(
            r#"UPDATE exports SET status = 'expired' WHERE id IN (SELECT id FROM exports
                 WHERE status = 'ready' AND expires_at < ?1 ORDER BY expires_at LIMIT ?2)
               RETURNING id AS "id!""#,
            now,
            limit
        )
        .fetch_all(&mut **tx)
        .await?;
        for export_id in &expired {
            sqlx::query!("DELETE FROM export_parts WHERE export_id = ?1", export_id)
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
        let after_at = timestamp(after.created_at);
        let after_id = after.id.to_string();
        let until = timestamp(until);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = match account_id {
            Some(account_id) => {
                let query = sqlx::query_as!(
                    Listed,
                    r#"SELECT t.id AS "id!", t.reference_number, t.transaction_type, t.category,
                         t.status, t.channel, t.amount, t.narration, t.session_id,
                         t.originator_account_number, t.originator_account_name,
                         t.originator_bank_code, t.originator_bank_name,
                         t.created_at AS "created_at: DateTime<Utc>",
                         a.account_number, a.account_name,
                         t.balance_after AS "balance_after!: i64"
                       FROM transactions t INDEXED BY transactions_account_keyset
                       JOIN accounts a ON a.id = t.account_id
                       WHERE t.account_id = ?1 AND a.business_id = ?2
                         AND (t.created_at, t.id) > (?3, ?4) AND t.created_at < ?5
                       ORDER BY t.created_at, t.id LIMIT ?6"#,
                    account_id,
                    business_id,
                    after_at,
                    after_id,
                    until,
                    limit
                );
                on!(conn, query, fetch_all)?
            }
            None => {
                let query = sqlx::query_as!(
                    Listed,
                    r#"SELECT t.id AS "id!", t.reference_number, t.transaction_type, t.category,
                         t.status, t.channel, t.amount, t.narration, t.session_id,
                         t.originator_account_number, t.originator_account_name,
                         t.originator_bank_code, t.originator_bank_name,
                         t.created_at AS "created_at: DateTime<Utc>",
                         a.account_number, a.account_name,
                         t.balance_after AS "balance_after!: i64"
                       FROM transactions t INDEXED BY transactions_keyset
                       JOIN accounts a ON a.id = t.account_id
                       WHERE t.business_id = ?1
                         AND (t.created_at, t.id) > (?2, ?3) AND t.created_at < ?4
                       ORDER BY t.created_at, t.id LIMIT ?5"#,
                    business_id,
                    after_at,
                    after_id,
                    until,
                    limit
                );
                on!(conn, query, fetch_all)?
            }
        };
        rows.into_iter().map(Listed::into_row).collect()
    }
}
