// Transfers: the list (its filters in the address), and each transfer's receipt at its own
// address (`/transfers/<reference>`), printable, followed until its status is final, headed by
// what happened to it, naming who made it and who approved it.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { call, client, type Schemas } from "../api";
import { saveFile } from "../files";
import { koboOf, koboText, naira, when } from "../money";
import { navigate, queryValues, useLocation, withQuery } from "../router";
import { can, currentSession } from "../session";
import { Badge, chosen, Confirmed, Empty, ErrorNote, Field, Link, Pager, useAction, useCursorPages, useLoad } from "../ui";

type Transfer = Schemas["Transfer"];
type Detail = Schemas["TransferDetail"];
type TransferFilters = Schemas["TransferFilters"];

/** Statuses no transfer leaves: every other one (held, processing) is followed. */
const FINAL: ReadonlySet<string> = new Set(["success", "failed", "reversed", "rejected", "cancelled", "expired"]);

export function isFinal(transfer: Transfer): boolean {
  return FINAL.has(transfer.transfer_status);
}

async function fetchTransfer(referenceNumber: string): Promise<Detail> {
  const answer = await call(client.POST("/api/v1/transaction/transfer/web/get_transfer", { body: { reference_number: referenceNumber } }));
  return answer.data;
}

/** What happened to a payment, as its receipt's heading says it. */
export function headline(transfer: Transfer): string {
  switch (transfer.transfer_status) {
    case "success":
      return transfer.transfer_type === "intra" ? "Payment sent" : "Payment delivered";
    case "processing":
      return "Payment on its way";
    case "pending_approval":
      return "Waiting for approval";
    case "failed":
      return "Payment failed";
    case "reversed":
      return "Payment failed and returned";
    case "rejected":
      return "Payment rejected";
    case "cancelled":
      return "Payment cancelled";
    case "expired":
      return "Payment expired unapproved";
    default:
      return "Payment";
  }
}

const STATUS_TEXT: Record<string, string> = {
  pending_approval: "Nothing has left yet: the amount is set aside until another member approves or rejects it.",
  processing: "Sent to the other bank: waiting for its answer, usually within minutes.",
  success: "The beneficiary has the money.",
  failed: "Nothing was paid.",
  reversed: "The other bank refused it: the money came back to the account it left.",
  rejected: "A checker rejected it: nothing was paid, and the amount set aside is back in the account.",
  cancelled: "Its maker withdrew it before approval: nothing was paid.",
  expired: "Nobody approved it in time: nothing was paid.",
};

/**
 * A transfer's record, asked again (`get_transfer_web`) until its status is final: every
 * second and a half while the other bank has it, every five seconds while it waits for a
 * checker.
 */
function useFollowed(initial: Detail): { transfer: Detail; error: unknown; replace: (next: Detail) => void } {
  const [transfer, setTransfer] = useState(initial);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => setTransfer(initial), [initial]);
  useEffect(() => {
    if (isFinal(transfer)) return;
    const delay = transfer.transfer_status === "pending_approval" ? 5000 : 1500;
    const timer = setTimeout(() => {
      fetchTransfer(transfer.reference_number).then(
        (next) => {
          setError(null);
          setTransfer(next);
        },
        (caught: unknown) => {
          setError(caught);
          setTransfer({ ...transfer });
        },
      );
    }, delay);
    return () => clearTimeout(timer);
  }, [transfer]);
  return { transfer, error, replace: setTransfer };
}

/** The receipt of a transfer: what a business keeps, prints or sends to the beneficiary. */
export function Receipt({ transfer, error, children }: { transfer: Detail; error?: unknown; children?: ComponentChildren }) {
  const me = currentSession()?.profile.member.id;
  const business = currentSession()?.profile.business.name;
  const mine = transfer.initiated_by === me;
  const total = koboOf(transfer.amount) + koboOf(transfer.fee) + koboOf(transfer.vat);
  return (
    <article class="card transfer receipt" data-reference={transfer.reference_number} data-status={transfer.transfer_status}>
      <p class="muted print-only">{business} · payment receipt</p>
      <div class="heading">
        <h1 data-testid="receipt-heading">{headline(transfer)}</h1>
        <span data-testid="transfer-status">
          <Badge value={transfer.transfer_status} />
        </span>
      </div>
      <p class="receipt-amount">
        <strong>{naira(transfer.amount)}</strong> to <strong>{transfer.beneficiary_account_name}</strong>
      </p>
      <p>{STATUS_TEXT[transfer.transfer_status] ?? ""}</p>
      {!isFinal(transfer) && <p class="muted following no-print">Following its status…</p>}
      <ErrorNote error={error} />
      <dl class="details">
        <dt>Kobo reference</dt>
        <dd class="mono" data-testid="transfer-reference">
          {transfer.reference_number}
        </dd>
        {transfer.reference && (
          <>
            <dt>Your reference</dt>
            <dd class="mono">{transfer.reference}</dd>
          </>
        )}
        <dt>To</dt>
        <dd>
          {transfer.beneficiary_account_name}
          <div class="muted">
            <span class="mono">{transfer.beneficiary_account_number}</span> · {transfer.bank_name} · the name the bank confirmed
          </div>
        </dd>
        <dt>From</dt>
        <dd>
          {transfer.source_account_name || "Account"} · <Link to={`accounts/${transfer.source_account_number}`}>{transfer.source_account_number}</Link>
        </dd>
        <dt>Amount</dt>
        <dd>{naira(transfer.amount)}</dd>
        <dt>Fee and VAT</dt>
        <dd>
          {naira(transfer.fee)} + {naira(transfer.vat)} VAT
        </dd>
        <dt>Total debited</dt>
        <dd>
          <strong>₦{koboText(total)}</strong>
        </dd>
        <dt>Narration</dt>
        <dd>{transfer.narration}</dd>
        <dt>Made by</dt>
        <dd data-testid="made-by">
          {transfer.initiated_by_name ?? (transfer.initiated_via === "integration" ? "Your integration" : "—")}
          {mine ? " (you)" : ""} · {when(transfer.created_at)}
          {transfer.initiated_via === "integration" && <span class="muted"> · through the integration</span>}
        </dd>
        {transfer.approval_status !== "not_required" && (
          <>
            <dt>Approval</dt>
            <dd data-testid="approval">
              <Badge value={transfer.approval_status} />
              {transfer.reviewed_by_name && (
                <>
                  {" "}
                  by {transfer.reviewed_by_name} · {when(transfer.updated_at)}
                </>
              )}
              {transfer.expires_at && transfer.transfer_status === "pending_approval" && (
                <span class="muted"> · expires {when(transfer.expires_at)} if nobody approves it</span>
              )}
            </dd>
          </>
        )}
        {transfer.session_id && (
          <>
            <dt>NIP session</dt>
            <dd class="mono small">{transfer.session_id}</dd>
          </>
        )}
        {transfer.failure_reason && (
          <>
            <dt>Why</dt>
            <dd>{transfer.failure_reason}</dd>
          </>
        )}
        {transfer.reversal_reference_number && (
          <>
            <dt>Returned by</dt>
            <dd class="mono">{transfer.reversal_reference_number}</dd>
          </>
        )}
        <dt>Last change</dt>
        <dd>{when(transfer.updated_at)}</dd>
      </dl>
      {children}
    </article>
  );
}

export function TransferPage({ reference }: { reference: string }) {
  const loaded = useLoad(() => fetchTransfer(reference), reference);
  return (
    <section>
      <p class="no-print">
        <Link to="transfers">← Transfers</Link>
      </p>
      <ErrorNote error={loaded.error} />
      {loaded.value && <FollowedReceipt initial={loaded.value} />}
    </section>
  );
}

function FollowedReceipt({ initial }: { initial: Detail }) {
  const { transfer, error, replace } = useFollowed(initial);
  const cancel = useAction();
  const download = useAction();
  const me = currentSession()?.profile.member.id;
  const canCancel = transfer.initiated_by === me && transfer.transfer_status === "pending_approval" && can("/api/v1/transaction/transfer/web/cancel_transfer");
  return (
    <Receipt transfer={transfer} error={error}>
      <ErrorNote error={cancel.error} />
      <ErrorNote error={download.error} />
      <div class="actions no-print">
        <button type="button" class="secondary" onClick={() => window.print()}>
          Print the receipt
        </button>
        {can("/api/v1/transaction/transfer/web/download_transfer_receipt") && (
          <button
            type="button"
            class="secondary"
            disabled={download.busy}
            onClick={() =>
              void download.run(async () => {
                const answer = await call(
                  client.POST("/api/v1/transaction/transfer/web/download_transfer_receipt", { body: { reference_number: transfer.reference_number } }),
                );
                saveFile(answer.data);
              })
            }
          >
            {download.busy ? "Preparing the PDF…" : "Download PDF receipt"}
          </button>
        )}
        {can("/api/v1/transaction/transfer/web/funds_transfer") && (
          <Link to="pay" class="button secondary">
            Make another payment
          </Link>
        )}
        {canCancel && (
          <Confirmed
            label="Cancel this payment"
            question="Withdraw this payment? Nothing is paid and the amount set aside goes back to the account."
            confirm="Withdraw it"
            danger
            disabled={cancel.busy}
            onConfirm={() =>
              void cancel.run(async () => {
                await call(client.POST("/api/v1/transaction/transfer/web/cancel_transfer", { body: { reference_number: transfer.reference_number } }));
                replace(await fetchTransfer(transfer.reference_number));
              })
            }
          />
        )}
      </div>
    </Receipt>
  );
}

const TRANSFER_STATUSES = ["pending_approval", "processing", "success", "failed", "reversed", "rejected", "cancelled", "expired"] as const;

const FILTER_NAMES = ["transfer_status", "approval_status", "start_date", "end_date", "source_account_number", "reference_number", "reference"] as const;

export function TransfersPage() {
  const { query } = useLocation();
  const filters = queryValues(query) as TransferFilters;
  const [draft, setDraft] = useState<TransferFilters>(filters);
  const [problem, setProblem] = useState<string | null>(null);
  const applied = chosen(Object.fromEntries(FILTER_NAMES.map((name) => [name, filters[name]])) as TransferFilters);
  const pages = useCursorPages(
    async (cursor) => call(client.POST("/api/v1/transaction/transfer/web/fetch_transfers", { body: { filters: applied, limit: 20, ...cursor } })),
    JSON.stringify(applied),
  );
  const edit = (change: Partial<TransferFilters>) => setDraft({ ...draft, ...change });
  return (
    <section>
      <div class="heading">
        <h1>Transfers</h1>
        {can("/api/v1/transaction/transfer/web/funds_transfer") && (
          <Link to="pay" class="button">
            New payment
          </Link>
        )}
      </div>
      <form
        noValidate
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
          const number = draft.source_account_number?.trim();
          if (number && !/^\d{10}$/.test(number)) return setProblem("From account: an account number has 10 digits.");
          setProblem(null);
          navigate(withQuery("transfers", { ...draft }));
        }}
      >
        <Field label="Status">
          <select name="transfer_status" value={draft.transfer_status ?? ""} onChange={(e) => edit({ transfer_status: (e.currentTarget.value || undefined) as TransferFilters["transfer_status"] })}>
            <option value="">Any</option>
            {TRANSFER_STATUSES.map((status) => (
              <option value={status}>{headline({ transfer_status: status, transfer_type: "inter" } as Transfer)}</option>
            ))}
          </select>
        </Field>
        <Field label="Approval">
          <select name="approval_status" value={draft.approval_status ?? ""} onChange={(e) => edit({ approval_status: (e.currentTarget.value || undefined) as TransferFilters["approval_status"] })}>
            <option value="">Any</option>
            <option value="not_required">Not needed</option>
            <option value="awaiting_approval">Waiting for approval</option>
            <option value="approved">Approved</option>
            <option value="rejected">Rejected</option>
          </select>
        </Field>
        <Field label="From date">
          <input name="start_date" type="date" value={draft.start_date ?? ""} onInput={(e) => edit({ start_date: e.currentTarget.value })} />
        </Field>
        <Field label="To date">
          <input name="end_date" type="date" value={draft.end_date ?? ""} onInput={(e) => edit({ end_date: e.currentTarget.value })} />
        </Field>
        <Field label="From account">
          <input name="source_account_number" inputMode="numeric" value={draft.source_account_number ?? ""} onInput={(e) => edit({ source_account_number: e.currentTarget.value })} />
        </Field>
        <Field label="Kobo reference">
          <input name="reference_number" value={draft.reference_number ?? ""} onInput={(e) => edit({ reference_number: e.currentTarget.value })} />
        </Field>
        <button type="submit">Filter</button>
      </form>
      {problem && (
        <div class="notice error" role="alert">
          <strong>{problem}</strong>
        </div>
      )}
      <ErrorNote error={pages.error} />
      {pages.items.length === 0 && !pages.loading ? <Empty>No transfers match.</Empty> : <TransferTable transfers={pages.items} />}
      <Pager pages={pages} label="Transfers" />
    </section>
  );
}

export function TransferTable({ transfers, actions }: { transfers: Transfer[]; actions?: (transfer: Transfer) => ComponentChildren }) {
  return (
    <table class="list">
      <thead>
        <tr>
          <th>Made</th>
          <th>To</th>
          <th>From</th>
          <th class="amount">Amount</th>
          <th>Status</th>
          {actions && <th />}
        </tr>
      </thead>
      <tbody>
        {transfers.map((transfer) => (
          <tr key={transfer.id} data-reference={transfer.reference_number}>
            <td data-label="Made">
              {when(transfer.created_at)}
              <div>
                <Link to={`transfers/${encodeURIComponent(transfer.reference_number)}`}>
                  <span class="mono small">{transfer.reference_number}</span>
                </Link>
              </div>
            </td>
            <td data-label="To">
              {transfer.beneficiary_account_name}
              <div class="muted">
                {transfer.beneficiary_account_number} · {transfer.bank_name}
              </div>
            </td>
            <td data-label="From" class="mono">
              {transfer.source_account_number}
            </td>
            <td data-label="Amount" class="amount">
              {naira(transfer.amount)}
              {transfer.fee !== "0.00" && <div class="muted">+ {naira(transfer.fee)} fee, {naira(transfer.vat)} VAT</div>}
            </td>
            <td data-label="Status">
              <Badge value={transfer.transfer_status} />
            </td>
            {actions && <td data-label="">{actions(transfer)}</td>}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
