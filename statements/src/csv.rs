//! CSV for spreadsheets and accounting imports: RFC 4180, one row per line.
//!
//! - Records end in CRLF; a field containing `,`, `"`, CR or LF is quoted, `"` doubled.
//! - Text that a spreadsheet would take for a formula (starting with `=`, `+`, `-`, `@`, tab or
//!   CR) gets a leading `'`, which spreadsheets show as text (CSV injection). The two amount
//!   columns are ours, always plain decimals (`1234.56`), and are left alone.
//! - Amounts are never negative: the direction is its own column (`credit`/`debit`). Only a
//!   balance below zero (an overdrawn account) has a `-`.
//! - The header row comes first, then the lines, nothing else: summary rows (opening,
//!   totals, closing) break accounting imports, so the period is in [`file_name`] and the
//!   balances are in the other formats.
//! - Dates are Lagos time in ISO 8601 with the offset (`2026-11-26T14:03:27+01:00`), as the
//!   header says.
//! - UTF-8 without a byte-order mark.

use crate::{lagos, money, Line, Statement};

/// The header row.
pub const HEADER: [&str; 12] = [
    "date_lagos",
    "reference",
    "type",
    "amount_ngn",
    "balance_after_ngn",
    "narration",
    "category",
    "status",
    "channel",
    "counterparty_account_number",
    "counterparty_account_name",
    "counterparty_bank_name",
];

/// A statement's lines as CSV: the header, then one row a line, oldest first.
pub fn statement(statement: &Statement) -> String {
    transactions(&statement.lines)
}

/// Any list of lines of one account, in the statement's columns.
pub fn transactions(rows: &[Line]) -> String {
    let mut out = header(false);
    for line in rows {
        row(&mut out, None, line);
    }
    out
}

/// Lines of several accounts (a business's transactions, filtered), each with its account's
/// number first (`account_number`), then the statement's columns; the running balance is each
/// line's own account's.
pub fn account_transactions(rows: &[(String, Line)]) -> String {
    let mut out = header(true);
    account_rows(&mut out, rows);
    out
}

/// The header row, with `account_number` first when the rows carry their account
/// ([`account_rows`]).
pub fn header(with_account: bool) -> String {
    let mut header: Vec<Cell> = Vec::new();
    if with_account {
        header.push(Cell::Text("account_number"));
    }
    header.extend(HEADER.iter().map(|name| Cell::Text(name)));
    let mut out = String::new();
    record(&mut out, &header);
    out
}

/// The rows of `lines` of one account, appended to `out` (after [`header`]`(false)`).
pub fn rows(out: &mut String, lines: &[Line]) {
    for line in lines {
        row(out, None, line);
    }
}

/// The rows of `lines`, each with its account's number first, appended to `out` (after
/// [`header`]`(true)`).
pub fn account_rows(out: &mut String, lines: &[(String, Line)]) {
    for (account, line) in lines {
        row(out, Some(account), line);
    }
}

/// One line's row, with its account's number first when given.
fn row(out: &mut String, account: Option<&str>, line: &Line) {
    let counterparty = line.counterparty.as_ref();
    let at = lagos::iso(line.at);
    let mut cells = Vec::with_capacity(13);
    if let Some(account) = account {
        cells.push(Cell::Text(account));
    }
    cells.extend([
        Cell::Text(&at),
        Cell::Text(&line.reference_number),
        Cell::Text(line.kind.as_str()),
        Cell::Amount(line.amount),
        Cell::Amount(line.balance_after),
        Cell::Text(&line.narration),
        Cell::Text(&line.category),
        Cell::Text(&line.status),
        Cell::Text(&line.channel),
        Cell::Text(counterparty.map_or("", |c| c.account_number.as_str())),
        Cell::Text(counterparty.map_or("", |c| c.account_name.as_str())),
        Cell::Text(counterparty.map_or("", |c| c.bank_name.as_str())),
    ]);
    record(out, &cells);
}

/// A file name that says whose statement and which days:
/// `kobo-statement-0123456789-2026-11-01-to-2026-11-30.csv`.
pub fn file_name(statement: &Statement) -> String {
    let account: String = statement
        .account_number
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    format!(
        "kobo-statement-{account}-{}-to-{}.csv",
        statement.from.format("%Y-%m-%d"),
        statement.to.format("%Y-%m-%d")
    )
}

enum Cell<'a> {
    /// Anything a person or another system wrote: neutralised and quoted as needed.
    Text(&'a str),
    /// Kobo, written as a plain decimal.
    Amount(i64),
}

fn record(out: &mut String, cells: &[Cell]) {
    for (index, cell) in cells.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        match cell {
            Cell::Amount(kobo) => out.push_str(&money::decimal(*kobo)),
            Cell::Text(text) => out.push_str(&field(text)),
        }
    }
    out.push_str("\r\n");
}

/// One text field: a leading `'` if a spreadsheet would run it as a formula, then quoted if it
/// holds a separator, a quote or a line break. (Kobo's other CSV files write their cells with it.)
pub fn field(text: &str) -> String {
    let text = if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text.to_string()
    };
    if text.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{sample, Counterparty, Direction};
    use chrono::{TimeZone, Utc};

    fn line(narration: &str) -> Line {
        Line {
            id: "0b5f3c1e-0000-4000-8000-000000000001".into(),
            reference_number: "TRF-20261126-WWX4VQK4B9".into(),
            at: Utc.with_ymd_and_hms(2026, 11, 25, 23, 30, 0).unwrap(),
            kind: Direction::Debit,
            amount: 123_456,
            balance_after: -5,
            narration: narration.into(),
            category: "transfer".into(),
            status: "success".into(),
            channel: "api".into(),
            counterparty: Some(Counterparty {
                account_number: "0123456789".into(),
                account_name: "Chukwu & Sons, Ltd".into(),
                bank_name: "+Bank".into(),
            }),
        }
    }

    #[test]
    fn quotes_fields_with_separators_quotes_and_line_breaks() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("one\ntwo"), "\"one\ntwo\"");
        assert_eq!(field("one\rtwo"), "\"one\rtwo\"");
        assert_eq!(field(""), "");
    }

    #[test]
    fn neutralises_formulas_but_not_amounts() {
        assert_eq!(field("=1+2"), "'=1+2");
        assert_eq!(field("+234 airtime"), "'+234 airtime");
        assert_eq!(field("-50% discount"), "'-50% discount");
        assert_eq!(field("@channel"), "'@channel");
        assert_eq!(field("\tTab"), "'\tTab");
        assert_eq!(field("\rCR"), "\"'\rCR\"");
        assert_eq!(
            field("=HYPERLINK(\"x\",\"y\")"),
            "\"'=HYPERLINK(\"\"x\"\",\"\"y\"\")\""
        );
        assert_eq!(field("a=b"), "a=b");

        let csv = transactions(&[line("=1+2, \"now\"")]);
        let mut rows = csv.split("\r\n");
        assert_eq!(rows.next().unwrap(), HEADER.join(","));
        assert_eq!(
            rows.next().unwrap(),
            "2026-11-26T00:30:00+01:00,TRF-20261126-WWX4VQK4B9,debit,1234.56,-0.05,\"'=1+2, \"\"now\"\"\",transfer,success,api,0123456789,\"Chukwu & Sons, Ltd\",'+Bank"
        );
        assert_eq!(rows.next(), Some(""));
        assert_eq!(rows.next(), None);
    }

    #[test]
    fn an_empty_list_is_the_header_alone() {
        assert_eq!(transactions(&[]), format!("{}\r\n", HEADER.join(",")));
    }

    #[test]
    fn names_the_file_after_the_account_and_days() {
        let mut statement = sample::statement(1, 0);
        statement.account_number = "01234/56789".into();
        let name = file_name(&statement);
        assert!(name.starts_with("kobo-statement-0123456789-"), "{name}");
        assert!(name.ends_with(".csv"));
    }

    #[test]
    fn lines_of_several_accounts_lead_with_their_account() {
        let rows = vec![
            ("0123456789".to_string(), line("Rent")),
            ("9876543210".to_string(), line("=cmd")),
        ];
        let text = account_transactions(&rows);
        let records: Vec<&str> = text.split("\r\n").collect();
        assert!(records[0].starts_with("account_number,date_lagos,reference,"));
        assert!(records[1].starts_with("0123456789,2026-11-26T00:30:00+01:00,"));
        assert!(records[2].starts_with("9876543210,"));
        assert!(records[2].contains(",'=cmd,"));
        assert_eq!(records.len(), 4, "two rows and the last CRLF");
        assert!(transactions(&[line("Rent")]).starts_with("date_lagos,"));
    }
}
