"""A partner's first integration with Kobo, in Python, over the client that openapi-python-client
generates from spec/openapi.yaml (package `kobo_client`, see clients/python/config.yaml).

It runs the calls in the order a partner makes them and asserts every answer, so a spec change
that breaks generated Python clients, or a server that drifts from the spec, fails CI
(`.ci/clients`). It needs a fresh `kobo demo` (the sandbox BVN below gets one account per
business) and reads where it is from the environment:

    KOBO_BASE_URL        http://127.0.0.1:8080
    KOBO_OWNER_EMAIL     the demo's Dashboard login
    KOBO_OWNER_PASSWORD
    KOBO_CLIENT_ID       the demo's integration credentials
    KOBO_CLIENT_SECRET
    KOBO_MAIN_ACCOUNT    the demo's main account (pool), e.g. 1000000014

Type-checked with `mypy --strict` (clients/python/mypy.ini), the generated client included.
"""

from __future__ import annotations

import http.server
import os
import queue
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import TypeVar

from kobo_client import AuthenticatedClient, Client
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError
from kobo_client.api.accounts import (
    create_account_api,
    create_customer_account,
    fetch_account_collections,
    fetch_customer_accounts,
    get_account,
    get_total_account_metrics,
)
from kobo_client.api.sandbox import simulate_inbound_transfer
from kobo_client.api.webhooks import fetch_webhook_events, test_webhook, webhook_configuration
from kobo_client.api.session import generate_token, get_profile, login
from kobo_client.api.transactions import (
    fetch_settlement_transactions_api,
    fetch_transactions_api,
)
from kobo_client.models import (
    Account,
    FetchWebhookEventsRequest,
    FetchWebhookEventsResponse,
    TestWebhookResponse,
    WebhookConfigurationRequest,
    WebhookConfigurationResponse,
    WebhookDeliveryStatus,
    WebhookEventFilters,
    WebhookEventType,
    AccountType,
    CreateAccountApiResponse,
    CreateAccountRequest,
    CreateCustomerAccountRequest,
    CreateCustomerAccountRequestMetadata,
    CreateCustomerAccountResponse,
    ErrorEnvelope,
    FetchAccountCollectionsRequest,
    FetchAccountCollectionsResponse,
    FetchCustomerAccountsRequest,
    FetchCustomerAccountsResponse,
    FetchSettlementTransactionsApiResponse,
    FetchSettlementTransactionsRequest,
    FetchTransactionsApiRequest,
    FetchTransactionsApiResponse,
    GenerateTokenRequest,
    GenerateTokenResponse,
    GetAccountRequest,
    GetAccountResponse,
    GetProfileResponse,
    GetTotalAccountMetricsRequest,
    GetTotalAccountMetricsResponse,
    IntegrationTransaction,
    IntegrationTransactionFilters,
    LoginRequest,
    LoginResponse,
    ResponseCode,
    SettlementFilters,
    SimulateInboundTransferRequest,
    SimulateInboundTransferResponse,
    TransactionCategory,
    TransactionType,
)
from kobo_client.types import Response

# The sandbox's identity test data (spec: info.description, "Sandbox").
VERIFIED_BVN = "22287654321"  # verified: Amaka Nwosu
FAILING_BVN = "22212345683"  # any other 11 digits ending in 83: verification fails, `83`
AMOUNT = "15000.00"

Success = TypeVar("Success")


class StoryFailure(Exception):
    """An answer the story did not expect."""


def check(condition: bool, what: str) -> None:
    if not condition:
        raise StoryFailure(what)


def success(response: Response[Success | ErrorEnvelope], kind: type[Success], call: str) -> Success:
    """The success envelope of a call; any error envelope fails the story with its code."""
    parsed = response.parsed
    if isinstance(parsed, ErrorEnvelope):
        raise StoryFailure(
            f"{call}: HTTP {int(response.status_code)}, response_code {parsed.response_code.value}: "
            f"{parsed.message} (X-Request-Id {response.headers.get('x-request-id')})"
        )
    if not isinstance(parsed, kind):
        raise StoryFailure(f"{call}: HTTP {int(response.status_code)}, unexpected body {response.content!r}")
    return parsed


@dataclass
class Story:
    """What the calls hand to each other, in the order a partner learns it."""

    base_url: str
    owner_email: str
    owner_password: str
    client_id: str
    client_secret: str
    main_account: str
    dashboard: AuthenticatedClient | None = None
    integration: AuthenticatedClient | None = None
    current_account: Account | None = None
    customer_account: Account | None = None
    credit: IntegrationTransaction | None = None
    notes: list[str] = field(default_factory=list)

    def public(self) -> Client:
        return Client(base_url=self.base_url, raise_on_unexpected_status=True)

    def with_token(self, token: str) -> AuthenticatedClient:
        return AuthenticatedClient(base_url=self.base_url, token=token, raise_on_unexpected_status=True)

    def dashboard_client(self) -> AuthenticatedClient:
        assert self.dashboard is not None, "log in first"
        return self.dashboard

    def integration_client(self) -> AuthenticatedClient:
        assert self.integration is not None, "take an integration token first"
        return self.integration

    def virtual_account(self) -> Account:
        assert self.customer_account is not None, "create the customer's account first"
        return self.customer_account


# ---- The steps, in the order a partner calls them -------------------------------------------


def log_in_and_read_profile(story: Story) -> None:
    reply = success(
        login.sync_detailed(
            client=story.public(),
            body=LoginRequest(email=story.owner_email, password=story.owner_password),
        ),
        LoginResponse,
        "login",
    )
    check(reply.data.access_token != "", "login: no access_token")
    check(reply.data.member.email == story.owner_email, f"login: member {reply.data.member.email}")
    story.dashboard = story.with_token(reply.data.access_token)

    # An operation without parameters needs no body (the spec's body is optional; `{}` also works).
    profile = success(
        get_profile.sync_detailed(client=story.dashboard_client()),
        GetProfileResponse,
        "get_profile",
    )
    check(profile.data.member.email == story.owner_email, f"get_profile: {profile.data.member.email}")
    check(profile.data.business.name == "Adaeze Foods Ltd", f"get_profile: business {profile.data.business.name}")
    story.notes.append(f"logged in as {profile.data.member.email} of {profile.data.business.name}")


def take_integration_token(story: Story) -> None:
    grant = success(
        generate_token.sync_detailed(
            client=story.public(),
            body=GenerateTokenRequest(client_id=story.client_id, client_secret=story.client_secret),
        ),
        GenerateTokenResponse,
        "generate_token",
    )
    check(grant.data.token_type.value == "Bearer", f"generate_token: token_type {grant.data.token_type}")
    check(grant.data.expires_in > 0, f"generate_token: expires_in {grant.data.expires_in}")
    story.integration = story.with_token(grant.data.access_token)


def list_accounts(story: Story) -> None:
    page = success(
        fetch_customer_accounts.sync_detailed(
            client=story.integration_client(), body=FetchCustomerAccountsRequest(limit=100)
        ),
        FetchCustomerAccountsResponse,
        "fetch_customer_accounts",
    )
    numbers = [account.account_number for account in page.data]
    check(story.main_account in numbers, f"fetch_customer_accounts: {story.main_account} not in {numbers}")
    main = next(account for account in page.data if account.account_number == story.main_account)
    check(main.account_type == AccountType.POOL, f"fetch_customer_accounts: main account is {main.account_type}")
    check(not page.pagination.has_more, "fetch_customer_accounts: a fresh demo has more than 100 accounts")


def open_current_account(story: Story) -> None:
    reply = success(
        create_account_api.sync_detailed(
            client=story.integration_client(),
            body=CreateAccountRequest(account_name="Adaeze Foods Ltd - Payroll"),
            idempotency_key=str(uuid.uuid4()),
        ),
        CreateAccountApiResponse,
        "create_account_api",
    )
    account = reply.data
    check(account.account_type == AccountType.CURRENT, f"create_account_api: {account.account_type}")
    check(account.account_name == "Adaeze Foods Ltd - Payroll", f"create_account_api: {account.account_name}")
    check(len(account.account_number) == 10, f"create_account_api: {account.account_number}")
    check(account.balance == "0.000000000", f"create_account_api: balance {account.balance}")
    story.current_account = account


def give_customer_a_virtual_account(story: Story) -> None:
    metadata = CreateCustomerAccountRequestMetadata()
    metadata["customer_ref"] = "CUST-0001"
    body = CreateCustomerAccountRequest(
        bvn=VERIFIED_BVN, email="chinedu.obi@example.com", phone="08031234567", metadata=metadata
    )
    key = str(uuid.uuid4())
    first = create_customer_account.sync_detailed(client=story.integration_client(), body=body, idempotency_key=key)
    account = success(first, CreateCustomerAccountResponse, "create_customer_account").data
    check(account.account_name == "Amaka Nwosu", f"create_customer_account: account_name {account.account_name}")
    check(account.account_type == AccountType.VIRTUAL, f"create_customer_account: {account.account_type}")
    check(
        account.parent_account_number == story.main_account,
        f"create_customer_account: parent {account.parent_account_number}",
    )

    # A retry with the same Idempotency-Key and body answers the first response again.
    again = create_customer_account.sync_detailed(client=story.integration_client(), body=body, idempotency_key=key)
    replayed = success(again, CreateCustomerAccountResponse, "create_customer_account (retry)").data
    check(replayed.account_number == account.account_number, "create_customer_account: the retry opened another")
    check(
        again.headers.get("idempotent-replayed") == "true",
        f"create_customer_account: Idempotent-Replayed {again.headers.get('idempotent-replayed')}",
    )
    story.customer_account = account


def credit_the_customer(story: Story) -> None:
    virtual = story.virtual_account()
    reply = success(
        simulate_inbound_transfer.sync_detailed(
            client=story.integration_client(),
            body=SimulateInboundTransferRequest(
                account_number=virtual.account_number, amount=AMOUNT, narration="Invoice 0001"
            ),
            idempotency_key=str(uuid.uuid4()),
        ),
        SimulateInboundTransferResponse,
        "simulate_inbound_transfer",
    )
    credit = reply.data
    check(credit.amount == AMOUNT, f"simulate_inbound_transfer: amount {credit.amount}")
    check(credit.account_number == virtual.account_number, f"simulate_inbound_transfer: {credit.account_number}")
    check(credit.transaction_type == TransactionType.CREDIT, f"simulate_inbound_transfer: {credit.transaction_type}")
    check(credit.reference_number != "", "simulate_inbound_transfer: no reference_number")
    story.credit = credit


def read_the_account(story: Story) -> None:
    virtual = story.virtual_account()
    detail = success(
        get_account.sync_detailed(
            client=story.dashboard_client(), body=GetAccountRequest(account_number=virtual.account_number)
        ),
        GetAccountResponse,
        "get_account",
    ).data
    check(detail.balance == "15000.000000000", f"get_account: balance {detail.balance}")
    check(detail.account_name == "Amaka Nwosu", f"get_account: {detail.account_name}")
    customer = detail.customer
    check(customer is not None, "get_account: a virtual account without its customer")
    assert customer is not None
    check([identity.value for identity in customer.verified_identities] == ["bvn"], "get_account: identities")
    check(customer.metadata["customer_ref"] == "CUST-0001", f"get_account: metadata {customer.metadata.to_dict()}")
    check(customer.email == "chinedu.obi@example.com", f"get_account: email {customer.email}")


def find_the_credit(story: Story) -> None:
    assert story.credit is not None
    reference = story.credit.reference_number
    page = success(
        fetch_transactions_api.sync_detailed(
            client=story.integration_client(),
            body=FetchTransactionsApiRequest(filters=IntegrationTransactionFilters(reference_number=reference)),
        ),
        FetchTransactionsApiResponse,
        "fetch_transactions_api",
    )
    found = [t for t in page.data if t.reference_number == reference]
    check(len(found) == 1, f"fetch_transactions_api: {len(found)} transactions with reference {reference}")
    check(found[0].amount == AMOUNT, f"fetch_transactions_api: amount {found[0].amount}")
    check(
        found[0].transaction_category == TransactionCategory.COLLECTION,
        f"fetch_transactions_api: {found[0].transaction_category}",
    )


def find_the_settlement(story: Story) -> None:
    assert story.credit is not None
    virtual = story.virtual_account()
    page = success(
        fetch_settlement_transactions_api.sync_detailed(
            client=story.integration_client(),
            body=FetchSettlementTransactionsRequest(
                filters=SettlementFilters(account_number=virtual.account_number)
            ),
        ),
        FetchSettlementTransactionsApiResponse,
        "fetch_settlement_transactions_api",
    )
    references = [t.reference_number for t in page.data]
    check(
        references == [story.credit.reference_number],
        f"fetch_settlement_transactions_api: {references}",
    )


def read_collections(story: Story) -> None:
    virtual = story.virtual_account()
    page = success(
        fetch_account_collections.sync_detailed(
            client=story.dashboard_client(),
            body=FetchAccountCollectionsRequest(account_number=virtual.account_number),
        ),
        FetchAccountCollectionsResponse,
        "fetch_account_collections",
    )
    check(len(page.data) == 1, f"fetch_account_collections: {len(page.data)} accounts")
    row = page.data[0]
    check(row.total_collections == 1, f"fetch_account_collections: total_collections {row.total_collections}")
    check(row.total_collection_amount == AMOUNT, f"fetch_account_collections: {row.total_collection_amount}")


def read_metrics(story: Story) -> None:
    metrics = success(
        get_total_account_metrics.sync_detailed(
            client=story.dashboard_client(), body=GetTotalAccountMetricsRequest()
        ),
        GetTotalAccountMetricsResponse,
        "get_total_account_metrics",
    ).data
    # The demo's seeded history (Chinedu Obi's account, 2 472 500.50 collected) plus this story's.
    check(metrics.total_virtual_accounts == 2, f"get_total_account_metrics: {metrics.total_virtual_accounts}")
    check(metrics.total_volume_collected == "2487500.50", f"get_total_account_metrics: {metrics.total_volume_collected}")
    check(
        metrics.total_business_balance == "2487500.500000000",
        f"get_total_account_metrics: total_business_balance {metrics.total_business_balance}",
    )


class _Receiver(http.server.BaseHTTPRequestHandler):
    """A partner's webhook endpoint: verify, then acknowledge with a 2xx."""

    webhook: Webhook
    received: queue.Queue[dict[str, object]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        headers = {name: self.headers.get(name, "") for name in ("webhook-id", "webhook-timestamp", "webhook-signature")}
        try:
            event = self.webhook.verify(body, headers)
        except WebhookVerificationError:
            self.send_response(401)
            self.end_headers()
            return
        self.received.put(event)
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def receive_a_signed_webhook(story: Story) -> None:
    # The endpoint: an HTTP server on this machine (the sandbox delivers to http:// and loopback).
    server = http.server.HTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/kobo/webhooks"
        created = success(
            webhook_configuration.sync_detailed(
                client=story.dashboard_client(), body=WebhookConfigurationRequest(url=url)
            ),
            WebhookConfigurationResponse,
            "webhook_configuration",
        ).data
        check(created.secret.startswith("whsec_"), "webhook_configuration: no whsec_ secret")
        # Verify with a library we did not write: the Standard Webhooks reference for Python.
        _Receiver.webhook = Webhook(created.secret)
        _Receiver.received = queue.Queue()
        queued = success(
            test_webhook.sync_detailed(client=story.dashboard_client()), TestWebhookResponse, "test_webhook"
        ).data
        check(queued.event_type == WebhookEventType.WEBHOOK_TEST, f"test_webhook: {queued.event_type}")
        try:
            event = _Receiver.received.get(timeout=20)
        except queue.Empty:
            raise StoryFailure("test_webhook: no signed delivery within 20 s") from None
        check(event.get("id") == str(queued.id), f"the delivery is another event: {event}")
        check(event.get("type") == "webhook.test", f"the delivery's type: {event.get('type')}")
        # The delivery log says delivered (the dispatcher records the attempt after the 2xx).
        for _ in range(50):
            log = success(
                fetch_webhook_events.sync_detailed(
                    client=story.dashboard_client(),
                    body=FetchWebhookEventsRequest(
                        filters=WebhookEventFilters(event_type=WebhookEventType.WEBHOOK_TEST)
                    ),
                ),
                FetchWebhookEventsResponse,
                "fetch_webhook_events",
            ).data
            if log and log[0].status == WebhookDeliveryStatus.DELIVERED:
                check(log[0].attempt_log[0].response_status == 204, f"attempt: {log[0].attempt_log[0]}")
                return
            time.sleep(0.1)
        raise StoryFailure("fetch_webhook_events: the test event is not marked delivered")
    finally:
        server.shutdown()


def handle_a_failed_verification(story: Story) -> None:
    """An error envelope through the generated types: no raw JSON."""
    response = create_customer_account.sync_detailed(
        client=story.integration_client(),
        body=CreateCustomerAccountRequest(bvn=FAILING_BVN),
        idempotency_key=str(uuid.uuid4()),
    )
    error = response.parsed
    if not isinstance(error, ErrorEnvelope):
        raise StoryFailure(f"create_customer_account({FAILING_BVN}): expected an error, got {error!r}")
    # Each code has the catalog's name (the spec's x-enum-varnames): PROVIDER_ERROR is "83".
    check(error.response_code == ResponseCode.PROVIDER_ERROR, f"create_customer_account: {error.response_code.value}")
    check(ResponseCode.PROVIDER_ERROR == ResponseCode("83"), "ResponseCode.PROVIDER_ERROR is not 83")
    check(error.status is False, "create_customer_account: status is not false")
    check(error.data is None, f"create_customer_account: data {error.data!r}")
    check(response.status_code == HTTPStatus.UNPROCESSABLE_ENTITY, f"HTTP {int(response.status_code)}")
    check(error.message != "", "create_customer_account: no message")
    check(response.headers.get("x-request-id") is not None, "create_customer_account: no X-Request-Id")


# The story. Operations not built yet answer `04` and join when their issue lands, each as one
# more step here (and in clients/typescript/story.ts): name_enquiry and funds_transfer from the
# current account, get_transfer_api, fetch_pending_transfers / approve_transfer with the
# Dashboard token (approve_transfer with the approving member's own OTP, since 2.0.0);
# webhook_configuration, fetch_webhook_events for the credit above.
STEPS: list[tuple[str, Callable[[Story], None]]] = [
    ("login, get_profile (Dashboard token)", log_in_and_read_profile),
    ("generate_token (integration token)", take_integration_token),
    ("fetch_customer_accounts", list_accounts),
    ("create_account_api (a current account)", open_current_account),
    ("create_customer_account (BVN 22287654321, then its idempotent retry)", give_customer_a_virtual_account),
    ("simulate_inbound_transfer (15000.00)", credit_the_customer),
    ("get_account (Dashboard token)", read_the_account),
    ("fetch_transactions_api (by reference_number)", find_the_credit),
    ("fetch_settlement_transactions_api", find_the_settlement),
    ("fetch_account_collections (Dashboard token)", read_collections),
    ("get_total_account_metrics (Dashboard token)", read_metrics),
    ("create_customer_account (BVN 22212345683): error 83, typed", handle_a_failed_verification),
    ("webhook_configuration, test_webhook: a signed delivery verified by standardwebhooks", receive_a_signed_webhook),
]


def main() -> int:
    missing = [
        name
        for name in (
            "KOBO_BASE_URL",
            "KOBO_OWNER_EMAIL",
            "KOBO_OWNER_PASSWORD",
            "KOBO_CLIENT_ID",
            "KOBO_CLIENT_SECRET",
            "KOBO_MAIN_ACCOUNT",
        )
        if not os.environ.get(name)
    ]
    if missing:
        print(f"python story: set {', '.join(missing)} (see the README, Clients in other languages)", file=sys.stderr)
        return 2
    story = Story(
        base_url=os.environ["KOBO_BASE_URL"],
        owner_email=os.environ["KOBO_OWNER_EMAIL"],
        owner_password=os.environ["KOBO_OWNER_PASSWORD"],
        client_id=os.environ["KOBO_CLIENT_ID"],
        client_secret=os.environ["KOBO_CLIENT_SECRET"],
        main_account=os.environ["KOBO_MAIN_ACCOUNT"],
    )
    passed = 0
    for name, step in STEPS:
        started = time.monotonic()
        try:
            step(story)
        except StoryFailure as failure:
            print(f"  FAIL {name}: {failure}")
            print(f"python: {passed} passed, 1 failed")
            return 1
        passed += 1
        print(f"  ok   {name} ({(time.monotonic() - started) * 1000:.0f} ms)")
    for note in story.notes:
        print(f"  note {note}")
    print(f"python: {passed} passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
