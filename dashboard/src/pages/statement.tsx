// An account's statement for a period of Lagos days, as a finance team closes a month with it:
// the account (the business's own first, its customers' searched on the server) and the period
// in the page's address (`/statement?account=...&start_date=...&end_date=...`; by default the
// main account, this month so far), the opening balance, the credits and debits (how many and
// how much), the closing balance, the lines oldest first with the balance after each, paged by
// cursor, and the whole period as a file: CSV, PDF, OFX or ISO 20022 camt.053.
import { useState } from "preact/hooks";
import { call, client, type Schemas } from "../api";
import { saveFile, sizeText } from "../files";
import { daysBetween, day, lagosTime, lagosToday, naira } from "../money";
import { AccountPicker, ownAccounts, type Account } from "../picker";
import { navigate, useLocation, withQuery } from "../router";
import { can } from "../session";
import { Badge, Empty, ErrorNote, Field, Link, Notice, Pager, useAction, useCursorPages, useLoad } from "../ui";

type Statement = Schemas["AccountStatement"];
type Line = Schemas["StatementLine"];
type Format = Schemas["StatementFormat"];

/** Lines a page: the most the API gives at once. */
const PAGE_SIZE = 100;

/** The most transactions a downloaded statement holds (`download_account_statement`); more is an export. */
const DOWNLOAD_LINES_MAX = 20_000;

/** The longest period a statement covers (`get_account_statement`'s description). */
const DAYS_MAX = 366;

/** Each file a statement is downloaded as, and who reads it. */
const FORMATS: { format: Format; name: string; for: string }[] = [
  { format: "csv", name: "CSV", for: "spreadsheets" },
  { format: "pdf", name: "PDF", for: "reading and printing" },
  { format: "ofx", name: "OFX", for: "accounting software" },
  { format: "camt053", name: "ISO 20022 camt.053", for: "ERP and treasury systems" },
];

interface Period {
  start: string;
  end: string;
}

/** This month in Lagos, up to today. */
function thisMonth(): Period {
  const today = lagosToday();
  return { start: `${today.slice(0, 8)}01`, end: today };
}

/** Last month in Lagos, whole. */
function lastMonth(): Period {
  const today = lagosToday();
  const firstOfThis = Date.parse(`${today.slice(0, 8)}01T00:00:00Z`);
  const end = new Date(firstOfThis - 86_400_000).toISOString().slice(0, 10);
  return { start: `${end.slice(0, 8)}01`, end };
}

/** What is wrong with an account number and a period, in plain words; null when nothing. */
function problemOf(accountNumber: string, period: Period): string | null {
  if (!/^\d{10}$/.test(accountNumber)) return "Account: an account number has 10 digits.";
  const days = daysBetween(period.start, period.end);
  if (days === null) return "Period: choose the first and the last day.";
  if (days < 1) return "Period: the first day comes after the last.";
  if (days > DAYS_MAX) return `Period: a statement covers at most ${DAYS_MAX} days (this one has ${days}); ask for the rest separately.`;
  return null;
}

async function accountByNumber(number: string): Promise<Account> {
  const answer = await call(client.POST("/api/v1/account/web/get_account", { body: { account_number: number } }));
  return answer.data;
}

export function StatementPage() {
  const { query } = useLocation();
  const defaults = thisMonth();
  const period: Period = { start: query.get("start_date") || defaults.start, end: query.get("end_date") || defaults.end };
  const wanted = (query.get("account") ?? "").trim();
  // The business's own accounts (the main one first) for the picker, and the default account;
  // a role that may read transactions but not the accounts' list types a number instead.
  const listed = can("/api/v1/account/web/fetch_account_summaries");
  const own = useLoad(async () => (listed ? ownAccounts(true) : []), "statement-own-accounts");
  const main = own.value?.find((account) => account.account_class === "primary") ?? own.value?.[0];
  const accountNumber = wanted || main?.account_number || "";
  const ownMatch = own.value?.find((account) => account.account_number === accountNumber);
  // A customer's account named in the address is read on its own, for the picker to show it.
  const other = useLoad(
    async () => (listed && own.value && !ownMatch && /^\d{10}$/.test(accountNumber) ? accountByNumber(accountNumber) : null),
    `${accountNumber}|${own.value ? "own" : ""}|${ownMatch ? "found" : ""}`,
  );
  const shown: Account | null = ownMatch ?? (other.value?.account_number === accountNumber ? other.value : null);

  const [picked, setPicked] = useState<Account | null>(null);
  const [typed, setTyped] = useState(wanted);
  const [draft, setDraft] = useState<Period>(period);
  const [problem, setProblem] = useState<string | null>(null);

  const waiting = !accountNumber && (own.loading || !listed);
  const addressProblem = accountNumber ? problemOf(accountNumber, period) : null;
  const ready = Boolean(accountNumber) && !addressProblem;
  const pages = useCursorPages(
    async (cursor) => {
      if (!ready) return { data: [] as Line[], pagination: null, statement: null as Statement | null };
      const answer = await call(
        client.POST("/api/v1/account/web/get_account_statement", {
          body: { account_number: accountNumber, start_date: period.start, end_date: period.end, limit: PAGE_SIZE, ...cursor },
        }),
      );
      return { data: answer.data.lines, pagination: answer.pagination, statement: answer.data as Statement | null };
    },
    `${ready}|${accountNumber}|${period.start}|${period.end}`,
  );
  const statement = pages.answer?.statement ?? null;

  const show = (event: Event) => {
    event.preventDefault();
    const number = listed ? (picked ?? shown)?.account_number ?? accountNumber : typed.trim();
    const wrong = problemOf(number, draft);
    setProblem(wrong);
    if (wrong) return;
    navigate(withQuery("statement", { account: number, start_date: draft.start, end_date: draft.end }));
  };
  const periodLink = (chosen: Period) =>
    withQuery("statement", { account: wanted || undefined, start_date: chosen.start, end_date: chosen.end });

  return (
    <section>
      <div class="heading">
        <h1>Statement</h1>
        <nav class="actions periods" aria-label="Periods">
          <Link to={periodLink(thisMonth())} class="button secondary">
            This month
          </Link>
          <Link to={periodLink(lastMonth())} class="button secondary">
            Last month
          </Link>
        </nav>
      </div>
      <p class="muted">
        An account's balances and every transaction of a period, with the balance after each: what you reconcile a month
        with. Days and times are Lagos time.
      </p>
      <form noValidate class="filters statement-form" onSubmit={show}>
        {listed ? (
          <AccountPicker label="Account" own={own.value ?? []} value={picked ?? shown} onChange={setPicked} />
        ) : (
          <Field label="Account number">
            <input name="account" inputMode="numeric" maxLength={10} value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
          </Field>
        )}
        <Field label="From">
          <input name="start_date" type="date" required value={draft.start} onInput={(e) => setDraft({ ...draft, start: e.currentTarget.value })} />
        </Field>
        <Field label="To">
          <input name="end_date" type="date" required value={draft.end} onInput={(e) => setDraft({ ...draft, end: e.currentTarget.value })} />
        </Field>
        <button type="submit">Show</button>
      </form>
      {(problem ?? addressProblem) && (
        <div class="notice error" role="alert">
          <strong>{problem ?? addressProblem}</strong>
        </div>
      )}
      <ErrorNote error={own.error} />
      {waiting && !own.error && <p class="loading">{listed ? "Loading…" : "Type the account number and choose the period."}</p>}
      <ErrorNote error={pages.error} />
      {statement && <Figures statement={statement} />}
      {statement && <Downloads statement={statement} />}
      {statement && (
        <>
          <h2>
            Transactions{" "}
            <span class="muted small" data-testid="statement-count">
              {countText(statement.credit_count + statement.debit_count, "transaction")}, oldest first
            </span>
          </h2>
          {pages.items.length === 0 && !pages.loading ? (
            <Empty>No transactions in this period: the balance did not move.</Empty>
          ) : (
            <Lines lines={pages.items} busy={pages.loading} />
          )}
          <Pager pages={pages} label="Statement" oldestFirst />
        </>
      )}
    </section>
  );
}

function countText(count: number, thing: string): string {
  return `${count.toLocaleString("en")} ${thing}${count === 1 ? "" : "s"}`;
}

/** The period's figures: opening + money in − money out = closing. */
function Figures({ statement: s }: { statement: Statement }) {
  const today = lagosToday();
  return (
    <>
      <h2 class="statement-title" data-testid="statement-title">
        {s.account_name} · <span class="mono">{s.account_number}</span>
        <span class="muted">
          {" "}
          · {day(s.start_date)} to {day(s.end_date)}
        </span>
      </h2>
      <div class="metrics" data-testid="statement-figures">
        <div class="metric">
          <span class="label">Opening balance</span>
          <strong data-testid="statement-opening">{naira(s.opening_balance)}</strong>
          <span class="muted small">at the start of {day(s.start_date)}</span>
        </div>
        <div class="metric">
          <span class="label">Money in</span>
          <strong data-testid="statement-credits">{naira(s.total_credits)}</strong>
          <span class="muted small" data-testid="statement-credit-count">
            {countText(s.credit_count, "credit")}
          </span>
        </div>
        <div class="metric">
          <span class="label">Money out</span>
          <strong data-testid="statement-debits">{naira(s.total_debits)}</strong>
          <span class="muted small" data-testid="statement-debit-count">
            {countText(s.debit_count, "debit")}
          </span>
        </div>
        <div class="metric">
          <span class="label">Closing balance</span>
          <strong data-testid="statement-closing">{naira(s.closing_balance)}</strong>
          <span class="muted small">{s.end_date >= today ? "so far today" : `at the end of ${day(s.end_date)}`}</span>
        </div>
      </div>
    </>
  );
}

/** The whole period as a file, in each format the API writes. */
function Downloads({ statement: s }: { statement: Statement }) {
  const action = useAction();
  const [preparing, setPreparing] = useState<Format | null>(null);
  const [saved, setSaved] = useState<Schemas["FileContent"] | null>(null);
  const download = (format: Format) => {
    setPreparing(format);
    setSaved(null);
    void action
      .run(async () => {
        const answer = await call(
          client.POST("/api/v1/account/web/download_account_statement", {
            body: { account_number: s.account_number, start_date: s.start_date, end_date: s.end_date, format },
          }),
        );
        saveFile(answer.data);
        setSaved(answer.data);
      })
      .finally(() => setPreparing(null));
  };
  const preparingName = FORMATS.find((f) => f.format === preparing)?.name;
  const count = s.credit_count + s.debit_count;
  const exportLink = withQuery("exports", { account: s.account_number, start_date: s.start_date, end_date: s.end_date });
  if (count > DOWNLOAD_LINES_MAX) {
    return (
      <div class="card downloads no-print" role="group" aria-labelledby="statement-downloads">
        <h2 id="statement-downloads">Download the statement</h2>
        <Notice kind="warning">
          This period holds {countText(count, "transaction")}, more than a download's {DOWNLOAD_LINES_MAX.toLocaleString("en")}.{" "}
          {can("/api/v1/export/web/create_export") ? (
            <Link to={exportLink}>Export it in the background</Link>
          ) : (
            "Choose a shorter period."
          )}
        </Notice>
      </div>
    );
  }
  return (
    <div class="card downloads no-print" role="group" aria-labelledby="statement-downloads">
      <h2 id="statement-downloads">Download the statement</h2>
      <div class="actions">
        {FORMATS.map((f) => (
          <button type="button" class="secondary" data-format={f.format} disabled={action.busy} onClick={() => download(f.format)}>
            {f.name}
          </button>
        ))}
      </div>
      <p class="muted small">{FORMATS.map((f) => `${f.name} for ${f.for}`).join("; ")}. Every file holds the whole period.</p>
      <ErrorNote error={action.error} />
      {preparingName && <p class="muted">Preparing the {preparingName} file…</p>}
      {saved && !action.busy && (
        <Notice kind="success">
          Saved <strong data-testid="statement-file">{saved.file_name}</strong> ({sizeText(saved.size_bytes)}) where your browser keeps
          downloads.
        </Notice>
      )}
    </div>
  );
}

function Lines({ lines, busy }: { lines: Line[]; busy: boolean }) {
  const receipts = can("/api/v1/transaction/transfer/web/get_transfer");
  return (
    <table class="list statement-lines" aria-busy={busy}>
      <thead>
        <tr>
          <th>When (Lagos)</th>
          <th>Reference</th>
          <th>Narration</th>
          <th class="amount">Money in</th>
          <th class="amount">Money out</th>
          <th class="amount">Balance after</th>
        </tr>
      </thead>
      <tbody>
        {lines.map((line) => {
          const credit = line.transaction_type === "credit";
          return (
            <tr key={line.id} data-reference={line.reference_number} data-type={line.transaction_type}>
              <td data-label="When">{lagosTime(line.created_at)}</td>
              <td data-label="Reference">
                {receipts && line.reference_number.startsWith("TRF-") ? (
                  <Link to={`transfers/${encodeURIComponent(line.reference_number)}`}>
                    <span class="mono small">{line.reference_number}</span>
                  </Link>
                ) : (
                  <span class="mono small">{line.reference_number}</span>
                )}
              </td>
              <td data-label="Narration">
                <span>
                  {line.remarks || "—"}
                  {line.counterparty_account_name && (
                    <span class="muted block small">
                      from {line.counterparty_account_name}
                      {line.counterparty_bank_name ? ` · ${line.counterparty_bank_name}` : ""}
                    </span>
                  )}
                  {line.status !== "success" && (
                    <span class="block">
                      <Badge value={line.status} />
                    </span>
                  )}
                </span>
              </td>
              <td data-label="Money in" class={`amount credit${credit ? "" : " blank"}`}>
                {credit ? naira(line.amount) : ""}
              </td>
              <td data-label="Money out" class={`amount debit${credit ? " blank" : ""}`}>
                {credit ? "" : naira(line.amount)}
              </td>
              <td data-label="Balance after" class="amount">
                {naira(line.balance_after)}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
