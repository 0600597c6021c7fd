//! Renders a generated statement and receipt into every format, with the figures they should
//! show, for parsers we did not write to check (`.ci/statements`).
//!
//!     cargo run -p kobo-statements --example render -- OUT_DIR [SEED]
//!
//! Writes `statement.csv`, `transactions.csv`, `statement.ofx`, `statement.camt053.xml`,
//! `statement.pdf`, `receipt.pdf` and `expected.json` into OUT_DIR (created if missing).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use kobo_statements::{camt053, csv, lagos, ofx, pdf, sample, Receipt, Statement};

/// Enough lines for three PDF pages.
const LINES: usize = 120;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(directory) = args.next().map(PathBuf::from) else {
        eprintln!("usage: render OUT_DIR [SEED]");
        return ExitCode::from(2);
    };
    let seed = match args.next().map(|seed| seed.parse::<u64>()) {
        None => 1,
        Some(Ok(seed)) => seed,
        Some(Err(error)) => {
            eprintln!("render: SEED must be a whole number: {error}");
            return ExitCode::from(2);
        }
    };

    let statement = sample::statement(seed, LINES);
    if let Err(problem) = statement.check() {
        eprintln!("render: the generated statement does not reconcile: {problem}");
        return ExitCode::FAILURE;
    }
    for narration in sample::NARRATIONS {
        if !statement
            .lines
            .iter()
            .any(|line| line.narration == *narration)
        {
            eprintln!("render: seed {seed} has no line narrated {narration:?}");
            return ExitCode::FAILURE;
        }
    }
    let receipt = sample::receipt(seed);

    let files: [(&str, Vec<u8>); 7] = [
        ("statement.csv", csv::statement(&statement).into_bytes()),
        (
            "transactions.csv",
            csv::transactions(&statement.lines).into_bytes(),
        ),
        ("statement.ofx", ofx::statement(&statement).into_bytes()),
        (
            "statement.camt053.xml",
            camt053::statement(&statement).into_bytes(),
        ),
        ("statement.pdf", pdf::statement(&statement)),
        ("receipt.pdf", pdf::receipt(&receipt)),
        (
            "expected.json",
            expected(seed, &statement, &receipt).into_bytes(),
        ),
    ];
    if let Err(error) = std::fs::create_dir_all(&directory) {
        eprintln!("render: {}: {error}", directory.display());
        return ExitCode::FAILURE;
    }
    for (name, bytes) in files {
        let path = directory.join(name);
        if let Err(error) = std::fs::write(&path, bytes) {
            eprintln!("render: {}: {error}", path.display());
            return ExitCode::FAILURE;
        }
    }
    println!(
        "render: seed {seed}, {} lines ({} credits, {} debits) into {}",
        statement.lines.len(),
        statement.credit_count,
        statement.debit_count,
        directory.display()
    );
    ExitCode::SUCCESS
}

/// The figures, in kobo, as JSON.
fn expected(seed: u64, statement: &Statement, receipt: &Receipt) -> String {
    let mut json = String::from("{\n");
    let _ = writeln!(json, "  \"seed\": {seed},");
    let _ = writeln!(json, "  \"currency\": {},", string(&statement.currency));
    let _ = writeln!(json, "  \"bank_name\": {},", string(&statement.bank.name));
    let _ = writeln!(json, "  \"bank_code\": {},", string(&statement.bank.code));
    let _ = writeln!(
        json,
        "  \"account_number\": {},",
        string(&statement.account_number)
    );
    let _ = writeln!(json, "  \"from\": \"{}\",", statement.from);
    let _ = writeln!(json, "  \"to\": \"{}\",", statement.to);
    for (name, kobo) in [
        ("opening_balance", statement.opening_balance),
        ("closing_balance", statement.closing_balance),
        ("total_credits", statement.total_credits),
        ("total_debits", statement.total_debits),
    ] {
        let _ = writeln!(json, "  \"{name}\": {kobo},");
    }
    let _ = writeln!(json, "  \"credit_count\": {},", statement.credit_count);
    let _ = writeln!(json, "  \"debit_count\": {},", statement.debit_count);
    json.push_str("  \"lines\": [\n");
    for (index, line) in statement.lines.iter().enumerate() {
        let _ = write!(
            json,
            "    {{\"id\": {}, \"reference\": {}, \"at\": \"{}\", \"amount\": {}, \"direction\": \"{}\", \"balance_after\": {}, \"pending\": {}, \"narration\": {}}}",
            string(&line.id),
            string(&line.reference_number),
            lagos::iso(line.at),
            line.amount,
            line.kind.as_str(),
            line.balance_after,
            line.is_pending(),
            string(&line.narration)
        );
        json.push_str(if index + 1 < statement.lines.len() {
            ",\n"
        } else {
            "\n"
        });
    }
    json.push_str("  ],\n");
    let _ = writeln!(
        json,
        "  \"receipt\": {{\"reference\": {}, \"session_id\": {}, \"amount\": {}, \"fee\": {}, \"vat\": {}, \"total\": {}, \"beneficiary_account_number\": {}}}",
        string(&receipt.reference_number),
        receipt.session_id.as_deref().map_or("null".to_string(), string),
        receipt.amount,
        receipt.fee,
        receipt.vat,
        receipt.total(),
        string(&receipt.beneficiary.account_number)
    );
    json.push_str("}\n");
    json
}

/// A JSON string.
fn string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c < ' ' => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
