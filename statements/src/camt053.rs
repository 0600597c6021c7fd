//! ISO 20022 `camt.053.001.02` (bank-to-customer statement), for treasury and ERP systems.
//!
//! The elements follow the schema's sequences in order (`.ci/statements` validates the output
//! against the official XSD):
//!
//! - `GrpHdr`: `MsgId`, `CreDtTm`.
//! - `Stmt`: `Id`, `CreDtTm`, `FrToDt` (00:00 Lagos on the first day to 23:59:59 Lagos on the
//!   last), `Acct` (`Id/Othr/Id` the NUBAN, `Tp` `CACC`, `Ccy`, `Nm`, `Ownr/Nm` the business,
//!   `Svcr/FinInstnId`: the `BIC` when there is a valid one, the bank's name, and `Othr/Id` its
//!   CBN/NIP code), `Bal` `OPBD` then `CLBD` (amount, `CRDT`/`DBIT` by sign, the day),
//!   `TxsSummry`, then one `Ntry` a line.
//! - `Ntry`: `Amt`, `CdtDbtInd`, `Sts` (`PDNG` for a pending line, else `BOOK`), `BookgDt/DtTm`
//!   (Lagos time with its offset), `ValDt/Dt` (the Lagos day), `AcctSvcrRef` (the reference
//!   number), `BkTxCd/Prtry` (the category, issued by the bank), `NtryDtls/TxDtls` (`Refs`
//!   with the reference as `AcctSvcrRef` and `EndToEndId`; the counterparty in `RltdPties` and
//!   its bank in `RltdAgts`, as the debtor of a credit or the creditor of a debit; the narration
//!   as `RmtInf/Ustrd`), and `AddtlNtryInf` with the line's id, status and channel.
//!
//! Text is escaped and clipped to the schema's lengths (`Max35Text`, `Max70Text`, `Max140Text`);
//! empty text is left out, as the schema's text types are at least one character.

use crate::xml::{clip, Writer};
use crate::{lagos, money, Direction, Line, Statement};

/// The schema's namespace.
pub const NAMESPACE: &str = "urn:iso:std:iso:20022:tech:xsd:camt.053.001.02";

/// The statement as a camt.053.001.02 document.
pub fn statement(statement: &Statement) -> String {
    let mut xml = Writer::new(&[]);
    head(&mut xml, statement);
    for line in &statement.lines {
        entry(&mut xml, statement, line);
    }
    tail(&mut xml);
    xml.finish()
}

/// Everything before the first entry; `xml` is new.
pub(crate) fn head(xml: &mut Writer, statement: &Statement) {
    xml.prolog(&[r#"<?xml version="1.0" encoding="UTF-8"?>"#]);
    xml.open_with("Document", &[("xmlns", NAMESPACE)]);
    xml.open("BkToCstmrStmt");

    let created = lagos::iso(statement.generated_at);
    xml.open("GrpHdr");
    let message_id = format!(
        "STMT-{}-{}",
        statement.account_number,
        lagos::time(statement.generated_at).format("%Y%m%d%H%M%S")
    );
    xml.text("MsgId", &message_id, 35);
    xml.leaf("CreDtTm", &created);
    xml.close();

    xml.open("Stmt");
    let statement_id = format!(
        "{}-{}-{}",
        statement.account_number,
        statement.from.format("%Y%m%d"),
        statement.to.format("%Y%m%d")
    );
    xml.text("Id", &statement_id, 35);
    xml.leaf("CreDtTm", &created);
    xml.open("FrToDt");
    xml.leaf(
        "FrDtTm",
        &lagos::iso_fixed(lagos::start_of_day(statement.from)),
    );
    xml.leaf("ToDtTm", &lagos::iso_fixed(lagos::end_of_day(statement.to)));
    xml.close();
    account(xml, statement);

    let from = statement.from.format("%Y-%m-%d").to_string();
    let to = statement.to.format("%Y-%m-%d").to_string();
    balance(xml, statement, "OPBD", statement.opening_balance, &from);
    balance(xml, statement, "CLBD", statement.closing_balance, &to);
    summary(xml, statement);
}

/// Everything after the last entry.
pub(crate) fn tail(xml: &mut Writer) {
    xml.close(); // Stmt
    xml.close(); // BkToCstmrStmt
    xml.close(); // Document
}

fn account(xml: &mut Writer, statement: &Statement) {
    xml.open("Acct");
    xml.open("Id");
    xml.open("Othr");
    xml.text("Id", &statement.account_number, 34);
    xml.open("SchmeNm");
    xml.leaf("Prtry", "NUBAN");
    xml.close();
    xml.close();
    xml.close();
    xml.open("Tp");
    xml.leaf("Cd", "CACC");
    xml.close();
    xml.leaf("Ccy", &statement.currency);
    xml.text("Nm", &statement.account_name, 70);
    if !clip(&statement.business_name, 140).is_empty() {
        xml.open("Ownr");
        xml.text("Nm", &statement.business_name, 140);
        xml.close();
    }
    xml.open("Svcr");
    xml.open("FinInstnId");
    if let Some(bic) = statement.bank.bic.as_deref().filter(|bic| is_bic(bic)) {
        xml.leaf("BIC", bic);
    }
    xml.text("Nm", &statement.bank.name, 140);
    if !clip(&statement.bank.code, 35).is_empty() {
        xml.open("Othr");
        xml.text("Id", &statement.bank.code, 35);
        xml.leaf("Issr", "CBN");
        xml.close();
    }
    xml.close();
    xml.close();
    xml.close();
}

fn balance(xml: &mut Writer, statement: &Statement, code: &str, kobo: i64, day: &str) {
    xml.open("Bal");
    xml.open("Tp");
    xml.open("CdOrPrtry");
    xml.leaf("Cd", code);
    xml.close();
    xml.close();
    amount(xml, statement, kobo.unsigned_abs());
    xml.leaf("CdtDbtInd", if kobo < 0 { "DBIT" } else { "CRDT" });
    xml.open("Dt");
    xml.leaf("Dt", day);
    xml.close();
    xml.close();
}

fn summary(xml: &mut Writer, statement: &Statement) {
    let credits = i128::from(statement.total_credits);
    let debits = i128::from(statement.total_debits);
    let net = credits - debits;
    xml.open("TxsSummry");
    xml.open("TtlNtries");
    xml.leaf(
        "NbOfNtries",
        &(statement.credit_count + statement.debit_count).to_string(),
    );
    xml.leaf("Sum", &decimal_wide(credits + debits));
    xml.leaf("TtlNetNtryAmt", &decimal_wide(net.abs()));
    xml.leaf("CdtDbtInd", if net < 0 { "DBIT" } else { "CRDT" });
    xml.close();
    for (tag, count, sum) in [
        ("TtlCdtNtries", statement.credit_count, credits),
        ("TtlDbtNtries", statement.debit_count, debits),
    ] {
        xml.open(tag);
        xml.leaf("NbOfNtries", &count.to_string());
        xml.leaf("Sum", &decimal_wide(sum));
        xml.close();
    }
    xml.close();
}

pub(crate) fn entry(xml: &mut Writer, statement: &Statement, line: &Line) {
    xml.open("Ntry");
    amount(xml, statement, line.amount.unsigned_abs());
    xml.leaf("CdtDbtInd", indicator(line.kind));
    xml.leaf("Sts", if line.is_pending() { "PDNG" } else { "BOOK" });
    xml.open("BookgDt");
    xml.leaf("DtTm", &lagos::iso(line.at));
    xml.close();
    xml.open("ValDt");
    xml.leaf("Dt", &lagos::date(line.at).format("%Y-%m-%d").to_string());
    xml.close();
    xml.text("AcctSvcrRef", &line.reference_number, 35);
    xml.open("BkTxCd");
    xml.open("Prtry");
    let category = if clip(&line.category, 35).is_empty() {
        "other"
    } else {
        &line.category
    };
    xml.text("Cd", category, 35);
    xml.text("Issr", &statement.bank.name, 35);
    xml.close();
    xml.close();

    xml.open("NtryDtls");
    xml.open("TxDtls");
    if !clip(&line.reference_number, 35).is_empty() {
        xml.open("Refs");
        xml.text("AcctSvcrRef", &line.reference_number, 35);
        xml.text("EndToEndId", &line.reference_number, 35);
        xml.close();
    }
    if let Some(counterparty) = &line.counterparty {
        // A credit came from the counterparty (the debtor); a debit went to it (the creditor).
        let (party, party_account, agent) = match line.kind {
            Direction::Credit => ("Dbtr", "DbtrAcct", "DbtrAgt"),
            Direction::Debit => ("Cdtr", "CdtrAcct", "CdtrAgt"),
        };
        xml.open("RltdPties");
        xml.open(party);
        xml.text("Nm", &counterparty.account_name, 140);
        xml.close();
        if !clip(&counterparty.account_number, 34).is_empty() {
            xml.open(party_account);
            xml.open("Id");
            xml.open("Othr");
            xml.text("Id", &counterparty.account_number, 34);
            xml.close();
            xml.close();
            xml.close();
        }
        xml.close();
        if !clip(&counterparty.bank_name, 140).is_empty() {
            xml.open("RltdAgts");
            xml.open(agent);
            xml.open("FinInstnId");
            xml.text("Nm", &counterparty.bank_name, 140);
            xml.close();
            xml.close();
            xml.close();
        }
    }
    if !clip(&line.narration, 140).is_empty() {
        xml.open("RmtInf");
        xml.text("Ustrd", &line.narration, 140);
        xml.close();
    }
    xml.close(); // TxDtls
    xml.close(); // NtryDtls

    let information = format!(
        "id {}; status {}; channel {}",
        line.id, line.status, line.channel
    );
    xml.text("AddtlNtryInf", &information, 500);
    xml.close();
}

fn amount(xml: &mut Writer, statement: &Statement, kobo: u64) {
    let text = format!("{}.{:02}", kobo / 100, kobo % 100);
    xml.leaf_with("Amt", &[("Ccy", &statement.currency)], &text);
}

fn indicator(kind: Direction) -> &'static str {
    match kind {
        Direction::Credit => "CRDT",
        Direction::Debit => "DBIT",
    }
}

/// A non-negative sum of many amounts, which may not fit an i64.
fn decimal_wide(kobo: i128) -> String {
    match i64::try_from(kobo) {
        Ok(kobo) => money::decimal(kobo),
        Err(_) => format!("{}.{:02}", kobo / 100, (kobo % 100).abs()),
    }
}

/// Whether `bic` has the schema's BIC shape: `[A-Z]{6}[A-Z2-9][A-NP-Z0-9]([A-Z0-9]{3})?`.
fn is_bic(bic: &str) -> bool {
    let b = bic.as_bytes();
    (b.len() == 8 || b.len() == 11)
        && b[..6].iter().all(u8::is_ascii_uppercase)
        && (b[6].is_ascii_uppercase() || (b'2'..=b'9').contains(&b[6]))
        && ((b[7].is_ascii_uppercase() && b[7] != b'O') || b[7].is_ascii_digit())
        && b[8..]
            .iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample;

    /// The names of the child elements of the first `parent` element, in order: the writer puts
    /// each element on its own line, indented two spaces a level.
    fn children(xml: &str, parent: &str) -> Vec<String> {
        let lines: Vec<&str> = xml.lines().collect();
        let open = lines
            .iter()
            .position(|line| line.trim_start().starts_with(&format!("<{parent}>")))
            .expect(parent);
        let indent = |line: &str| line.len() - line.trim_start().len();
        let depth = indent(lines[open]);
        let mut names = Vec::new();
        for line in &lines[open + 1..] {
            if indent(line) <= depth {
                break;
            }
            if indent(line) == depth + 2 && !line.trim_start().starts_with("</") {
                let tag = &line.trim_start()[1..];
                names.push(tag.split([' ', '>']).next().unwrap().to_string());
            }
        }
        names
    }

    #[test]
    fn follows_the_schema_sequences() {
        let mut statement = sample::statement(11, 5);
        statement.bank.bic = Some("KOBONGLA".into());
        statement.lines[0].kind = Direction::Credit;
        let xml = super::statement(&statement);
        assert_eq!(children(&xml, "GrpHdr"), ["MsgId", "CreDtTm"]);
        let stmt = children(&xml, "Stmt");
        let mut expected = vec!["Id", "CreDtTm", "FrToDt", "Acct", "Bal", "Bal", "TxsSummry"];
        expected.extend(["Ntry"; 5]);
        assert_eq!(stmt, expected);
        assert_eq!(
            children(&xml, "Acct"),
            ["Id", "Tp", "Ccy", "Nm", "Ownr", "Svcr"]
        );
        assert_eq!(children(&xml, "FinInstnId"), ["BIC", "Nm", "Othr"]);
        assert_eq!(children(&xml, "Bal"), ["Tp", "Amt", "CdtDbtInd", "Dt"]);
        assert_eq!(
            children(&xml, "TtlNtries"),
            ["NbOfNtries", "Sum", "TtlNetNtryAmt", "CdtDbtInd"]
        );
        assert_eq!(
            children(&xml, "Ntry"),
            [
                "Amt",
                "CdtDbtInd",
                "Sts",
                "BookgDt",
                "ValDt",
                "AcctSvcrRef",
                "BkTxCd",
                "NtryDtls",
                "AddtlNtryInf"
            ]
        );
        let details = children(&xml, "TxDtls");
        assert_eq!(details[0], "Refs");
        assert_eq!(details.last().unwrap(), "RmtInf");
        assert_eq!(children(&xml, "Refs"), ["AcctSvcrRef", "EndToEndId"]);
    }

    #[test]
    fn signs_balances_by_indicator_and_escapes_text() {
        let mut statement = sample::statement(5, 1);
        statement.opening_balance = -250;
        statement.lines[0].narration = "Rent <Q4> & \"service\"".into();
        let xml = super::statement(&statement);
        assert!(xml.contains(
            "<Amt Ccy=\"NGN\">2.50</Amt>\n        <CdtDbtInd>DBIT</CdtDbtInd>\n        <Dt>\n          <Dt>"
        ));
        assert!(xml.contains("<Ustrd>Rent &lt;Q4&gt; &amp; &quot;service&quot;</Ustrd>"));
    }

    #[test]
    fn leaves_out_an_invalid_bic() {
        assert!(is_bic("KOBONGLA"));
        assert!(is_bic("GTBINGLA001"));
        assert!(!is_bic("KOBONGL"));
        assert!(!is_bic("KOBONGLO"));
        assert!(!is_bic("kobongla"));
        let mut statement = sample::statement(5, 0);
        statement.bank.bic = Some("not a bic".into());
        let xml = super::statement(&statement);
        assert!(!xml.contains("<BIC>"));
        assert!(xml.contains("<Id>090999</Id>"));
    }
}
