"""A live `kobo demo` gives an account a month's worth of movements, then its statement is read
twice: as JSON (`get_account_statement`, every page) and as the files a business downloads
(`download_account_statement` in each format, `download_transactions`,
`download_transfer_receipt`). The JSON's figures
become DIR/expected.json and the files are written beside it, for `.ci/statements.py` to read
back with parsers we did not write: the files must say what the API says. Run by
`.ci/statements --live`, which starts the server.

    python statements_live.py BASE_URL EMAIL PASSWORD CLIENT_ID CLIENT_SECRET ACCOUNT DIR
"""

import base64
import json
import sys
import time
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path

LAGOS = timezone(timedelta(hours=1))


def call(base, path, token, body, key=None):
    """POST `body` to `path`; the answer's `data` and `pagination`, failing unless `00`."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if key:
        headers["Idempotency-Key"] = key
    request = urllib.request.Request(base + path, json.dumps(body).encode(), headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            reply = json.load(response)
    except urllib.error.HTTPError as error:
        reply = json.load(error)
    if reply.get("response_code") != "00":
        sys.exit(f"{path}: {reply}")
    return reply["data"], reply.get("pagination")


def kobo(text):
    naira, fraction = text.split(".")
    return int(naira) * 100 + int(fraction)


def main():
    base, email, password, client_id, client_secret, account, directory = sys.argv[1:8]
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    owner = call(base, "/api/v1/auth/web/login", None, {"email": email, "password": password})[0]["access_token"]
    integration = call(
        base, "/api/v1/auth/api/generate_token", None, {"client_id": client_id, "client_secret": client_secret}
    )[0]["access_token"]

    # Money in, with narrations a file must carry safely: commas and quotes (CSV), markup (XML),
    # a spreadsheet formula, letters outside ASCII (PDF).
    for amount, narration in (
        ("150000.00", 'Invoice 88, "rush" order'),
        ("2500.50", "Adébáyọ̀ & Sons <Ikeja>"),
        ("75.25", "=SUM(A1:A9)"),
    ):
        call(
            base,
            "/api/v1/sandbox/api/simulate_inbound_transfer",
            integration,
            {"account_number": account, "amount": amount, "narration": narration, "sender_bank_code": "000013"},
        )
    # Money out over NIP: its debit and its fee and VAT.
    named = call(
        base,
        "/api/v1/transaction/transfer/web/name_enquiry",
        owner,
        {"beneficiary_account_number": "0123456788", "bank_code": "000013", "source_account_number": account},
    )[0]
    otp = call(base, "/api/v1/auth/web/generate_otp", owner, {})[0]["otp"]
    source_name = call(base, "/api/v1/account/web/get_account", owner, {"account_number": account})[0]["account_name"]
    transfer = call(
        base,
        "/api/v1/transaction/transfer/web/funds_transfer",
        owner,
        {
            "source_account_number": account,
            "source_account_name": source_name,
            "beneficiary_account_number": "0123456788",
            "beneficiary_account_name": named["account_name"],
            "bank_code": "000013",
            "transfer_type": "inter",
            "amount": "12345.67",
            "narration": "Supplier, November",
            "otp": otp,
        },
        key="ci-statements-1",
    )[0]
    # The sandbox's NIP settles it in a moment: the receipt then carries its session id.
    for _ in range(100):
        found = call(
            base,
            "/api/v1/transaction/transfer/web/get_transfer",
            owner,
            {"reference_number": transfer["reference_number"]},
        )[0]
        if found["session_id"]:
            transfer = found
            break
        time.sleep(0.2)

    today = datetime.now(LAGOS).date()
    start = (today - timedelta(days=30)).isoformat()
    period = {"account_number": account, "start_date": start, "end_date": today.isoformat()}
    figures, lines, body = None, [], dict(period, limit=2)
    while True:
        data, pagination = call(base, "/api/v1/account/web/get_account_statement", owner, body)
        figures = figures or data
        lines += data["lines"]
        if not pagination["has_more"]:
            break
        body["cursor_created_at"] = pagination["next_cursor_created_at"]
        body["cursor_id"] = pagination["next_cursor_id"]

    def at(text):
        # As the files show a time: in Lagos, to the second.
        moment = datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(LAGOS)
        return moment.replace(microsecond=0).isoformat()

    expected = {
        "live": True,
        "currency": figures["currency"],
        "bank_name": "Kobo Microfinance Bank",
        "bank_code": "090823",
        "business_name_shown": None,
        "account_number": figures["account_number"],
        "from": figures["start_date"],
        "to": figures["end_date"],
        "opening_balance": kobo(figures["opening_balance"]),
        "closing_balance": kobo(figures["closing_balance"]),
        "total_credits": kobo(figures["total_credits"]),
        "total_debits": kobo(figures["total_debits"]),
        "credit_count": figures["credit_count"],
        "debit_count": figures["debit_count"],
        "lines": [
            {
                "id": line["id"],
                "reference": line["reference_number"],
                "at": at(line["created_at"]),
                "amount": kobo(line["amount"]),
                "direction": line["transaction_type"],
                "balance_after": kobo(line["balance_after"]),
                "pending": line["status"] == "pending",
                "narration": line["remarks"],
            }
            for line in lines
        ],
        "receipt": {
            "reference": transfer["reference_number"],
            "session_id": transfer["session_id"],
            "amount": kobo(transfer["amount"]),
            "fee": kobo(transfer["fee"]),
            "vat": kobo(transfer["vat"]),
            "total": kobo(transfer["amount"]) + kobo(transfer["fee"]) + kobo(transfer["vat"]),
            "beneficiary_account_number": transfer["beneficiary_account_number"],
        },
    }
    assert len(lines) == figures["credit_count"] + figures["debit_count"] >= 5, figures
    (out / "expected.json").write_text(json.dumps(expected, indent=2, ensure_ascii=False), encoding="utf-8")

    def save(name, data):
        content = base64.b64decode(data["content_base64"], validate=True)
        assert len(content) == data["size_bytes"], (name, len(content), data["size_bytes"])
        (out / name).write_bytes(content)
        print(f"{name}: {data['file_name']}, {data['content_type']}, {data['size_bytes']} bytes")

    for file_format, name in (
        ("csv", "statement.csv"),
        ("pdf", "statement.pdf"),
        ("ofx", "statement.ofx"),
        ("camt053", "statement.camt053.xml"),
    ):
        data = call(base, "/api/v1/account/web/download_account_statement", owner, dict(period, format=file_format))[0]
        save(name, data)
    # The transaction list of the same days, as CSV (the list filters UTC days: every movement
    # above is of today, inside both).
    listed = call(
        base,
        "/api/v1/transaction/api/download_transactions",
        integration,
        {"filters": {"account_number": account, "start_date": start, "end_date": today.isoformat()}},
    )[0]
    save("transactions.csv", listed)
    receipt = call(
        base,
        "/api/v1/transaction/transfer/api/download_transfer_receipt",
        integration,
        {"reference_number": transfer["reference_number"]},
    )[0]
    save("receipt.pdf", receipt)


if __name__ == "__main__":
    main()
