//! `transfers`: every payout, held, settled, failed or reversed, with its NIP bookkeeping
//! (submitted, attempts, the worker's lease) and its review.

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::Row;

use super::batch::{Batch, SqlBatch, Write};
use super::{Conn, FromAnyRow, Store, StoreError, Tx};
use crate::kernel::paging::{Conditions, Cursor, Sql};
use crate::kernel::store::{self, Backend};
pub use kobo_store::transfers::{
    Filters, HeldRow, LeasedRow, Lookup, NewTransfer, Review, TransferRow,
};

const TRANSFER_COLUMNS: &str = "t.id, t.reference_number, t.reference, t.amount, t.fee, t.vat, \
    t.transfer_status, t.approval_status, t.transfer_type, a.account_number AS source_account_number, \
    t.beneficiary_account_number, t.beneficiary_account_name, t.bank_code, t.bank_name, \
    t.narration, t.session_id, t.failure_reason, t.reversal_reference_number, t.initiated_by, \
    t.initiated_via, t.reviewed_by, t.expires_at, t.created_at, t.updated_at";
const TRANSFER_FROM: &str = " FROM transfers t JOIN accounts a ON a.id = t.source_account_id";

impl FromAnyRow for TransferRow {
    fn from_any(row: &AnyRow) -> Result<TransferRow, StoreError> {
        let text = |column: &str| store::text(row, column);
        let optional = |column: &str| store::optional_text(row, column);
        Ok(TransferRow {
            id: text("id")?,
            reference_number: text("reference_number")?,
            reference: optional("reference")?,
            amount: row.try_get("amount")?,
            fee: row.try_get("fee")?,
            vat: row.try_get("vat")?,
            transfer_status: text("transfer_status")?,
            approval_status: text("approval_status")?,
            transfer_type: text("transfer_type")?,
            source_account_number: text("source_account_number")?,
            beneficiary_account_number: text("beneficiary_account_number")?,
            beneficiary_account_name: text("beneficiary_account_name")?,
            bank_code: text("bank_code")?,
            bank_name: text("bank_name")?,
            narration: text("narration")?,
            session_id: optional("session_id")?,
            failure_reason: optional("failure_reason")?,
            reversal_reference_number: optional("reversal_reference_number")?,
            initiated_by: text("initiated_by")?,
            initiated_via: text("initiated_via")?,
            reviewed_by: optional("reviewed_by")?,
            expires_at: store::optional_time(row, "expires_at")?,
            created_at: store::time(row, "created_at")?,
            updated_at: store::time(row, "updated_at")?,
        })
    }
}

/// The business's transfer found by `lookup`.
pub async fn find(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
    lookup: Lookup<'_>,
) -> Result<Option<TransferRow>, StoreError> {
    let (column, key) = match lookup {
        Lookup::Id(id) => ("t.id", id),
        Lookup::ReferenceNumber(reference) => ("t.reference_number", reference),
        Lookup::Reference(reference) => ("t.reference", reference),
    };
    let sql = format!(
        "SELECT {TRANSFER_COLUMNS}{TRANSFER_FROM} WHERE t.business_id = $1 AND {column} = $2"
    );
    // Planned each time, not kept: see [`reference_owner`].
    let query = sqlx::query(sqlx::AssertSqlSafe(sql))
        .persistent(false)
        .bind(business_id.to_owned())
        .bind(key.to_owned());
    let row = conn.into().fetch_optional(query).await?;
    row.as_ref().map(TransferRow::from_any).transpose()
}

/// The reference number of the business's transfer that holds the client `reference`.
///
/// Not a prepared statement: PostgreSQL keeps one plan for a prepared statement (its generic
/// plan), made once on each connection, and on a young table every index that starts with
/// `business_id` costs the same as the unique one. The kept plan took `transfers_day`, then
/// (that index dropped) `transfers_keyset`, and filtered every transfer of the business on the
/// reference, for each payout: quadratic, found by the soak (515 million index entries read for
/// 60,000 payouts). Planned each time, with the parameters and the table's size, the unique
/// index wins; planning costs far less.
pub async fn reference_owner(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
    reference: &str,
) -> Result<Option<String>, StoreError> {
    let query = sqlx::query(
        "SELECT reference_number FROM transfers WHERE business_id = $1 AND reference = $2",
    )
    .persistent(false)
    .bind(business_id.to_owned())
    .bind(reference.to_owned());
    let row = conn.into().fetch_optional(query).await?;
    row.map(|row| store::text(&row, "reference_number"))
        .transpose()
}

/// Writes `new` as a write of `batch`: not yet submitted to NIP, no attempt made.
pub fn insert_into(batch: &mut Batch, new: NewTransfer) {
    batch.push(Write::Transfer(Box::new(new)));
}

/// [`Write::Transfer`] as a statement of `sql`.
pub(super) fn render(sql: &mut SqlBatch, new: NewTransfer) {
    let row = &new.row;
    sql.push(
        "INSERT INTO transfers (id, business_id, reference_number, reference, \
               source_account_id, beneficiary_account_number, beneficiary_account_name, \
               beneficiary_account_id, bank_code, bank_name, transfer_type, amount, fee, vat, \
               narration, transfer_status, approval_status, session_id, failure_reason, \
               reversal_reference_number, debit_transaction_id, fee_transaction_id, initiated_by, \
               initiated_via, reviewed_by, expires_at, day, submitted, attempts, next_attempt_at, \
               lease_until, created_at, updated_at, credential_issued_by) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, \
               $17, NULL, NULL, NULL, $18, $19, $20, $21, NULL, $22, $23, 0, 0, NULL, NULL, \
               $24, $25, $26)",
    )
    .bind(row.id.clone())
    .bind(new.business_id.clone())
    .bind(row.reference_number.clone())
    .bind(row.reference.clone())
    .bind(new.source_account_id.clone())
    .bind(row.beneficiary_account_number.clone())
    .bind(row.beneficiary_account_name.clone())
    .bind(new.beneficiary_account_id.clone())
    .bind(row.bank_code.clone())
    .bind(row.bank_name.clone())
    .bind(row.transfer_type.clone())
    .bind(row.amount)
    .bind(row.fee)
    .bind(row.vat)
    .bind(row.narration.clone())
    .bind(row.transfer_status.clone())
    .bind(row.approval_status.clone())
    .bind(new.debit_transaction_id.clone())
    .bind(new.fee_transaction_id.clone())
    .bind(row.initiated_by.clone())
    .bind(row.initiated_via.clone())
    .bind(row.expires_at.map(store::timestamp))
    .bind(new.day.clone())
    .bind(store::timestamp(row.created_at))
    .bind(store::timestamp(row.updated_at))
    .bind(new.credential_issued_by.clone());
}

/// One keyset page of the business's transfers, newest first: at most `limit + 1` rows.
pub async fn list(
    store: &Store,
    business_id: &str,
    filters: &Filters,
    cursor: Option<Cursor>,
    limit: u64,
) -> Result<Vec<TransferRow>, StoreError> {
    let mut sql = Sql::new(&format!("SELECT {TRANSFER_COLUMNS}{TRANSFER_FROM}"));
    let mut conditions = Conditions::default();
    conditions.add(format!("t.business_id = {}", sql.arg(business_id)));
    let equal = [
        ("t.transfer_status =", &filters.transfer_status),
        ("t.approval_status =", &filters.approval_status),
        ("t.created_at >=", &filters.from),
        ("t.created_at <", &filters.until),
        ("a.account_number =", &filters.source_account_number),
        ("t.reference =", &filters.reference),
        ("t.reference_number =", &filters.reference_number),
    ];
    for (condition, value) in equal {
        if let Some(value) = value {
            conditions.add(format!("{condition} {}", sql.arg(value.as_str())));
        }
    }
    if let Some(cursor) = cursor {
        let at = sql.arg(cursor.created_at);
        let id = sql.arg(cursor.id);
        conditions.add(format!(
            "(t.created_at < {at} OR (t.created_at = {at} AND t.id < {id}))"
        ));
    }
    sql.push(&conditions.where_clause());
    sql.push(" ORDER BY t.created_at DESC, t.id DESC")
        .limit(limit + 1);
    let rows = sql.fetch_all(store.pool()).await?;
    rows.iter().map(TransferRow::from_any).collect()
}

/// The reference numbers of one page of the business's held transfers (from
/// `source_account_number` when given), oldest first after `cursor`: at most `limit + 1`.
pub async fn pending_references(
    store: &Store,
    business_id: &str,
    source_account_number: Option<&str>,
    cursor: Option<Cursor>,
    limit: u64,
) -> Result<Vec<String>, StoreError> {
    let mut sql = Sql::new(
        "SELECT t.reference_number FROM transfers t JOIN accounts a ON a.id = t.source_account_id",
    );
    let mut conditions = Conditions::default();
    conditions.add(format!("t.business_id = {}", sql.arg(business_id)));
    conditions.add("t.transfer_status = 'pending_approval'".to_owned());
    if let Some(number) = source_account_number {
        conditions.add(format!("a.account_number = {}", sql.arg(number)));
    }
    if let Some(cursor) = cursor {
        let at = sql.arg(cursor.created_at);
        let id = sql.arg(cursor.id);
        conditions.add(format!(
            "(t.created_at > {at} OR (t.created_at = {at} AND t.id > {id}))"
        ));
    }
    sql.push(&conditions.where_clause());
    sql.push(" ORDER BY t.created_at, t.id").limit(limit + 1);
    let rows = sql.fetch_all(store.pool()).await?;
    rows.iter()
        .map(|row| store::text(row, "reference_number"))
        .collect()
}

/// The business's transfer with this reference number, as a review reads it.
pub async fn held(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
    reference: &str,
) -> Result<Option<HeldRow>, StoreError> {
    let query = sqlx::query(
        "SELECT id, business_id, source_account_id, beneficiary_account_id, \
           beneficiary_account_number, beneficiary_account_name, bank_code, transfer_type, \
           amount, fee, vat, narration, reference_number, debit_transaction_id, \
           fee_transaction_id, initiated_by, credential_issued_by, transfer_status \
         FROM transfers WHERE business_id = $1 AND reference_number = $2",
    )
    // Planned each time, not kept (several indexes start with `business_id`): see
    // [`reference_owner`].
    .persistent(false)
    .bind(business_id.to_owned())
    .bind(reference.to_owned());
    let row = conn.into().fetch_optional(query).await?;
    row.map(|row| {
        let text = |column: &str| store::text(&row, column);
        let optional = |column: &str| store::optional_text(&row, column);
        Ok(HeldRow {
            id: text("id")?,
            business_id: text("business_id")?,
            source_account_id: text("source_account_id")?,
            beneficiary_account_id: optional("beneficiary_account_id")?,
            beneficiary_account_number: text("beneficiary_account_number")?,
            beneficiary_account_name: text("beneficiary_account_name")?,
            bank_code: text("bank_code")?,
            transfer_type: text("transfer_type")?,
            amount: row.try_get("amount")?,
            fee: row.try_get("fee")?,
            vat: row.try_get("vat")?,
            narration: text("narration")?,
            reference_number: text("reference_number")?,
            debit_transaction_id: optional("debit_transaction_id")?,
            fee_transaction_id: optional("fee_transaction_id")?,
            initiated_by: text("initiated_by")?,
            credential_issued_by: optional("credential_issued_by")?,
            transfer_status: text("transfer_status")?,
        })
    })
    .transpose()
}

/// Applies `review` to transfer `id` if its status is still `review.from`; `false` if not.
pub async fn review(tx: &mut Tx, id: &str, review: &Review<'_>) -> Result<bool, StoreError> {
    let changed = sqlx::query(
        "UPDATE transfers SET transfer_status = $2, approval_status = $3, reviewed_by = $4, \
           failure_reason = $5, updated_at = $6, day = COALESCE($7, day) \
         WHERE id = $1 AND transfer_status = $8",
    )
    .bind(id)
    .bind(review.to)
    .bind(review.approval_status)
    .bind(review.reviewer)
    .bind(review.reason)
    .bind(store::timestamp(review.at))
    .bind(review.day)
    .bind(review.from)
    .execute(&mut **tx)
    .await?
    .rows_affected();
    Ok(changed == 1)
}

/// Held transfers past their `expires_at` at `now`, as `(business, reference number)`: at
/// most 100.
pub async fn due_expiries(
    store: &Store,
    now: DateTime<Utc>,
) -> Result<Vec<(String, String)>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT business_id, reference_number FROM transfers \
         WHERE transfer_status = 'pending_approval' AND expires_at <= $1 LIMIT 100",
    )
    .bind(store::timestamp(now))
    .fetch_all(store.pool())
    .await?)
}

/// The reference of a transfer whose money account `account_id` still owns though its
/// balance no longer shows it: reserved for a held transfer (`pending_approval`) or in flight
/// to NIP (`processing`).
pub async fn first_reserving(tx: &mut Tx, account_id: &str) -> Result<Option<String>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT reference_number FROM transfers \
         WHERE source_account_id = $1 AND transfer_status IN ('pending_approval', 'processing') \
         ORDER BY created_at LIMIT 1",
    )
    .bind(account_id)
    .fetch_optional(&mut **tx)
    .await?)
}

/// Leases, until `until`, at most `limit` `processing` transfers due at `now` (not leased by
/// another worker), oldest first (`FOR UPDATE SKIP LOCKED` on PostgreSQL, so several
/// processes share the work; SQLite has one writer, whose turn this takes). Returns their ids.
pub async fn lease_due(
    store: &Store,
    now: DateTime<Utc>,
    until: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<String>, StoreError> {
    let due = "transfer_status = 'processing' \
        AND (next_attempt_at IS NULL OR next_attempt_at <= $2) \
        AND (lease_until IS NULL OR lease_until < $2)";
    let sql = match store.backend() {
        Backend::Postgres => format!(
            "UPDATE transfers SET lease_until = $1 WHERE id IN (SELECT id FROM transfers \
             WHERE {due} ORDER BY created_at LIMIT $3 FOR UPDATE SKIP LOCKED) RETURNING id"
        ),
        Backend::Sqlite => format!(
            "UPDATE transfers SET lease_until = $1 WHERE id IN (SELECT id FROM transfers \
             WHERE {due} ORDER BY created_at LIMIT $3) RETURNING id"
        ),
    };
    let _turn = store.write_turn().await;
    Ok(sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .bind(store::timestamp(until))
        .bind(store::timestamp(now))
        .bind(limit)
        .fetch_all(store.pool())
        .await?)
}

/// The transfers `ids`, oldest first, in one query.
pub async fn leased(store: &Store, ids: &[String]) -> Result<Vec<LeasedRow>, StoreError> {
    let mut sql = Sql::new(
        "SELECT t.id, t.business_id, t.source_account_id, t.submitted, t.attempts, t.fee, \
           t.vat, t.debit_transaction_id, t.fee_transaction_id, t.reference_number, \
           a.account_number, t.beneficiary_account_number, t.bank_code, t.amount, t.narration \
         FROM transfers t JOIN accounts a ON a.id = t.source_account_id",
    );
    let placeholders: Vec<String> = ids.iter().map(|id| sql.arg(id.as_str())).collect();
    sql.push(&format!(
        " WHERE t.id IN ({}) ORDER BY t.created_at, t.id",
        placeholders.join(", ")
    ));
    let rows = sql.fetch_all(store.pool()).await?;
    rows.iter()
        .map(|row| {
            Ok(LeasedRow {
                id: store::text(row, "id")?,
                business_id: store::text(row, "business_id")?,
                source_account_id: store::text(row, "source_account_id")?,
                submitted: store::flag(row, "submitted")?,
                attempts: row.try_get("attempts")?,
                fee: row.try_get("fee")?,
                vat: row.try_get("vat")?,
                debit_transaction_id: store::optional_text(row, "debit_transaction_id")?,
                fee_transaction_id: store::optional_text(row, "fee_transaction_id")?,
                reference_number: store::text(row, "reference_number")?,
                source_account_number: store::text(row, "account_number")?,
                beneficiary_account_number: store::text(row, "beneficiary_account_number")?,
                bank_code: store::text(row, "bank_code")?,
                amount: row.try_get("amount")?,
                narration: store::text(row, "narration")?,
            })
        })
        .collect()
}

/// Releases `id`'s lease, still `processing`, to be asked again at `next_attempt_at`: one more
/// attempt, `submitted` as given, the session id when NIP gave one.
pub async fn wait(
    store: &Store,
    id: &str,
    submitted: bool,
    next_attempt_at: DateTime<Utc>,
    session_id: Option<&str>,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let _turn = store.write_turn().await;
    sqlx::query(
        "UPDATE transfers SET submitted = $2, attempts = attempts + 1, next_attempt_at = $3, \
           lease_until = NULL, session_id = COALESCE($4, session_id), updated_at = $5 \
         WHERE id = $1 AND transfer_status = 'processing'",
    )
    .bind(id)
    .bind(i64::from(submitted))
    .bind(store::timestamp(next_attempt_at))
    .bind(session_id)
    .bind(store::timestamp(now))
    .execute(store.pool())
    .await?;
    Ok(())
}

/// NIP decided transfer `id`: from `from` to `to`, submitted, its lease released, if it was
/// still `from`; `false` if another worker decided first.
pub async fn decide(
    tx: &mut Tx,
    id: &str,
    from: &str,
    to: &str,
    at: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let decided = sqlx::query(
        "UPDATE transfers SET transfer_status = $2, submitted = 1, lease_until = NULL, \
           updated_at = $3 WHERE id = $1 AND transfer_status = $4",
    )
    .bind(id)
    .bind(to)
    .bind(store::timestamp(at))
    .bind(from)
    .execute(&mut **tx)
    .await?
    .rows_affected();
    Ok(decided == 1)
}

/// Gives transfer `id` the session id NIP answered.
pub async fn set_session_id(tx: &mut Tx, id: &str, session_id: &str) -> Result<(), StoreError> {
    sqlx::query("UPDATE transfers SET session_id = $2 WHERE id = $1")
        .bind(id)
        .bind(session_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Records why transfer `id` failed at NIP and the reference of its reversal (and NIP's
/// session id, when it gave one).
pub async fn set_reversal(
    tx: &mut Tx,
    id: &str,
    reason: &str,
    reversal_reference: &str,
    session_id: Option<&str>,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE transfers SET failure_reason = $2, reversal_reference_number = $3, \
           session_id = COALESCE($4, session_id) WHERE id = $1",
    )
    .bind(id)
    .bind(reason)
    .bind(reversal_reference)
    .bind(session_id)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
