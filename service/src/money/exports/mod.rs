//! Exports (issue 61): a file too large to answer at once, written in the background and
//! downloaded in parts. `create_export` records it `pending`; a worker of any process
//! ([`writer::work`]) takes it up under a lease, writes it a part at a time, each part committed
//! with where the next one starts, and marks it `ready` in the same transaction as its last
//! part (with `export.ready`), or `failed` (with `export.failed`). A process that stops
//! mid-export leaves its lease to end; the next worker resumes after the last committed part,
//! so a file is never `ready` with a part missing, and no part is written twice (a part is
//! written only by the lease's holder, and only as the next number).
//!
//! Bounds: a period of at most [`statements::DAYS_MAX`] Lagos days, at most [`ROWS_MAX`]
//! transactions, at most [`UNFINISHED_MAX`] exports of a business `pending` or `running` at
//! once, one export written at a time by each process, files kept [`KEPT_DAYS`] days.

pub mod writer;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use generated_server::models;
use generated_server::ResponseCode;

use crate::datastore::exports::{self, ExportRow, NewExport};
use crate::error::{Error, OrInternal};
use crate::kernel::paging::{self, Page};
use crate::kernel::store;
use crate::money::accounts::{self, value};
use crate::money::bank::Bank;
use crate::money::downloads;
use crate::money::statements::Period;
use crate::platform::caller::Caller;

/// The most transactions an export writes.
pub const ROWS_MAX: i64 = 5_000_000;

/// The most exports of a business `pending` or `running` at once.
pub const UNFINISHED_MAX: i64 = 3;

/// How long a ready export's file is kept.
pub const KEPT_DAYS: i64 = 7;

/// What an export writes, as `category` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    /// The business's transactions (or one account's), with the account's number first.
    TransactionCsv,
    /// An account's statement in a format written in pieces.
    Statement(kobo_statements::stream::Format),
}

impl Category {
    fn of(category: models::ExportCategory) -> Category {
        use kobo_statements::stream::Format;
        match category {
            models::ExportCategory::TransactionCsv => Category::TransactionCsv,
            models::ExportCategory::AccountStatementCsv => Category::Statement(Format::Csv),
            models::ExportCategory::AccountStatementOfx => Category::Statement(Format::Ofx),
            models::ExportCategory::AccountStatementCamt053 => Category::Statement(Format::Camt053),
        }
    }

    /// The category as stored.
    pub fn parse(text: &str) -> Result<Category, Error> {
        Ok(Category::of(value(text)?))
    }

    /// The file's extension and media type.
    fn file(self) -> (&'static str, &'static str) {
        use kobo_statements::stream::Format;
        match self {
            Category::TransactionCsv | Category::Statement(Format::Csv) => {
                ("csv", "text/csv; charset=utf-8")
            }
            Category::Statement(Format::Ofx) => ("ofx", "application/x-ofx"),
            Category::Statement(Format::Camt053) => ("camt053.xml", "application/xml"),
        }
    }
}

fn invalid(message: impl Into<std::borrow::Cow<'static, str>>) -> Error {
    Error::new(ResponseCode::InvalidRequest).with_message(message)
}

/// `create_export` and `create_export_api`.
pub async fn create_export(
    bank: &Bank,
    caller: &Caller,
    body: models::CreateExportRequest,
) -> Result<models::Export, Error> {
    let store = &bank.platform.store;
    let business_id = caller.principal.business_id.as_str();
    let category = Category::of(body.category);
    let period = Period::of(body.start_date, body.end_date)?;
    let account = match (&body.account_number, category) {
        (Some(number), _) => Some(accounts::of_business(store, business_id, number).await?),
        (None, Category::TransactionCsv) => None,
        (None, Category::Statement(_)) => {
            return Err(invalid(
                "`account_number`: required for an account statement",
            ))
        }
    };
    let (extension, content_type) = category.file();
    let days = format!("{}-to-{}", period.start_date, period.end_date);
    let file_name = match (&account, category) {
        (Some(account), Category::Statement(_)) => downloads::statement_file_name(
            &account.account_number,
            (period.start_date, period.end_date),
            extension,
        ),
        (Some(account), Category::TransactionCsv) => {
            format!("transactions-{}-{days}.{extension}", account.account_number)
        }
        (None, _) => format!("transactions-{days}.{extension}"),
    };
    let requested_by = caller.principal.actor_id();
    let new = NewExport {
        id: uuid::Uuid::new_v4(),
        business_id: business_id.to_owned(),
        category: body.category.to_string(),
        account_id: account.as_ref().map(|account| account.id.clone()),
        account_number: account.as_ref().map(|a| a.account_number.clone()),
        start_date: period.start_date,
        end_date: period.end_date,
        file_name,
        content_type: content_type.to_owned(),
        requested_by,
        created_at: store::as_stored(bank.platform.clock.now()),
    };
    let mut tx = store.begin().await?;
    if !exports::create(&mut tx, &new, UNFINISHED_MAX).await? {
        return Err(Error::new(ResponseCode::InvalidState).with_message(format!(
            "The business already has {UNFINISHED_MAX} exports pending or running; wait for one \
             to finish"
        )));
    }
    let row = exports::get(&mut tx, business_id, &new.id)
        .await?
        .ok_or_else(|| Error::internal("an export vanished as it was written"))?;
    tx.commit().await?;
    view(row)
}

/// The business's export `id`: `47` when it has none.
async fn find(bank: &Bank, business_id: &str, id: &uuid::Uuid) -> Result<ExportRow, Error> {
    exports::get(&bank.platform.store, business_id, id)
        .await?
        .ok_or_else(|| {
            Error::new(ResponseCode::NotFound)
                .with_message(format!("No export {id} in this business"))
        })
}

/// `get_export` and `get_export_api`.
pub async fn get_export(
    bank: &Bank,
    business_id: &str,
    body: models::GetExportRequest,
) -> Result<models::Export, Error> {
    view(find(bank, business_id, &body.export_id).await?)
}

/// `fetch_exports` and `fetch_exports_api`.
pub async fn fetch_exports(
    bank: &Bank,
    business_id: &str,
    body: models::FetchExportsRequest,
) -> Result<Page<Vec<models::Export>>, Error> {
    let limit = body.limit.get().min(paging::PAGE_SIZE_MAX);
    let cursor = paging::keyset_cursor(body.cursor_created_at, body.cursor_id)?;
    let status = body.status.map(|status| status.to_string());
    let rows = exports::list(
        &bank.platform.store,
        business_id,
        status.as_deref(),
        cursor.as_ref(),
        limit + 1,
    )
    .await?;
    paging::keyset_page(rows, limit, |row| (row.created_at, row.id), view)
}

/// `download_export` and `download_export_api`: part `body.part` of a ready export.
pub async fn download_export(
    bank: &Bank,
    business_id: &str,
    body: models::DownloadExportRequest,
) -> Result<models::ExportPart, Error> {
    let export = find(bank, business_id, &body.export_id).await?;
    if export.status != "ready" {
        return Err(Error::new(ResponseCode::InvalidState).with_message(format!(
            "Export {} is {}, not ready",
            export.id, export.status
        )));
    }
    let part = i64::try_from(body.part.get()).unwrap_or(i64::MAX);
    if part > export.parts {
        return Err(invalid(format!(
            "`part`: export {} has {} parts",
            export.id, export.parts
        )));
    }
    let bytes = exports::part(&bank.platform.store, &export.id, part)
        .await?
        // Expired between the two reads: its parts were deleted.
        .ok_or_else(|| {
            Error::new(ResponseCode::InvalidState)
                .with_message(format!("Export {} is expired, not ready", export.id))
        })?;
    Ok(models::ExportPart {
        file_name: export.file_name,
        content_type: export.content_type,
        size_bytes: u64::try_from(bytes.len()).or_internal()?,
        content_base64: STANDARD.encode(&bytes),
        part: body.part,
        parts: std::num::NonZeroU64::new(u64::try_from(export.parts).or_internal()?)
            .ok_or_else(|| Error::internal("a ready export without parts"))?,
    })
}

/// What the API shows of an export.
pub fn view(row: ExportRow) -> Result<models::Export, Error> {
    let count = |n: i64| u64::try_from(n).or_internal();
    Ok(models::Export {
        export_id: row.id,
        category: value(&row.category)?,
        status: value(&row.status)?,
        account_number: row.account_number,
        start_date: row.start_date,
        end_date: row.end_date,
        row_count: count(row.row_count)?,
        size_bytes: count(row.size_bytes)?,
        parts: count(row.parts)?,
        file_name: row.file_name,
        content_type: row.content_type,
        failure_reason: row.failure_reason,
        created_at: row.created_at,
        completed_at: row.completed_at,
        expires_at: row.expires_at,
    })
}
