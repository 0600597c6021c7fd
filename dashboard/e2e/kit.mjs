// @ts-check
// What the browser test stands on: a real `kobo demo` (SQLite in a temporary folder, or a fresh
// PostgreSQL database) whose business has a real business's scale (`--demo-customer-accounts`:
// 1,200 customer accounts, opened in bulk at start, not by 1,200 API calls), Debian's Chromium
// driven by playwright-core (no browser download), one browser context per person, at the width
// of a laptop (1280 px) or of a phone (390 px), and the emails Kobo wrote (`kobo outbox`).
//
// What it reads from the environment:
//   KOBO_BIN           the kobo binary (required)
//   KOBO_E2E_DATABASE  a PostgreSQL URL (a fresh database); without it, SQLite in a temporary folder
//   KOBO_E2E_STORE     the store's name, for the screenshots' folder (sqlite, postgres)
//   SCREENSHOTS        where the screenshots go (default ../target/dashboard-screenshots)
//   CHROMIUM           the browser (default /usr/bin/chromium: Debian's, never a download)
import { spawn, execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";

export const kobo = process.env.KOBO_BIN ?? "";
const database = process.env.KOBO_E2E_DATABASE ?? "";
export const store = process.env.KOBO_E2E_STORE ?? (database ? "postgres" : "sqlite");
const screenshots = join(process.env.SCREENSHOTS ?? new URL("../../target/dashboard-screenshots", import.meta.url).pathname, store);
const executablePath = process.env.CHROMIUM ?? "/usr/bin/chromium";
export const TIMEOUT = 20_000;
/** The demo business's customer accounts: over a thousand, as a business that gives each customer one. */
export const CUSTOMER_ACCOUNTS = 1200;

/** @typedef {import("playwright-core").Page} Page */
/** @typedef {import("playwright-core").Locator} Locator */
/** @typedef {import("playwright-core").Browser} Browser */

/** The demo's welcome text, read as .ci/clients reads it. */
export const demo = { dashboard: "", base: "", email: "", password: "", mainAccount: "", clientId: "", clientSecret: "" };
const dataDir = mkdtempSync(join(tmpdir(), "kobo-dashboard-e2e-"));
const storeFlags = database ? ["--database-url", database, "--data-dir", dataDir] : ["--data-dir", dataDir];
/** @type {import("node:child_process").ChildProcess | undefined} */
let server;
export const logs = { server: "", seeded: 0 };
/** @type {Browser} */
let browser;

/** @param {string} text @param {string} name */
function field(text, name) {
  const match = new RegExp(`^  ${name}:\\s+(.*)$`, "m").exec(text);
  return match?.[1]?.trim() ?? "";
}

export async function start() {
  assert.ok(kobo, "KOBO_BIN names the kobo binary");
  /** @type {Record<string, string | undefined>} */
  const env = { ...process.env, RUST_LOG: "info,sqlx=warn" };
  for (const name of Object.keys(env)) if (name.startsWith("KOBO_")) delete env[name];
  const started = Date.now();
  server = spawn(kobo, ["demo", "--listen", "127.0.0.1:0", "--demo-customer-accounts", String(CUSTOMER_ACCOUNTS), ...storeFlags], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  server.stderr?.on("data", (chunk) => (logs.server += chunk));
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kobo demo did not start:\n${out}\n${logs.server}`)), 90_000);
    server?.stdout?.on("data", (chunk) => {
      out += chunk;
      if (/^API reference: /m.test(out)) {
        clearTimeout(timer);
        resolve(undefined);
      }
    });
    server?.on("exit", (code) => reject(new Error(`kobo demo exited (${code}):\n${out}\n${logs.server}`)));
  });
  logs.seeded = Date.now() - started;
  demo.dashboard = /^Dashboard: open (\S+) in a browser/m.exec(out)?.[1] ?? "";
  demo.base = demo.dashboard.replace(/\/dashboard\/$/, "");
  demo.email = field(out, "email");
  demo.password = field(out, "password");
  demo.mainAccount = field(out, "main account");
  demo.clientId = field(out, "client_id");
  demo.clientSecret = field(out, "client_secret");
  assert.match(demo.dashboard, /^http:\/\/127\.0\.0\.1:\d+\/dashboard\/$/, `the demo prints the Dashboard's address:\n${out}`);
  browser = await chromium.launch({
    executablePath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"],
  });
}

/**
 * Every request each page made, in order (`page.on("request")`): what a test asserts was not
 * sent (no code before the balance is checked, no change before it is confirmed), and what
 * `stop` checks never left kobo's origin.
 * @type {Map<Page, string[]>}
 */
const requests = new Map();

/** How many requests `page` has made to a path ending with `path` so far. @param {Page} page @param {string} path */
export function calls(page, path) {
  return (requests.get(page) ?? []).filter((url) => new URL(url).pathname.endsWith(path)).length;
}

export async function stop() {
  // No request leaves the server's origin: no font, script, chart or analytics from elsewhere.
  const elsewhere = [...requests.values()].flat().filter((url) => !url.startsWith(`${demo.base}/`) && !/^(data|blob|about):/.test(url));
  assert.deepEqual(elsewhere, [], "every request the Dashboard made went to kobo's own origin");
  assert.ok([...requests.values()].flat().length > 100, "the requests were recorded");
  await browser?.close();
  if (server && server.exitCode === null) {
    server.kill("SIGTERM");
    await new Promise((resolve) => server?.on("exit", resolve));
  }
  rmSync(dataDir, { recursive: true, force: true });
  assert.doesNotMatch(logs.server, /\bERROR\b/, `kobo logged no error:\n${logs.server}`);
}

/**
 * The emails Kobo wrote, newest first (`kobo outbox --json`: no SMTP in the demo).
 * @returns {{recipient: string, subject: string, body: string}[]}
 */
export function emails() {
  const json = execFileSync(kobo, ["outbox", "--json", "--limit", "1000", ...storeFlags], { encoding: "utf8" });
  return JSON.parse(json);
}

/** The newest email to `recipient` whose subject has `subject`. @param {string} recipient @param {string | RegExp} [subject] */
export function lastEmailTo(recipient, subject) {
  const mail = emails().find((m) => m.recipient === recipient && (!subject || (typeof subject === "string" ? m.subject.includes(subject) : subject.test(m.subject))));
  assert.ok(mail, `an email to ${recipient}${subject ? ` about "${subject}"` : ""} is in the outbox`);
  return mail;
}

/**
 * Money arrives in `account` from another bank (the sandbox's `simulate_inbound_transfer`, with
 * the demo's integration credentials), as a business funds an account before a payroll.
 * @param {string} account @param {string} amount
 */
export async function simulateInbound(account, amount) {
  const post = async (/** @type {string} */ path, /** @type {object} */ body, /** @type {Record<string, string>} */ headers = {}) => {
    const answer = await fetch(`${demo.base}${path}`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify(body) });
    const json = await answer.json();
    assert.equal(json.response_code, "00", `${path}: ${JSON.stringify(json)}`);
    return json.data;
  };
  const token = await post("/api/v1/auth/api/generate_token", { client_id: demo.clientId, client_secret: demo.clientSecret });
  return post(
    "/api/v1/sandbox/api/simulate_inbound_transfer",
    { account_number: account, amount, sender_account_number: "0123456788", sender_account_name: "Emeka Nwosu", sender_bank_code: "000013", narration: "Payroll funding" },
    { Authorization: `Bearer ${token.access_token}` },
  );
}

/** @param {Page} page @param {string} name */
export async function shot(page, name) {
  const width = page.viewportSize()?.width ?? 0;
  const folder = join(screenshots, String(width));
  mkdirSync(folder, { recursive: true });
  await page.screenshot({ path: join(folder, `${name}.png`), fullPage: true });
}

/**
 * A fresh tab of a fresh browser profile (its own sessionStorage): one person, on a laptop
 * (1280 px) or on a phone (390 px, touch).
 * @param {number} [width]
 * @param {{ clock?: boolean }} [options]
 */
export async function person(width = 1280, options = {}) {
  const phone = width < 700;
  const context = await browser.newContext(
    phone ? { viewport: { width, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 1 } : { viewport: { width, height: 860 } },
  );
  const page = await context.newPage();
  /** @type {string[]} */
  const sent = [];
  requests.set(page, sent);
  page.on("request", (request) => sent.push(request.url()));
  if (options.clock) await page.clock.install();
  page.setDefaultTimeout(TIMEOUT);
  page.on("pageerror", (error) => assert.fail(`the page threw: ${error.message}`));
  page.on("console", (message) => {
    // A refused call (401, 404, ...) is logged by the browser as a failed load: those are expected.
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) assert.fail(`the console said: ${message.text()}`);
  });
  return page;
}

/** Logs in from the login page. @param {Page} page @param {string} email @param {string} password */
export async function logIn(page, email, password) {
  await page.goto(demo.dashboard);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByRole("button", { name: "Log out" }).waitFor();
}

/** Opens a section from the menu (behind the menu button on a phone). @param {Page} page @param {string} name */
export async function go(page, name) {
  const button = page.getByRole("button", { name: "Menu" });
  if (await button.isVisible()) {
    if ((await button.getAttribute("aria-expanded")) !== "true") await button.click();
  }
  await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name, exact: false }).first().click();
}

/** Reads the sandbox's code from the OTP step and types it, as a person would. @param {Page} page */
export async function typeOtp(page) {
  const code = await sandboxOtp(page);
  await page.getByLabel("One-time code").fill(code);
  return code;
}

/** @param {Page} page */
export async function sandboxOtp(page) {
  await page.locator(".sandbox-otp").first().waitFor();
  const code = (await page.locator(".sandbox-otp").first().textContent())?.trim() ?? "";
  assert.match(code, /^\d{6}$/, "the sandbox shows the OTP");
  return code;
}

/** Waits until `locator` shows `expected` (the page may still be loading). @param {Locator} locator @param {string | RegExp} expected */
export async function assertText(locator, expected) {
  await eventually(async () => {
    const text = (await locator.first().textContent()) ?? "";
    if (expected instanceof RegExp) assert.match(text, expected);
    else assert.ok(text.includes(expected), `"${text}" includes "${expected}"`);
  });
}

/** Runs `check` until it passes, for up to TIMEOUT. @param {() => Promise<void>} check @param {number} [timeout] */
export async function eventually(check, timeout = TIMEOUT) {
  const deadline = Date.now() + timeout;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Waits until the receipt shows the transfer `status`; its reference. @param {Page} page @param {string} status */
export async function receiptReaches(page, status) {
  await page.locator(`.receipt[data-status="${status}"]`).waitFor({ timeout: 60_000 });
  return (await page.getByTestId("transfer-reference").first().textContent())?.trim() ?? "";
}

/**
 * Nothing scrolls sideways: the page is no wider than the screen (a phone's 390 px), so no
 * amount is off screen.
 * @param {Page} page @param {string} where
 */
export async function fitsTheScreen(page, where) {
  const width = page.viewportSize()?.width ?? 0;
  const { scroll, widest } = await page.evaluate(() => {
    const overflowing = [...document.querySelectorAll("main *")]
      .filter((element) => element.getBoundingClientRect().right > window.innerWidth + 1)
      .map((element) => `${element.tagName.toLowerCase()}.${[...element.classList].join(".")}`)
      .slice(0, 5);
    return { scroll: document.documentElement.scrollWidth, widest: overflowing };
  });
  assert.ok(scroll <= width, `${where}: the page is ${scroll} px wide on a ${width} px screen (${widest.join(", ")})`);
  assert.deepEqual(widest, [], `${where}: nothing reaches past the screen's right edge`);
}

/**
 * Pays from the Pay page, up to the code step; the review's total is returned.
 * @param {Page} page
 * @param {{from?: string, search?: string, bank?: string, account: string, amount: string, narration: string, expectName: string, formShot?: string, reviewShot?: string}} payment
 */
export async function payUpToCode(page, { from, search, bank = "090823", account, amount, narration, expectName, formShot, reviewShot }) {
  await go(page, "Pay");
  await page.getByRole("heading", { name: "Pay" }).waitFor();
  const picker = page.getByRole("combobox", { name: "From account" });
  if (search) {
    await picker.click();
    await picker.fill(search);
    const option = page.getByRole("option", { name: new RegExp(search) }).first();
    await option.waitFor();
    await option.click();
  } else if (from) {
    // The default is the main account; a payment made earlier in this tab may have chosen another.
    await eventually(async () => assert.ok((await picker.inputValue()) !== ""));
    if (!(await picker.inputValue()).includes(from)) {
      await picker.click();
      await page.locator(`li[role="option"][data-account="${from}"]`).click();
    }
    await eventually(async () => assert.ok((await picker.inputValue()).includes(from), `the picker shows ${from}: "${await picker.inputValue()}"`));
  }
  await page.getByLabel("Bank").selectOption(bank);
  await page.getByLabel("Beneficiary account number").fill(account);
  await page.getByLabel("Amount (NGN)").fill(amount);
  await page.getByLabel("Narration").fill(narration);
  if (formShot) await shot(page, formShot);
  await page.getByRole("button", { name: "Check the beneficiary" }).click();
  await assertText(page.getByTestId("confirmed-name"), expectName);
  if (reviewShot) await shot(page, reviewShot);
  return (await page.getByTestId("review-total").textContent())?.trim() ?? "";
}

/** Every section of the owner's menu, as the menu names it and as its page is headed. */
export const SECTIONS = [
  { link: "Overview", heading: /^Good to see you/ },
  { link: "Accounts", heading: "Accounts" },
  { link: "Transactions", heading: "Transactions" },
  { link: "Statement", heading: "Statement" },
  { link: "Settlements", heading: "Settlements" },
  { link: "Pay", heading: "Pay" },
  { link: "Bulk payments", heading: "Bulk payments" },
  { link: "Transfers", heading: "Transfers" },
  { link: "Approvals", heading: "Approvals" },
  { link: "Team", heading: "Team" },
  { link: "Roles", heading: "Roles" },
  { link: "Audit log", heading: "Audit log" },
  { link: "Activity log", heading: "Activity log" },
  { link: "Webhooks", heading: "Webhooks" },
  { link: "Settings", heading: "Settings" },
];

/**
 * Opens every section from the menu, as the owner sees it: each answers without a refusal, fits
 * a phone's screen, and is photographed (`20-accounts`, `21-transactions`, ...).
 * @param {Page} page
 */
export async function everySection(page) {
  const phone = (page.viewportSize()?.width ?? 0) < 700;
  for (const [index, { link, heading }] of SECTIONS.entries()) {
    await go(page, link);
    await page.getByRole("heading", { level: 1, name: heading }).waitFor();
    await page.waitForLoadState("networkidle");
    assert.equal(await page.getByRole("alert").count(), 0, `${link}: no refusal`);
    if (phone) await fitsTheScreen(page, link);
    await shot(page, `${19 + index}-${link.toLowerCase().replace(/\s+/g, "-")}`);
  }
}
