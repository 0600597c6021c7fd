"""A partner building against `kobo mock` before the bank is live, with the generated Python client.

The mock answers every operation with its example in the spec (validated as the real server
does), and `Prefer: example=<name>` picks another example, an error too. This checks that the
generated client takes every answer as its typed model: a token, a profile (no body needed), a
page of accounts, a created customer account, and the chosen `83` of a failed verification.

Run by .ci/clients against a fresh `kobo mock` (KOBO_MOCK_URL); exits non-zero on any failure.
"""

from __future__ import annotations

import os
import sys
from http import HTTPStatus

from kobo_client import AuthenticatedClient, Client
from kobo_client.api.accounts import create_customer_account, fetch_customer_accounts
from kobo_client.api.session import generate_token, get_profile
from kobo_client.models import (
    CreateCustomerAccountRequest,
    CreateCustomerAccountResponse,
    ErrorEnvelope,
    FetchCustomerAccountsRequest,
    FetchCustomerAccountsResponse,
    GenerateTokenRequest,
    GenerateTokenResponse,
    GetProfileResponse,
    ResponseCode,
)

IDEMPOTENCY_KEY = "0f8e2c55-7a4b-4f1e-9c3d-5b6a7e8f9012"


def main() -> int:
    base_url = os.environ["KOBO_MOCK_URL"]
    failures: list[str] = []

    def check(condition: bool, what: str) -> None:
        print(f"  {'ok  ' if condition else 'FAIL'} {what}")
        if not condition:
            failures.append(what)

    grant = generate_token.sync(
        client=Client(base_url=base_url),
        body=GenerateTokenRequest(client_id="kb_sandbox_5b6f8a523c1e", client_secret="anything"),
    )
    check(isinstance(grant, GenerateTokenResponse), f"generate_token: {type(grant).__name__}")
    token = grant.data.access_token if isinstance(grant, GenerateTokenResponse) else "x"
    kobo = AuthenticatedClient(base_url=base_url, token=token)

    profile = get_profile.sync(client=kobo)
    check(isinstance(profile, GetProfileResponse), f"get_profile, no body: {type(profile).__name__}")

    page = fetch_customer_accounts.sync(client=kobo, body=FetchCustomerAccountsRequest(limit=10))
    check(
        isinstance(page, FetchCustomerAccountsResponse) and len(page.data) > 0,
        f"fetch_customer_accounts: {type(page).__name__}",
    )

    created = create_customer_account.sync(
        client=kobo,
        body=CreateCustomerAccountRequest(bvn="22287654321"),
        idempotency_key=IDEMPOTENCY_KEY,
    )
    check(
        isinstance(created, CreateCustomerAccountResponse),
        f"create_customer_account: {type(created).__name__}",
    )

    # The error a partner wants to handle before it can happen for real: the mock's example.
    failing = kobo.with_headers({"Prefer": "example=verification_failed"})
    response = create_customer_account.sync_detailed(
        client=failing,
        body=CreateCustomerAccountRequest(bvn="22212345683"),
        idempotency_key=IDEMPOTENCY_KEY,
    )
    error = response.parsed
    check(
        isinstance(error, ErrorEnvelope)
        and error.response_code == ResponseCode.PROVIDER_ERROR
        and error.data is None
        and response.status_code == HTTPStatus.UNPROCESSABLE_ENTITY,
        f"Prefer: example=verification_failed: HTTP {int(response.status_code)}, {error!r}",
    )

    print(f"mock: {5 - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
