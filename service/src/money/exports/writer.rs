//! The writing of exports, by the worker of every process ([`work`]): one export at a time,
//! taken up under a lease ([`LEASE`]), read [`ROWS_PER_READ`] transactions at a time and
//! committed a part (about [`PART_BYTES`]) at a time with where the next part starts. The
//! memory it holds is one part, whatever the file's length.
//!
//! What a file holds is fixed when the export is asked for: the period's transactions written
//! before that moment (`created_at`), so a statement of a period that is still running ends
//! there, and an export resumed after a crash writes what the first attempt would have. A
//! statement's lines are checked as they are written ([`kobo_statements::Checker`]: each
//! running balance, then the counts, totals and closing balance); one that does not reconcile
//! fails the export.

use std::time::Duration;

use chrono::{DateTime, Utc};
use kobo_statements as formats;

use super::{view, Category, KEPT_DAYS, ROWS_MAX};
use crate::datastore::exports::{self, ExportRow, NewPart};
use crate::datastore::transactions::TransactionRow;
use crate::error::Error;
use crate::kernel::paging::Cursor;
use crate::kernel::store::Store;
use crate::money::accounts;
use crate::money::bank::Bank;
use crate::money::downloads;
use crate::money::statements::{Period, Summary};
use crate::outbox::events;

/// How long a worker holds an export between parts; a process that stops leaves it to
/// another once this has passed.
pub const LEASE: Duration = Duration::from_secs(60);

/// How many times an export is taken up before it fails (its process stopped each time).
pub const ATTEMPTS_MAX: i64 = 3;

/// Transactions read at a time.
pub const ROWS_PER_READ: u64 = 1_000;

/// A part is committed once it holds this many bytes (the last may be shorter).
pub const PART_BYTES: usize = 2 * 1024 * 1024;

/// How much is read and written at a time: [`ROWS_PER_READ`] and [`PART_BYTES`], smaller in
/// tests that need many parts of a short history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    pub rows_per_read: u64,
    pub part_bytes: usize,
}

impl Default for Sizes {
    fn default() -> Sizes {
        Sizes {
            rows_per_read: ROWS_PER_READ,
            part_bytes: PART_BYTES,
        }
    }
}

/// Why writing an export stopped before it was ready.
enum Stop {
    /// It cannot be written: it fails, with this reason.
    Refused(String),
    /// Another worker holds it now (this one's lease ended): nothing more to do here.
    LeaseLost,
    /// The store failed: the export is resumed once the lease ends.
    Error(Error),
}

impl From<Error> for Stop {
    fn from(error: Error) -> Stop {
        Stop::Error(error)
    }
}

impl From<crate::datastore::StoreError> for Stop {
    fn from(error: crate::datastore::StoreError) -> Stop {
        Stop::Error(error.into())
    }
}

/// Ready exports past their time expire, their parts deleted; how many.
pub async fn expire_due(bank: &Bank) -> Result<u64, Error> {
    let mut tx = bank.platform.store.begin().await?;
    let expired = exports::expire(&mut tx, bank.platform.clock.now(), 100).await?;
    tx.commit().await?;
    Ok(expired)
}

/// Takes up the oldest waiting export, as `owner`, and writes it to its end: `true` when one
/// was taken up (whatever became of it), `false` when none waits.
pub async fn work(bank: &Bank, owner: &str) -> Result<bool, Error> {
    work_with(bank, owner, Sizes::default()).await
}

/// [`work`], reading and writing `sizes` at a time.
pub async fn work_with(bank: &Bank, owner: &str, sizes: Sizes) -> Result<bool, Error> {
    let store = &bank.platform.store;
    let now = bank.platform.clock.now();
    let mut tx = store.begin().await?;
    let claimed = exports::claim(&mut tx, owner, now, lease_end(now)).await?;
    tx.commit().await?;
    let Some(export) = claimed else {
        return Ok(false);
    };
    if export.attempts > ATTEMPTS_MAX {
        let reason = format!(
            "the export was interrupted {} times; ask for it again",
            export.attempts - 1
        );
        fail(bank, &export, owner, &reason).await?;
        return Ok(true);
    }
    match write(bank, owner, &export, sizes).await {
        Ok(()) | Err(Stop::LeaseLost) => Ok(true),
        Err(Stop::Refused(reason)) => {
            fail(bank, &export, owner, &reason).await?;
            Ok(true)
        }
        Err(Stop::Error(error)) => Err(error),
    }
}

fn lease_end(now: DateTime<Utc>) -> DateTime<Utc> {
    now + chrono::Duration::from_std(LEASE).unwrap_or(chrono::Duration::MAX)
}

/// What is written, and how: a statement's format with its figures and check, or the
/// business's transactions.
enum Shape {
    Statement {
        format: formats::stream::Format,
        figures: Box<formats::Statement>,
        checker: Box<formats::Checker>,
    },
    Transactions,
}

impl Shape {
    fn head(&self) -> String {
        match self {
            Shape::Statement {
                format, figures, ..
            } => format.head(figures),
            Shape::Transactions => formats::csv::header(true),
        }
    }

    fn tail(&self) -> String {
        match self {
            Shape::Statement {
                format, figures, ..
            } => format.tail(figures),
            Shape::Transactions => String::new(),
        }
    }

    /// `rows` written to `out`, a statement's checked first.
    fn rows(&mut self, out: &mut String, rows: Vec<TransactionRow>) -> Result<(), Stop> {
        match self {
            Shape::Statement {
                format,
                figures,
                checker,
            } => {
                let lines: Vec<formats::Line> =
                    rows.into_iter().map(downloads::listed_line).collect();
                for line in &lines {
                    checker.line(line).map_err(not_reconciled)?;
                }
                out.push_str(&format.lines(figures, &lines));
            }
            Shape::Transactions => {
                let lines: Vec<(String, formats::Line)> = rows
                    .into_iter()
                    .map(|row| (row.account_number.clone(), downloads::listed_line(row)))
                    .collect();
                formats::csv::account_rows(out, &lines);
            }
        }
        Ok(())
    }

    /// The checker of a statement (what a resume must bring up to where the file stands); none
    /// for the business's transactions, which nothing checks.
    fn checker(&mut self) -> Option<&mut formats::Checker> {
        match self {
            Shape::Statement { checker, .. } => Some(checker),
            Shape::Transactions => None,
        }
    }

    fn finish(self) -> Result<(), Stop> {
        match self {
            Shape::Statement { checker, .. } => checker.finish().map_err(not_reconciled),
            Shape::Transactions => Ok(()),
        }
    }
}

fn not_reconciled(why: String) -> Stop {
    tracing::error!(%why, "an exported statement does not reconcile: run `kobo ledger verify`");
    Stop::Refused(format!("the statement does not reconcile ({why})"))
}

/// The period's instants the export covers: its Lagos days, up to the moment it was asked for.
fn covered(export: &ExportRow) -> Result<Period, Stop> {
    let period =
        Period::of(export.start_date, export.end_date).map_err(|e| Stop::Refused(e.to_string()))?;
    Ok(Period {
        until: period.until.min(export.created_at),
        ..period
    })
}

async fn shape(bank: &Bank, export: &ExportRow, period: &Period) -> Result<Shape, Stop> {
    let store = &bank.platform.store;
    let category = Category::parse(&export.category)?;
    let Category::Statement(format) = category else {
        return Ok(Shape::Transactions);
    };
    let number = export
        .account_number
        .as_deref()
        .ok_or_else(|| Stop::Refused("a statement export without an account".to_owned()))?;
    let account = accounts::of_business(store, &export.business_id, number).await?;
    let summary = Summary::read(store, &account.id, period).await?;
    let figures = downloads::figures(bank, &export.business_id, &account, period, &summary).await?;
    let figures = formats::Statement {
        generated_at: export.created_at,
        ..figures
    };
    let checker = formats::Checker::new(&figures).map_err(not_reconciled)?;
    Ok(Shape::Statement {
        format,
        figures: Box::new(figures),
        checker: Box::new(checker),
    })
}

async fn read(
    store: &Store,
    export: &ExportRow,
    after: &Cursor,
    until: DateTime<Utc>,
    sizes: Sizes,
) -> Result<Vec<TransactionRow>, Stop> {
    Ok(exports::rows(
        store,
        &export.business_id,
        export.account_id.as_deref(),
        after,
        until,
        sizes.rows_per_read,
    )
    .await?)
}

/// Passes the rows after `from` up to `last` (included) through `checker`.
async fn recheck(
    store: &Store,
    export: &ExportRow,
    checker: &mut formats::Checker,
    (from, last): (Cursor, &Cursor),
    sizes: Sizes,
) -> Result<(), Stop> {
    let mut cursor = from;
    let until = last.created_at + chrono::Duration::microseconds(1);
    loop {
        let rows = read(store, export, &cursor, until, sizes).await?;
        let rows: Vec<TransactionRow> = rows
            .into_iter()
            .take_while(|row| (row.created_at, row.id) <= (last.created_at, last.id))
            .collect();
        let Some(row) = rows.last() else {
            return Ok(());
        };
        cursor = Cursor {
            created_at: row.created_at,
            id: row.id,
        };
        for row in rows {
            checker
                .line(&downloads::listed_line(row))
                .map_err(not_reconciled)?;
        }
        if &cursor == last {
            return Ok(());
        }
    }
}

/// Writes `export` from where it stands to its end, a part at a time.
async fn write(bank: &Bank, owner: &str, export: &ExportRow, sizes: Sizes) -> Result<(), Stop> {
    let store = &bank.platform.store;
    let period = covered(export)?;
    let mut shape = shape(bank, export, &period).await?;
    let mut cursor = period.before_start();
    let mut out = String::new();
    if export.parts == 0 {
        out.push_str(&shape.head());
    } else if let (Some(created_at), Some(id)) = (export.cursor_created_at, export.cursor_id) {
        let last = Cursor { created_at, id };
        // Resumed: a statement's rows written before are read again through its check, not
        // written; the business's transactions are not read again.
        if let Some(checker) = shape.checker() {
            recheck(store, export, checker, (cursor, &last), sizes).await?;
        }
        cursor = last;
    }
    let (mut parts, mut written, mut in_part) = (export.parts, export.row_count, 0i64);
    loop {
        let rows = read(store, export, &cursor, period.until, sizes).await?;
        let end = (rows.len() as u64) < sizes.rows_per_read;
        if let Some(row) = rows.last() {
            cursor = Cursor {
                created_at: row.created_at,
                id: row.id,
            };
        }
        in_part += rows.len() as i64;
        if written + in_part > ROWS_MAX {
            return Err(Stop::Refused(format!(
                "more than {ROWS_MAX} transactions: ask for a shorter period or one account"
            )));
        }
        shape.rows(&mut out, rows)?;
        if end {
            let tail = shape.tail();
            shape.finish()?;
            out.push_str(&tail);
            return last_part(bank, owner, export, (parts, in_part, &cursor), out).await;
        }
        if out.len() >= sizes.part_bytes {
            let part = NewPart {
                part: parts + 1,
                content: out.as_bytes(),
                rows: in_part,
                cursor: Some(cursor.clone()),
            };
            let mut tx = store.begin().await?;
            if !exports::append(
                &mut tx,
                &export.id,
                owner,
                &part,
                lease_end(bank.platform.clock.now()),
            )
            .await?
            {
                return Err(Stop::LeaseLost);
            }
            tx.commit().await?;
            parts += 1;
            written += in_part;
            in_part = 0;
            out.clear();
        }
    }
}

/// The last part (unless nothing is left to write) and `ready`, in one transaction, with
/// `export.ready`.
async fn last_part(
    bank: &Bank,
    owner: &str,
    export: &ExportRow,
    (parts, rows, cursor): (i64, i64, &Cursor),
    out: String,
) -> Result<(), Stop> {
    let now = bank.platform.clock.now();
    let mut tx = bank.platform.store.begin().await?;
    if !out.is_empty() || parts == 0 {
        let part = NewPart {
            part: parts + 1,
            content: out.as_bytes(),
            rows,
            cursor: Some(cursor.clone()),
        };
        if !exports::append(&mut tx, &export.id, owner, &part, lease_end(now)).await? {
            return Err(Stop::LeaseLost);
        }
    }
    let expires_at = now + chrono::Duration::days(KEPT_DAYS);
    if !exports::finish(&mut tx, &export.id, owner, now, expires_at).await? {
        return Err(Stop::LeaseLost);
    }
    announce(&mut tx, export, "export.ready", now).await?;
    tx.commit().await?;
    Ok(())
}

/// `export` fails for `reason`, its parts deleted, with `export.failed`: unless another worker
/// took it up meanwhile.
async fn fail(bank: &Bank, export: &ExportRow, owner: &str, reason: &str) -> Result<(), Error> {
    let now = bank.platform.clock.now();
    let mut tx = bank.platform.store.begin().await?;
    if exports::fail(&mut tx, &export.id, Some(owner), reason, now).await? {
        announce(&mut tx, export, "export.failed", now).await?;
        tx.commit().await?;
    }
    Ok(())
}

/// Records `kind` of `export` as it now stands.
async fn announce(
    tx: &mut crate::kernel::store::Tx,
    export: &ExportRow,
    kind: &str,
    at: DateTime<Utc>,
) -> Result<(), Error> {
    let now = exports::get(&mut *tx, &export.business_id, &export.id)
        .await?
        .ok_or_else(|| Error::internal("an export vanished as it was written"))?;
    events::record(tx, &export.business_id, kind, &view(now)?, at).await?;
    Ok(())
}
