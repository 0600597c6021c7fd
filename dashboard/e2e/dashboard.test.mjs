// @ts-check
// The Dashboard as a person uses it, in a real browser against a real `kobo demo`: log in as
// the demo's owner, open a customer account (without the integration's credentials), pay within
// Kobo and to another bank with the OTP, turn on approvals, invite a checker who accepts from the
// email's link and approves a held transfer with their own OTP, find the transfer in the
// transactions, and register, pause, resume and change the webhook endpoint.
//
// Run by .ci/dashboard, once per store. What it reads from the environment:
//   KOBO_BIN           the kobo binary (required)
//   KOBO_E2E_DATABASE  a PostgreSQL URL (a fresh database); without it, SQLite in a temporary folder
//   KOBO_E2E_STORE     the store's name, for the screenshots' folder (sqlite, postgres)
//   SCREENSHOTS        where the screenshots go (default ../target/dashboard-screenshots)
//   CHROMIUM           the browser (default /usr/bin/chromium: Debian's, never a download)
import { spawn, execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";

const kobo = process.env.KOBO_BIN ?? "";
const database = process.env.KOBO_E2E_DATABASE ?? "";
const store = process.env.KOBO_E2E_STORE ?? (database ? "postgres" : "sqlite");
const screenshots = join(process.env.SCREENSHOTS ?? new URL("../../target/dashboard-screenshots", import.meta.url).pathname, store);
const executablePath = process.env.CHROMIUM ?? "/usr/bin/chromium";
const TIMEOUT = 20_000;

/** @typedef {import("playwright-core").Page} Page */
/** @typedef {import("playwright-core").Locator} Locator */

/** The demo's welcome text, read as .ci/clients reads it. */
const demo = { dashboard: "", email: "", password: "", mainAccount: "" };
const dataDir = mkdtempSync(join(tmpdir(), "kobo-dashboard-e2e-"));
const storeFlags = database ? ["--database-url", database, "--data-dir", dataDir] : ["--data-dir", dataDir];
/** @type {import("node:child_process").ChildProcess | undefined} */
let server;
let serverLog = "";
/** @type {import("playwright-core").Browser} */
let browser;

/** @param {string} text @param {string} name */
function field(text, name) {
  const match = new RegExp(`^  ${name}:\\s+(.*)$`, "m").exec(text);
  return match?.[1]?.trim() ?? "";
}

async function startKobo() {
  assert.ok(kobo, "KOBO_BIN names the kobo binary");
  /** @type {Record<string, string | undefined>} */
  const env = { ...process.env, RUST_LOG: "info,sqlx=warn" };
  for (const name of Object.keys(env)) if (name.startsWith("KOBO_")) delete env[name];
  server = spawn(kobo, ["demo", "--listen", "127.0.0.1:0", ...storeFlags], { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  server.stderr?.on("data", (chunk) => (serverLog += chunk));
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kobo demo did not start:\n${out}\n${serverLog}`)), 60_000);
    server?.stdout?.on("data", (chunk) => {
      out += chunk;
      if (/^API reference: /m.test(out)) {
        clearTimeout(timer);
        resolve(undefined);
      }
    });
    server?.on("exit", (code) => reject(new Error(`kobo demo exited (${code}):\n${out}\n${serverLog}`)));
  });
  demo.dashboard = /^Dashboard: open (\S+) in a browser/m.exec(out)?.[1] ?? "";
  demo.email = field(out, "email");
  demo.password = field(out, "password");
  demo.mainAccount = field(out, "main account");
  assert.match(demo.dashboard, /^http:\/\/127\.0\.0\.1:\d+\/dashboard\/$/, `the demo prints the Dashboard's address:\n${out}`);
}

/** The newest email to `recipient` in the outbox (`kobo outbox --json`: no SMTP in the demo). */
/** @param {string} recipient */
function lastEmailTo(recipient) {
  const json = execFileSync(kobo, ["outbox", "--json", "--limit", "50", ...storeFlags], { encoding: "utf8" });
  const mail = /** @type {{recipient: string, body: string}[]} */ (JSON.parse(json)).find((m) => m.recipient === recipient);
  assert.ok(mail, `an email to ${recipient} is in the outbox`);
  return mail.body;
}

/** @param {Page} page @param {string} name */
async function shot(page, name) {
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });
}

/** A fresh tab of a fresh browser profile (its own sessionStorage): one person. */
async function person() {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT);
  page.on("pageerror", (error) => assert.fail(`the page threw: ${error.message}`));
  page.on("console", (message) => {
    // A refused call (401, 404, ...) is logged by the browser as a failed load: those are expected.
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) assert.fail(`the console said: ${message.text()}`);
  });
  return page;
}

/** Reads the sandbox's code from the OTP step and types it, as a person would. */
/** @param {Page} page */
async function typeOtp(page) {
  const code = (await page.locator(".sandbox-otp").textContent())?.trim() ?? "";
  assert.match(code, /^\d{6}$/, "the sandbox shows the OTP");
  await page.getByLabel("One-time code").fill(code);
}

/** Pays from the Pay page; returns the transfer's card once its status is final. */
/**
 * @param {Page} page
 * @param {{from: string, bank: string, account: string, amount: string, narration: string, expectName: string, expectFee: string, expectVat: string, formShot?: string}} payment
 */
async function pay(page, { from, bank, account, amount, narration, expectName, expectFee, expectVat, formShot }) {
  await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Pay" }).click();
  await page.getByLabel("From account").selectOption(from);
  await page.getByLabel("Bank").selectOption(bank);
  await page.getByLabel("Beneficiary account number").fill(account);
  await page.getByLabel("Amount (NGN)").fill(amount);
  await page.getByLabel("Narration").fill(narration);
  if (formShot) await shot(page, formShot);
  await page.getByRole("button", { name: "Check the beneficiary" }).click();
  await assertText(page.getByTestId("confirmed-name"), expectName);
  await assertText(page.getByTestId("review-fee"), expectFee);
  await assertText(page.getByTestId("review-vat"), expectVat);
  await page.getByRole("button", { name: "Confirm", exact: true }).click();
  await typeOtp(page);
  return page;
}

/** Waits until `locator` shows `expected` (the page may still be loading). @param {Locator} locator @param {string | RegExp} expected */
async function assertText(locator, expected) {
  await eventually(async () => {
    const text = (await locator.first().textContent()) ?? "";
    if (expected instanceof RegExp) assert.match(text, expected);
    else assert.ok(text.includes(expected), `"${text}" includes "${expected}"`);
  });
}

/** Runs `check` until it passes, for up to TIMEOUT. @param {() => Promise<void>} check */
async function eventually(check) {
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Waits until the followed transfer's status is `status`. */
/** @param {Page} page @param {string} status */
async function transferReaches(page, status) {
  await page.locator(`.transfer[data-status="${status}"]`).waitFor({ timeout: 60_000 });
  return (await page.getByTestId("transfer-reference").first().textContent())?.trim() ?? "";
}

before(async () => {
  await startKobo();
  browser = await chromium.launch({
    executablePath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"],
  });
});

after(async () => {
  await browser?.close();
  if (server && server.exitCode === null) {
    server.kill("SIGTERM");
    await new Promise((resolve) => server?.on("exit", resolve));
  }
  rmSync(dataDir, { recursive: true, force: true });
  assert.doesNotMatch(serverLog, /\bERROR\b/, `kobo logged no error:\n${serverLog}`);
});

test(`the Dashboard on ${store}: log in, open a customer account, pay, approve, find the transfer`, async (t) => {
  const owner = await person();
  const checkerEmail = `checker.${Date.now()}@adaezefoods.ng`;
  const checkerPassword = "Egusi-Soup-2026";
  let customerAccount = "";
  let source = "";

  await t.test("a wrong password shows the catalog's message, then the owner logs in", async () => {
    await owner.goto(demo.dashboard);
    await owner.getByLabel("Email").fill(demo.email);
    await owner.getByLabel("Password").fill("not-the-password");
    await owner.getByRole("button", { name: "Log in" }).click();
    await assertText(owner.getByRole("alert"), "(code 41");
    await owner.getByLabel("Password").fill(demo.password);
    await owner.getByRole("button", { name: "Log in" }).click();
    await owner.getByRole("heading", { name: "Accounts" }).waitFor();
    await owner.locator("tr[data-account]").first().waitFor();
    await shot(owner, "01-accounts");
    // Pay from the demo's account with the most money: Chinedu Obi's, funded by the seed.
    const options = await owner.locator("tr[data-account]").evaluateAll((rows) =>
      rows.map((row) => ({ account: row.getAttribute("data-account") ?? "", balance: Number((row.querySelectorAll("td")[3]?.textContent ?? "0").replace(/[^\d.]/g, "")) })),
    );
    options.sort((a, b) => b.balance - a.balance);
    source = options[0]?.account ?? "";
    assert.ok((options[0]?.balance ?? 0) > 10_000, `an account has money to send: ${JSON.stringify(options)}`);
  });

  await t.test("open a customer account with a sandbox BVN, no integration credentials asked", async () => {
    await owner.getByRole("button", { name: "Open a customer account" }).click();
    await owner.getByLabel("BVN").fill("22287654321");
    await owner.getByLabel("Email").last().fill("amaka.nwosu@example.ng");
    assert.equal(await owner.locator("input[name=client_id], input[name=client_secret]").count(), 0, "no credentials on the form");
    await owner.getByRole("button", { name: "Verify and open" }).click();
    customerAccount = ((await owner.getByTestId("opened-account").textContent()) ?? "").trim();
    assert.match(customerAccount, /^\d{10}$/);
    await owner.locator(`tr[data-account="${customerAccount}"]`).waitFor();
  });

  await t.test("pay within Kobo: the confirmed name, no fee, the OTP, success at once", async () => {
    await pay(owner, { from: source, bank: "090823", account: customerAccount, amount: "1500", narration: "Dashboard intra", expectName: "Amaka Nwosu", expectFee: "₦0.00", expectVat: "₦0.00" });
    await owner.getByRole("button", { name: /^Send ₦/ }).click();
    await transferReaches(owner, "success");
  });

  await t.test("pay another bank: fee and VAT shown before confirming, followed until success", async () => {
    await pay(owner, { from: source, bank: "000013", account: "0123456788", amount: "2500.50", narration: "Dashboard NIP", expectName: "Emeka Nwosu", expectFee: "₦10.00", expectVat: "₦0.75", formShot: "02-pay-form" });
    await assertText(owner.getByTestId("review-total"), "₦2,511.25");
    await shot(owner, "03-pay-review");
    await owner.getByRole("button", { name: /^Send ₦/ }).click();
    await transferReaches(owner, "success");
    await shot(owner, "04-transfer-followed");
  });

  await t.test("turn on approvals and invite a checker", async () => {
    await owner.getByRole("link", { name: "Approvals" }).click();
    await owner.getByLabel("Hold transfers from (NGN)").fill("1000");
    await owner.getByRole("button", { name: "Turn on approvals" }).click();
    await assertText(owner.getByTestId("policy"), "₦1,000.00 or more");
    await owner.getByRole("link", { name: "Team" }).click();
    await owner.getByRole("button", { name: "Invite a member" }).click();
    await owner.locator("form.card").getByLabel("Email").fill(checkerEmail);
    await owner.getByLabel("First name").fill("Bola");
    await owner.getByLabel("Last name").fill("Checker");
    await owner.locator("form.card select[name=role_id]").selectOption({ label: "Checker" });
    await owner.getByRole("button", { name: "Send the invitation" }).click();
    await owner.locator(`tr[data-email="${checkerEmail}"]`).waitFor();
    await shot(owner, "05-team");
  });

  let held = "";
  await t.test("a transfer above the policy's amount is held; its maker cannot approve it", async () => {
    await pay(owner, { from: source, bank: "090823", account: customerAccount, amount: "5000", narration: "Dashboard approval", expectName: "Amaka Nwosu", expectFee: "₦0.00", expectVat: "₦0.00" });
    await owner.getByRole("button", { name: /^Send ₦/ }).click();
    held = await transferReaches(owner, "pending_approval");
    await owner.getByRole("link", { name: "Approvals" }).click();
    const row = owner.locator(`tr[data-reference="${held}"]`);
    await row.waitFor();
    assert.equal(await row.getByRole("button", { name: "Approve" }).isDisabled(), true, "the maker's Approve is disabled");
  });

  await t.test("the checker accepts the invitation from its link and approves with their own OTP", async () => {
    const link = /(http:\/\/\S+\/dashboard\/accept-invite\?token=\S+)/.exec(lastEmailTo(checkerEmail))?.[1];
    assert.ok(link, "the invitation links to the Dashboard");
    const checker = await person();
    await checker.goto(link);
    await checker.getByLabel("Password", { exact: true }).fill(checkerPassword);
    await checker.getByLabel("Confirm password").fill(checkerPassword);
    await checker.getByRole("button", { name: "Accept the invitation" }).click();
    await checker.getByRole("button", { name: "Log in" }).click();
    await checker.getByLabel("Email").fill(checkerEmail);
    await checker.getByLabel("Password", { exact: true }).fill(checkerPassword);
    await checker.getByRole("button", { name: "Log in" }).click();
    await checker.getByRole("button", { name: "Log out" }).waitFor();
    const sections = checker.getByRole("navigation", { name: "Sections" });
    assert.equal(await sections.getByRole("link", { name: "Pay" }).count(), 0, "a Checker has no Pay");
    assert.equal(await sections.getByRole("link", { name: "Team" }).count(), 0, "a Checker has no Team");
    await sections.getByRole("link", { name: "Approvals" }).click();
    const row = checker.locator(`tr[data-reference="${held}"]`);
    await row.getByRole("button", { name: "Approve" }).click();
    await typeOtp(checker);
    await shot(checker, "06-approve");
    await checker.getByRole("button", { name: "Approve and send" }).click();
    await transferReaches(checker, "success");
    // A changed password ends every session of the member, this one too: back to the login.
    await checker.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Settings" }).click();
    await checker.getByLabel("Current password").fill(checkerPassword);
    await checker.locator("input[name=new_password]").fill(`${checkerPassword}-2`);
    await checker.getByLabel("Confirm the new password").fill(`${checkerPassword}-2`);
    await checker.getByRole("button", { name: "Change the password" }).click();
    await assertText(checker.getByRole("status"), "Your password is changed");
    await checker.context().close();
  });

  await t.test("the owner finds the approved transfer in the transactions", async () => {
    await owner.getByRole("link", { name: "Transactions" }).click();
    await owner.getByLabel("Search").fill("Dashboard approval");
    await owner.getByRole("button", { name: "Filter" }).click();
    const rows = owner.locator("table.list tbody tr");
    await eventually(async () => assert.equal(await rows.count(), 2, "the debit and the credit of the approved transfer"));
    for (const row of await rows.all()) await assertText(row, "Dashboard approval");
    await shot(owner, "07-transactions");
    await owner.getByRole("link", { name: "Transfers" }).click();
    await owner.locator(`tr[data-reference="${held}"]`).waitFor();
  });

  await t.test("team: the checker's role changed, then the checker deactivated", async () => {
    await owner.getByRole("link", { name: "Team" }).click();
    const row = owner.locator(`tr[data-email="${checkerEmail}"]`);
    await row.getByRole("combobox").selectOption({ label: "Viewer" });
    await assertText(owner.getByRole("status"), `${checkerEmail} is now Viewer.`);
    await row.getByRole("button", { name: "Deactivate" }).click();
    await assertText(owner.getByRole("status"), `${checkerEmail} is deactivated`);
    await row.getByRole("button", { name: "Reactivate" }).waitFor();
  });

  await t.test("webhooks: register (the secret shown once), a test event in the delivery log", async () => {
    await owner.getByRole("link", { name: "Webhooks" }).click();
    await owner.getByLabel("URL").fill("http://127.0.0.1:9/kobo-webhooks");
    await owner.getByRole("button", { name: "Register" }).click();
    await assertText(owner.locator(".secret-value"), /^whsec_/);
    await owner.getByRole("button", { name: "I have stored it" }).click();
    assert.equal(await owner.locator(".secret-value").count(), 0, "the secret is gone once stored");
    await owner.getByRole("button", { name: "Send a test event" }).click();
    await owner.getByRole("button", { name: "Refresh" }).click();
    await owner.locator('tr[data-event="webhook.test"]').waitFor();
    await shot(owner, "08-webhooks");
  });

  await t.test("webhooks: paused (no test event meanwhile), resumed, then its events and addresses changed", async () => {
    const endpoint = owner.getByTestId("endpoint");
    await owner.getByRole("button", { name: "Pause deliveries" }).click();
    await assertText(owner.getByTestId("endpoint-status"), "paused");
    assert.equal(await owner.getByRole("button", { name: "Send a test event" }).isDisabled(), true, "no test event while paused");
    await owner.getByRole("button", { name: "Resume deliveries" }).click();
    await assertText(owner.getByTestId("endpoint-status"), "active");
    assert.equal(await owner.getByRole("button", { name: "Send a test event" }).isEnabled(), true, "test events again once resumed");
    await owner.getByRole("button", { name: "Change the endpoint" }).click();
    await endpoint.getByLabel("URL").fill("http://127.0.0.1:9/kobo-webhooks/v2");
    await endpoint.getByLabel("Allowed addresses").fill("127.0.0.1");
    await endpoint.getByLabel("transfer.success", { exact: true }).check();
    await endpoint.getByLabel("webhook.test", { exact: true }).check();
    await owner.getByRole("button", { name: "Save the endpoint" }).click();
    await assertText(endpoint.getByRole("heading", { level: 2 }), "http://127.0.0.1:9/kobo-webhooks/v2");
    await assertText(owner.getByTestId("endpoint-events"), "transfer.success, webhook.test");
    await assertText(owner.getByTestId("endpoint-addresses"), "127.0.0.1");
    assert.equal(await owner.getByRole("alert").count(), 0, "no refusal");
    await shot(owner, "09-webhook-changed");
  });

  await t.test("the other pages open without a refusal, then the owner logs out", async () => {
    for (const [link, heading] of [["Settlements", "Settlements"], ["Roles", "Roles"], ["Audit log", "Audit log"], ["Activity log", "Activity log"], ["Settings", "Settings"]]) {
      await owner.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: link, exact: true }).click();
      await owner.getByRole("heading", { name: heading, exact: true }).waitFor();
      await owner.waitForLoadState("networkidle");
      assert.equal(await owner.getByRole("alert").count(), 0, `${link}: no refusal`);
    }
    await owner.getByRole("button", { name: "Log out" }).click();
    await owner.getByRole("button", { name: "Log in" }).waitFor();
  });
});
