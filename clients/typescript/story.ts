// A partner's first integration with Kobo, in TypeScript: types generated from spec/openapi.yaml
// by openapi-typescript (generated/kobo.ts), requests sent with openapi-fetch.
//
// It runs the calls in the order a partner makes them and asserts every answer, so a spec change
// that breaks generated TypeScript clients, or a server that drifts from the spec, fails CI
// (`.ci/clients`). It needs a fresh `kobo demo` (the sandbox BVN below gets one account per
// business; the balances it expects start from the demo's seeded history) and reads where it is
// from the environment: KOBO_BASE_URL, KOBO_OWNER_EMAIL, KOBO_OWNER_PASSWORD, KOBO_CLIENT_ID,
// KOBO_CLIENT_SECRET, KOBO_MAIN_ACCOUNT.
//
// STORY_AGAINST_MOCK=1 runs it against `kobo mock`: the same calls in the same order, each
// answer still typed as the spec says (a success where the story expects one; the expected
// `response_code` and HTTP status where it expects an error, the example chosen with
// `Prefer: example=<name>`). Only the assertions that need a live bank's state (`story.expect`:
// balances, names, counts, where a transfer ended, a webhook actually delivered) are not
// enforced there, and the story prints how many there were. `check` holds against both.
//
// Type-checked with `tsc --strict --noEmit` (tsconfig.json adds noUncheckedIndexedAccess and
// exactOptionalPropertyTypes), then compiled to build/ and run with node.

import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./generated/kobo.js";

type Schemas = components["schemas"];
type ErrorEnvelope = Schemas["ErrorEnvelope"];
type ResponseCode = Schemas["ResponseCode"];
type Account = Schemas["Account"];
type IntegrationTransaction = Schemas["IntegrationTransaction"];
type Transfer = Schemas["Transfer"];
type NameEnquiryResult = Schemas["NameEnquiryResult"];
type FundsTransferApiRequest = Schemas["FundsTransferApiRequest"];

// The sandbox's identity test data (spec: info.description, "Sandbox").
const VERIFIED_BVN = "22287654321"; // verified: Amaka Nwosu
const FAILING_BVN = "22212345683"; // any other 11 digits ending in 83: verification fails, `83`
const AMOUNT = "15000.00";

// The sandbox's beneficiaries (spec: info.description, "Sandbox").
const KOBO_BANK = "090823"; // Kobo's own bank code: intra-bank, settled at once
const OTHER_BANK = "000013"; // Guaranty Trust Bank in the sandbox: inter-bank over NIP
const EMEKA = "0123456788"; // Emeka Nwosu: transfers succeed within seconds
const BISI = "0690000036"; // Bisi Alade: transfers fail after processing and are reversed
const NOBODY = "0000000001"; // any other number at another bank: not found, `06`
const CHINEDU = "2000000011"; // the demo's first virtual account (Chinedu Obi), a Kobo account
const CHINEDU_BALANCE = kobo("22500.50"); // the demo's seeded credits to it

// The current account's money in this story, in kobo (exact integers: no floating point).
const FUNDING = kobo("100000.00");
const INTRA_AMOUNT = kobo("5000.00");
const EMEKA_AMOUNT = kobo("25000.00");
const BISI_AMOUNT = kobo("12000.00");
const TOO_MUCH = kobo("1000000.00"); // more than the current account holds, under the daily limit

// Open (the spec may add statuses later): a status this story does not know is not final.
const FINAL: ReadonlyArray<Schemas["OpenTransferStatus"]> = ["success", "failed", "reversed"];

class StoryFailure extends Error {}

/** An assertion that holds against a live bank and against the mock alike. */
function check(condition: boolean, what: string): void {
  if (!condition) throw new StoryFailure(what);
}

/** An amount of an answer (a string with exactly two fraction digits) in kobo. */
function kobo(text: string): bigint {
  const match = /^([0-9]+)\.([0-9]{2})$/.exec(text);
  if (!match) throw new StoryFailure(`amount ${JSON.stringify(text)} is not a two-decimal string`);
  return BigInt(match[1] ?? "") * 100n + BigInt(match[2] ?? "");
}

/** Kobo as a request amount or a transaction amount: two fraction digits. */
function naira(amount: bigint): string {
  return `${amount / 100n}.${(amount % 100n).toString().padStart(2, "0")}`;
}

/** Kobo as a balance: nine fraction digits. */
function balance(amount: bigint): string {
  return `${naira(amount)}0000000`;
}

/** 7.5% VAT on a fee, half up to the kobo (the spec: funds_transfer, "Fees and limits"). */
function vatOn(fee: bigint): bigint {
  return (fee * 75n + 500n) / 1000n;
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

/** The error envelope of a call that must fail with `code`: typed, no raw JSON. */
function failed<T>(call: string, answer: Answer<T>, code: ResponseCode, status: number): ErrorEnvelope {
  const { data, error, response } = answer;
  if (error === undefined) {
    throw new StoryFailure(`${call}: expected the error ${code}, got HTTP ${response.status} ${JSON.stringify(data)}`);
  }
  // `response_code` is a union of the catalog's codes: a typo such as "38" does not compile.
  check(error.response_code === code, `${call}: response_code ${error.response_code}, expected ${code}`);
  check(response.status === status, `${call}: HTTP ${response.status}, expected ${status}`);
  check(error.status === false, `${call}: status is not false`);
  check(error.data === null, `${call}: data ${JSON.stringify(error.data)}`);
  check(error.message !== "", `${call}: no message`);
  check(response.headers.get("x-request-id") !== null, `${call}: no X-Request-Id`);
  return error;
}

interface Settings {
  baseUrl: string;
  ownerEmail: string;
  ownerPassword: string;
  clientId: string;
  clientSecret: string;
  mainAccount: string;
  againstMock: boolean;
}

/** What the calls hand to each other, in the order a partner learns it. */
class Story {
  dashboard?: Client<paths>;
  integration?: Client<paths>;
  currentAccount?: Account;
  customerAccount?: Account;
  credit?: IntegrationTransaction;
  funding?: IntegrationTransaction;
  readonly transfers = new Map<"intra" | "emeka" | "bisi", Transfer>();
  emekaKey = "";
  emekaBody?: FundsTransferApiRequest;
  readonly notes: string[] = [];
  readonly relaxed: string[] = [];

  constructor(readonly settings: Settings) {}

  /** An assertion about a live bank's state: enforced against `kobo demo`; against the mock,
   * whose answers are the spec's fixed examples, only counted. */
  expect(condition: boolean, what: string): void {
    if (this.settings.againstMock) this.relaxed.push(what);
    else check(condition, what);
  }

  /** Against the mock, the header that picks the example the story expects; nothing otherwise. */
  prefer(example: string): Record<string, string> {
    return this.settings.againstMock ? { Prefer: `example=${example}` } : {};
  }

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

  payroll(): Account {
    if (!this.currentAccount) throw new StoryFailure("open the current account first");
    return this.currentAccount;
  }

  theCredit(): IntegrationTransaction {
    if (!this.credit) throw new StoryFailure("credit the customer first");
    return this.credit;
  }

  transfer(name: "intra" | "emeka" | "bisi"): Transfer {
    const found = this.transfers.get(name);
    if (!found) throw new StoryFailure(`the ${name} transfer was not made`);
    return found;
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
  story.expect(login.data.member.email === ownerEmail, `login: member ${login.data.member.email}`);
  story.dashboard = story.withToken(login.data.access_token);

  // An operation without parameters needs no body (optional in the spec; `{ body: {} }` works too).
  const profile = ok("get_profile", await story.dashboardClient().POST("/api/v1/auth/web/get_profile"));
  story.expect(profile.data.member.email === ownerEmail, `get_profile: ${profile.data.member.email}`);
  story.expect(
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
  check(page.data.length > 0, "fetch_customer_accounts: no accounts");
  const main = page.data.find((account) => account.account_number === mainAccount);
  story.expect(main !== undefined, `fetch_customer_accounts: ${mainAccount} not listed`);
  story.expect(main?.account_type === "pool", `fetch_customer_accounts: main account is ${main?.account_type}`);
  story.expect(!page.pagination.has_more, "fetch_customer_accounts: a fresh demo has more than 100 accounts");
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
  check(/^[0-9]{10}$/.test(account.account_number), `create_account_api: ${account.account_number}`);
  check(/^[0-9]+\.[0-9]{9}$/.test(account.balance), `create_account_api: balance ${account.balance}`);
  story.expect(account.account_name === "Adaeze Foods Ltd - Payroll", `create_account_api: ${account.account_name}`);
  story.expect(account.balance === "0.000000000", `create_account_api: balance ${account.balance}`);
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
  check(account.account_type === "virtual", `create_customer_account: ${account.account_type}`);
  story.expect(account.account_name === "Amaka Nwosu", `create_customer_account: account_name ${account.account_name}`);
  story.expect(
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
  story.expect(header === "true", `create_customer_account: Idempotent-Replayed ${header}`);
  story.customerAccount = account;
}

async function credit(
  story: Story,
  accountNumber: string,
  amount: string,
  narration: string,
): Promise<IntegrationTransaction> {
  const inbound = ok(
    "simulate_inbound_transfer",
    await story.integrationClient().POST("/api/v1/sandbox/api/simulate_inbound_transfer", {
      body: { account_number: accountNumber, amount, narration },
      params: { header: { "Idempotency-Key": randomUUID() } },
    }),
  ).data;
  check(inbound.transaction_type === "credit", `simulate_inbound_transfer: ${inbound.transaction_type}`);
  check(inbound.reference_number !== "", "simulate_inbound_transfer: no reference_number");
  story.expect(kobo(inbound.amount) === kobo(amount), `simulate_inbound_transfer: amount ${inbound.amount}`);
  story.expect(inbound.account_number === accountNumber, `simulate_inbound_transfer: ${inbound.account_number}`);
  return inbound;
}

async function creditTheCustomer(story: Story): Promise<void> {
  story.credit = await credit(story, story.virtualAccount().account_number, AMOUNT, "Invoice 0001");
}

async function readTheAccount(story: Story): Promise<void> {
  const virtual = story.virtualAccount();
  const detail = ok(
    "get_account",
    await story.dashboardClient().POST("/api/v1/account/web/get_account", {
      body: { account_number: virtual.account_number },
    }),
  ).data;
  story.expect(detail.balance === "15000.000000000", `get_account: balance ${detail.balance}`);
  story.expect(detail.account_name === "Amaka Nwosu", `get_account: ${detail.account_name}`);
  const customer = detail.customer;
  if (customer === null) throw new StoryFailure("get_account: a virtual account without its customer");
  check(customer.verified_identities.join(",") === "bvn", `get_account: ${customer.verified_identities.join(",")}`);
  story.expect(
    customer.metadata["customer_ref"] === "CUST-0001",
    `get_account: metadata ${JSON.stringify(customer.metadata)}`,
  );
  story.expect(customer.email === "chinedu.obi@example.com", `get_account: email ${customer.email}`);
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
  story.expect(found.length === 1, `fetch_transactions_api: ${found.length} transactions with reference ${reference}`);
  for (const transaction of found) {
    story.expect(transaction.amount === AMOUNT, `fetch_transactions_api: amount ${transaction.amount}`);
    story.expect(
      transaction.transaction_category === "collection",
      `fetch_transactions_api: ${transaction.transaction_category}`,
    );
  }
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
  story.expect(
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
  story.expect(page.data.length === 1, `fetch_account_collections: ${page.data.length} accounts`);
  const [row] = page.data;
  story.expect(row?.total_collections === 1, `fetch_account_collections: total_collections ${row?.total_collections}`);
  story.expect(row?.total_collection_amount === AMOUNT, `fetch_account_collections: ${row?.total_collection_amount}`);
}

async function readMetrics(story: Story): Promise<void> {
  const metrics = ok(
    "get_total_account_metrics",
    await story.dashboardClient().POST("/api/v1/account/web/get_total_account_metrics", { body: {} }),
  ).data;
  // The demo's seeded history (Chinedu Obi's account, 2 472 500.50 collected) plus this story's.
  story.expect(metrics.total_virtual_accounts === 2, `get_total_account_metrics: ${metrics.total_virtual_accounts}`);
  story.expect(
    metrics.total_volume_collected === "2487500.50",
    `get_total_account_metrics: ${metrics.total_volume_collected}`,
  );
  story.expect(
    metrics.total_business_balance === "2487500.500000000",
    `get_total_account_metrics: total_business_balance ${metrics.total_business_balance}`,
  );
}

/** An error envelope through the generated types: no raw JSON. */
async function handleAFailedVerification(story: Story): Promise<void> {
  const answer = await story.integrationClient().POST("/api/v1/account/api/create_customer_account", {
    body: { bvn: FAILING_BVN },
    params: { header: { "Idempotency-Key": randomUUID() } },
    headers: story.prefer("verification_failed"),
  });
  failed("create_customer_account", answer, "83", 422);
}

// ---- Transfers: the partner pays out from its current account ------------------------------

async function fundTheCurrentAccount(story: Story): Promise<void> {
  story.funding = await credit(story, story.payroll().account_number, naira(FUNDING), "Payroll funding - November");
}

async function listTheBanks(story: Story): Promise<void> {
  const banks = ok(
    "fetch_banks",
    await story.integrationClient().POST("/api/v1/transaction/transfer/api/fetch_banks"),
  ).data;
  const codes = banks.map((bank) => bank.code);
  check(codes.includes(OTHER_BANK) && codes.includes(KOBO_BANK), `fetch_banks: ${codes.join(",")}`);
}

async function enquire(
  story: Story,
  accountNumber: string,
  bankCode: string,
  example: string,
): Promise<NameEnquiryResult> {
  const result = ok(
    `name_enquiry(${accountNumber}, ${bankCode})`,
    await story.integrationClient().POST("/api/v1/transaction/transfer/api/name_enquiry", {
      body: {
        beneficiary_account_number: accountNumber,
        bank_code: bankCode,
        source_account_number: story.payroll().account_number,
      },
      headers: story.prefer(example),
    }),
  ).data;
  check(result.bank_code === bankCode, `name_enquiry: bank_code ${result.bank_code}`);
  check([1, 2, 3].includes(result.kyc), `name_enquiry: kyc ${result.kyc}`);
  story.expect(result.account_number === accountNumber, `name_enquiry: ${result.account_number}`);
  return result;
}

async function lookUpBeneficiaries(story: Story): Promise<void> {
  const chinedu = await enquire(story, CHINEDU, KOBO_BANK, "intra_bank");
  story.expect(chinedu.account_name === "Adaeze Foods Ltd - Chinedu Obi", `name_enquiry(${CHINEDU}): ${chinedu.account_name}`);
  story.expect(chinedu.bank_name === "Kobo Microfinance Bank", `name_enquiry(${CHINEDU}): ${chinedu.bank_name}`);
  const emeka = await enquire(story, EMEKA, OTHER_BANK, "inter_bank");
  story.expect(emeka.account_name === "Emeka Nwosu", `name_enquiry(${EMEKA}): ${emeka.account_name}`);
  story.expect(emeka.kyc === 3, `name_enquiry(${EMEKA}): kyc ${emeka.kyc}`);
  const bisi = await enquire(story, BISI, OTHER_BANK, "inter_bank");
  story.expect(bisi.account_name === "Bisi Alade", `name_enquiry(${BISI}): ${bisi.account_name}`);
}

async function refuseAnUnknownBeneficiary(story: Story): Promise<void> {
  const answer = await story.integrationClient().POST("/api/v1/transaction/transfer/api/name_enquiry", {
    body: {
      beneficiary_account_number: NOBODY,
      bank_code: OTHER_BANK,
      source_account_number: story.payroll().account_number,
    },
    headers: story.prefer("beneficiary_not_found"),
  });
  failed(`name_enquiry(${NOBODY})`, answer, "06", 404);
}

/** A transfer to the holder the name enquiry confirmed, with its BVN and KYC passed on. */
function transferBody(
  story: Story,
  beneficiary: NameEnquiryResult,
  amount: bigint,
  narration: string,
  transferType: Schemas["TransferType"],
): FundsTransferApiRequest {
  const payroll = story.payroll();
  return {
    source_account_number: payroll.account_number,
    source_account_name: payroll.account_name,
    beneficiary_account_number: beneficiary.account_number,
    beneficiary_account_name: beneficiary.account_name,
    bank_code: beneficiary.bank_code,
    amount: naira(amount),
    narration,
    transfer_type: transferType,
    ...(beneficiary.bvn === null ? {} : { bvn: beneficiary.bvn }),
    kyc: beneficiary.kyc,
    reference: `PAY-${randomUUID().replaceAll("-", "").slice(0, 12)}`,
  };
}

function send(story: Story, body: FundsTransferApiRequest, key: string, example = "inter_in_flight") {
  return story.integrationClient().POST("/api/v1/transaction/transfer/api/funds_transfer", {
    body,
    params: { header: { "Idempotency-Key": key } },
    headers: story.prefer(example),
  });
}

function submitted(
  story: Story,
  call: string,
  answer: Answer<{ data: Transfer }>,
  body: FundsTransferApiRequest,
): Transfer {
  const transfer = ok(call, answer).data;
  check(transfer.reference_number !== "", `${call}: no reference_number`);
  kobo(transfer.fee);
  kobo(transfer.vat);
  story.expect(kobo(transfer.amount) === kobo(body.amount), `${call}: amount ${transfer.amount}`);
  story.expect(transfer.reference === (body.reference ?? null), `${call}: reference ${transfer.reference}`);
  story.expect(transfer.transfer_type === body.transfer_type, `${call}: transfer_type ${transfer.transfer_type}`);
  story.expect(
    transfer.source_account_number === story.payroll().account_number,
    `${call}: source ${transfer.source_account_number}`,
  );
  return transfer;
}

async function payWithinKobo(story: Story): Promise<void> {
  // Name enquiry first, as the spec asks: the transfer repeats it and refuses another name.
  const chinedu = await enquire(story, CHINEDU, KOBO_BANK, "intra_bank");
  const body = transferBody(story, chinedu, INTRA_AMOUNT, "Refund - order 1042", "intra");
  const transfer = submitted(story, "funds_transfer_api (intra)", await send(story, body, randomUUID()), body);
  // Within Kobo: settled at once, and free.
  story.expect(transfer.transfer_status === "success", `intra transfer: ${transfer.transfer_status}`);
  story.expect(transfer.status === "success", `intra transfer: status ${transfer.status}`);
  story.expect(
    transfer.fee === "0.00" && transfer.vat === "0.00",
    `intra transfer: fee ${transfer.fee} vat ${transfer.vat}`,
  );
  story.transfers.set("intra", transfer);
}

async function payEmekaAndRetry(story: Story): Promise<void> {
  const emeka = await enquire(story, EMEKA, OTHER_BANK, "inter_bank");
  const body = transferBody(story, emeka, EMEKA_AMOUNT, "Logistics - November", "inter");
  const key = randomUUID();
  const transfer = submitted(story, "funds_transfer_api (inter, Emeka Nwosu)", await send(story, body, key), body);
  // To another bank: debited at once (amount, fee, VAT), then NIP settles it.
  story.expect(transfer.transfer_status === "processing", `inter transfer: ${transfer.transfer_status}`);
  story.expect(transfer.status === "pending", `inter transfer: status ${transfer.status}`);
  const fee = kobo(transfer.fee);
  story.expect(fee === kobo("25.00"), `inter transfer: fee ${transfer.fee} (NGN 25.00 from 5,000.01 to 50,000.00)`);
  story.expect(kobo(transfer.vat) === vatOn(fee), `inter transfer: vat ${transfer.vat} on fee ${transfer.fee}`);

  // The network dropped the answer? Send the same request with the same key: the same transfer
  // comes back, marked replayed, and nothing is debited twice (the balances below).
  const again = await send(story, body, key);
  const replayed = ok("funds_transfer_api (the same Idempotency-Key)", again).data;
  check(replayed.reference_number === transfer.reference_number, "funds_transfer_api: the retry made another transfer");
  check(replayed.id === transfer.id, "funds_transfer_api: the retry answered another transfer");
  const header = again.response.headers.get("idempotent-replayed");
  story.expect(header === "true", `funds_transfer_api: Idempotent-Replayed ${header}`);
  story.transfers.set("emeka", transfer);
  story.emekaKey = key;
  story.emekaBody = body;
}

/** The same Idempotency-Key with another body is refused, typed, and moves nothing. */
async function refuseAReusedKey(story: Story): Promise<void> {
  const first = story.emekaBody;
  if (!first) throw new StoryFailure("pay Emeka Nwosu first");
  const other = { ...first, amount: naira(kobo(first.amount) + 100n) };
  failed("funds_transfer_api (reused key)", await send(story, other, story.emekaKey, "key_reused"), "27", 422);
}

/** Polls get_transfer_api, as a partner without webhooks does, until the transfer is final. */
async function waitUntilFinal(story: Story, referenceNumber: string, call: string): Promise<Transfer> {
  const deadline = performance.now() + 30_000;
  for (;;) {
    const transfer = ok(
      call,
      await story.integrationClient().POST("/api/v1/transaction/transfer/api/get_transfer", {
        body: { reference_number: referenceNumber },
      }),
    ).data;
    if (FINAL.includes(transfer.transfer_status) || story.settings.againstMock) return transfer;
    if (performance.now() > deadline) throw new StoryFailure(`${call}: still ${transfer.transfer_status} after 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function emekaIsPaid(story: Story): Promise<void> {
  const sent = story.transfer("emeka");
  const transfer = await waitUntilFinal(story, sent.reference_number, "get_transfer_api (Emeka Nwosu)");
  story.expect(transfer.transfer_status === "success", `Emeka's transfer: ${transfer.transfer_status}`);
  story.expect(transfer.status === "success", `Emeka's transfer: status ${transfer.status}`);
  story.expect(
    transfer.session_id !== null && /^[0-9]{30}$/.test(transfer.session_id),
    `Emeka's transfer: NIP session_id ${transfer.session_id}`,
  );
  story.expect(transfer.failure_reason === null, `Emeka's transfer: failure_reason ${transfer.failure_reason}`);
  // The partner's own reference finds it too.
  if (sent.reference === null) throw new StoryFailure("funds_transfer_api: the transfer lost the partner's reference");
  const byReference = ok(
    "get_transfer_api (by reference)",
    await story.integrationClient().POST("/api/v1/transaction/transfer/api/get_transfer", {
      body: { reference: sent.reference },
    }),
  ).data;
  story.expect(byReference.id === sent.id, `get_transfer_api by reference: ${byReference.reference_number}`);
  story.transfers.set("emeka", transfer);
}

async function bisiIsReversed(story: Story): Promise<void> {
  const bisi = await enquire(story, BISI, OTHER_BANK, "inter_bank");
  const body = transferBody(story, bisi, BISI_AMOUNT, "Refund - order 1038", "inter");
  const sent = submitted(story, "funds_transfer_api (Bisi Alade)", await send(story, body, randomUUID()), body);
  story.expect(sent.transfer_status === "processing", `Bisi's transfer: ${sent.transfer_status}`);
  const transfer = await waitUntilFinal(story, sent.reference_number, "get_transfer_api (Bisi Alade)");
  // Her bank declines it: amount, fee and VAT come back as one REV- credit.
  story.expect(transfer.transfer_status === "reversed", `Bisi's transfer: ${transfer.transfer_status}`);
  story.expect(transfer.status === "reversed", `Bisi's transfer: status ${transfer.status}`);
  story.expect(!!transfer.failure_reason, `Bisi's transfer: failure_reason ${transfer.failure_reason}`);
  story.expect(
    transfer.reversal_reference_number === `REV-${transfer.reference_number.slice(4)}`,
    `Bisi's transfer: reversal ${transfer.reversal_reference_number}`,
  );
  story.transfers.set("bisi", transfer);
}

/** More than the account holds: `83`, typed, and nothing moves (the balances below). */
async function refuseInsufficientFunds(story: Story): Promise<void> {
  const emeka = await enquire(story, EMEKA, OTHER_BANK, "inter_bank");
  const body = transferBody(story, emeka, TOO_MUCH, "Too much", "inter");
  failed("funds_transfer_api (too much)", await send(story, body, randomUUID(), "daily_limit"), "83", 422);
}

/** The balances move by exactly what the answers said: amounts, and the fee and VAT reported. */
async function balancesAddUp(story: Story): Promise<void> {
  const emeka = story.transfer("emeka");
  const emekaCharges = kobo(emeka.fee) + kobo(emeka.vat);
  const expected = FUNDING - INTRA_AMOUNT - (EMEKA_AMOUNT + emekaCharges); // Bisi's: debited, then returned
  const page = ok(
    "fetch_customer_accounts",
    await story.integrationClient().POST("/api/v1/account/api/fetch_customer_accounts", { body: { limit: 100 } }),
  );
  for (const account of page.data) {
    check(/^[0-9]+\.[0-9]{9}$/.test(account.balance), `balance ${account.balance} has not nine decimals`);
  }
  const payroll = page.data.find((account) => account.account_number === story.payroll().account_number);
  story.expect(
    payroll?.balance === balance(expected),
    `current account balance ${payroll?.balance}, expected ${balance(expected)}`,
  );
  // The intra-bank beneficiary got exactly the amount.
  const chinedu = ok(
    "get_account (Chinedu Obi)",
    await story.dashboardClient().POST("/api/v1/account/web/get_account", { body: { account_number: CHINEDU } }),
  ).data;
  story.expect(
    chinedu.balance === balance(CHINEDU_BALANCE + INTRA_AMOUNT),
    `Chinedu Obi's balance ${chinedu.balance}, expected ${balance(CHINEDU_BALANCE + INTRA_AMOUNT)}`,
  );
  if (!story.settings.againstMock) story.notes.push(`current account after the transfers: ${balance(expected)}`);
}

/** fetch_transactions_api lists every movement of the current account, and nothing else. */
async function transactionsTellTheStory(story: Story): Promise<void> {
  const funding = story.funding;
  if (!funding) throw new StoryFailure("fund the current account first");
  const [intra, emeka, bisi] = [story.transfer("intra"), story.transfer("emeka"), story.transfer("bisi")];
  const charges = (transfer: Transfer) => kobo(transfer.fee) + kobo(transfer.vat);
  const row = (reference: string, type: string, category: string, status: string, amount: bigint) =>
    [reference, type, category, status, naira(amount)].join(" ");
  const expected = [
    row(funding.reference_number, "credit", "collection", "success", FUNDING),
    row(intra.reference_number, "debit", "transfer", "success", INTRA_AMOUNT),
    row(emeka.reference_number, "debit", "transfer", "success", EMEKA_AMOUNT),
    row(`FEE-${emeka.reference_number.slice(4)}`, "debit", "fee", "success", charges(emeka)),
    row(bisi.reference_number, "debit", "transfer", "reversed", BISI_AMOUNT),
    row(`FEE-${bisi.reference_number.slice(4)}`, "debit", "fee", "reversed", charges(bisi)),
    row(`REV-${bisi.reference_number.slice(4)}`, "credit", "reversal", "success", BISI_AMOUNT + charges(bisi)),
  ].sort();
  const page = ok(
    "fetch_transactions_api (the current account)",
    await story.integrationClient().POST("/api/v1/transaction/api/fetch_transactions", {
      body: { filters: { account_number: story.payroll().account_number }, limit: 100 },
    }),
  );
  const found = page.data
    .map((t) => row(t.reference_number, t.transaction_type, t.transaction_category, t.status, kobo(t.amount)))
    .sort();
  story.expect(
    found.join("\n") === expected.join("\n"),
    `fetch_transactions_api:\n    ${found.join("\n    ")}\n  expected\n    ${expected.join("\n    ")}`,
  );
  // And they add up to the balance: every credit, less every debit that was not refused.
  const net = page.data
    .filter((t) => t.status !== "failed")
    .reduce((sum, t) => sum + (t.transaction_type === "credit" ? kobo(t.amount) : -kobo(t.amount)), 0n);
  story.expect(
    net === FUNDING - INTRA_AMOUNT - EMEKA_AMOUNT - charges(emeka),
    `fetch_transactions_api: the movements net ${naira(net)}`,
  );
}

// ---- Webhooks: an endpoint in this process, signatures checked with node's crypto -----------

/** A Standard Webhooks signature check, as the spec's overview describes it: HMAC-SHA256 over
 * `<webhook-id>.<webhook-timestamp>.<raw body>` with the base64 key after `whsec_`, compared in
 * constant time with each `v1,` signature, and a timestamp within 5 minutes. */
function verifySignature(secret: string, id: string, timestamp: string, body: Buffer, signatures: string): boolean {
  if (!secret.startsWith("whsec_")) return false;
  const seconds = Number(timestamp);
  if (!Number.isInteger(seconds) || Math.abs(Date.now() / 1000 - seconds) > 300) return false;
  const expected = createHmac("sha256", Buffer.from(secret.slice("whsec_".length), "base64"))
    .update(`${id}.${timestamp}.`)
    .update(body)
    .digest();
  return signatures.split(" ").some((entry) => {
    const [version, signature] = entry.split(",", 2);
    if (version !== "v1" || signature === undefined) return false;
    const given = Buffer.from(signature, "base64");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

interface Delivery {
  id: string;
  timestamp: string;
  signature: string;
  body: Buffer;
}

/** The partner's endpoint: a node http server on a free loopback port; keeps every delivery. */
async function startReceiver(): Promise<{ url: string; next: (ms: number) => Promise<Delivery>; stop: () => void }> {
  const deliveries: Delivery[] = [];
  const waiting: Array<(delivery: Delivery) => void> = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const header = (name: string) => String(request.headers[name] ?? "");
      const delivery = {
        id: header("webhook-id"),
        timestamp: header("webhook-timestamp"),
        signature: header("webhook-signature"),
        body: Buffer.concat(chunks),
      };
      response.writeHead(204).end();
      const waiter = waiting.shift();
      if (waiter) waiter(delivery);
      else deliveries.push(delivery);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/kobo/webhooks`,
    next: (ms) =>
      new Promise((resolve, reject) => {
        const ready = deliveries.shift();
        if (ready) return resolve(ready);
        const timer = setTimeout(() => reject(new StoryFailure(`no delivery within ${ms / 1000} s`)), ms);
        waiting.push((delivery) => {
          clearTimeout(timer);
          resolve(delivery);
        });
      }),
    stop: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

async function receiveASignedWebhook(story: Story): Promise<void> {
  // The endpoint: an HTTP server on this machine (the sandbox delivers to http:// and loopback).
  const receiver = await startReceiver();
  try {
    const created = ok(
      "webhook_configuration",
      await story.dashboardClient().POST("/api/v1/customer/web/webhook_configuration", {
        body: { url: receiver.url },
      }),
    ).data;
    check(created.secret.startsWith("whsec_"), "webhook_configuration: no whsec_ secret");
    const queued = ok("test_webhook", await story.dashboardClient().POST("/api/v1/customer/web/test_webhook")).data;
    check(queued.event_type === "webhook.test", `test_webhook: ${queued.event_type}`);
    if (story.settings.againstMock) {
      story.expect(false, "test_webhook: a signed delivery (the mock delivers nothing)");
    } else {
      // Every delivery must verify; the test event is the one with its id (webhook-id).
      const deadline = performance.now() + 20_000;
      let delivery = await receiver.next(20_000);
      for (;;) {
        const { id, timestamp, signature, body } = delivery;
        check(verifySignature(created.secret, id, timestamp, body, signature), `${id}: the signature does not verify`);
        if (delivery.id === queued.id) break;
        delivery = await receiver.next(Math.max(1, deadline - performance.now()));
      }
      const { id, timestamp, signature, body } = delivery;
      // A body changed on the way, or another event's id, must not verify.
      const tampered = Buffer.from(body.toString("utf8").replace("webhook.test", "webhook.tesT"));
      check(!tampered.equals(body), "the tampered body is the same body");
      check(!verifySignature(created.secret, id, timestamp, tampered, signature), "a tampered body verifies");
      check(!verifySignature(created.secret, randomUUID(), timestamp, body, signature), "another webhook-id verifies");
      const event = JSON.parse(body.toString("utf8")) as Schemas["WebhookEvent"];
      check(event.id === queued.id && event.type === "webhook.test", `the delivered event: ${body.toString("utf8")}`);
    }
    // The delivery log says delivered (the dispatcher records the attempt after the 2xx).
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const log = ok(
        "fetch_webhook_events",
        await story.dashboardClient().POST("/api/v1/customer/web/fetch_webhook_events", {
          body: { filters: { event_type: "webhook.test" } },
        }),
      ).data;
      if (story.settings.againstMock) {
        story.expect(false, "fetch_webhook_events: the test event marked delivered");
        return;
      }
      const [latest] = log;
      if (latest?.status === "delivered") {
        check(latest.attempt_log[0]?.response_status === 204, `attempt: ${JSON.stringify(latest.attempt_log[0])}`);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new StoryFailure("fetch_webhook_events: the test event is not marked delivered");
  } finally {
    receiver.stop();
  }
}

// The story. Still to come, in both stories, as their issues land: funds_transfer with the
// Dashboard token and an OTP, fetch_pending_transfers / approve_transfer (the approving member's
// own OTP, since 2.0.0) under an approval policy.
// ---- Open enums ------------------------------------------------------------------------------

/** Whether a transaction's status is final; as the spec says, an unknown status is pending. */
function isFinal(status: Schemas["OpenTransactionStatus"]): boolean {
  switch (status) {
    case "success":
    case "failed":
    case "reversed":
      return true;
    default:
      return false;
  }
}

/**
 * A later minor release may add a value to an open enum (`x-extensible-enum`): the types accept
 * a value the spec does not know (this would not compile against a closed union), and a recorded
 * page with `status: "on_hold"` and `channel: "rtgs"` reads through them. No call.
 */
async function keepUnknownValues(_story: Story): Promise<void> {
  const later: IntegrationTransaction["status"] = "on_hold";
  const recorded = new URL("../../recorded/fetch_transactions_api-unknown-values.json", import.meta.url);
  const page = JSON.parse(readFileSync(recorded, "utf8")) as Schemas["FetchTransactionsApiResponse"];
  const transaction = page.data[0];
  check(transaction !== undefined, "the recorded page is empty");
  if (transaction === undefined) return;
  check(transaction.status === later, `status ${transaction.status}`);
  check(transaction.channel === "rtgs", `channel ${transaction.channel}`);
  const category: Schemas["TransactionCategory"] | string = transaction.transaction_category;
  check(category === "collection", `transaction_category ${category}`);
  check(!isFinal(transaction.status), "an unknown status is not final");
}

/** Emeka Nwosu saved (saving him again is the same beneficiary), found, paid by his id with a key
 * (the retry is the same transfer), then forgotten. */
async function payASavedBeneficiary(story: Story): Promise<void> {
  const client = story.integrationClient();
  const body = { account_number: EMEKA, bank_code: OTHER_BANK, account_name: "Emeka Nwosu", nickname: "Driver" };
  const save = () => client.POST("/api/v1/transaction/transfer/api/create_beneficiary", { body });
  const saved = ok("create_beneficiary_api", await save()).data;
  const again = ok("create_beneficiary_api (again)", await save()).data;
  story.expect(again.beneficiary_id === saved.beneficiary_id, `saved twice: ${saved.beneficiary_id}, ${again.beneficiary_id}`);
  story.expect(saved.account_name === "Emeka Nwosu", `create_beneficiary_api: ${saved.account_name}`);
  const found = ok(
    "fetch_beneficiaries_api",
    await client.POST("/api/v1/transaction/transfer/api/fetch_beneficiaries", { body: { search: "driver" } }),
  ).data;
  story.expect(
    found.length === 1 && found[0]?.beneficiary_id === saved.beneficiary_id,
    `fetch_beneficiaries_api: ${JSON.stringify(found)}`,
  );
  const key = randomUUID();
  const reference = `PAY-${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const pay = () =>
    client.POST("/api/v1/transaction/transfer/api/pay_beneficiary", {
      body: {
        beneficiary_id: saved.beneficiary_id,
        source_account_number: story.payroll().account_number,
        amount: "1500.00",
        narration: "Driver - December",
        reference,
      },
      params: { header: { "Idempotency-Key": key } },
    });
  const first = ok("pay_beneficiary_api", await pay()).data;
  const retry = ok("pay_beneficiary_api (the same key)", await pay()).data;
  story.expect(retry.reference_number === first.reference_number, `retried: ${first.reference_number}, ${retry.reference_number}`);
  story.expect(first.beneficiary_account_number === EMEKA, `pay_beneficiary_api: ${first.beneficiary_account_number}`);
  story.expect(kobo(first.amount) === kobo("1500.00"), `pay_beneficiary_api: amount ${first.amount}`);
  kobo(first.fee);
  const gone = ok(
    "delete_beneficiary_api",
    await client.POST("/api/v1/transaction/transfer/api/delete_beneficiary", { body: { beneficiary_id: saved.beneficiary_id } }),
  ).data;
  story.expect(gone.beneficiary_id === saved.beneficiary_id, `delete_beneficiary_api: ${gone.beneficiary_id}`);
}

/** A bulk transfer of three payments, one to a holder named otherwise (left out), sent with a key
 * (the retry is the same batch), judged in the background, then its items read by verdict: nothing
 * moves until a batch is authorised. */
async function sendASmallPayroll(story: Story): Promise<void> {
  const client = story.integrationClient();
  const key = randomUUID();
  const reference = `PAYROLL-${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const send = () =>
    client.POST("/api/v1/transaction/transfer/api/create_bulk_transfer", {
      body: {
        source_account_number: story.payroll().account_number,
        on_invalid: "skip_invalid",
        reference,
        narration: "December payments",
        items: [
          { account_number: EMEKA, bank_code: OTHER_BANK, account_name: "Emeka Nwosu", amount: "1500" },
          { account_number: CHINEDU, bank_code: KOBO_BANK, account_name: "Adaeze Foods Ltd - Chinedu Obi", amount: "2500.50" },
          { account_number: BISI, bank_code: OTHER_BANK, account_name: "Ngozi Eze", amount: "1000" },
        ],
      },
      params: { header: { "Idempotency-Key": key } },
    });
  const sent = ok("create_bulk_transfer_api", await send()).data;
  const again = ok("create_bulk_transfer_api (the same key)", await send()).data;
  story.expect(again.bulk_transfer_id === sent.bulk_transfer_id, `sent twice: ${sent.bulk_transfer_id}, ${again.bulk_transfer_id}`);
  story.expect(sent.status === "validating", `create_bulk_transfer_api: ${sent.status}`);
  const deadline = performance.now() + 30_000;
  let batch = sent;
  for (;;) {
    batch = ok(
      "get_bulk_transfer_api",
      await client.POST("/api/v1/transaction/transfer/api/get_bulk_transfer", {
        body: { bulk_transfer_id: sent.bulk_transfer_id },
      }),
    ).data;
    if (batch.status !== "validating" || story.settings.againstMock || performance.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  story.expect(batch.status === "validated", `get_bulk_transfer_api: ${batch.status} after 30 s`);
  const { items, valid, invalid } = batch.counts;
  story.expect(items === 3 && valid === 2 && invalid === 1, `get_bulk_transfer_api: ${JSON.stringify(batch.counts)}`);
  story.expect(kobo(batch.totals.amount) === kobo("4000.50"), `get_bulk_transfer_api: ${batch.totals.amount}`);
  kobo(batch.totals.total);
  const refused = ok(
    "fetch_bulk_transfer_items_api",
    await client.POST("/api/v1/transaction/transfer/api/fetch_bulk_transfer_items", {
      body: { bulk_transfer_id: sent.bulk_transfer_id, validation: "invalid" },
    }),
  ).data;
  check(refused.length === 1, `fetch_bulk_transfer_items_api: ${refused.length} invalid items`);
  check(refused[0]?.refusal_code === "49", `fetch_bulk_transfer_items_api: refusal ${refused[0]?.refusal_code}`);
  story.expect(refused[0]?.confirmed_name === "Bisi Alade", `fetch_bulk_transfer_items_api: ${refused[0]?.confirmed_name}`);
  // Nothing has moved yet: the partner authorises exactly what it read, the total and the count.
  check(refused[0]?.outcome === "unpaid", `before authorising: ${refused[0]?.outcome}`);
  const authorised = await authoriseThePayroll(story, batch);
  // Paid in the background; Emeka Nwosu's item settles over NIP within seconds.
  const paidBy = performance.now() + 60_000;
  let done = authorised;
  for (;;) {
    done = ok(
      "get_bulk_transfer_api",
      await client.POST("/api/v1/transaction/transfer/api/get_bulk_transfer", {
        body: { bulk_transfer_id: sent.bulk_transfer_id },
      }),
    ).data;
    const paying = done.status === "pending_approval" || done.status === "executing";
    if (!paying || story.settings.againstMock || performance.now() > paidBy) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  story.expect(done.status === "completed", `get_bulk_transfer_api: ${done.status} 60 s after authorising`);
  const { succeeded, processing, failed, reversed } = done.counts;
  story.expect(
    succeeded === 2 && processing === 0 && failed === 0 && reversed === 0,
    `get_bulk_transfer_api: counts ${JSON.stringify(done.counts)}`,
  );
  story.expect(done.totals.reserved === authorised.totals.reserved, `get_bulk_transfer_api: reserved ${done.totals.reserved}`);
  story.expect(
    done.totals.reserved === done.totals.total,
    `get_bulk_transfer_api: reserved ${done.totals.reserved} of ${done.totals.total}`,
  );
  story.expect(done.totals.released === "0.00", `get_bulk_transfer_api: released ${done.totals.released}`);
  story.expect(done.completed_at !== null, "get_bulk_transfer_api: completed without completed_at");
  // Every item, two a page: the two valid ones paid, each with its transfer's reference number;
  // the one left out never paid.
  const all = await allItems(story, sent.bulk_transfer_id);
  story.expect(all.length === 3, `fetch_bulk_transfer_items_api: ${all.length} items over its pages`);
  for (const item of all) {
    kobo(item.amount);
    const which = `item ${item.index} (${item.account_number})`;
    if (item.validation === "valid") {
      story.expect(item.outcome === "success", `${which}: ${item.outcome}`);
      story.expect(Boolean(item.reference_number), `${which}: no reference_number`);
      story.expect(item.failure_code === null, `${which}: failure_code ${item.failure_code}`);
    } else {
      story.expect(item.outcome === "unpaid", `${which}: ${item.outcome}`);
      story.expect(item.reference_number === null, `${which}: reference_number ${item.reference_number}`);
    }
  }
  const paid = all.filter((item) => item.outcome === "success").map((item) => item.account_number);
  story.expect(
    JSON.stringify(paid.sort()) === JSON.stringify([EMEKA, CHINEDU].sort()),
    `paid: ${JSON.stringify(all.map((item) => [item.account_number, item.outcome]))}`,
  );
}

/** authorize_bulk_transfer_api with the batch's own figures and a fresh key, then the same call
 * with the same key (a dropped answer): the same answer again, and nothing reserved twice. */
async function authoriseThePayroll(story: Story, batch: Schemas["BulkTransfer"]): Promise<Schemas["BulkTransfer"]> {
  const client = story.integrationClient();
  const key = randomUUID();
  const authorise = () =>
    client.POST("/api/v1/transaction/transfer/api/authorize_bulk_transfer", {
      body: { bulk_transfer_id: batch.bulk_transfer_id, total: batch.totals.total, item_count: batch.counts.valid },
      params: { header: { "Idempotency-Key": key } },
    });
  const authorised = ok("authorize_bulk_transfer_api", await authorise()).data;
  const again = await authorise();
  const replayed = ok("authorize_bulk_transfer_api (the same key)", again).data;
  check(
    JSON.stringify(replayed) === JSON.stringify(authorised),
    `authorize_bulk_transfer_api: the retry answered ${JSON.stringify(replayed)}`,
  );
  story.expect(
    again.response.headers.get("idempotent-replayed") === "true",
    `authorize_bulk_transfer_api: Idempotent-Replayed ${again.response.headers.get("idempotent-replayed")}`,
  );
  check(authorised.bulk_transfer_id === batch.bulk_transfer_id, `authorize_bulk_transfer_api: ${authorised.bulk_transfer_id}`);
  // No approval policy in the demo: its items are being paid (one would hold it, pending_approval).
  story.expect(authorised.status === "executing", `authorize_bulk_transfer_api: ${authorised.status}`);
  const { total, reserved, released } = authorised.totals;
  check(kobo(reserved) === kobo(total), `authorize_bulk_transfer_api: reserved ${reserved} of ${total}`);
  story.expect(total === batch.totals.total, `authorize_bulk_transfer_api: total ${total}`);
  check(released === "0.00", `authorize_bulk_transfer_api: released ${released}`);
  story.expect(authorised.authorised_by === "integration", `authorize_bulk_transfer_api: authorised_by ${authorised.authorised_by}`);
  return authorised;
}

/** Every item of a batch, a page of two at a time (numbered paging), however many pages. */
async function allItems(story: Story, bulkTransferId: string): Promise<Schemas["BulkTransferItem"][]> {
  const items: Schemas["BulkTransferItem"][] = [];
  for (let page = 1; page <= 10; page += 1) {
    const reply = ok(
      `fetch_bulk_transfer_items_api (page ${page})`,
      await story.integrationClient().POST("/api/v1/transaction/transfer/api/fetch_bulk_transfer_items", {
        body: { bulk_transfer_id: bulkTransferId, page, page_size: 2 },
      }),
    );
    story.expect(reply.pagination.page_size === 2, `fetch_bulk_transfer_items_api: page_size ${reply.pagination.page_size}`);
    story.expect(reply.pagination.page === page, `fetch_bulk_transfer_items_api: page ${reply.pagination.page}`);
    items.push(...reply.data);
    if (!reply.pagination.has_more || story.settings.againstMock) return items;
  }
  throw new StoryFailure("fetch_bulk_transfer_items_api: more than 10 pages of two items");
}

const STEPS: ReadonlyArray<readonly [string, (story: Story) => Promise<void>]> = [
  ["a recorded page with values of open enums this spec does not know", keepUnknownValues],
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
  ["simulate_inbound_transfer (100000.00 into the current account)", fundTheCurrentAccount],
  ["fetch_banks", listTheBanks],
  ["name_enquiry (Chinedu Obi at Kobo, Emeka Nwosu and Bisi Alade at another bank)", lookUpBeneficiaries],
  ["name_enquiry (an unknown account): error 06, typed", refuseAnUnknownBeneficiary],
  ["funds_transfer_api intra-bank (5000.00 to Chinedu Obi): settled at once", payWithinKobo],
  ["funds_transfer_api inter-bank (25000.00 to Emeka Nwosu), then the same Idempotency-Key again", payEmekaAndRetry],
  ["funds_transfer_api (the same Idempotency-Key, another body): error 27, typed", refuseAReusedKey],
  ["get_transfer_api until final: Emeka Nwosu's transfer succeeded", emekaIsPaid],
  ["funds_transfer_api inter-bank (12000.00 to Bisi Alade): failed and reversed", bisiIsReversed],
  ["funds_transfer_api (1000000.00, more than the account holds): error 83, typed", refuseInsufficientFunds],
  ["fetch_customer_accounts, get_account: balances moved by exactly the amounts, fees and VAT", balancesAddUp],
  ["fetch_transactions_api: every movement of the current account, exactly", transactionsTellTheStory],
  [
    "webhook_configuration, test_webhook: a signed delivery verified with node's crypto, a tampered one refused",
    receiveASignedWebhook,
  ],
  [
    "create_beneficiary_api (twice: one beneficiary), fetch_beneficiaries_api, pay_beneficiary_api (twice with one key), " +
      "delete_beneficiary_api",
    payASavedBeneficiary,
  ],
  [
    "create_bulk_transfer_api (three payments, twice with one key), get_bulk_transfer_api until validated, " +
      "fetch_bulk_transfer_items_api (the invalid one: 49), authorize_bulk_transfer_api (twice with one key), " +
      "get_bulk_transfer_api until completed, fetch_bulk_transfer_items_api page by page (two paid, one unpaid)",
    sendASmallPayroll,
  ],
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
    console.error(`typescript story: set ${missing.join(", ")} (see docs/partners.md, Clients in other languages)`);
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
    againstMock: process.env["STORY_AGAINST_MOCK"] === "1",
  });
  const label = story.settings.againstMock ? "typescript (kobo mock)" : "typescript";
  let passed = 0;
  for (const [name, step] of STEPS) {
    const started = performance.now();
    try {
      await step(story);
    } catch (failure) {
      if (!(failure instanceof StoryFailure)) throw failure;
      console.log(`  FAIL ${name}: ${failure.message}`);
      console.log(`${label}: ${passed} passed, 1 failed`);
      return 1;
    }
    passed += 1;
    console.log(`  ok   ${name} (${Math.round(performance.now() - started)} ms)`);
  }
  for (const note of story.notes) console.log(`  note ${note}`);
  if (story.settings.againstMock) {
    console.log(
      `  note every call made and typed; ${story.relaxed.length} assertions about a live bank's state ` +
        "(balances, names, transfer outcomes, deliveries) not enforced against the mock",
    );
  }
  console.log(`${label}: ${passed} passed, 0 failed`);
  return 0;
}

process.exitCode = await main();
