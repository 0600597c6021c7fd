// A partner's first integration with Kobo, in TypeScript: types generated from spec/openapi.yaml
// by openapi-typescript (generated/kobo.ts), requests sent with openapi-fetch.
//
// It runs the calls in the order a partner makes them and asserts every answer, so a spec change
// that breaks generated TypeScript clients, or a server that drifts from the spec, fails CI
// (`.ci/clients`). It needs a fresh `kobo demo` (the sandbox BVN below gets one account per
// business) and reads where it is from the environment: KOBO_BASE_URL, KOBO_OWNER_EMAIL,
// KOBO_OWNER_PASSWORD, KOBO_CLIENT_ID, KOBO_CLIENT_SECRET, KOBO_MAIN_ACCOUNT.
//
// Type-checked with `tsc --strict --noEmit` (tsconfig.json adds noUncheckedIndexedAccess and
// exactOptionalPropertyTypes), then compiled to build/ and run with node.

import { randomUUID } from "node:crypto";
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./generated/kobo.js";

type Schemas = components["schemas"];
type ErrorEnvelope = Schemas["ErrorEnvelope"];
type Account = Schemas["Account"];
type IntegrationTransaction = Schemas["IntegrationTransaction"];

// The sandbox's identity test data (spec: info.description, "Sandbox").
const VERIFIED_BVN = "22287654321"; // verified: Amaka Nwosu
const FAILING_BVN = "22212345683"; // any other 11 digits ending in 83: verification fails, `83`
const AMOUNT = "15000.00";

class StoryFailure extends Error {}

function check(condition: boolean, what: string): void {
  if (!condition) throw new StoryFailure(what);
}

/** What openapi-fetch answers: the success body, or the error envelope (every error response of
 * the spec is an ErrorEnvelope). */
interface Answer<T> {
  data?: T;
  error?: ErrorEnvelope;
  response: Response;
}

/** The success envelope of a call; any error envelope fails the story with its code. */
function ok<T>(call: string, answer: Answer<T>): NonNullable<T> {
  const { data, error, response } = answer;
  if (error !== undefined) {
    throw new StoryFailure(
      `${call}: HTTP ${response.status}, response_code ${error.response_code}: ${error.message} ` +
        `(X-Request-Id ${response.headers.get("x-request-id")})`,
    );
  }
  if (data === undefined || data === null) throw new StoryFailure(`${call}: HTTP ${response.status}, no body`);
  return data;
}

interface Settings {
  baseUrl: string;
  ownerEmail: string;
  ownerPassword: string;
  clientId: string;
  clientSecret: string;
  mainAccount: string;
}

/** What the calls hand to each other, in the order a partner learns it. */
class Story {
  dashboard?: Client<paths>;
  integration?: Client<paths>;
  currentAccount?: Account;
  customerAccount?: Account;
  credit?: IntegrationTransaction;
  readonly notes: string[] = [];

  constructor(readonly settings: Settings) {}

  public(): Client<paths> {
    return createClient<paths>({ baseUrl: this.settings.baseUrl });
  }

  withToken(token: string): Client<paths> {
    return createClient<paths>({
      baseUrl: this.settings.baseUrl,
      headers: { Authorization: `Bearer ${token}` },
    });
  }

  dashboardClient(): Client<paths> {
    if (!this.dashboard) throw new StoryFailure("log in first");
    return this.dashboard;
  }

  integrationClient(): Client<paths> {
    if (!this.integration) throw new StoryFailure("take an integration token first");
    return this.integration;
  }

  virtualAccount(): Account {
    if (!this.customerAccount) throw new StoryFailure("create the customer's account first");
    return this.customerAccount;
  }

  theCredit(): IntegrationTransaction {
    if (!this.credit) throw new StoryFailure("credit the customer first");
    return this.credit;
  }
}

// ---- The steps, in the order a partner calls them ------------------------------------------

async function logInAndReadProfile(story: Story): Promise<void> {
  const { ownerEmail, ownerPassword } = story.settings;
  const login = ok(
    "login",
    await story.public().POST("/api/v1/auth/web/login", {
      body: { email: ownerEmail, password: ownerPassword },
    }),
  );
  check(login.data.access_token !== "", "login: no access_token");
  check(login.data.member.email === ownerEmail, `login: member ${login.data.member.email}`);
  story.dashboard = story.withToken(login.data.access_token);

  // An operation without parameters needs no body (optional in the spec; `{ body: {} }` works too).
  const profile = ok(
    "get_profile",
    await story.dashboardClient().POST("/api/v1/auth/web/get_profile"),
  );
  check(profile.data.member.email === ownerEmail, `get_profile: ${profile.data.member.email}`);
  check(
    profile.data.business.name === "Adaeze Foods Ltd",
    `get_profile: business ${profile.data.business.name}`,
  );
  story.notes.push(`logged in as ${profile.data.member.email} of ${profile.data.business.name}`);
}

async function takeIntegrationToken(story: Story): Promise<void> {
  const { clientId, clientSecret } = story.settings;
  const grant = ok(
    "generate_token",
    await story.public().POST("/api/v1/auth/api/generate_token", {
      body: { client_id: clientId, client_secret: clientSecret },
    }),
  );
  check(grant.data.token_type === "Bearer", `generate_token: token_type ${grant.data.token_type}`);
  check(grant.data.expires_in > 0, `generate_token: expires_in ${grant.data.expires_in}`);
  story.integration = story.withToken(grant.data.access_token);
}

async function listAccounts(story: Story): Promise<void> {
  const { mainAccount } = story.settings;
  const page = ok(
    "fetch_customer_accounts",
    await story.integrationClient().POST("/api/v1/account/api/fetch_customer_accounts", {
      body: { limit: 100 },
    }),
  );
  const main = page.data.find((account) => account.account_number === mainAccount);
  check(main !== undefined, `fetch_customer_accounts: ${mainAccount} not listed`);
  check(main?.account_type === "pool", `fetch_customer_accounts: main account is ${main?.account_type}`);
  check(!page.pagination.has_more, "fetch_customer_accounts: a fresh demo has more than 100 accounts");
}

async function openCurrentAccount(story: Story): Promise<void> {
  const reply = ok(
    "create_account_api",
    await story.integrationClient().POST("/api/v1/account/api/create_account", {
      body: { account_name: "Adaeze Foods Ltd - Payroll" },
      params: { header: { "Idempotency-Key": randomUUID() } },
    }),
  );
  const account = reply.data;
  check(account.account_type === "current", `create_account_api: ${account.account_type}`);
  check(account.account_name === "Adaeze Foods Ltd - Payroll", `create_account_api: ${account.account_name}`);
  check(/^[0-9]{10}$/.test(account.account_number), `create_account_api: ${account.account_number}`);
  check(account.balance === "0.000000000", `create_account_api: balance ${account.balance}`);
  story.currentAccount = account;
}

async function giveCustomerAVirtualAccount(story: Story): Promise<void> {
  const body: Schemas["CreateCustomerAccountRequest"] = {
    bvn: VERIFIED_BVN,
    email: "chinedu.obi@example.com",
    phone: "08031234567",
    metadata: { customer_ref: "CUST-0001" },
  };
  const key = randomUUID();
  const path = "/api/v1/account/api/create_customer_account";
  const first = ok(
    "create_customer_account",
    await story.integrationClient().POST(path, { body, params: { header: { "Idempotency-Key": key } } }),
  );
  const account = first.data;
  check(account.account_name === "Amaka Nwosu", `create_customer_account: account_name ${account.account_name}`);
  check(account.account_type === "virtual", `create_customer_account: ${account.account_type}`);
  check(
    account.parent_account_number === story.settings.mainAccount,
    `create_customer_account: parent ${account.parent_account_number}`,
  );

  // A retry with the same Idempotency-Key and body answers the first response again.
  const again = await story
    .integrationClient()
    .POST(path, { body, params: { header: { "Idempotency-Key": key } } });
  const replayed = ok("create_customer_account (retry)", again).data;
  check(replayed.account_number === account.account_number, "create_customer_account: the retry opened another");
  const header = again.response.headers.get("idempotent-replayed");
  check(header === "true", `create_customer_account: Idempotent-Replayed ${header}`);
  story.customerAccount = account;
}

async function creditTheCustomer(story: Story): Promise<void> {
  const virtual = story.virtualAccount();
  const credit = ok(
    "simulate_inbound_transfer",
    await story.integrationClient().POST("/api/v1/sandbox/api/simulate_inbound_transfer", {
      body: { account_number: virtual.account_number, amount: AMOUNT, narration: "Invoice 0001" },
      params: { header: { "Idempotency-Key": randomUUID() } },
    }),
  ).data;
  check(credit.amount === AMOUNT, `simulate_inbound_transfer: amount ${credit.amount}`);
  check(credit.account_number === virtual.account_number, `simulate_inbound_transfer: ${credit.account_number}`);
  check(credit.transaction_type === "credit", `simulate_inbound_transfer: ${credit.transaction_type}`);
  check(credit.reference_number !== "", "simulate_inbound_transfer: no reference_number");
  story.credit = credit;
}

async function readTheAccount(story: Story): Promise<void> {
  const virtual = story.virtualAccount();
  const detail = ok(
    "get_account",
    await story.dashboardClient().POST("/api/v1/account/web/get_account", {
      body: { account_number: virtual.account_number },
    }),
  ).data;
  check(detail.balance === "15000.000000000", `get_account: balance ${detail.balance}`);
  check(detail.account_name === "Amaka Nwosu", `get_account: ${detail.account_name}`);
  const customer = detail.customer;
  if (customer === null) throw new StoryFailure("get_account: a virtual account without its customer");
  check(customer.verified_identities.join(",") === "bvn", `get_account: ${customer.verified_identities.join(",")}`);
  check(customer.metadata["customer_ref"] === "CUST-0001", `get_account: metadata ${JSON.stringify(customer.metadata)}`);
  check(customer.email === "chinedu.obi@example.com", `get_account: email ${customer.email}`);
}

async function findTheCredit(story: Story): Promise<void> {
  const reference = story.theCredit().reference_number;
  const page = ok(
    "fetch_transactions_api",
    await story.integrationClient().POST("/api/v1/transaction/api/fetch_transactions", {
      body: { filters: { reference_number: reference } },
    }),
  );
  const found = page.data.filter((transaction) => transaction.reference_number === reference);
  check(found.length === 1, `fetch_transactions_api: ${found.length} transactions with reference ${reference}`);
  const [credit] = found;
  check(credit?.amount === AMOUNT, `fetch_transactions_api: amount ${credit?.amount}`);
  check(credit?.transaction_category === "collection", `fetch_transactions_api: ${credit?.transaction_category}`);
}

async function findTheSettlement(story: Story): Promise<void> {
  const virtual = story.virtualAccount();
  const page = ok(
    "fetch_settlement_transactions_api",
    await story.integrationClient().POST("/api/v1/transaction/api/fetch_settlement_transactions", {
      body: { filters: { account_number: virtual.account_number } },
    }),
  );
  const references = page.data.map((transaction) => transaction.reference_number);
  check(
    references.join(",") === story.theCredit().reference_number,
    `fetch_settlement_transactions_api: ${references.join(",")}`,
  );
}

async function readCollections(story: Story): Promise<void> {
  const virtual = story.virtualAccount();
  const page = ok(
    "fetch_account_collections",
    await story.dashboardClient().POST("/api/v1/account/web/fetch_account_collections", {
      body: { account_number: virtual.account_number },
    }),
  );
  check(page.data.length === 1, `fetch_account_collections: ${page.data.length} accounts`);
  const [row] = page.data;
  check(row?.total_collections === 1, `fetch_account_collections: total_collections ${row?.total_collections}`);
  check(row?.total_collection_amount === AMOUNT, `fetch_account_collections: ${row?.total_collection_amount}`);
}

async function readMetrics(story: Story): Promise<void> {
  const metrics = ok(
    "get_total_account_metrics",
    await story.dashboardClient().POST("/api/v1/account/web/get_total_account_metrics", { body: {} }),
  ).data;
  // The demo's seeded history (Chinedu Obi's account, 2 472 500.50 collected) plus this story's.
  check(metrics.total_virtual_accounts === 2, `get_total_account_metrics: ${metrics.total_virtual_accounts}`);
  check(metrics.total_volume_collected === "2487500.50", `get_total_account_metrics: ${metrics.total_volume_collected}`);
  check(
    metrics.total_business_balance === "2487500.500000000",
    `get_total_account_metrics: total_business_balance ${metrics.total_business_balance}`,
  );
}

/** An error envelope through the generated types: no raw JSON. */
async function handleAFailedVerification(story: Story): Promise<void> {
  const { data, error, response } = await story
    .integrationClient()
    .POST("/api/v1/account/api/create_customer_account", {
      body: { bvn: FAILING_BVN },
      params: { header: { "Idempotency-Key": randomUUID() } },
    });
  if (error === undefined) {
    throw new StoryFailure(`create_customer_account(${FAILING_BVN}): expected an error, got ${JSON.stringify(data)}`);
  }
  // `response_code` is a union of the catalog's codes: a typo such as "38" does not compile.
  const code: Schemas["ResponseCode"] = error.response_code;
  check(code === "83", `create_customer_account: ${code}`);
  check(error.status === false, "create_customer_account: status is not false");
  check(error.data === null, `create_customer_account: data ${JSON.stringify(error.data)}`);
  check(response.status === 422, `create_customer_account: HTTP ${response.status}`);
  check(error.message !== "", "create_customer_account: no message");
  check(response.headers.get("x-request-id") !== null, "create_customer_account: no X-Request-Id");
}

// The story. Operations not built yet answer `04` and join when their issue lands, each as one
// more step here (and in clients/python/story.py): name_enquiry and funds_transfer from the
// current account, get_transfer_api, fetch_pending_transfers / approve_transfer with the
// Dashboard token (approve_transfer with the approving member's own OTP, since 2.0.0);
// webhook_configuration, fetch_webhook_events for the credit above.
const STEPS: ReadonlyArray<readonly [string, (story: Story) => Promise<void>]> = [
  ["login, get_profile (Dashboard token)", logInAndReadProfile],
  ["generate_token (integration token)", takeIntegrationToken],
  ["fetch_customer_accounts", listAccounts],
  ["create_account_api (a current account)", openCurrentAccount],
  ["create_customer_account (BVN 22287654321, then its idempotent retry)", giveCustomerAVirtualAccount],
  ["simulate_inbound_transfer (15000.00)", creditTheCustomer],
  ["get_account (Dashboard token)", readTheAccount],
  ["fetch_transactions_api (by reference_number)", findTheCredit],
  ["fetch_settlement_transactions_api", findTheSettlement],
  ["fetch_account_collections (Dashboard token)", readCollections],
  ["get_total_account_metrics (Dashboard token)", readMetrics],
  ["create_customer_account (BVN 22212345683): error 83, typed", handleAFailedVerification],
];

async function main(): Promise<number> {
  const names = [
    "KOBO_BASE_URL",
    "KOBO_OWNER_EMAIL",
    "KOBO_OWNER_PASSWORD",
    "KOBO_CLIENT_ID",
    "KOBO_CLIENT_SECRET",
    "KOBO_MAIN_ACCOUNT",
  ] as const;
  const missing = names.filter((name) => !process.env[name]);
  if (missing.length > 0) {
    console.error(`typescript story: set ${missing.join(", ")} (see the README, Clients in other languages)`);
    return 2;
  }
  const env = (name: (typeof names)[number]): string => process.env[name] ?? "";
  const story = new Story({
    baseUrl: env("KOBO_BASE_URL"),
    ownerEmail: env("KOBO_OWNER_EMAIL"),
    ownerPassword: env("KOBO_OWNER_PASSWORD"),
    clientId: env("KOBO_CLIENT_ID"),
    clientSecret: env("KOBO_CLIENT_SECRET"),
    mainAccount: env("KOBO_MAIN_ACCOUNT"),
  });
  let passed = 0;
  for (const [name, step] of STEPS) {
    const started = performance.now();
    try {
      await step(story);
    } catch (failure) {
      if (!(failure instanceof StoryFailure)) throw failure;
      console.log(`  FAIL ${name}: ${failure.message}`);
      console.log(`typescript: ${passed} passed, 1 failed`);
      return 1;
    }
    passed += 1;
    console.log(`  ok   ${name} (${Math.round(performance.now() - started)} ms)`);
  }
  for (const note of story.notes) console.log(`  note ${note}`);
  console.log(`typescript: ${passed} passed, 0 failed`);
  return 0;
}

process.exitCode = await main();
