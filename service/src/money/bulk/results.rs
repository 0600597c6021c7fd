//! A bulk transfer's results as a CSV file (`download_bulk_transfer_results`): one line an item,
//! in order, with what was sent, its validation, and once paid its outcome and its transfer. The
//! cells are written as statements' are (`kobo_statements::csv::field`: a cell a spreadsheet
//! would run as a formula begins with `'`); the Dashboard's own results file has the same rule.

use generated_server::models;

use crate::datastore::bulk_transfers::{self, BulkItemRow, BulkTransferRow};
use crate::error::{Error, OrInternal};
use crate::money::amount::amount_text;
use crate::money::bank::Bank;
use crate::money::downloads;

use super::{banks_narration, find, outcome_of, ITEMS_MAX};

/// The file's columns, in order (the spec's description of the operation names them).
const COLUMNS: [&str; 19] = [
    "index",
    "account_number",
    "bank_code",
    "bank_name",
    "account_name",
    "confirmed_name",
    "amount",
    "fee",
    "vat",
    "narration",
    "reference",
    "validation",
    "refusal_code",
    "refusal_message",
    "outcome",
    "transfer_id",
    "reference_number",
    "failure_code",
    "failure_message",
];

/// `download_bulk_transfer_results` and its integration twin: the business's batch (`47`), every
/// item of it, whatever its status.
pub async fn download_bulk_transfer_results(
    bank: &Bank,
    business_id: &str,
    body: models::BulkTransferIdRequest,
) -> Result<models::FileContent, Error> {
    let batch = find(bank, business_id, &body.bulk_transfer_id).await?;
    let every = u64::try_from(ITEMS_MAX).or_internal()?;
    let items = bulk_transfers::items(&bank.platform.store, &batch.id, None, 0, every).await?;
    let name = batch
        .reference
        .clone()
        .unwrap_or_else(|| batch.id.to_string());
    downloads::file(
        format!("bulk-transfer-{name}-results.csv"),
        "text/csv; charset=utf-8",
        results_csv(&batch, &items).into_bytes(),
    )
}

/// The header line, then a line an item (CRLF, RFC 4180).
fn results_csv(batch: &BulkTransferRow, items: &[BulkItemRow]) -> String {
    let mut out = COLUMNS.join(",");
    out.push_str("\r\n");
    let money = |kobo: Option<i64>| kobo.map(|k| amount_text(i128::from(k))).unwrap_or_default();
    let text = |value: &Option<String>| value.clone().unwrap_or_default();
    for item in items {
        let cells: [String; COLUMNS.len()] = [
            item.idx.to_string(),
            item.account_number.clone(),
            item.bank_code.clone(),
            text(&item.bank_name),
            item.account_name.clone(),
            text(&item.confirmed_name),
            money(Some(item.amount)),
            money(item.fee),
            money(item.vat),
            banks_narration(batch, item),
            text(&item.reference),
            item.validation.clone(),
            text(&item.refusal_code),
            text(&item.refusal_message),
            outcome_of(item).to_owned(),
            item.transfer_id.to_string(),
            text(&item.reference_number),
            text(&item.failure_code),
            text(&item.failure_message),
        ];
        let line: Vec<String> = cells
            .iter()
            .map(|cell| kobo_statements::csv::field(cell))
            .collect();
        out.push_str(&line.join(","));
        out.push_str("\r\n");
    }
    out
}
