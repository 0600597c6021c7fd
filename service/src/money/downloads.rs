//! Files a business downloads (issue 61): an account's statement as CSV, PDF, OFX or ISO 20022
//! camt.053, and a transfer's receipt as a PDF. The figures are the ledger's, read as
//! `get_account_statement` reads them and checked to reconcile before any file is written
//! (`kobo_statements::Statement::check`); the formats are the `kobo-statements` crate's, read
//! back by parsers we did not write in CI (`.ci/statements`).
//!
//! A file is answered whole, in the envelope (`FileContent`: base64), so a statement is bounded:
//! at most [`LINES_MAX`] transactions.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use generated_server::models;
use generated_server::ResponseCode;
use kobo_statements as formats;

use crate::datastore::businesses;
use crate::datastore::transactions::{Filters, Listing, TransactionRow, Window};
use crate::error::{Error, OrInternal};
use crate::kernel::paging::Cursor;
use crate::money::accounts;
use crate::money::amount::Kobo;
use crate::money::bank::Bank;
use crate::money::banks::KOBO_BANK_NAME;
use crate::money::statements;
use crate::money::transactions;
use crate::money::transfers;
use crate::provider::KOBO_INSTITUTION;

/// The most transactions a downloaded statement holds.
pub const LINES_MAX: u64 = 20_000;

/// Lines read a statement at a time.
const CHUNK: u64 = 1_000;

pub(crate) fn kobo_bank() -> formats::Bank {
    formats::Bank {
        name: KOBO_BANK_NAME.to_owned(),
        code: KOBO_INSTITUTION.to_owned(),
        bic: None,
    }
}

/// `bytes` as the API answers a file, named `file_name`.
pub(crate) fn file(
    file_name: String,
    content_type: &str,
    bytes: Vec<u8>,
) -> Result<models::FileContent, Error> {
    Ok(models::FileContent {
        file_name,
        content_type: content_type.to_owned(),
        size_bytes: u64::try_from(bytes.len()).or_internal()?,
        content_base64: STANDARD.encode(&bytes),
    })
}

/// The name a statement's file is saved as, downloaded or exported:
/// `statement-1000000021-2026-11-01-to-2026-11-30.csv`.
pub(crate) fn statement_file_name(
    account_number: &str,
    (from, to): (chrono::NaiveDate, chrono::NaiveDate),
    extension: &str,
) -> String {
    format!("statement-{account_number}-{from}-to-{to}.{extension}")
}

/// `download_account_statement` and `download_account_statement_api`.
pub async fn download_account_statement(
    bank: &Bank,
    business_id: &str,
    body: models::DownloadAccountStatementRequest,
) -> Result<models::FileContent, Error> {
    let store = &bank.platform.store;
    let number = body.account_number.as_str();
    let (account, period, summary) =
        statements::summarised(store, business_id, number, (body.start_date, body.end_date))
            .await?;
    let count = summary.totals.credits + summary.totals.debits;
    if u64::try_from(count).or_internal()? > LINES_MAX {
        return Err(
            Error::new(ResponseCode::InvalidRequest).with_message(format!(
                "`end_date`: the period holds {count} transactions, more than a statement file's \
             {LINES_MAX}: ask for a shorter period"
            )),
        );
    }
    let mut lines = Vec::new();
    let mut cursor: Option<Cursor> = None;
    loop {
        let (rows, more) =
            statements::lines(store, &account.id, &period, cursor.take(), CHUNK).await?;
        cursor = rows.last().map(|row| Cursor {
            created_at: row.created_at,
            id: row.id,
        });
        lines.extend(rows.into_iter().map(line));
        if !more {
            break;
        }
    }
    let statement = formats::Statement {
        lines,
        ..figures(bank, business_id, &account, &period, &summary).await?
    };
    // A file that does not reconcile is never written: the ledger would be wrong, and `kobo
    // ledger verify` says where.
    statement.check().map_err(|why| {
        Error::internal(format!(
            "the statement of account {number} does not reconcile: {why}"
        ))
    })?;
    let name = |extension: &str| {
        statement_file_name(
            &statement.account_number,
            (statement.from, statement.to),
            extension,
        )
    };
    match body.format {
        models::StatementFormat::Csv => file(
            name("csv"),
            "text/csv; charset=utf-8",
            formats::csv::statement(&statement).into_bytes(),
        ),
        models::StatementFormat::Pdf => file(
            name("pdf"),
            "application/pdf",
            formats::pdf::statement(&statement),
        ),
        models::StatementFormat::Ofx => file(
            name("ofx"),
            "application/x-ofx",
            formats::ofx::statement(&statement).into_bytes(),
        ),
        models::StatementFormat::Camt053 => file(
            name("camt053.xml"),
            "application/xml",
            formats::camt053::statement(&statement).into_bytes(),
        ),
    }
}

/// A statement's figures (its `lines` empty): the bank, the business and account, the period
/// and what `summary` says of it.
pub(crate) async fn figures(
    bank: &Bank,
    business_id: &str,
    account: &accounts::AccountRow,
    period: &statements::Period,
    summary: &statements::Summary,
) -> Result<formats::Statement, Error> {
    Ok(formats::Statement {
        bank: kobo_bank(),
        business_name: businesses::name_of(&bank.platform.store, business_id).await?,
        account_number: account.account_number.clone(),
        account_name: account.account_name.clone(),
        currency: "NGN".to_owned(),
        from: period.start_date,
        to: period.end_date,
        opening_balance: summary.opening,
        closing_balance: summary.closing,
        total_credits: i64::try_from(summary.totals.credited).or_internal()?,
        total_debits: i64::try_from(summary.totals.debited).or_internal()?,
        credit_count: u64::try_from(summary.totals.credits).or_internal()?,
        debit_count: u64::try_from(summary.totals.debits).or_internal()?,
        generated_at: bank.platform.clock.now(),
        lines: Vec::new(),
    })
}

pub(crate) fn line(row: crate::datastore::transactions::StatementLine) -> formats::Line {
    let counterparty = match (row.originator_account_number, row.originator_account_name) {
        (Some(account_number), Some(account_name)) => Some(formats::Counterparty {
            account_number,
            account_name,
            bank_name: row.originator_bank_name.unwrap_or_default(),
        }),
        _ => None,
    };
    formats::Line {
        id: row.id.to_string(),
        reference_number: row.reference_number,
        at: row.created_at,
        kind: if row.transaction_type == "credit" {
            formats::Direction::Credit
        } else {
            formats::Direction::Debit
        },
        amount: row.amount,
        balance_after: row.balance_after,
        narration: row.narration,
        category: row.category,
        status: row.status,
        channel: row.channel,
        counterparty,
    }
}

/// `download_transfer_receipt` and `download_transfer_receipt_api`: the transfer as
/// `get_transfer_*` finds it, as a PDF.
pub async fn download_transfer_receipt(
    bank: &Bank,
    business_id: &str,
    body: models::GetTransferRequest,
) -> Result<models::FileContent, Error> {
    let store = &bank.platform.store;
    let transfer = transfers::get_transfer(bank, business_id, body).await?;
    let source_number = transfer.source_account_number.as_str();
    let source = accounts::find_by_number(store, business_id, source_number)
        .await?
        .ok_or_else(|| Error::internal("the source account of a transfer vanished"))?;
    let kobo = |amount: &models::Amount| {
        Kobo::parse(amount.as_str())
            .map(Kobo::get)
            .or_else(|| (amount.as_str() == "0.00").then_some(0))
            .ok_or_else(|| Error::internal(format!("an amount {} unread", amount.as_str())))
    };
    let receipt = formats::Receipt {
        bank: kobo_bank(),
        reference_number: transfer.reference_number.to_string(),
        session_id: transfer.session_id.as_ref().map(|id| id.to_string()),
        at: transfer.created_at,
        status: transfer.transfer_status.to_string(),
        amount: kobo(&transfer.amount)?,
        fee: kobo(&transfer.fee)?,
        vat: kobo(&transfer.vat)?,
        narration: transfer.narration.clone(),
        source: formats::Source {
            business_name: businesses::name_of(store, business_id).await?,
            account_number: source.account_number.clone(),
            account_name: source.account_name.clone(),
        },
        beneficiary: formats::Counterparty {
            account_number: transfer.beneficiary_account_number.to_string(),
            account_name: transfer.beneficiary_account_name.clone(),
            bank_name: transfer.bank_name.clone(),
        },
        generated_at: bank.platform.clock.now(),
    };
    file(
        format!("receipt-{}.pdf", receipt.reference_number),
        "application/pdf",
        formats::pdf::receipt(&receipt),
    )
}

/// `download_transactions_web` and `download_transactions_api`: every transaction `filters`
/// match, oldest first, as CSV; `01` past [`LINES_MAX`].
pub async fn download_transactions(
    bank: &Bank,
    business_id: &str,
    filters: &Filters,
) -> Result<models::FileContent, Error> {
    let store = &bank.platform.store;
    let mut rows: Vec<TransactionRow> = Vec::new();
    let mut cursor: Option<Cursor> = None;
    loop {
        let window = Window {
            size: CHUNK,
            cursor: cursor.take(),
            offset: None,
        };
        let list = Listing::Transactions;
        let mut page =
            crate::datastore::transactions::list(store, list, business_id, filters, &window)
                .await?;
        let more = page.len() as u64 > CHUNK;
        page.truncate(CHUNK as usize);
        cursor = page.last().map(|row| Cursor {
            created_at: row.created_at,
            id: row.id,
        });
        rows.extend(page);
        if rows.len() as u64 > LINES_MAX {
            return Err(
                Error::new(ResponseCode::InvalidRequest).with_message(format!(
                    "`filters`: more than {LINES_MAX} transactions match: narrow the dates or the \
                 account"
                )),
            );
        }
        if !more {
            break;
        }
    }
    // Newest first as listed; a file reads oldest first, each account's balances in order.
    rows.reverse();
    let lines: Vec<(String, formats::Line)> = rows
        .into_iter()
        .map(|row| (row.account_number.clone(), listed_line(row)))
        .collect();
    let day = |at: Option<chrono::DateTime<chrono::Utc>>, back: i64| {
        at.map(|at| (at - chrono::Duration::days(back)).date_naive().to_string())
    };
    let name = match (day(filters.from, 0), day(filters.until, 1)) {
        (Some(from), Some(to)) => format!("transactions-{from}-to-{to}.csv"),
        (Some(from), None) => format!("transactions-from-{from}.csv"),
        (None, Some(to)) => format!("transactions-to-{to}.csv"),
        (None, None) => "transactions.csv".to_owned(),
    };
    file(
        name,
        "text/csv; charset=utf-8",
        formats::csv::account_transactions(&lines).into_bytes(),
    )
}

/// A listed transaction as a file's line.
pub(crate) fn listed_line(row: TransactionRow) -> formats::Line {
    line(crate::datastore::transactions::StatementLine {
        id: row.id,
        reference_number: row.reference_number,
        transaction_type: row.transaction_type,
        category: row.category,
        status: row.status,
        channel: row.channel,
        amount: row.amount,
        narration: row.narration,
        session_id: row.session_id,
        originator_account_number: row.originator_account_number,
        originator_account_name: row.originator_account_name,
        originator_bank_code: row.originator_bank_code,
        originator_bank_name: row.originator_bank_name,
        created_at: row.created_at,
        balance_after: row.balance_after,
    })
}

/// [`download_transactions`] with the Dashboard's filters.
pub async fn download_transactions_web(
    bank: &Bank,
    business_id: &str,
    body: models::DownloadTransactionsWebRequest,
) -> Result<models::FileContent, Error> {
    let filters = transactions::web_filters(body.filters.unwrap_or_default())?;
    download_transactions(bank, business_id, &filters).await
}

/// [`download_transactions`] with the integration's filters.
pub async fn download_transactions_api(
    bank: &Bank,
    business_id: &str,
    body: models::DownloadTransactionsApiRequest,
) -> Result<models::FileContent, Error> {
    let filters = transactions::api_filters(body.filters.unwrap_or_default())?;
    download_transactions(bank, business_id, &filters).await
}
