//! OFX 2.2 (XML) bank statement, for software that imports "bank files".
//!
//! One `STMTRS` in NGN for the account (`BANKACCTFROM`: `BANKID` is the bank's code, `ACCTTYPE`
//! `CHECKING`), a `BANKTRANLIST` from 00:00 Lagos on the first day to 23:59:59 Lagos on the last,
//! one `STMTTRN` a line, and the closing balance as `LEDGERBAL` as of the period's end. Times are
//! written in Lagos time with their offset, `20261126140327.000[+1:WAT]`.
//!
//! Per line: `TRNTYPE` `CREDIT`/`DEBIT`; `TRNAMT` signed (a debit is negative); `FITID` the line's
//! id, which importers use to skip lines they already have; `REFNUM` the reference number;
//! `NAME` (at most 32 characters) the counterparty, else the narration; `MEMO` the narration.
//! Text is XML-escaped and clipped to the lengths the OFX specification gives.

use chrono::{DateTime, FixedOffset};

use crate::xml::{clip, Writer};
use crate::{lagos, money, Direction, Line, Statement};

/// The statement as an OFX 2.2 document.
pub fn statement(statement: &Statement) -> String {
    let mut ofx = Writer::new(&[]);
    head(&mut ofx, statement);
    for line in &statement.lines {
        transaction(&mut ofx, line);
    }
    tail(&mut ofx, statement);
    ofx.finish()
}

/// Everything before the first line; `ofx` is new.
pub(crate) fn head(ofx: &mut Writer, statement: &Statement) {
    ofx.prolog(&[
        r#"<?xml version="1.0" encoding="UTF-8" standalone="no"?>"#,
        r#"<?OFX OFXHEADER="200" VERSION="220" SECURITY="NONE" OLDFILEUID="NONE" NEWFILEUID="NONE"?>"#,
    ]);
    ofx.open("OFX");

    ofx.open("SIGNONMSGSRSV1");
    ofx.open("SONRS");
    status(ofx);
    ofx.leaf("DTSERVER", &datetime(lagos::time(statement.generated_at)));
    ofx.leaf("LANGUAGE", "ENG");
    ofx.open("FI");
    ofx.text("ORG", &statement.bank.name, 32);
    ofx.text("FID", &statement.bank.code, 32);
    ofx.close();
    ofx.close();
    ofx.close();

    ofx.open("BANKMSGSRSV1");
    ofx.open("STMTTRNRS");
    let transaction_id = format!(
        "{}-{}-{}",
        statement.account_number,
        statement.from.format("%Y%m%d"),
        statement.to.format("%Y%m%d")
    );
    ofx.text("TRNUID", &transaction_id, 36);
    status(ofx);
    ofx.open("STMTRS");
    ofx.leaf("CURDEF", &statement.currency);
    ofx.open("BANKACCTFROM");
    ofx.text("BANKID", &statement.bank.code, 9);
    ofx.text("ACCTID", &statement.account_number, 22);
    ofx.leaf("ACCTTYPE", "CHECKING");
    ofx.close();

    let end = datetime(lagos::end_of_day(statement.to));
    ofx.open("BANKTRANLIST");
    ofx.leaf("DTSTART", &datetime(lagos::start_of_day(statement.from)));
    ofx.leaf("DTEND", &end);
}

/// Everything after the last line.
pub(crate) fn tail(ofx: &mut Writer, statement: &Statement) {
    let end = datetime(lagos::end_of_day(statement.to));
    ofx.close(); // BANKTRANLIST

    ofx.open("LEDGERBAL");
    ofx.leaf("BALAMT", &money::decimal(statement.closing_balance));
    ofx.leaf("DTASOF", &end);
    ofx.close();

    ofx.close(); // STMTRS
    ofx.close(); // STMTTRNRS
    ofx.close(); // BANKMSGSRSV1
    ofx.close(); // OFX
}

fn status(ofx: &mut Writer) {
    ofx.open("STATUS");
    ofx.leaf("CODE", "0");
    ofx.leaf("SEVERITY", "INFO");
    ofx.close();
}

pub(crate) fn transaction(ofx: &mut Writer, line: &Line) {
    ofx.open("STMTTRN");
    ofx.leaf(
        "TRNTYPE",
        match line.kind {
            Direction::Credit => "CREDIT",
            Direction::Debit => "DEBIT",
        },
    );
    ofx.leaf("DTPOSTED", &datetime(lagos::time(line.at)));
    ofx.leaf("TRNAMT", &money::decimal(line.signed_amount()));
    ofx.text("FITID", &line.id, 255);
    ofx.text("REFNUM", &line.reference_number, 32);
    let name = line
        .counterparty
        .as_ref()
        .map(|c| c.account_name.as_str())
        .filter(|name| !clip(name, 32).is_empty())
        .or(Some(line.narration.as_str()).filter(|n| !clip(n, 32).is_empty()))
        .unwrap_or(&line.category);
    ofx.text("NAME", name, 32);
    ofx.text("MEMO", &line.narration, 255);
    ofx.close();
}

/// OFX datetime on the Lagos clock: `YYYYMMDDHHMMSS.XXX[+1:WAT]`.
fn datetime(at: DateTime<FixedOffset>) -> String {
    format!("{}[+1:WAT]", at.format("%Y%m%d%H%M%S%.3f"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample;
    use chrono::{TimeZone, Utc};

    #[test]
    fn writes_lagos_datetimes() {
        let at = Utc.with_ymd_and_hms(2026, 11, 26, 13, 3, 27).unwrap();
        assert_eq!(datetime(lagos::time(at)), "20261126140327.000[+1:WAT]");
    }

    #[test]
    fn escapes_text_and_signs_debits() {
        let mut statement = sample::statement(3, 2);
        statement.lines[0].narration = "Chukwu & Sons <supplies> \"Q4\"".into();
        statement.lines[0].counterparty = None;
        statement.lines[1].kind = Direction::Debit;
        statement.lines[1].amount = 150;
        let ofx = super::statement(&statement);
        assert!(ofx.contains("<MEMO>Chukwu &amp; Sons &lt;supplies&gt; &quot;Q4&quot;</MEMO>"));
        // NAME falls back to the narration.
        assert!(ofx.contains("<NAME>Chukwu &amp; Sons &lt;supplies&gt; &quot;Q4&quot;</NAME>"));
        // Clipped to 32 characters before escaping.
        statement.lines[0].narration = "Adébáyọ̀ & Sons <supplies> for Q4 of 2026".into();
        let ofx = super::statement(&statement);
        assert!(ofx.contains("<NAME>Adébáyọ̀ &amp; Sons &lt;supplies&gt; for Q</NAME>"));
        assert!(ofx.contains("<TRNAMT>-1.50</TRNAMT>"));
        assert!(!ofx.contains("& "));
        assert!(ofx.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n<?OFX OFXHEADER=\"200\" VERSION=\"220\""));
    }
}
