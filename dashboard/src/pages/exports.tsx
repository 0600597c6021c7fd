// Exports: files too long to download at once (more than 20,000 transactions, or a whole year of
// a busy account), written in the background and kept 7 days. A new export (a statement in CSV,
// OFX or camt.053, or the business's transactions as CSV, for a period of Lagos days), the list
// newest first with where each stands (refreshed while one is being written), and a ready one
// downloaded: each part in turn, joined into one file by the browser.
import { useEffect, useState } from "preact/hooks";
import { call, client, type Schemas } from "../api";
import { fileBytes, saveBlob, sizeText } from "../files";
import { daysBetween, day, lagosToday, lagosTime } from "../money";
import { AccountPicker, ownAccounts, type Account } from "../picker";
import { useLocation } from "../router";
import { can } from "../session";
import { Badge, Empty, ErrorNote, Field, Notice, Pager, useAction, useCursorPages, useLoad } from "../ui";

type Export = Schemas["Export"];
type Category = Schemas["ExportCategory"];

/** Each kind of export, in words. */
export const CATEGORIES: { category: Category; name: string; account: "required" | "optional" }[] = [
  { category: "account_statement_csv", name: "Statement, CSV (spreadsheets)", account: "required" },
  { category: "account_statement_ofx", name: "Statement, OFX (accounting software)", account: "required" },
  { category: "account_statement_camt053", name: "Statement, ISO 20022 camt.053 (ERP)", account: "required" },
  { category: "transaction_csv", name: "Transactions, CSV (every account, or one)", account: "optional" },
];

/** How often the list is read again while an export is being written. */
const REFRESH_MS = 2_000;

function categoryName(category: string): string {
  return CATEGORIES.find((c) => c.category === category)?.name ?? category;
}

/** Every part of a ready export, in turn, saved as one file. */
async function download(item: Export, progress: (done: number) => void): Promise<void> {
  const parts: Uint8Array<ArrayBuffer>[] = [];
  for (let part = 1; part <= item.parts; part += 1) {
    const answer = await call(client.POST("/api/v1/export/web/download_export", { body: { export_id: item.export_id, part } }));
    parts.push(fileBytes(answer.data));
    progress(part);
  }
  saveBlob(item.file_name, new Blob(parts, { type: item.content_type }));
}

export function ExportsPage() {
  const { query } = useLocation();
  const [round, setRound] = useState(0);
  const pages = useCursorPages(
    async (cursor) => call(client.POST("/api/v1/export/web/fetch_exports", { body: { limit: 20, ...cursor } })),
    `exports|${round}`,
  );
  const busy = pages.items.some((item) => item.status === "pending" || item.status === "running");
  // While one is being written, read the list again every couple of seconds.
  useEffect(() => {
    if (!busy) return;
    const timer = setTimeout(() => setRound((n) => n + 1), REFRESH_MS);
    return () => clearTimeout(timer);
  }, [busy, round, pages.items]);
  const creating = can("/api/v1/export/web/create_export");
  return (
    <section>
      <div class="heading">
        <h1>Exports</h1>
      </div>
      <p class="muted">
        A statement or a list of transactions too long to download at once, written in the background. You can leave this
        page: a finished export waits here for 7 days, and your webhook hears <span class="mono">export.ready</span>.
      </p>
      {creating && (
        <NewExport
          initial={{ account: query.get("account") ?? "", start: query.get("start_date") ?? "", end: query.get("end_date") ?? "" }}
          onCreated={() => setRound((n) => n + 1)}
        />
      )}
      <h2>Your exports</h2>
      <ErrorNote error={pages.error} />
      {pages.items.length === 0 && !pages.loading ? (
        <Empty>No exports yet.</Empty>
      ) : (
        <ExportList items={pages.items} busy={pages.loading && pages.items.length === 0} />
      )}
      <Pager pages={pages} label="Exports" />
    </section>
  );
}

interface Draft {
  account: string;
  start: string;
  end: string;
}

/** The form of a new export. */
function NewExport({ initial, onCreated }: { initial: Draft; onCreated: () => void }) {
  const today = lagosToday();
  const own = useLoad(async () => (can("/api/v1/account/web/fetch_account_summaries") ? ownAccounts(true) : []), "export-accounts");
  const [category, setCategory] = useState<Category>("account_statement_csv");
  const [account, setAccount] = useState<Account | null>(null);
  const [start, setStart] = useState(initial.start || `${today.slice(0, 4)}-01-01`);
  const [end, setEnd] = useState(initial.end || today);
  const [problem, setProblem] = useState<string | null>(null);
  const [created, setCreated] = useState<Export | null>(null);
  const action = useAction();
  const needs = CATEGORIES.find((c) => c.category === category)?.account ?? "optional";
  const named = own.value?.find((a) => a.account_number === initial.account) ?? null;
  const chosen = account ?? named ?? (needs === "required" ? own.value?.find((a) => a.account_class === "primary") ?? null : null);

  const submit = (event: Event) => {
    event.preventDefault();
    const days = daysBetween(start, end);
    const wrong =
      needs === "required" && !chosen
        ? "Account: a statement is of one account; choose it."
        : days === null
          ? "Period: choose the first and the last day."
          : days < 1
            ? "Period: the first day comes after the last."
            : days > 366
              ? `Period: an export covers at most 366 days (this one has ${days}).`
              : null;
    setProblem(wrong);
    setCreated(null);
    if (wrong) return;
    void action.run(async () => {
      const answer = await call(
        client.POST("/api/v1/export/web/create_export", {
          body: { category, start_date: start, end_date: end, ...(chosen ? { account_number: chosen.account_number } : {}) },
        }),
      );
      setCreated(answer.data);
      onCreated();
    });
  };
  return (
    <form noValidate class="card filters export-form" onSubmit={submit} aria-labelledby="new-export">
      <h2 id="new-export">New export</h2>
      <Field label="What">
        <select name="category" value={category} onChange={(e) => setCategory(e.currentTarget.value as Category)}>
          {CATEGORIES.map((c) => (
            <option value={c.category}>{c.name}</option>
          ))}
        </select>
      </Field>
      <AccountPicker label={needs === "required" ? "Account" : "Account (leave empty for all)"} own={own.value ?? []} value={chosen} onChange={setAccount} />
      {needs === "optional" && chosen && (
        <button type="button" class="secondary" onClick={() => setAccount(null)}>
          All accounts
        </button>
      )}
      <Field label="From">
        <input name="start_date" type="date" required value={start} onInput={(e) => setStart(e.currentTarget.value)} />
      </Field>
      <Field label="To">
        <input name="end_date" type="date" required value={end} onInput={(e) => setEnd(e.currentTarget.value)} />
      </Field>
      <button type="submit" disabled={action.busy}>
        Start the export
      </button>
      {problem && (
        <div class="notice error" role="alert">
          <strong>{problem}</strong>
        </div>
      )}
      <ErrorNote error={action.error} />
      {created && (
        <Notice kind="success">
          Started <strong data-testid="export-started">{created.file_name}</strong>: it appears below as soon as it is ready.
        </Notice>
      )}
    </form>
  );
}

function ExportList({ items, busy }: { items: Export[]; busy: boolean }) {
  return (
    <table class="list exports" aria-busy={busy}>
      <thead>
        <tr>
          <th>What</th>
          <th>Period</th>
          <th>Status</th>
          <th class="amount">Transactions</th>
          <th>Asked for</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {items.map((item) => (
          <ExportRow key={item.export_id} item={item} />
        ))}
      </tbody>
    </table>
  );
}

function ExportRow({ item }: { item: Export }) {
  const action = useAction();
  const [done, setDone] = useState(0);
  const [saved, setSaved] = useState(false);
  const save = () => {
    setDone(0);
    setSaved(false);
    void action.run(async () => {
      await download(item, setDone);
      setSaved(true);
    });
  };
  return (
    <tr data-export={item.export_id} data-status={item.status}>
      <td data-label="What">
        {categoryName(item.category)}
        <span class="muted block small mono">{item.account_number ?? "all accounts"}</span>
      </td>
      <td data-label="Period">
        {day(item.start_date)} to {day(item.end_date)}
      </td>
      <td data-label="Status">
        <Badge value={item.status} />
        {item.status === "failed" && <span class="block small">{item.failure_reason}</span>}
        {item.status === "ready" && item.expires_at && <span class="muted block small">kept until {day(item.expires_at)}</span>}
      </td>
      <td data-label="Transactions" class="amount">
        {item.row_count.toLocaleString("en")}
        {item.status !== "pending" && <span class="muted block small">{sizeText(item.size_bytes)}</span>}
      </td>
      <td data-label="Asked for">{lagosTime(item.created_at)}</td>
      <td>
        {item.status === "ready" && (
          <button type="button" class="secondary" data-download={item.export_id} disabled={action.busy} onClick={save}>
            {action.busy ? `Downloading ${done} of ${item.parts}…` : "Download"}
          </button>
        )}
        {saved && !action.busy && (
          <span class="small block" data-testid="export-saved">
            Saved {item.file_name}
          </span>
        )}
        <ErrorNote error={action.error} />
      </td>
    </tr>
  );
}
