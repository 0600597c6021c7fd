//! PDF for people: the statement a business owner prints or sends to an auditor, a landlord or
//! a visa office, and the receipt of a transfer for its beneficiary.
//!
//! Written by hand as PDF 1.4: A4 pages of text in the standard Helvetica and Helvetica-Bold
//! fonts with WinAnsiEncoding (searchable, copyable, no images, nothing embedded), one content
//! stream a page, a cross-reference table of byte offsets, the trailer. Text is mapped to
//! WinAnsi (see `winansi`: a character it cannot encode becomes `?`, after folding the accents
//! of Nigerian names that it can), and amounts are written `NGN 1,234.56`, as `₦` is not in it.
//!
//! The statement's first page has the bank, the business and account, the period (Lagos days),
//! the opening and closing balances and the totals of credits and debits with their counts; then
//! a table of the lines (date and time, reference, narration cut to fit, debit, credit, balance
//! after) runs over as many pages as it needs, its header repeated on each. Every page says
//! "Page N of M" and that times are Lagos time.

mod document;
mod winansi;

use document::{assemble, Content, Font, Info, Style, PAGE_HEIGHT, PAGE_WIDTH};

use crate::{lagos, money, Direction, Line, Receipt, Statement};

const LEFT: f32 = 36.0;
const RIGHT: f32 = PAGE_WIDTH - 36.0;
const TOP: f32 = PAGE_HEIGHT - 40.0;
/// The lowest baseline a table row may have: the footer is below it.
const BOTTOM: f32 = 56.0;
const ROW: f32 = 12.0;

/// The first table row's baseline on the first page (under the statement's header and
/// summary) and on the pages after it.
const FIRST_PAGE_FIRST_ROW: f32 = 626.0;
const NEXT_PAGE_FIRST_ROW: f32 = 742.0;

const TITLE: Style = Style::new(Font::Bold, 18.0);
const HEADING: Style = Style::new(Font::Bold, 14.0);
const SUBHEADING: Style = Style::new(Font::Bold, 11.0);
const BODY: Style = Style::new(Font::Regular, 9.0);
const VALUE: Style = Style::new(Font::Regular, 10.0);
const LABEL: Style = Style::new(Font::Regular, 8.0).gray(0.35);
const SMALL: Style = Style::new(Font::Regular, 7.0).gray(0.35);
const CELL: Style = Style::new(Font::Regular, 7.5);
const CELL_HEADER: Style = Style::new(Font::Bold, 7.5);

/// The table's columns: left edges of the text columns, right edges of the amount columns.
const DATE_X: f32 = LEFT + 2.0;
const REFERENCE_X: f32 = DATE_X + 64.0;
const REFERENCE_WIDTH: f32 = 122.0;
const NARRATION_X: f32 = REFERENCE_X + REFERENCE_WIDTH + 4.0;
const BALANCE_RIGHT: f32 = RIGHT - 2.0;
const CREDIT_RIGHT: f32 = BALANCE_RIGHT - 68.0;
const DEBIT_RIGHT: f32 = CREDIT_RIGHT - 60.0;
const NARRATION_WIDTH: f32 = DEBIT_RIGHT - 56.0 - NARRATION_X;

/// How many rows a page has room for, from its first row's baseline down to [`BOTTOM`].
fn rows_from(first_row: f32) -> usize {
    ((first_row - BOTTOM) / ROW) as usize + 1
}

/// The lines on each page: the first page has less room, under the summary. A statement with
/// no lines still has its one page.
fn paginate(lines: usize) -> Vec<std::ops::Range<usize>> {
    let mut start = lines.min(rows_from(FIRST_PAGE_FIRST_ROW));
    let mut pages = Vec::new();
    pages.push(0..start);
    while start < lines {
        let end = lines.min(start + rows_from(NEXT_PAGE_FIRST_ROW));
        pages.push(start..end);
        start = end;
    }
    pages
}

/// The statement as a PDF.
pub fn statement(statement: &Statement) -> Vec<u8> {
    let pages = paginate(statement.lines.len());
    let count = pages.len();
    let period = format!(
        "{} to {}",
        lagos::day(statement.from),
        lagos::day(statement.to)
    );
    let mut contents = Vec::with_capacity(count);
    for (index, range) in pages.into_iter().enumerate() {
        let mut page = Content::default();
        let first_row = if index == 0 {
            statement_header(&mut page, statement, &period);
            FIRST_PAGE_FIRST_ROW
        } else {
            continuation_header(&mut page, statement, &period);
            NEXT_PAGE_FIRST_ROW
        };
        table(&mut page, &statement.lines[range], first_row);
        footer(
            &mut page,
            &format!(
                "{} | {} | account {} | {period} | times are {}",
                statement.bank.name,
                statement.business_name,
                statement.account_number,
                lagos::LABEL
            ),
            index + 1,
            count,
        );
        contents.push(page);
    }
    assemble(
        contents,
        &Info {
            title: format!(
                "{} account statement {}, {period}",
                statement.bank.name, statement.account_number
            ),
            author: statement.bank.name.clone(),
            subject: statement.business_name.clone(),
            created: created(statement.generated_at),
        },
    )
}

fn statement_header(page: &mut Content, statement: &Statement, period: &str) {
    bank_header(page, &statement.bank, "Account statement");

    page.text(SUBHEADING, LEFT, 752.0, &statement.business_name);
    let middle = 320.0;
    let rows = [
        (
            "Account name",
            statement.account_name.clone(),
            "Period (Lagos days)",
            period.to_string(),
        ),
        (
            "Account number",
            statement.account_number.clone(),
            "Generated",
            format!("{} Lagos time", lagos::minute(statement.generated_at)),
        ),
        (
            "Currency",
            statement.currency.clone(),
            "Times",
            lagos::LABEL.to_string(),
        ),
    ];
    for (index, (left_label, left_value, right_label, right_value)) in rows.iter().enumerate() {
        let y = 738.0 - index as f32 * 12.0;
        page.text(LABEL, LEFT, y, left_label);
        page.text_fit(BODY, LEFT + 70.0, y, left_value, middle - LEFT - 80.0);
        page.text(LABEL, middle, y, right_label);
        page.text_fit(BODY, middle + 80.0, y, right_value, RIGHT - middle - 80.0);
    }

    // The summary: four boxes in a band.
    let (band_bottom, band_height) = (656.0, 42.0);
    page.fill(0.93, LEFT, band_bottom, RIGHT - LEFT, band_height);
    let cells = [
        ("Opening balance".to_string(), statement.opening_balance),
        (
            format!("Total credits ({})", statement.credit_count),
            statement.total_credits,
        ),
        (
            format!("Total debits ({})", statement.debit_count),
            statement.total_debits,
        ),
        ("Closing balance".to_string(), statement.closing_balance),
    ];
    let cell_width = (RIGHT - LEFT) / cells.len() as f32;
    for (index, (label, kobo)) in cells.iter().enumerate() {
        let x = LEFT + 8.0 + index as f32 * cell_width;
        page.text(LABEL, x, band_bottom + 27.0, label);
        page.text_fit(
            Style::new(Font::Bold, 10.5),
            x,
            band_bottom + 11.0,
            &money::naira(*kobo),
            cell_width - 12.0,
        );
    }
    table_header(page, 640.0);
}

fn continuation_header(page: &mut Content, statement: &Statement, period: &str) {
    page.text(
        SUBHEADING,
        LEFT,
        TOP - 12.0,
        &format!("{} - Account statement (continued)", statement.bank.name),
    );
    page.text_fit(
        LABEL,
        LEFT,
        TOP - 25.0,
        &format!(
            "{} | account {} | {period} (Lagos days)",
            statement.business_name, statement.account_number
        ),
        RIGHT - LEFT,
    );
    table_header(page, NEXT_PAGE_FIRST_ROW + 14.0);
}

fn table_header(page: &mut Content, y: f32) {
    page.text(CELL_HEADER, DATE_X, y, "Date (Lagos)");
    page.text(CELL_HEADER, REFERENCE_X, y, "Reference");
    page.text(CELL_HEADER, NARRATION_X, y, "Narration");
    page.text_right(CELL_HEADER, DEBIT_RIGHT, y, "Debit (NGN)");
    page.text_right(CELL_HEADER, CREDIT_RIGHT, y, "Credit (NGN)");
    page.text_right(CELL_HEADER, BALANCE_RIGHT, y, "Balance (NGN)");
    page.rule(LEFT, y - 4.5, RIGHT, y - 4.5, 0.6);
}

fn table(page: &mut Content, lines: &[Line], first_row: f32) {
    if lines.is_empty() {
        page.text(BODY, DATE_X, first_row, "No transactions in this period.");
        return;
    }
    for (index, line) in lines.iter().enumerate() {
        let y = first_row - index as f32 * ROW;
        if index % 2 == 1 {
            page.fill(0.95, LEFT, y - 3.5, RIGHT - LEFT, ROW);
        }
        page.text(CELL, DATE_X, y, &lagos::minute(line.at));
        // A reference is never cut (it is what people search for): a long one is set smaller.
        page.text_shrink(
            CELL,
            REFERENCE_X,
            y,
            &line.reference_number,
            REFERENCE_WIDTH,
        );
        let narration = if line.status.eq_ignore_ascii_case("success") {
            line.narration.clone()
        } else {
            format!("[{}] {}", line.status, line.narration)
        };
        page.text_fit(CELL, NARRATION_X, y, &narration, NARRATION_WIDTH);
        let amount = money::grouped(line.amount);
        match line.kind {
            Direction::Debit => page.text_right(CELL, DEBIT_RIGHT, y, &amount),
            Direction::Credit => page.text_right(CELL, CREDIT_RIGHT, y, &amount),
        }
        page.text_right(CELL, BALANCE_RIGHT, y, &money::grouped(line.balance_after));
    }
}

/// The bank's name and the document's title across the top, and the bank's identifiers.
fn bank_header(page: &mut Content, bank: &crate::Bank, title: &str) {
    page.text(TITLE, LEFT, TOP - 14.0, &bank.name);
    page.text_right(HEADING, RIGHT, TOP - 14.0, title);
    let mut identifiers = format!("Bank code {}", bank.code);
    if let Some(bic) = &bank.bic {
        identifiers.push_str(&format!(" | BIC {bic}"));
    }
    page.text(LABEL, LEFT, TOP - 27.0, &identifiers);
    page.rule(LEFT, TOP - 33.0, RIGHT, TOP - 33.0, 0.8);
}

fn footer(page: &mut Content, text: &str, number: usize, count: usize) {
    page.rule(LEFT, 44.0, RIGHT, 44.0, 0.4);
    let page_number = format!("Page {number} of {count}");
    let number_width = Style::new(Font::Regular, 8.0).width(page_number.as_bytes());
    page.text_fit(SMALL, LEFT, 32.0, text, RIGHT - LEFT - number_width - 16.0);
    page.text_right(Style::new(Font::Regular, 8.0), RIGHT, 32.0, &page_number);
}

/// The receipt of one transfer, on one page.
pub fn receipt(receipt: &Receipt) -> Vec<u8> {
    let mut page = Content::default();
    bank_header(&mut page, &receipt.bank, "Transfer receipt");

    page.text(LABEL, LEFT, 752.0, "Amount");
    page.text(
        Style::new(Font::Bold, 22.0),
        LEFT,
        732.0,
        &money::naira(receipt.amount),
    );
    page.text(
        BODY,
        LEFT,
        716.0,
        &format!(
            "{}, {} {}",
            capitalized(&receipt.status),
            lagos::second(receipt.at),
            lagos::LABEL
        ),
    );

    let value_x = LEFT + 130.0;
    let value_width = RIGHT - value_x;
    let mut y = 688.0;
    let mut row = |page: &mut Content, label: &str, value: &str, style: Style| {
        page.text(LABEL, LEFT, y, label);
        page.text_fit(style, value_x, y, value, value_width);
        y -= 17.0;
    };
    row(&mut page, "Reference", &receipt.reference_number, VALUE);
    row(
        &mut page,
        "Session ID",
        receipt.session_id.as_deref().unwrap_or("-"),
        VALUE,
    );
    row(
        &mut page,
        "Date and time",
        &format!("{} {}", lagos::second(receipt.at), lagos::LABEL),
        VALUE,
    );
    row(&mut page, "Status", &receipt.status, VALUE);
    row(&mut page, "Amount", &money::naira(receipt.amount), VALUE);
    row(&mut page, "Fee", &money::naira(receipt.fee), VALUE);
    row(
        &mut page,
        "VAT on the fee",
        &money::naira(receipt.vat),
        VALUE,
    );
    row(
        &mut page,
        "Total debited",
        &money::naira(receipt.total()),
        Style::new(Font::Bold, 10.0),
    );

    y = narration(&mut page, &receipt.narration, y, value_x);
    parties(&mut page, receipt, y, value_x);

    footer(
        &mut page,
        &format!(
            "Generated {} {} by {}.",
            lagos::second(receipt.generated_at),
            lagos::LABEL,
            receipt.bank.name
        ),
        1,
        1,
    );
    assemble(
        vec![page],
        &Info {
            title: format!(
                "{} transfer receipt {}",
                receipt.bank.name, receipt.reference_number
            ),
            author: receipt.bank.name.clone(),
            subject: receipt.source.business_name.clone(),
            created: created(receipt.generated_at),
        },
    )
}

/// A receipt's narration from `y` down, on as many as six lines; returns where it ends.
fn narration(page: &mut Content, narration: &str, mut y: f32, value_x: f32) -> f32 {
    let value_width = RIGHT - value_x;
    page.text(LABEL, LEFT, y, "Narration");
    let narration = winansi::encode(narration);
    let lines = winansi::wrap(VALUE.font, VALUE.size, &narration, value_width);
    for (index, line) in lines.iter().take(6).enumerate() {
        let mut text = line.clone();
        if index == 5 && lines.len() > 6 {
            text.extend_from_slice(&[b' ', winansi::ELLIPSIS]);
            text = winansi::fit(VALUE.font, VALUE.size, &text, value_width);
        }
        page.bytes(VALUE, value_x, y, &text);
        y -= 13.0;
    }
    y - 14.0
}

/// A receipt's source and beneficiary, from `y` down.
fn parties(page: &mut Content, receipt: &Receipt, mut y: f32, value_x: f32) {
    let value_width = RIGHT - value_x;
    let bank = format!("{} ({})", receipt.bank.name, receipt.bank.code);
    let sides: [(&str, Vec<(&str, &str)>); 2] = [
        (
            "From",
            vec![
                ("Business", receipt.source.business_name.as_str()),
                ("Account name", receipt.source.account_name.as_str()),
                ("Account number", receipt.source.account_number.as_str()),
                ("Bank", bank.as_str()),
            ],
        ),
        (
            "To",
            vec![
                ("Account name", receipt.beneficiary.account_name.as_str()),
                (
                    "Account number",
                    receipt.beneficiary.account_number.as_str(),
                ),
                ("Bank", receipt.beneficiary.bank_name.as_str()),
            ],
        ),
    ];
    for (heading, rows) in sides {
        page.text(SUBHEADING, LEFT, y, heading);
        y -= 17.0;
        for (label, value) in rows {
            page.text(LABEL, LEFT, y, label);
            page.text_fit(VALUE, value_x, y, value, value_width);
            y -= 17.0;
        }
        y -= 14.0;
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A PDF date, in Lagos time: `D:20261201090000+01'00'`.
fn created(at: chrono::DateTime<chrono::Utc>) -> String {
    lagos::time(at).format("D:%Y%m%d%H%M%S+01'00'").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample;

    /// The objects of a PDF by number, read through its cross-reference table, after checking
    /// that every entry points at `N 0 obj`.
    fn objects(pdf: &[u8]) -> Vec<String> {
        let text = String::from_utf8_lossy(pdf);
        assert!(pdf.starts_with(b"%PDF-1.4\n"));
        assert!(pdf.ends_with(b"%%EOF\n"));
        let tail = std::str::from_utf8(&pdf[pdf.len() - 40..]).unwrap();
        let startxref: usize = tail
            .split("startxref\n")
            .nth(1)
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let xref = std::str::from_utf8(&pdf[startxref..]).unwrap();
        let mut lines = xref.lines();
        assert_eq!(lines.next(), Some("xref"));
        let size: usize = lines
            .next()
            .unwrap()
            .strip_prefix("0 ")
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(lines.next(), Some("0000000000 65535 f "));
        let mut bodies = Vec::new();
        for number in 1..size {
            let entry = lines.next().unwrap();
            assert_eq!(entry.len(), 19, "{entry:?}"); // plus its LF: 20 bytes
            assert!(entry.ends_with(" 00000 n "));
            let offset: usize = entry[..10].parse().unwrap();
            let header = format!("{number} 0 obj\n");
            assert!(
                pdf[offset..].starts_with(header.as_bytes()),
                "object {number} is not at {offset}"
            );
            let body = &pdf[offset + header.len()..];
            let end = body.windows(7).position(|w| w == b"endobj\n").unwrap();
            bodies.push(String::from_utf8(body[..end].to_vec()).unwrap());
        }
        assert_eq!(lines.next(), Some("trailer"));
        assert!(text.contains(&format!("/Size {size} /Root 1 0 R")));
        bodies
    }

    /// The page count the page tree declares, checked against the page objects.
    fn pages(objects: &[String]) -> usize {
        let tree = objects
            .iter()
            .find(|body| body.starts_with("<< /Type /Pages"))
            .unwrap();
        let count: usize = tree
            .split("/Count ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let page_objects = objects
            .iter()
            .filter(|body| body.starts_with("<< /Type /Page "))
            .count();
        assert_eq!(count, page_objects);
        count
    }

    /// All content streams' text, in order.
    fn content(objects: &[String]) -> String {
        objects
            .iter()
            .filter(|body| body.starts_with("<< /Length"))
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn page_counts() {
        for (lines, expected) in [
            (0, 1),
            (1, 1),
            (48, 1),
            (49, 2),
            (106, 2),
            (107, 3),
            (200, 4),
        ] {
            let statement = sample::statement(lines as u64, lines);
            let objects = objects(&super::statement(&statement));
            assert_eq!(pages(&objects), expected, "{lines} lines");
            let content = content(&objects);
            for number in 1..=expected {
                assert!(
                    content.contains(&format!("(Page {number} of {expected})")),
                    "{lines} lines: page {number}"
                );
            }
            // Every line is in the table once, in order, with the table's header on each page.
            let mut from = 0;
            for line in &statement.lines {
                let found = content[from..]
                    .find(&format!("({})", line.reference_number))
                    .unwrap_or_else(|| panic!("{} missing", line.reference_number));
                from += found + 1;
            }
            assert_eq!(content.matches("(Balance \\(NGN\\))").count(), expected);
        }
    }

    #[test]
    fn an_empty_statement_says_so() {
        let statement = sample::statement(1, 0);
        let content = content(&objects(&super::statement(&statement)));
        assert!(content.contains("(No transactions in this period.)"));
        assert!(content.contains(&format!("({})", money::naira(statement.opening_balance))));
    }

    #[test]
    fn shows_the_figures_and_escapes_text() {
        let mut statement = sample::statement(2, 3);
        statement.lines[0].narration = "Rent (Q4) \\ Lekki".into();
        let content = content(&objects(&super::statement(&statement)));
        for (label, kobo) in [
            ("Opening balance", statement.opening_balance),
            ("Closing balance", statement.closing_balance),
        ] {
            assert!(content.contains(&format!("({label})")));
            assert!(content.contains(&format!("({})", money::naira(kobo))));
        }
        assert!(content.contains(&format!("(Total credits \\({}\\))", statement.credit_count)));
        assert!(content.contains(r"(Rent \(Q4\) \\ Lekki)"));
        assert!(content.contains(r"Lagos time \(WAT, UTC+01:00\)"));
    }

    #[test]
    fn a_receipt_is_one_page_with_its_fields() {
        let receipt = sample::receipt(4);
        let objects = objects(&super::receipt(&receipt));
        assert_eq!(pages(&objects), 1);
        let content = content(&objects);
        for text in [
            receipt.reference_number.clone(),
            receipt.session_id.clone().unwrap(),
            money::naira(receipt.amount),
            money::naira(receipt.fee),
            money::naira(receipt.vat),
            money::naira(receipt.total()),
            receipt.beneficiary.account_number.clone(),
            "(Page 1 of 1)".to_string(),
        ] {
            assert!(content.contains(&text), "{text}");
        }
    }

    #[test]
    fn the_columns_fit_the_page() {
        const { assert!(NARRATION_WIDTH > 140.0) };
        const { assert!(BALANCE_RIGHT <= RIGHT) };
        // A usual reference fits at the table's size; the widest of that shape does not, and
        // is set smaller.
        let widest = CELL.width(b"TRF-20261126-WWWWWWWWWW");
        assert!(
            widest > REFERENCE_WIDTH,
            "{widest}: then shrinking is not needed"
        );
        assert!(CELL.width(b"TRF-20261126-WWX4VQK4B9") <= REFERENCE_WIDTH);
        assert_eq!(rows_from(FIRST_PAGE_FIRST_ROW), 48);
        assert_eq!(rows_from(NEXT_PAGE_FIRST_ROW), 58);
    }
}
