//! Property-style: for many generated statements, every renderer's output read back (by small
//! readers written here, independent of the renderers) gives the statement's figures.

use kobo_statements::sample::{self, Rng};
use kobo_statements::{camt053, csv, ofx, pdf, Direction, Statement};

/// Naira text (`1234.56`, `-0.05`) to kobo.
fn kobo(text: &str) -> i64 {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (naira, fraction) = digits.split_once('.').expect("two decimals");
    assert_eq!(fraction.len(), 2, "{text}");
    assert!(
        naira.bytes().all(|b| b.is_ascii_digit()) && !naira.is_empty(),
        "{text}"
    );
    let value = naira.parse::<i64>().unwrap() * 100 + fraction.parse::<i64>().unwrap();
    if negative {
        -value
    } else {
        value
    }
}

/// An RFC 4180 reader: records of fields, quotes undone; every record must end in CRLF.
fn read_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                c => field.push(c),
            }
            continue;
        }
        match c {
            '"' => {
                assert!(field.is_empty(), "a quote inside an unquoted field");
                quoted = true;
            }
            ',' => record.push(std::mem::take(&mut field)),
            '\r' => {
                assert_eq!(chars.next(), Some('\n'), "CR without LF outside quotes");
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            '\n' => panic!("LF without CR outside quotes"),
            c => field.push(c),
        }
    }
    assert!(!quoted, "an unclosed quote");
    assert!(
        field.is_empty() && record.is_empty(),
        "the last record has no CRLF"
    );
    records
}

/// The texts of every `<open>...</close>` in order (no nesting), XML entities undone.
fn values(xml: &str, open: &str, close: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = xml;
    while let Some(start) = rest.find(open) {
        rest = &rest[start + open.len()..];
        let end = rest.find(close).expect(close);
        found.push(
            rest[..end]
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&apos;", "'")
                .replace("&amp;", "&"),
        );
        rest = &rest[end..];
    }
    found
}

fn value(xml: &str, tag: &str) -> String {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    values(xml, &open, &close).remove(0)
}

fn check_csv(statement: &Statement, text: &str) {
    let records = read_csv(text);
    assert_eq!(records[0], csv::HEADER.to_vec());
    assert_eq!(records.len(), statement.lines.len() + 1);
    let mut balance = statement.opening_balance;
    let (mut credits, mut debits) = (0, 0);
    for (record, line) in records[1..].iter().zip(&statement.lines) {
        assert_eq!(record.len(), csv::HEADER.len());
        assert_eq!(record[1], line.reference_number);
        let amount = kobo(&record[3]);
        assert!(amount >= 0, "amounts are never negative");
        match record[2].as_str() {
            "credit" => {
                balance += amount;
                credits += amount;
            }
            "debit" => {
                balance -= amount;
                debits += amount;
            }
            other => panic!("type {other}"),
        }
        assert_eq!(amount, line.amount, "{}", line.reference_number);
        assert_eq!(record[2], line.kind.as_str());
        assert_eq!(kobo(&record[4]), balance, "{}", line.reference_number);
        assert_eq!(
            kobo(&record[4]),
            line.balance_after,
            "{}",
            line.reference_number
        );
        // Text is what was given, behind a `'` where it would be a formula.
        let narration = &record[5];
        if line.narration.starts_with(['=', '+', '-', '@', '\t', '\r']) {
            assert_eq!(*narration, format!("'{}", line.narration));
        } else {
            assert_eq!(*narration, line.narration);
        }
        for field in record.iter().skip(5) {
            assert!(
                !field.starts_with(['=', '+', '-', '@', '\t', '\r']),
                "{field:?}"
            );
        }
    }
    assert_eq!(balance, statement.closing_balance);
    assert_eq!(credits, statement.total_credits);
    assert_eq!(debits, statement.total_debits);
}

fn check_ofx(statement: &Statement, text: &str) {
    let transactions = values(text, "<STMTTRN>", "</STMTTRN>");
    assert_eq!(transactions.len(), statement.lines.len());
    let mut balance = statement.opening_balance;
    for (transaction, line) in transactions.iter().zip(&statement.lines) {
        assert_eq!(value(transaction, "FITID"), line.id);
        assert_eq!(value(transaction, "REFNUM"), line.reference_number);
        let amount = kobo(&value(transaction, "TRNAMT"));
        assert_eq!(amount, line.signed_amount());
        let kind = match line.kind {
            Direction::Credit => "CREDIT",
            Direction::Debit => "DEBIT",
        };
        assert_eq!(value(transaction, "TRNTYPE"), kind);
        assert!(value(transaction, "NAME").chars().count() <= 32);
        balance += amount;
        assert_eq!(balance, line.balance_after);
    }
    assert_eq!(balance, statement.closing_balance);
    let ledger = values(text, "<LEDGERBAL>", "</LEDGERBAL>").remove(0);
    assert_eq!(kobo(&value(&ledger, "BALAMT")), statement.closing_balance);
    assert_eq!(value(text, "CURDEF"), "NGN");
    assert_eq!(value(text, "ACCTID"), statement.account_number);
}

fn check_camt(statement: &Statement, text: &str) {
    let balances = values(text, "<Bal>", "</Bal>");
    assert_eq!(balances.len(), 2);
    let signed = |xml: &str| {
        let amount = kobo(&values(xml, "<Amt Ccy=\"NGN\">", "</Amt>").remove(0));
        match value(xml, "CdtDbtInd").as_str() {
            "CRDT" => amount,
            "DBIT" => -amount,
            other => panic!("{other}"),
        }
    };
    assert!(balances[0].contains("<Cd>OPBD</Cd>"));
    assert_eq!(signed(&balances[0]), statement.opening_balance);
    assert!(balances[1].contains("<Cd>CLBD</Cd>"));
    assert_eq!(signed(&balances[1]), statement.closing_balance);

    let entries = values(text, "<Ntry>", "</Ntry>");
    assert_eq!(entries.len(), statement.lines.len());
    let mut balance = statement.opening_balance;
    for (entry, line) in entries.iter().zip(&statement.lines) {
        balance += signed(entry);
        assert_eq!(balance, line.balance_after);
        assert_eq!(value(entry, "EndToEndId"), line.reference_number);
        assert_eq!(
            value(entry, "Sts"),
            if line.is_pending() { "PDNG" } else { "BOOK" }
        );
    }
    let credits = values(text, "<TtlCdtNtries>", "</TtlCdtNtries>").remove(0);
    assert_eq!(
        value(&credits, "NbOfNtries"),
        statement.credit_count.to_string()
    );
    assert_eq!(kobo(&value(&credits, "Sum")), statement.total_credits);
    let debits = values(text, "<TtlDbtNtries>", "</TtlDbtNtries>").remove(0);
    assert_eq!(
        value(&debits, "NbOfNtries"),
        statement.debit_count.to_string()
    );
    assert_eq!(kobo(&value(&debits, "Sum")), statement.total_debits);
}

/// The xref's offsets point at their objects; the page tree counts the pages; every reference
/// is in the content streams, in order.
fn check_pdf(statement: &Statement, bytes: &[u8]) {
    let startxref = {
        let tail = String::from_utf8_lossy(&bytes[bytes.len() - 30..]).to_string();
        let after = tail.split("startxref\n").nth(1).unwrap().to_string();
        after.lines().next().unwrap().parse::<usize>().unwrap()
    };
    let xref = String::from_utf8_lossy(&bytes[startxref..]).to_string();
    let entries: Vec<&str> = xref
        .lines()
        .skip(3)
        .take_while(|l| *l != "trailer")
        .collect();
    for (index, entry) in entries.iter().enumerate() {
        let offset: usize = entry[..10].parse().unwrap();
        assert!(bytes[offset..].starts_with(format!("{} 0 obj\n", index + 1).as_bytes()));
    }
    let text = String::from_utf8_lossy(bytes);
    let lines = statement.lines.len();
    let expected_pages = if lines <= 48 {
        1
    } else {
        1 + (lines - 48).div_ceil(58)
    };
    assert!(text.contains(&format!("/Count {expected_pages} >>")));
    assert_eq!(text.matches("/Type /Page ").count(), expected_pages);
    let mut from = 0;
    for line in &statement.lines {
        from += text[from..]
            .find(&format!("({})", line.reference_number))
            .expect("every reference in order")
            + 1;
    }
}

#[test]
fn every_format_reads_back_to_the_figures() {
    let mut rng = Rng::new(2026);
    for seed in 0..150 {
        let lines = match seed % 5 {
            0 => 0,
            1 => 1,
            _ => rng.below(130) as usize,
        };
        let statement = sample::statement(seed, lines);
        assert_eq!(statement.check(), Ok(()), "seed {seed}");
        let csv_text = csv::statement(&statement);
        assert_eq!(csv_text, csv::transactions(&statement.lines));
        check_csv(&statement, &csv_text);
        check_ofx(&statement, &ofx::statement(&statement));
        check_camt(&statement, &camt053::statement(&statement));
        check_pdf(&statement, &pdf::statement(&statement));
    }
}

#[test]
fn the_readers_notice_a_wrong_figure() {
    // The readers above are what the property rests on: a statement whose lines were changed
    // after rendering must not read back to it.
    let statement = sample::statement(3, 20);
    let csv_text = csv::statement(&statement);
    let mut changed = statement.clone();
    changed.lines[5].balance_after += 1;
    let caught = std::panic::catch_unwind(|| check_csv(&changed, &csv_text));
    assert!(caught.is_err());
    let ofx_text = ofx::statement(&statement);
    let mut changed = statement.clone();
    changed.closing_balance += 1;
    assert!(std::panic::catch_unwind(|| check_ofx(&changed, &ofx_text)).is_err());
    let camt_text = camt053::statement(&statement);
    assert!(std::panic::catch_unwind(|| check_camt(&changed, &camt_text)).is_err());
}

#[test]
fn rendering_is_deterministic() {
    let statement = sample::statement(77, 90);
    assert_eq!(pdf::statement(&statement), pdf::statement(&statement));
    assert_eq!(
        camt053::statement(&statement),
        camt053::statement(&statement)
    );
    let receipt = sample::receipt(77);
    assert_eq!(pdf::receipt(&receipt), pdf::receipt(&receipt));
}
