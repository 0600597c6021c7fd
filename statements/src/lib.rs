//! Kobo's account statements and transfer receipts, in the formats that accounting software and
//! people read.
//!
//! A [`Statement`] holds one account's figures for a run of Lagos days: the opening and closing
//! balances, the totals, and every line with the running balance after it. A [`Receipt`] holds
//! one transfer. Each renderer is a pure function from one of them to the bytes of a file:
//!
//! | module | format | who reads it |
//! | --- | --- | --- |
//! | [`csv`] | RFC 4180 CSV, one row per line, no summary rows | spreadsheets and the CSV importers of accounting packages (Sage, QuickBooks, Xero, Odoo, ...) |
//! | [`ofx`] | OFX 2.2 (XML) bank statement | personal-finance and small-business software that imports "bank files" (GnuCash, QuickBooks, ...) |
//! | [`camt053`] | ISO 20022 `camt.053.001.02` bank-to-customer statement | treasury and ERP systems, banks' other customers who reconcile automatically |
//! | [`pdf`] | PDF 1.4, A4, searchable text | people: the business owner, an auditor, a landlord or a visa office asking for a statement; a receipt for the beneficiary |
//!
//! Amounts are kept in kobo (1/100 naira) as `i64` everywhere and written as naira with two
//! decimals by one set of helpers, [`money`]. Machine formats carry plain decimals (`1234.56`);
//! the PDFs write `NGN 1,234.56`, since the naira sign is not in the fonts' WinAnsi encoding.
//!
//! **Time.** A statement's period is a run of Lagos days: Lagos is UTC+01:00 all year (West
//! Africa Time, no daylight saving), so a day runs from 00:00 to 24:00 at +01:00, which is
//! 23:00 UTC the day before to 23:00 UTC. Every human-readable time (CSV dates, the PDFs) is shown
//! in Lagos time and says so; the XML formats write the +01:00 offset explicitly. See [`lagos`].
//!
//! **Reconciliation.** [`Statement::check`] says whether the figures agree with each other
//! (opening + credits − debits = closing, each line's running balance, counts and totals). The
//! renderers write what they are given and do not call it: run it before rendering.
//!
//! **Why no dependencies** (other than `chrono` for dates): these formats are small, stable and
//! fully specified, and a statement is a legal-looking document whose every byte we want to
//! understand. A CSV writer is thirty lines, the two XML formats are a fixed tree of elements, and
//! a PDF of text in the standard fonts needs no font embedding, images or compression. Writing
//! them by hand keeps the output deterministic (the same statement gives the same bytes, which
//! tests and caches rely on) and leaves nothing to audit or update but this crate. The output is
//! checked by parsers we did not write (`.ci/statements`: ofxtools, the official camt.053 XSD,
//! bankstatementparser, poppler's pdftotext, pdfplumber, Python's csv module).
//!
//! [`sample`] makes deterministic pseudo-random statements and receipts for tests, the example
//! (`cargo run -p kobo-statements --example render -- OUT_DIR [SEED]`) and demonstrations.

pub mod camt053;
pub mod csv;
pub mod lagos;
pub mod money;
pub mod ofx;
pub mod pdf;
pub mod sample;
pub mod stream;
mod xml;

use chrono::{DateTime, NaiveDate, Utc};

/// The bank that keeps the account: its name, its CBN/NIP institution code (e.g. `090999`) and
/// its BIC where it has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bank {
    pub name: String,
    pub code: String,
    pub bic: Option<String>,
}

/// Which way a line moves the balance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Credit,
    Debit,
}

impl Direction {
    /// `credit` or `debit`, as the CSV writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Credit => "credit",
            Direction::Debit => "debit",
        }
    }
}

/// The other side of a line, or a receipt's beneficiary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counterparty {
    pub account_number: String,
    pub account_name: String,
    pub bank_name: String,
}

/// One line of a statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// The ledger entry's id (uuid text).
    pub id: String,
    /// What the customer quotes: `TRF-20261126-WWX4VQK4B9`, `REV-...`, `COL-...`.
    pub reference_number: String,
    pub at: DateTime<Utc>,
    pub kind: Direction,
    /// Kobo, never negative: the direction is [`Line::kind`].
    pub amount: i64,
    /// Kobo: the running balance right after this line.
    pub balance_after: i64,
    pub narration: String,
    /// `collection`, `transfer`, `fee`, `reversal`, ...
    pub category: String,
    /// `success`, `pending`, `failed`, `reversed`.
    pub status: String,
    pub channel: String,
    pub counterparty: Option<Counterparty>,
}

impl Line {
    /// The amount with the sign of its direction: positive for a credit, negative for a debit.
    pub fn signed_amount(&self) -> i64 {
        match self.kind {
            Direction::Credit => self.amount,
            Direction::Debit => -self.amount,
        }
    }

    /// Whether the line is still pending (it moved the balance, but is not final).
    pub fn is_pending(&self) -> bool {
        self.status.eq_ignore_ascii_case("pending")
    }
}

/// One account's statement for the Lagos days `from..=to`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    pub bank: Bank,
    pub business_name: String,
    /// The 10-digit NUBAN.
    pub account_number: String,
    pub account_name: String,
    /// `NGN`.
    pub currency: String,
    /// The first Lagos day (inclusive).
    pub from: NaiveDate,
    /// The last Lagos day (inclusive).
    pub to: NaiveDate,
    /// Kobo, at the start of `from` (00:00 Lagos).
    pub opening_balance: i64,
    /// Kobo, at the end of `to` (24:00 Lagos).
    pub closing_balance: i64,
    /// Kobo, positive: the sum of the credit lines.
    pub total_credits: i64,
    /// Kobo, positive: the sum of the debit lines.
    pub total_debits: i64,
    pub credit_count: u64,
    pub debit_count: u64,
    pub generated_at: DateTime<Utc>,
    /// Oldest first.
    pub lines: Vec<Line>,
}

impl Statement {
    /// Whether the figures reconcile: the period is a run of days; every line is on one of its
    /// Lagos days, oldest first, with an amount that is not negative; each line's balance after
    /// is the previous one (or the opening balance) plus a credit or minus a debit; the counts
    /// and totals are those of the lines; opening + credits − debits = closing, and the last
    /// line ends at the closing balance. The error says what disagrees, and by how much.
    pub fn check(&self) -> Result<(), String> {
        let mut checker = Checker::new(self)?;
        for line in &self.lines {
            checker.line(line)?;
        }
        checker.finish()
    }
}

/// [`Statement::check`] a line at a time, for a statement written in pieces ([`stream`]):
/// [`Checker::new`] with the statement's figures (its `lines` are not read), [`Checker::line`]
/// for each line in order, then [`Checker::finish`]. It keeps no line.
#[derive(Clone, Debug)]
pub struct Checker {
    from: NaiveDate,
    to: NaiveDate,
    opening_balance: i64,
    closing_balance: i64,
    total_credits: i64,
    total_debits: i64,
    credit_count: u64,
    debit_count: u64,
    balance: i128,
    credits: i128,
    debits: i128,
    credits_seen: u64,
    debits_seen: u64,
    previous: Option<DateTime<Utc>>,
    seen: usize,
}

impl Checker {
    /// A check of a statement with `figures`' period, balances and totals.
    pub fn new(figures: &Statement) -> Result<Checker, String> {
        if figures.from > figures.to {
            return Err(format!(
                "the period starts on {} after it ends on {}",
                figures.from, figures.to
            ));
        }
        Ok(Checker {
            from: figures.from,
            to: figures.to,
            opening_balance: figures.opening_balance,
            closing_balance: figures.closing_balance,
            total_credits: figures.total_credits,
            total_debits: figures.total_debits,
            credit_count: figures.credit_count,
            debit_count: figures.debit_count,
            balance: i128::from(figures.opening_balance),
            credits: 0,
            debits: 0,
            credits_seen: 0,
            debits_seen: 0,
            previous: None,
            seen: 0,
        })
    }

    /// The next line: on one of the period's Lagos days, not before the line before it, with
    /// an amount that is not negative, and a balance after it that is the running balance.
    pub fn line(&mut self, line: &Line) -> Result<(), String> {
        self.seen += 1;
        let name = format!("line {} ({})", self.seen, line.reference_number);
        if line.amount < 0 {
            return Err(format!(
                "{name}: the amount {} is negative (the direction says credit or debit)",
                money::decimal(line.amount)
            ));
        }
        let day = lagos::date(line.at);
        if day < self.from || day > self.to {
            return Err(format!(
                "{name}: its Lagos day {day} is outside the period {} to {}",
                self.from, self.to
            ));
        }
        if self.previous.is_some_and(|previous| line.at < previous) {
            return Err(format!(
                "{name}: earlier than the line before it (lines go oldest first)"
            ));
        }
        self.previous = Some(line.at);
        let amount = i128::from(line.amount);
        match line.kind {
            Direction::Credit => {
                self.balance += amount;
                self.credits += amount;
                self.credits_seen += 1;
            }
            Direction::Debit => {
                self.balance -= amount;
                self.debits += amount;
                self.debits_seen += 1;
            }
        }
        if self.balance != i128::from(line.balance_after) {
            return Err(format!(
                "{name}: the balance after is {} but the running balance is {} (the {} of {} moves it from {})",
                money::decimal(line.balance_after),
                decimal_wide(self.balance),
                line.kind.as_str(),
                money::decimal(line.amount),
                decimal_wide(self.balance - i128::from(line.signed_amount())),
            ));
        }
        Ok(())
    }

    /// After the last line: the counts and totals are the lines', and opening + credits −
    /// debits = closing.
    pub fn finish(self) -> Result<(), String> {
        let (credits, debits) = (self.credits, self.debits);
        if self.credits_seen != self.credit_count {
            return Err(format!(
                "the credit count is {} but the lines have {} credits",
                self.credit_count, self.credits_seen
            ));
        }
        if self.debits_seen != self.debit_count {
            return Err(format!(
                "the debit count is {} but the lines have {} debits",
                self.debit_count, self.debits_seen
            ));
        }
        if credits != i128::from(self.total_credits) {
            return Err(format!(
                "the total of credits is {} but the credit lines add up to {}",
                money::decimal(self.total_credits),
                decimal_wide(credits)
            ));
        }
        if debits != i128::from(self.total_debits) {
            return Err(format!(
                "the total of debits is {} but the debit lines add up to {}",
                money::decimal(self.total_debits),
                decimal_wide(debits)
            ));
        }
        let expected = i128::from(self.opening_balance) + credits - debits;
        if expected != i128::from(self.closing_balance) {
            return Err(format!(
                "opening {} + credits {} - debits {} = {}, but the closing balance is {}",
                money::decimal(self.opening_balance),
                money::decimal(self.total_credits),
                money::decimal(self.total_debits),
                decimal_wide(expected),
                money::decimal(self.closing_balance)
            ));
        }
        // With the totals equal to the lines, the last running balance is `expected`: this
        // cannot fail after the checks above, and is kept as the statement of what they imply.
        debug_assert_eq!(self.balance, expected);
        Ok(())
    }
}

/// A sum of many i64 amounts, which may not fit an i64, as naira.
fn decimal_wide(kobo: i128) -> String {
    match i64::try_from(kobo) {
        Ok(kobo) => money::decimal(kobo),
        Err(_) => format!("{kobo} kobo"),
    }
}

/// The account a transfer left.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub business_name: String,
    pub account_number: String,
    pub account_name: String,
}

/// One transfer's receipt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Receipt {
    pub bank: Bank,
    pub reference_number: String,
    /// The NIP session id, once the interbank switch has given one.
    pub session_id: Option<String>,
    pub at: DateTime<Utc>,
    pub status: String,
    /// Kobo: what the beneficiary receives.
    pub amount: i64,
    /// Kobo: the transfer fee.
    pub fee: i64,
    /// Kobo: VAT on the fee.
    pub vat: i64,
    pub narration: String,
    pub source: Source,
    pub beneficiary: Counterparty,
    pub generated_at: DateTime<Utc>,
}

impl Receipt {
    /// Kobo: what left the source account, amount + fee + VAT.
    pub fn total(&self) -> i64 {
        self.amount
            .saturating_add(self.fee)
            .saturating_add(self.vat)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn statement() -> Statement {
        sample::statement(7, 25)
    }

    #[test]
    fn a_sample_statement_reconciles() {
        for seed in 0..50 {
            for lines in [0, 1, 2, 30] {
                let statement = sample::statement(seed, lines);
                assert_eq!(statement.check(), Ok(()), "seed {seed}, {lines} lines");
            }
        }
    }

    #[test]
    fn a_wrong_running_balance_is_caught() {
        let mut statement = statement();
        statement.lines[10].balance_after += 1;
        let error = statement.check().unwrap_err();
        assert!(error.starts_with("line 11 ("), "{error}");
        assert!(error.contains("balance after"), "{error}");
    }

    #[test]
    fn a_wrong_closing_balance_is_caught() {
        let mut statement = statement();
        statement.closing_balance -= 100;
        let error = statement.check().unwrap_err();
        assert!(error.contains("but the closing balance is"), "{error}");
    }

    #[test]
    fn a_wrong_total_or_count_is_caught() {
        let mut wrong_total = statement();
        wrong_total.total_debits += 1;
        assert!(wrong_total.check().unwrap_err().contains("total of debits"));

        let mut wrong_count = statement();
        wrong_count.credit_count += 1;
        assert!(wrong_count.check().unwrap_err().contains("credit count"));
    }

    #[test]
    fn a_line_outside_the_period_or_out_of_order_is_caught() {
        let mut outside = statement();
        // 23:30 UTC on the last day is already the next Lagos day.
        let last_day = outside.to;
        let late = last_day.and_hms_opt(23, 30, 0).unwrap().and_utc();
        let last = outside.lines.len() - 1;
        outside.lines[last].at = late;
        let error = outside.check().unwrap_err();
        assert!(error.contains("outside the period"), "{error}");

        let mut unordered = statement();
        unordered.lines.swap(3, 4);
        assert!(unordered.check().is_err());
    }

    #[test]
    fn a_negative_amount_is_caught() {
        let mut statement = statement();
        statement.lines[0].amount = -statement.lines[0].amount;
        assert!(statement.check().unwrap_err().contains("negative"));
    }
}
