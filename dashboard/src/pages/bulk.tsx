// Bulk payments: a month's salaries or suppliers from a spreadsheet. The CSV (a template to
// download) is read in the browser, each row checked for its shape, then sent as one bulk transfer;
// Kobo checks every row as it would check a transfer (the account, the holder's name, the amount,
// the reference, the fee) and this page shows each verdict, the rows that cannot be paid with
// why, and the totals. A checked batch is authorised once, for its whole total, with a code
// bound to it (its total and its rows); Kobo sets the total aside, holds it for a second member
// when the approval policy covers it, then pays each row. The page follows the payments as they
// go, shows each row's outcome, downloads the results as a CSV, and turns the rows that failed
// into a new batch.
import { useEffect, useState } from "preact/hooks";
import { call, client, newIdempotencyKey, Refusal, type Schemas } from "../api";
import { saveBlob, saveFile } from "../files";
import { lagosInstant, lagosTime, naira, parseAmount, scheduleProblem } from "../money";
import { AccountPicker, ownAccounts, type Account } from "../picker";
import { navigate, useLocation, withQuery } from "../router";
import { can, currentSession } from "../session";
import { Badge, Empty, ErrorNote, Field, Link, Notice, OtpStep, Pager, ScheduleField, statusWords, useAction, useCursorPages, useLoad } from "../ui";
import { notifyApprovalsChanged } from "../waiting";

type Batch = Schemas["BulkTransfer"];
type Item = Schemas["BulkTransferItem"];
type ItemRequest = Schemas["BulkTransferItemRequest"];
type Status = Schemas["BulkTransferStatus"];

/** The most rows a batch holds. */
const ROWS_MAX = 5_000;

/** How often a batch being checked is read again. */
const REFRESH_MS = 1_000;

/** How often a batch being paid is read again. */
const PAYING_REFRESH_MS = 1_500;

/** Rows a page of `fetch_bulk_transfer_items` holds at most, for the results and a retry. */
const ITEMS_PAGE_MAX = 100;

/** The columns of the template, in its order. */
const COLUMNS = ["account_number", "bank_code", "account_name", "amount", "narration", "reference"] as const;

const TEMPLATE =
  `${COLUMNS.join(",")}\n` +
  "3000000018,090823,Lagos Fresh Produce Ltd,450000,December supplies,PAY-2026-12-001\n" +
  "0123456788,000013,Emeka Nwosu,280000.50,December salary,PAY-2026-12-002\n";

/** One line of CSV as its fields: commas separate, double quotes enclose, `""` is a quote. */
export function csvFields(line: string): string[] {
  const fields: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      fields.push(field);
      field = "";
    } else field += c;
  }
  fields.push(field);
  return fields.map((f) => f.trim());
}

export interface Parsed {
  items: ItemRequest[];
  problems: string[];
}

/** The rows of a CSV in the template's columns (a header first), or what is wrong with each. */
export function parseCsv(text: string): Parsed {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  const header = csvFields(lines[0] ?? "").map((name) => name.toLowerCase());
  const missing = COLUMNS.slice(0, 4).filter((name) => !header.includes(name));
  if (missing.length > 0) return { items: [], problems: [`Line 1: the header lacks ${missing.join(", ")}`] };
  const at = (fields: string[], name: (typeof COLUMNS)[number]) => {
    const index = header.indexOf(name);
    return index < 0 ? "" : (fields[index] ?? "");
  };
  const items: ItemRequest[] = [];
  const problems: string[] = [];
  lines.slice(1).forEach((line, n) => {
    if (line.trim() === "") return;
    const fields = csvFields(line);
    const where = `Line ${n + 2}`;
    const number = at(fields, "account_number");
    const bank = at(fields, "bank_code");
    const name = at(fields, "account_name");
    const amount = at(fields, "amount").replace(/,/g, "");
    const wrong = !/^[0-9]{10}$/.test(number)
      ? "the account number is 10 digits"
      : !/^[0-9]{6}$/.test(bank)
        ? "the bank code is 6 digits"
        : name === ""
          ? "the account name is missing"
          : parseAmount(amount) === null
            ? `the amount ${at(fields, "amount") || "(empty)"} is not an amount in naira`
            : null;
    if (wrong) {
      problems.push(`${where}: ${wrong}`);
      return;
    }
    const narration = at(fields, "narration");
    const reference = at(fields, "reference");
    items.push({
      account_number: number,
      bank_code: bank,
      account_name: name,
      amount,
      ...(narration ? { narration: narration.slice(0, 100) } : {}),
      ...(reference ? { reference } : {}),
    });
  });
  if (items.length > ROWS_MAX) problems.push(`A batch holds at most ${ROWS_MAX.toLocaleString("en")} rows`);
  return { items, problems };
}

/** A batch's statuses as a person says them, in the order a batch goes through them. */
const STATUSES: { value: Status; words: string; kind: "good" | "bad" | "pending" | "plain" }[] = [
  { value: "validating", words: "being checked", kind: "pending" },
  { value: "validated", words: "ready to pay", kind: "pending" },
  { value: "invalid", words: "cannot be paid", kind: "bad" },
  { value: "pending_approval", words: "waiting for approval", kind: "pending" },
  { value: "scheduled", words: "scheduled", kind: "pending" },
  { value: "executing", words: "being paid", kind: "pending" },
  { value: "completed", words: "completed", kind: "good" },
  { value: "rejected", words: "rejected", kind: "bad" },
  { value: "expired", words: "expired unreviewed", kind: "bad" },
  { value: "cancelled", words: "cancelled", kind: "bad" },
];

/** A batch's status in words (a status added later is said as it is, as waiting). */
export function bulkStatusWords(status: string): string {
  return STATUSES.find((s) => s.value === status)?.words ?? statusWords(status);
}

export function BulkStatus({ status }: { status: string }) {
  const known = STATUSES.find((s) => s.value === status);
  return <Badge value={status} text={bulkStatusWords(status)} kind={known?.kind ?? "pending"} />;
}

/** What became of a row's payment, in words. */
const OUTCOMES: Record<string, { words: string; kind: "good" | "bad" | "pending" | "plain" }> = {
  unpaid: { words: "not paid", kind: "plain" },
  processing: { words: "on its way", kind: "pending" },
  success: { words: "paid", kind: "good" },
  failed: { words: "failed", kind: "bad" },
  reversed: { words: "returned", kind: "bad" },
};

function Outcome({ outcome }: { outcome: string }) {
  const known = OUTCOMES[outcome];
  return <Badge value={outcome} text={known?.words ?? statusWords(outcome)} kind={known?.kind ?? "pending"} />;
}

/**
 * Who a batch's member ids are, by name: the member reading is "you", the integration's
 * credentials "your integration", the team by name where the role may list it (`member.view`),
 * else the name the batch recorded when they acted, else "another member".
 */
/** Names a member id for the reader ([`useWho`]). */
export type Who = (id: string | null | undefined, name?: string | null) => string;

export function useWho(): Who {
  const me = currentSession()?.profile.member.id;
  const team = useLoad(async () => {
    if (!can("/api/v1/auth/web/fetch_members")) return [];
    const answer = await call(client.POST("/api/v1/auth/web/fetch_members", { body: { page: 1, page_size: 100 } }));
    return answer.data;
  }, "bulk-team");
  return (id, name) => {
    if (!id) return "—";
    if (id === me) return "you";
    if (id === "integration") return "your integration";
    const member = team.value?.find((m) => m.id === id);
    return member ? `${member.first_name} ${member.last_name}` : (name ?? "another member");
  };
}

export function BulkPage({ id }: { id: string }) {
  // Keyed by the batch: another batch (a retry's) starts with its own state.
  return id ? <BatchView key={id} id={id} /> : <BulkList />;
}

function BulkList() {
  const { query } = useLocation();
  const status = (query.get("status") ?? "") as Status | "";
  const pages = useCursorPages(
    async (cursor) =>
      call(client.POST("/api/v1/transaction/transfer/web/fetch_bulk_transfers", { body: { limit: 20, ...(status ? { status } : {}), ...cursor } })),
    `bulk|${status}`,
  );
  return (
    <section>
      <div class="heading">
        <h1>Bulk payments</h1>
      </div>
      <p class="muted">
        Pay many people from one account: upload a spreadsheet, and Kobo checks every row as it would check a transfer before
        anything moves.
      </p>
      {can("/api/v1/transaction/transfer/web/create_bulk_transfer") && <NewBatch />}
      <div class="heading">
        <h2>Your bulk payments</h2>
        <Field label="Status">
          <select name="status" value={status} onChange={(e) => navigate(withQuery("bulk", { status: e.currentTarget.value }))}>
            <option value="">Every status</option>
            {STATUSES.map((s) => (
              <option value={s.value}>{s.words.charAt(0).toUpperCase() + s.words.slice(1)}</option>
            ))}
          </select>
        </Field>
      </div>
      <ErrorNote error={pages.error} />
      {pages.items.length === 0 && !pages.loading ? (
        <Empty>{status ? `No bulk payment is ${bulkStatusWords(status)}.` : "No bulk payments yet."}</Empty>
      ) : (
        <table class="list bulk" aria-busy={pages.loading}>
          <thead>
            <tr>
              <th>Sent</th>
              <th>From</th>
              <th>Status</th>
              <th class="amount">Rows</th>
              <th class="amount">Total</th>
            </tr>
          </thead>
          <tbody>
            {pages.items.map((batch) => (
              <tr key={batch.bulk_transfer_id} data-batch={batch.bulk_transfer_id} data-status={batch.status}>
                <td data-label="Sent">
                  <Link to={`bulk/${batch.bulk_transfer_id}`}>{lagosTime(batch.created_at)}</Link>
                  {batch.reference && <span class="muted block small mono">{batch.reference}</span>}
                </td>
                <td data-label="From" class="mono">
                  {batch.source_account_number}
                </td>
                <td data-label="Status">
                  <span>
                    <BulkStatus status={batch.status} />
                    {batch.status === "scheduled" || (batch.execute_at && !batch.authorised_at) ? (
                      <span class="muted block small" data-testid="bulk-pays-at">
                        pays {lagosTime(batch.execute_at)}
                      </span>
                    ) : batch.authorised_at && (
                      <span class="muted block small">
                        {batch.counts.succeeded.toLocaleString("en")} of {batch.counts.valid.toLocaleString("en")} paid
                      </span>
                    )}
                  </span>
                </td>
                <td data-label="Rows" class="amount">
                  {batch.counts.items.toLocaleString("en")}
                </td>
                <td data-label="Total" class="amount">
                  {naira(batch.totals.total)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager pages={pages} label="Bulk payments" />
    </section>
  );
}

/** The upload: the source account, the file, what to do with rows that cannot be paid. */
function NewBatch() {
  const own = useLoad(async () => (can("/api/v1/account/web/fetch_account_summaries") ? ownAccounts(true) : []), "bulk-accounts");
  const [account, setAccount] = useState<Account | null>(null);
  const [parsed, setParsed] = useState<Parsed | null>(null);
  const [fileName, setFileName] = useState("");
  const [skip, setSkip] = useState(true);
  const [later, setLater] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const action = useAction();
  const chosen = account ?? own.value?.find((a) => a.account_class === "primary") ?? null;

  const read = async (file: File | undefined) => {
    setProblem(null);
    if (!file) return;
    setFileName(file.name);
    setParsed(parseCsv(await file.text()));
  };
  const submit = (event: Event) => {
    event.preventDefault();
    const wrong = !chosen
      ? "From: choose the account to pay from."
      : !parsed || parsed.items.length === 0
        ? "File: choose a CSV with at least one row to pay."
        : parsed.problems.length > 0
          ? "File: fix the lines below first."
          : later
            ? scheduleProblem(later)
            : null;
    setProblem(wrong);
    if (wrong || !chosen || !parsed) return;
    void action.run(async () => {
      const answer = await call(
        client.POST("/api/v1/transaction/transfer/web/create_bulk_transfer", {
          body: {
            source_account_number: chosen.account_number,
            on_invalid: skip ? "skip_invalid" : "refuse_batch",
            items: parsed.items,
            ...(later ? { execute_at: lagosInstant(later) ?? undefined } : {}),
          },
          params: { header: { "Idempotency-Key": newIdempotencyKey() } },
        }),
      );
      navigate(`bulk/${answer.data.bulk_transfer_id}`);
    });
  };
  const template = () => saveBlob("kobo-bulk-payments.csv", new Blob([TEMPLATE], { type: "text/csv" }));
  return (
    <form noValidate class="card filters bulk-form" onSubmit={submit} aria-labelledby="new-batch">
      <h2 id="new-batch">New bulk payment</h2>
      <AccountPicker label="From" own={own.value ?? []} value={chosen} onChange={setAccount} />
      <Field label="Spreadsheet (CSV)" hint={<span>Columns: {COLUMNS.join(", ")}; narration and reference may be empty.</span>}>
        <input name="file" type="file" accept=".csv,text/csv" onChange={(e) => void read(e.currentTarget.files?.[0])} />
      </Field>
      <button type="button" class="secondary" onClick={template}>
        Download the template
      </button>
      <label class="check">
        <input type="checkbox" name="skip_invalid" checked={skip} onChange={(e) => setSkip(e.currentTarget.checked)} /> Leave out
        rows that cannot be paid (otherwise one such row stops the whole batch)
      </label>
      <ScheduleField value={later} onChange={setLater} />
      {parsed && (
        <p data-testid="bulk-parsed">
          {fileName}: <strong>{parsed.items.length.toLocaleString("en")}</strong> rows to check
          {parsed.problems.length > 0 && <>, {parsed.problems.length} to fix</>}
        </p>
      )}
      {parsed && parsed.problems.length > 0 && (
        <ul class="notice error" role="alert" data-testid="bulk-problems">
          {parsed.problems.slice(0, 20).map((line) => (
            <li>{line}</li>
          ))}
        </ul>
      )}
      <button type="submit" disabled={action.busy}>
        Check the payments
      </button>
      {problem && (
        <div class="notice error" role="alert">
          <strong>{problem}</strong>
        </div>
      )}
      <ErrorNote error={action.error} />
    </form>
  );
}


/** Every row of a batch, page after page (at most 100 a page; a batch holds at most 5,000). */
async function allItems(id: string): Promise<Item[]> {
  const items: Item[] = [];
  for (let page = 1; page <= ROWS_MAX / ITEMS_PAGE_MAX + 1; page += 1) {
    const answer = await call(
      client.POST("/api/v1/transaction/transfer/web/fetch_bulk_transfer_items", { body: { bulk_transfer_id: id, page, page_size: ITEMS_PAGE_MAX } }),
    );
    items.push(...answer.data);
    if (!answer.pagination.has_more || answer.data.length === 0) break;
  }
  return items;
}

/** `PAY-12` → `PAY-12-R1`, `PAY-12-R1` → `PAY-12-R2`: a reference for a retry, at most 64 characters. */
export function retryReference(old: string): string {
  const match = /^(.*)-R(\d+)$/.exec(old);
  const base = match?.[1] ?? old;
  const suffix = `-R${match ? Number(match[2]) + 1 : 1}`;
  return `${base.slice(0, 64 - suffix.length)}${suffix}`;
}

/** A row that failed (refused when it was to be paid, or returned by the other bank), to be sent again. */
function again(item: Item): ItemRequest {
  const narration = item.narration.trim().slice(0, 100);
  return {
    ...(item.beneficiary_id
      ? { beneficiary_id: item.beneficiary_id }
      : { account_number: item.account_number, bank_code: item.bank_code, account_name: item.account_name }),
    amount: item.amount,
    ...(narration ? { narration } : {}),
    ...(item.reference ? { reference: retryReference(item.reference) } : {}),
  };
}

/** A batch: where it stands, its figures, what to do next, and its rows with their outcomes. */
function BatchView({ id }: { id: string }) {
  const [round, setRound] = useState(0);
  const [filter, setFilter] = useState<"" | "valid" | "invalid">("");
  const [page, setPage] = useState(1);
  const batch = useLoad(
    async () => call(client.POST("/api/v1/transaction/transfer/web/get_bulk_transfer", { body: { bulk_transfer_id: id } })),
    `batch|${id}|${round}`,
  );
  const shown = batch.value?.data;
  const status = shown?.status;
  // While its rows are checked, each read shows more verdicts; once checked, the rows change
  // only when the batch does (its status, its outcomes), so they are read again only then.
  const counts = shown?.counts;
  const version =
    status === "validating" ? `r${round}` : `${status}|${counts?.succeeded}|${counts?.processing}|${counts?.failed}|${counts?.reversed}|${counts?.valid}`;
  const items = useLoad(
    async () =>
      call(
        client.POST("/api/v1/transaction/transfer/web/fetch_bulk_transfer_items", {
          body: { bulk_transfer_id: id, page, page_size: 50, ...(filter ? { validation: filter } : {}) },
        }),
      ),
    `items|${id}|${filter}|${page}|${version}`,
  );
  // Read again while Kobo works on it (its rows checked, then paid); no more once it stands
  // still, or once the page is left.
  const every = status === "validating" ? REFRESH_MS : status === "executing" ? PAYING_REFRESH_MS : null;
  useEffect(() => {
    if (every === null || batch.loading) return;
    const timer = setTimeout(() => setRound((n) => n + 1), every);
    return () => clearTimeout(timer);
  }, [every, round, batch.loading]);
  const reload = () => setRound((n) => n + 1);
  const who = useWho();
  const cancel = useAction();
  const files = useAction();
  const retry = useAction();
  const [retryKey] = useState(newIdempotencyKey);
  const [saved, setSaved] = useState<string | null>(null);
  const cancellable = shown && ["validating", "validated", "invalid", "pending_approval", "scheduled"].includes(shown.status);
  const holding = shown?.status === "pending_approval" || shown?.status === "scheduled";
  const failed = shown ? shown.counts.failed + shown.counts.reversed : 0;

  const download = () =>
    void files.run(async () => {
      if (!shown) return;
      // Kobo writes the file (every row, what was sent, checked and paid): one download.
      const answer = await call(client.POST("/api/v1/transaction/transfer/web/download_bulk_transfer_results", { body: { bulk_transfer_id: id } }));
      saveFile(answer.data);
      setSaved(answer.data.file_name);
    });
  const retryFailed = () =>
    void retry.run(async () => {
      if (!shown) return;
      const rows = (await allItems(id)).filter((item) => item.outcome === "failed" || item.outcome === "reversed").map(again);
      if (rows.length === 0) return;
      const answer = await call(
        client.POST("/api/v1/transaction/transfer/web/create_bulk_transfer", {
          body: {
            source_account_number: shown.source_account_number,
            on_invalid: shown.on_invalid,
            items: rows,
            ...(shown.reference ? { reference: retryReference(shown.reference) } : {}),
            ...(shown.narration ? { narration: shown.narration } : {}),
          },
          params: { header: { "Idempotency-Key": retryKey } },
        }),
      );
      navigate(`bulk/${answer.data.bulk_transfer_id}`);
    });

  return (
    <section>
      <div class="heading">
        <h1>Bulk payment</h1>
        <Link to="bulk">All bulk payments</Link>
      </div>
      <ErrorNote error={batch.error} />
      {shown && <Figures batch={shown} who={who} />}
      {shown?.status === "validated" &&
        (can("/api/v1/transaction/transfer/web/authorize_bulk_transfer") ? (
          <Authorise batch={shown} onDone={reload} />
        ) : (
          <Notice>Every row is checked: a member who may make payments authorises it. Nothing has moved.</Notice>
        ))}
      {shown?.status === "pending_approval" && <Held batch={shown} who={who} onDone={reload} />}
      {shown?.status === "scheduled" && (
        <div class="notice" role="status" data-testid="bulk-scheduled">
          <strong>Scheduled for {lagosTime(shown.execute_at)} (Lagos time).</strong> {naira(shown.totals.reserved)} is set aside
          now; each row is paid then, checked again as it moves. Until then you can cancel it and the money comes back.
        </div>
      )}
      {shown?.status === "rejected" && (
        <div class="notice error" role="status" data-testid="bulk-rejected">
          <strong>
            Rejected by {who(shown.reviewed_by, shown.reviewed_by_name)}
            {shown.review_reason ? `: “${shown.review_reason}”` : ""}.
          </strong>{" "}
          Nothing was paid; the {naira(shown.totals.released)} set aside came back to the account.
        </div>
      )}
      {shown && (shown.status === "executing" || shown.status === "completed") && <Progress batch={shown} />}
      <div class="actions bulk-actions">
        {cancellable && can("/api/v1/transaction/transfer/web/cancel_bulk_transfer") && (
          <button
            type="button"
            class="secondary"
            disabled={cancel.busy}
            onClick={() =>
              void cancel.run(async () => {
                await call(client.POST("/api/v1/transaction/transfer/web/cancel_bulk_transfer", { body: { bulk_transfer_id: id } }));
                notifyApprovalsChanged();
                reload();
              })
            }
          >
            {holding && shown ? `Cancel this batch and release ${naira(shown.totals.reserved)}` : "Cancel this batch"}
          </button>
        )}
        {shown?.authorised_at && !holding && (
          <button type="button" class="secondary" disabled={files.busy} onClick={download}>
            {files.busy ? "Preparing the results…" : "Download results (CSV)"}
          </button>
        )}
        {shown?.status === "completed" && failed > 0 && can("/api/v1/transaction/transfer/web/create_bulk_transfer") && (
          <button type="button" class="secondary" disabled={retry.busy} onClick={retryFailed}>
            Retry the {failed} failed {failed === 1 ? "payment" : "payments"} as a new batch
          </button>
        )}
      </div>
      {saved && (
        <p class="muted small" data-testid="bulk-results-saved">
          Saved as {saved}.
        </p>
      )}
      <BulkRefusal error={cancel.error ?? files.error ?? retry.error} batch={shown} />
      <h2>Rows</h2>
      <Field label="Show">
        <select
          name="validation"
          value={filter}
          onChange={(e) => {
            setFilter(e.currentTarget.value as "" | "valid" | "invalid");
            setPage(1);
          }}
        >
          <option value="">Every row</option>
          <option value="invalid">Rows that cannot be paid</option>
          <option value="valid">Rows to pay</option>
        </select>
      </Field>
      <ErrorNote error={items.error} />
      <Rows items={items.value?.data ?? []} busy={items.loading} paid={Boolean(shown?.authorised_at)} />
      {(page > 1 || items.value?.pagination.has_more) && (
        <nav class="pager" aria-label="Rows pages">
          <button type="button" class="secondary" disabled={page === 1} onClick={() => setPage((n) => n - 1)}>
            ← Previous
          </button>
          <span class="muted">Page {page}</span>
          <button type="button" class="secondary" disabled={!items.value?.pagination.has_more} onClick={() => setPage((n) => n + 1)}>
            Next →
          </button>
        </nav>
      )}
    </section>
  );
}

/**
 * A refusal about a batch in words that name it: its total and account where money is short,
 * where it stands when it moved on meanwhile; otherwise as every page says it.
 */
function BulkRefusal({ error, batch, approving = false }: { error: unknown; batch: Batch | undefined; approving?: boolean }) {
  if (!(error instanceof Refusal) || !batch) return <ErrorNote error={error} context="otp" />;
  let words: string | null = null;
  if (error.code === "83") {
    words = `Nothing was set aside: account ${batch.source_account_number} cannot cover this batch's ${naira(batch.totals.total)}, or that is more than your business may send today. Add money to the account (or wait for tomorrow's limit), then send a new code and authorise again.`;
  } else if (error.code === "48") {
    words = "This batch has moved on since this page read it (another member may have acted on it): the page now shows where it stands.";
  } else if (error.code === "43" && approving) {
    words = "You authorised this batch, so another member approves it (or your role does not allow approving payments).";
  } else if (error.code === "01" && /total|item_count/.test(error.message)) {
    words = "This batch's total or rows are not what this page showed: read the page again, check the figures, and authorise again.";
  }
  if (!words) return <ErrorNote error={error} context="otp" />;
  return (
    <div class="notice error" role="alert" data-code={error.code}>
      <strong>{words}</strong>
    </div>
  );
}

function Figures({ batch, who }: { batch: Batch; who: Who }) {
  const { counts, totals } = batch;
  const released = totals.released !== "0.00" && totals.released !== "0";
  return (
    <dl class="card details" data-testid="bulk-figures" data-status={batch.status}>
      <dt>Status</dt>
      <dd>
        <BulkStatus status={batch.status} />
      </dd>
      <dt>From</dt>
      <dd class="mono">{batch.source_account_number}</dd>
      {batch.reference && (
        <>
          <dt>Your reference</dt>
          <dd class="mono">{batch.reference}</dd>
        </>
      )}
      {batch.execute_at && (
        <>
          <dt>Pays at</dt>
          <dd data-testid="bulk-execute-at">{lagosTime(batch.execute_at)} (Lagos time)</dd>
        </>
      )}
      <dt>Rows</dt>
      <dd>
        <span data-testid="bulk-valid">{counts.valid}</span> to pay, <span data-testid="bulk-invalid">{counts.invalid}</span>{" "}
        cannot be paid{counts.pending > 0 && `, ${counts.pending} being checked`} (of {counts.items})
      </dd>
      <dt>Amounts</dt>
      <dd>{naira(totals.amount)}</dd>
      <dt>Fees and VAT</dt>
      <dd>
        {naira(totals.fees)} + {naira(totals.vat)}
      </dd>
      <dt>Total to debit</dt>
      <dd data-testid="bulk-total">
        <strong>{naira(totals.total)}</strong>
      </dd>
      <dt>Made by</dt>
      <dd>
        {who(batch.created_by, batch.created_by_name)} · {lagosTime(batch.created_at)}
      </dd>
      {batch.authorised_at && (
        <>
          <dt>Authorised by</dt>
          <dd data-testid="bulk-authorised">
            {who(batch.authorised_by, batch.authorised_by_name)} · {lagosTime(batch.authorised_at)}
          </dd>
          <dt>Set aside</dt>
          <dd data-testid="bulk-reserved">{naira(totals.reserved)}</dd>
        </>
      )}
      {batch.reviewed_at && (
        <>
          <dt>{batch.status === "rejected" ? "Rejected by" : "Approved by"}</dt>
          <dd data-testid="bulk-reviewed">
            {who(batch.reviewed_by, batch.reviewed_by_name)} · {lagosTime(batch.reviewed_at)}
            {batch.review_reason && <span class="block muted">“{batch.review_reason}”</span>}
          </dd>
        </>
      )}
      {(released || batch.status === "completed") && batch.authorised_at && (
        <>
          <dt>Came back unspent</dt>
          <dd data-testid="bulk-released">{naira(totals.released)}</dd>
        </>
      )}
      {batch.completed_at && (
        <>
          <dt>Completed</dt>
          <dd data-testid="bulk-completed">{lagosTime(batch.completed_at)}</dd>
        </>
      )}
    </dl>
  );
}

/** A code bound to this batch (its total and rows), for its maker or a checker. */
function batchOtp(id: string) {
  return async () => (await call(client.POST("/api/v1/transaction/transfer/web/generate_bulk_transfer_otp", { body: { bulk_transfer_id: id } }))).data;
}

/** A checked batch: what paying it debits, then its code, then authorised. */
function Authorise({ batch, onDone }: { batch: Batch; onDone: () => void }) {
  const [asking, setAsking] = useState(false);
  const { counts, totals } = batch;
  return (
    <div class="card" data-testid="bulk-authorise">
      <h2>Pay this batch</h2>
      <p>
        Paying it debits <strong data-testid="bulk-authorise-total">{naira(totals.total)}</strong> from{" "}
        <span class="mono">{batch.source_account_number}</span>: {naira(totals.amount)} to{" "}
        {counts.valid === 1 ? "1 beneficiary" : `${counts.valid.toLocaleString("en")} beneficiaries`}, and {naira(totals.fees)} in fees
        with {naira(totals.vat)} VAT.
        {counts.invalid > 0 && ` The ${counts.invalid} ${counts.invalid === 1 ? "row" : "rows"} that cannot be paid are left out.`}
      </p>
      <p class="muted">
        The whole total is set aside at once, then each row is paid in turn
        {batch.execute_at && Date.parse(batch.execute_at) > Date.now() ? `, from ${lagosTime(batch.execute_at)} (Lagos time)` : ""}. If your
        business's approval policy covers it, it waits, set aside, for a second member's approval.
      </p>
      {asking ? (
        <AuthoriseForm batch={batch} onDone={onDone} onBack={() => setAsking(false)} />
      ) : (
        <button type="button" onClick={() => setAsking(true)}>
          Authorise {naira(totals.total)}
        </button>
      )}
    </div>
  );
}

function AuthoriseForm({ batch, onDone, onBack }: { batch: Batch; onDone: () => void; onBack: () => void }) {
  const [otp, setOtp] = useState("");
  // One key for this attempt: a retry after a lost answer cannot authorise twice.
  const [key] = useState(newIdempotencyKey);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      await call(
        client.POST("/api/v1/transaction/transfer/web/authorize_bulk_transfer", {
          body: { bulk_transfer_id: batch.bulk_transfer_id, total: batch.totals.total, item_count: batch.counts.valid, otp },
          params: { header: { "Idempotency-Key": key } },
        }),
      );
      notifyApprovalsChanged();
      onDone();
    });
  };
  return (
    <form noValidate onSubmit={submit} data-testid="bulk-authorise-form">
      <OtpStep value={otp} onChange={setOtp} request={batchOtp(batch.bulk_transfer_id)} />
      <BulkRefusal error={action.error} batch={batch} />
      <div class="actions">
        <button type="submit" disabled={action.busy}>
          {action.busy ? "Authorising…" : `Authorise and pay ${naira(batch.totals.total)}`}
        </button>
        <button type="button" class="secondary" onClick={onBack}>
          Back
        </button>
      </div>
    </form>
  );
}

/** A batch held for a second member: approved with the checker's own code, or rejected with a reason. */
function Held({ batch, who, onDone }: { batch: Batch; who: Who; onDone: () => void }) {
  const [deciding, setDeciding] = useState<"approve" | "reject" | null>(null);
  const me = currentSession()?.profile.member.id;
  const mine = batch.authorised_by === me;
  const reviews = can("/api/v1/transaction/transfer/web/approve_bulk_transfer");
  return (
    <div class="card" data-testid="bulk-held">
      <h2>Waiting for approval</h2>
      <p>
        Authorised by {who(batch.authorised_by, batch.authorised_by_name)}: its {naira(batch.totals.reserved)} is set aside from{" "}
        <span class="mono">{batch.source_account_number}</span>, and nothing is paid until a second member approves it.
        {batch.expires_at && <> Unreviewed, it expires {lagosTime(batch.expires_at)} and the money comes back.</>}
      </p>
      {mine && <p class="muted">You authorised this batch: another member approves it. Cancelling it releases the money set aside.</p>}
      {!mine && !reviews && <p class="muted">A member who may approve payments approves or rejects it.</p>}
      {reviews && !mine && !deciding && (
        <div class="actions">
          <button type="button" onClick={() => setDeciding("approve")}>
            Approve
          </button>
          <button type="button" class="danger" onClick={() => setDeciding("reject")}>
            Reject
          </button>
        </div>
      )}
      {deciding && <Decide batch={batch} decision={deciding} onDone={onDone} onBack={() => setDeciding(null)} />}
    </div>
  );
}

function Decide({ batch, decision, onDone, onBack }: { batch: Batch; decision: "approve" | "reject"; onDone: () => void; onBack: () => void }) {
  const [otp, setOtp] = useState("");
  const [reason, setReason] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const action = useAction();
  const id = batch.bulk_transfer_id;
  const submit = (event: Event) => {
    event.preventDefault();
    if (decision === "reject" && !reason.trim()) return setProblem("Reason: say why, for whoever made it.");
    setProblem(null);
    void action.run(async () => {
      if (decision === "approve") {
        await call(client.POST("/api/v1/transaction/transfer/web/approve_bulk_transfer", { body: { bulk_transfer_id: id, otp } }));
      } else {
        await call(client.POST("/api/v1/transaction/transfer/web/reject_bulk_transfer", { body: { bulk_transfer_id: id, reason: reason.trim() } }));
      }
      notifyApprovalsChanged();
      onDone();
    });
  };
  return (
    <form noValidate onSubmit={submit} data-testid="bulk-decide">
      {problem && (
        <div class="notice error" role="alert">
          <strong>{problem}</strong>
        </div>
      )}
      {decision === "approve" ? (
        <>
          <p>
            Approving pays {batch.counts.valid.toLocaleString("en")} {batch.counts.valid === 1 ? "row" : "rows"}, {naira(batch.totals.total)} in all,
            now.
          </p>
          <OtpStep value={otp} onChange={setOtp} request={batchOtp(id)} />
        </>
      ) : (
        <Field label="Reason" hint="Whoever made it reads it on the batch's page; the money set aside comes back to the account">
          <input name="reason" maxLength={500} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
        </Field>
      )}
      <BulkRefusal error={action.error} batch={batch} approving={decision === "approve"} />
      <div class="actions">
        <button type="submit" class={decision === "reject" ? "danger solid" : ""} disabled={action.busy}>
          {decision === "approve" ? `Approve and pay ${naira(batch.totals.total)}` : "Reject the batch"}
        </button>
        <button type="button" class="secondary" onClick={onBack}>
          Back
        </button>
      </div>
    </form>
  );
}

/** The payments of an authorised batch: how many paid, failed, on their way, of the rows to pay. */
function Progress({ batch }: { batch: Batch }) {
  const { valid, succeeded, failed, reversed, processing } = batch.counts;
  const ended = succeeded + failed + reversed;
  const waiting = Math.max(0, valid - ended - processing);
  const share = (n: number) => `${valid > 0 ? ((n * 100) / valid).toFixed(2) : "0"}%`;
  const completed = batch.status === "completed";
  return (
    <div class="card" data-testid="bulk-progress" data-status={batch.status}>
      <h2>{completed ? "Every payment has its outcome" : "Paying…"}</h2>
      <div
        class="progress"
        role="progressbar"
        aria-label="Payments with their outcome"
        aria-valuemin={0}
        aria-valuemax={valid}
        aria-valuenow={ended}
        aria-valuetext={`${ended} of ${valid}`}
      >
        <span class="good" style={{ width: share(succeeded) }} />
        <span class="bad" style={{ width: share(failed + reversed) }} />
        <span class="wait" style={{ width: share(processing) }} />
      </div>
      <p>
        <strong data-testid="bulk-succeeded">{succeeded.toLocaleString("en")}</strong> paid ·{" "}
        <span data-testid="bulk-failed">{failed.toLocaleString("en")}</span> failed ·{" "}
        <span data-testid="bulk-reversed">{reversed.toLocaleString("en")}</span> returned by the other bank ·{" "}
        <span data-testid="bulk-processing">{processing.toLocaleString("en")}</span> on their way
        {waiting > 0 && <> · {waiting.toLocaleString("en")} not sent yet</>} · of {valid.toLocaleString("en")} to pay
      </p>
      {completed ? (
        failed + reversed > 0 && (
          <p class="muted">
            {failed > 0 && `What the failed payments did not spend, ${naira(batch.totals.released)}, came back to the account. `}
            {reversed > 0 && "Each payment the other bank returned came back to the account on its own. "}
            The rows below say why each one failed.
          </p>
        )
      ) : (
        <p class="muted">Kobo pays each row in turn, and payments to other banks are confirmed by them: this page follows along.</p>
      )}
    </div>
  );
}

function Rows({ items, busy, paid }: { items: Item[]; busy: boolean; paid: boolean }) {
  if (items.length === 0 && !busy) return <Empty>No rows here.</Empty>;
  // Once the batch is authorised, a row that can be paid says what became of its payment.
  const last = paid ? "Outcome" : "Check";
  return (
    <table class="list bulk-rows" aria-busy={busy}>
      <thead>
        <tr>
          <th class="amount">Row</th>
          <th>To</th>
          <th>Holder</th>
          <th class="amount">Amount</th>
          <th class="amount">Fee and VAT</th>
          <th>{last}</th>
        </tr>
      </thead>
      <tbody>
        {items.map((item) => (
          <tr key={item.index} data-row={item.index} data-validation={item.validation} data-outcome={item.outcome}>
            <td data-label="Row" class="amount">
              {item.index + 1}
            </td>
            <td data-label="To">
              <span class="mono nowrap">{item.account_number}</span>
              <span class="muted block small">{item.bank_name ?? item.bank_code}</span>
            </td>
            <td data-label="Holder">
              {item.account_name}
              {item.confirmed_name && item.confirmed_name !== item.account_name && (
                <span class="muted block small">bank: {item.confirmed_name}</span>
              )}
              {item.reference && <span class="muted block small mono">{item.reference}</span>}
            </td>
            <td data-label="Amount" class="amount">
              {naira(item.amount)}
            </td>
            <td data-label="Fee and VAT" class="amount">
              {item.fee && item.vat ? `${naira(item.fee)} + ${naira(item.vat)}` : "—"}
            </td>
            <td data-label={last}>
              {item.validation === "invalid" ? (
                <span class="small" data-testid="refusal">
                  <Badge value="failed" text="cannot be paid" /> {item.refusal_message}
                </span>
              ) : paid ? (
                <span class="small" data-testid="outcome">
                  <Outcome outcome={item.outcome} />
                  {item.reference_number && (
                    <span class="block">
                      <Link to={`transfers/${encodeURIComponent(item.reference_number)}`}>
                        <span class="mono">{item.reference_number}</span>
                      </Link>
                    </span>
                  )}
                  {(item.failure_code || item.failure_message) && (
                    <span class="block" data-testid="failure" data-code={item.failure_code ?? undefined}>
                      {item.failure_message ?? "Refused"}
                      {item.failure_code && <span class="muted"> (code {item.failure_code})</span>}
                    </span>
                  )}
                </span>
              ) : (
                <Badge value={item.validation === "valid" ? "success" : "pending"} text={item.validation === "valid" ? "to pay" : "checking"} />
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
