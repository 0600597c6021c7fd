//! The rows of `exports` and `export_parts` (see the datastore module of the same name in
//! `kobo`): files written in the background, a part at a time, each part committed with the
//! place the next one starts, so a process that stops mid-export leaves it to be resumed there.

use crate::paging::Cursor;
use crate::transactions::TransactionRow;
use chrono::{DateTime, NaiveDate, Utc};

/// An export as it is stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportRow {
    pub id: uuid::Uuid,
    pub business_id: String,
    /// `transaction_csv`, `account_statement_csv`, `account_statement_ofx` or
    /// `account_statement_camt053`.
    pub category: String,
    /// `pending`, `running`, `ready`, `failed` or `expired`.
    pub status: String,
    /// The account exported, when one is.
    pub account_id: Option<String>,
    pub account_number: Option<String>,
    pub start_date: NaiveDate,
    pub end_date: NaiveDate,
    pub row_count: i64,
    pub size_bytes: i64,
    pub parts: i64,
    /// The last transaction written (the next part starts after it); `None` before the first.
    pub cursor_created_at: Option<DateTime<Utc>>,
    pub cursor_id: Option<uuid::Uuid>,
    pub file_name: String,
    pub content_type: String,
    pub failure_reason: Option<String>,
    /// How many times a worker took it up.
    pub attempts: i64,
    pub requested_by: String,
    pub created_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
    pub expires_at: Option<DateTime<Utc>>,
}

/// What [`create`] writes: a `pending` export.
#[derive(Clone, Debug)]
pub struct NewExport {
    pub id: uuid::Uuid,
    pub business_id: String,
    pub category: String,
    pub account_id: Option<String>,
    pub account_number: Option<String>,
    pub start_date: NaiveDate,
    pub end_date: NaiveDate,
    pub file_name: String,
    pub content_type: String,
    pub requested_by: String,
    pub created_at: DateTime<Utc>,
}

/// One part of an export's file, with where the export stands once it is written.
#[derive(Clone, Debug)]
pub struct NewPart<'a> {
    /// Its number: the export's `parts` + 1.
    pub part: i64,
    pub content: &'a [u8],
    /// Transactions it holds.
    pub rows: i64,
    /// The last transaction written so far (the next part starts after it).
    pub cursor: Option<Cursor>,
}

crate::contract! {
    /// `exports` and `export_parts`: files written in the background.
    pub trait Exports in exports, functions exports_functions {
        /// Writes `export`, `pending`, unless its business already has `max_unfinished`
        /// exports `pending` or `running`: `false` then, and nothing written. Two creations
        /// racing count each other (PostgreSQL takes a lock of the business's exports first).
        tx fn create(export: &NewExport, max_unfinished: i64) -> bool;
        /// The business's export `id`.
        conn fn get(business_id: &str, id: &uuid::Uuid) -> Option<ExportRow>;
        /// One page of the business's exports, newest first by `(created_at, id)`, of one
        /// status or all, after `cursor`: at most `limit` rows.
        conn fn list(
            business_id: &str,
            status: Option<&str>,
            cursor: Option<&Cursor>,
            limit: u64,
        ) -> Vec<ExportRow>;
        /// Takes up the oldest export waiting: `pending`, or `running` under a lease that ended
        /// before `now` (its process stopped). It becomes `running`, leased to `owner` until
        /// `until`, one more attempt counted. PostgreSQL skips exports another process is
        /// taking (`SKIP LOCKED`).
        tx fn claim(owner: &str, now: DateTime<Utc>, until: DateTime<Utc>) -> Option<ExportRow>;
        /// Writes `part` of export `id` and moves the export on (rows, bytes, parts, cursor,
        /// the lease to `until`) if `owner` still holds its lease and `part` is the next one:
        /// `false` otherwise, and nothing written.
        tx fn append(id: &uuid::Uuid, owner: &str, part: &NewPart<'_>, until: DateTime<Utc>) -> bool;
        /// Export `id` is `ready` at `now`, its file kept until `expires_at`, if `owner` still
        /// holds its lease: `false` otherwise.
        tx fn finish(
            id: &uuid::Uuid,
            owner: &str,
            now: DateTime<Utc>,
            expires_at: DateTime<Utc>,
        ) -> bool;
        /// Export `id` `failed` at `now` for `reason`, its parts deleted, if it is `pending` or
        /// `running` and (given an `owner`) leased to `owner`: `false` otherwise.
        tx fn fail(id: &uuid::Uuid, owner: Option<&str>, reason: &str, now: DateTime<Utc>) -> bool;
        /// The bytes of part `part` of export `id`.
        conn fn part(id: &uuid::Uuid, part: i64) -> Option<Vec<u8>>;
        /// Ready exports whose file expired before `now` become `expired`, their parts deleted:
        /// at most `limit` of them; returns how many.
        tx fn expire(now: DateTime<Utc>, limit: i64) -> u64;
        /// The transactions an export writes: the business's (or its account `account_id`'s)
        /// after `after` and before `until`, oldest first by `(created_at, id)`, at most `limit`.
        conn fn rows(
            business_id: &str,
            account_id: Option<&str>,
            after: &Cursor,
            until: DateTime<Utc>,
            limit: u64,
        ) -> Vec<TransactionRow>;
    }
}
