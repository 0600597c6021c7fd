// Transfers: the list, one transfer followed until its status is final, and its cancellation.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { call, client, type Schemas } from "../api";
import { naira, when } from "../money";
import { can, currentSession } from "../session";
import { Badge, chosen, Empty, ErrorNote, Field, Link, Pager, useAction, useCursorPages, useLoad } from "../ui";

type Transfer = Schemas["Transfer"];
type TransferFilters = Schemas["TransferFilters"];

/** Statuses no transfer leaves: every other one (held, processing) is followed. */
const FINAL: ReadonlySet<string> = new Set(["success", "failed", "reversed", "rejected", "cancelled", "expired"]);

export function isFinal(transfer: Transfer): boolean {
  return FINAL.has(transfer.transfer_status);
}

async function fetchTransfer(referenceNumber: string): Promise<Transfer> {
  const answer = await call(client.POST("/api/v1/transaction/transfer/web/get_transfer", { body: { reference_number: referenceNumber } }));
  return answer.data;
}

/**
 * A transfer's record, asked again (`get_transfer_web`) until its status is final: every
 * second and a half while NIP has it, every five seconds while it waits for a checker.
 */
export function useFollowedTransfer(initial: Transfer): { transfer: Transfer; error: unknown } {
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
  return { transfer, error };
}

const STATUS_TEXT: Record<string, string> = {
  pending_approval: "Waiting for a checker's approval: nothing has moved yet; the amount is reserved.",
  processing: "Sent over NIP: waiting for the other bank's answer…",
  success: "Delivered to the beneficiary.",
  failed: "Failed: nothing moved.",
  reversed: "The other bank failed it: the money came back to the source account.",
  rejected: "Rejected by a checker: nothing moved.",
  cancelled: "Cancelled by its initiator: nothing moved.",
  expired: "Not reviewed in time: nothing moved.",
};

export function TransferCard({ transfer, error, onChanged }: { transfer: Transfer; error?: unknown; onChanged?: (transfer: Transfer) => void }) {
  const me = currentSession()?.profile.member.id;
  const cancel = useAction();
  const mine = transfer.initiated_by === me;
  const canCancel = mine && transfer.transfer_status === "pending_approval" && can("/api/v1/transaction/transfer/web/cancel_transfer");
  return (
    <div class="card transfer" data-reference={transfer.reference_number} data-status={transfer.transfer_status}>
      <div class="heading">
        <h2>
          {naira(transfer.amount)} to {transfer.beneficiary_account_name}
        </h2>
        <span data-testid="transfer-status">
          <Badge value={transfer.transfer_status} />
        </span>
      </div>
      <p>{STATUS_TEXT[transfer.transfer_status] ?? transfer.transfer_status}</p>
      {!isFinal(transfer) && <p class="muted following">Following its status…</p>}
      <ErrorNote error={error} />
      <dl class="details">
        <dt>Reference</dt>
        <dd class="mono" data-testid="transfer-reference">
          {transfer.reference_number}
        </dd>
        {transfer.reference && (
          <>
            <dt>Your reference</dt>
            <dd class="mono">{transfer.reference}</dd>
          </>
        )}
        <dt>Beneficiary</dt>
        <dd>
          {transfer.beneficiary_account_name} · <span class="mono">{transfer.beneficiary_account_number}</span> · {transfer.bank_name}
        </dd>
        <dt>From</dt>
        <dd>
          <Link to={`accounts/${transfer.source_account_number}`}>{transfer.source_account_number}</Link>
        </dd>
        <dt>Amount</dt>
        <dd>{naira(transfer.amount)}</dd>
        <dt>Fee and VAT</dt>
        <dd>
          {naira(transfer.fee)} + {naira(transfer.vat)} VAT
        </dd>
        <dt>Narration</dt>
        <dd>{transfer.narration}</dd>
        <dt>Approval</dt>
        <dd>
          <Badge value={transfer.approval_status} />
          {transfer.expires_at && transfer.transfer_status === "pending_approval" && <span class="muted"> · expires {when(transfer.expires_at)}</span>}
        </dd>
        {transfer.session_id && (
          <>
            <dt>NIP session</dt>
            <dd class="mono">{transfer.session_id}</dd>
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
            <dt>Reversal</dt>
            <dd class="mono">{transfer.reversal_reference_number}</dd>
          </>
        )}
        <dt>Made</dt>
        <dd>
          {when(transfer.created_at)} ({transfer.initiated_via}
          {mine ? ", by you" : ""})
        </dd>
      </dl>
      <ErrorNote error={cancel.error} />
      {canCancel && (
        <button
          type="button"
          class="danger"
          disabled={cancel.busy}
          onClick={() =>
            void cancel.run(async () => {
              const answer = await call(
                client.POST("/api/v1/transaction/transfer/web/cancel_transfer", { body: { reference_number: transfer.reference_number } }),
              );
              onChanged?.(answer.data);
            })
          }
        >
          Cancel this transfer
        </button>
      )}
    </div>
  );
}

export function FollowedTransfer({ initial }: { initial: Transfer }) {
  const [start, setStart] = useState(initial);
  const { transfer, error } = useFollowedTransfer(start);
  return <TransferCard transfer={transfer} error={error} onChanged={setStart} />;
}

export function TransferPage({ reference }: { reference: string }) {
  const loaded = useLoad(() => fetchTransfer(reference), reference);
  return (
    <section>
      <p>
        <Link to="transfers">← Transfers</Link>
      </p>
      <ErrorNote error={loaded.error} />
      {loaded.value && <FollowedTransfer initial={loaded.value} />}
    </section>
  );
}

const TRANSFER_STATUSES = ["pending_approval", "processing", "success", "failed", "reversed", "rejected", "cancelled", "expired"] as const;

export function TransfersPage() {
  const [draft, setDraft] = useState<TransferFilters>({});
  const [filters, setFilters] = useState<TransferFilters>({});
  const applied = chosen(filters);
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
          setFilters(draft);
        }}
      >
        <Field label="Status">
          <select name="transfer_status" value={draft.transfer_status ?? ""} onChange={(e) => edit({ transfer_status: (e.currentTarget.value || undefined) as TransferFilters["transfer_status"] })}>
            <option value="">Any</option>
            {TRANSFER_STATUSES.map((status) => (
              <option value={status}>{status.replace(/_/g, " ")}</option>
            ))}
          </select>
        </Field>
        <Field label="Approval">
          <select name="approval_status" value={draft.approval_status ?? ""} onChange={(e) => edit({ approval_status: (e.currentTarget.value || undefined) as TransferFilters["approval_status"] })}>
            <option value="">Any</option>
            {["not_required", "awaiting_approval", "approved", "rejected"].map((status) => (
              <option value={status}>{status.replace(/_/g, " ")}</option>
            ))}
          </select>
        </Field>
        <Field label="From">
          <input name="start_date" type="date" value={draft.start_date ?? ""} onInput={(e) => edit({ start_date: e.currentTarget.value })} />
        </Field>
        <Field label="To">
          <input name="end_date" type="date" value={draft.end_date ?? ""} onInput={(e) => edit({ end_date: e.currentTarget.value })} />
        </Field>
        <Field label="Source account">
          <input name="source_account_number" value={draft.source_account_number ?? ""} onInput={(e) => edit({ source_account_number: e.currentTarget.value })} />
        </Field>
        <Field label="Kobo reference">
          <input name="reference_number" value={draft.reference_number ?? ""} onInput={(e) => edit({ reference_number: e.currentTarget.value })} />
        </Field>
        <Field label="Your reference">
          <input name="reference" value={draft.reference ?? ""} onInput={(e) => edit({ reference: e.currentTarget.value })} />
        </Field>
        <button type="submit">Filter</button>
      </form>
      <ErrorNote error={pages.error} />
      {pages.items.length === 0 && !pages.loading ? (
        <Empty>No transfers match.</Empty>
      ) : (
        <TransferTable transfers={pages.items} />
      )}
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
          <th>Reference</th>
          <th>Beneficiary</th>
          <th>From</th>
          <th class="amount">Amount</th>
          <th>Status</th>
          {actions && <th />}
        </tr>
      </thead>
      <tbody>
        {transfers.map((transfer) => (
          <tr key={transfer.id} data-reference={transfer.reference_number}>
            <td>{when(transfer.created_at)}</td>
            <td>
              <Link to={`transfers/${encodeURIComponent(transfer.reference_number)}`}>
                <code>{transfer.reference_number}</code>
              </Link>
            </td>
            <td>
              {transfer.beneficiary_account_name}
              <div class="muted">
                {transfer.beneficiary_account_number} · {transfer.bank_name}
              </div>
            </td>
            <td class="mono">{transfer.source_account_number}</td>
            <td class="amount">
              {naira(transfer.amount)}
              {transfer.fee !== "0.00" && <div class="muted">+ {naira(transfer.fee)} fee, {naira(transfer.vat)} VAT</div>}
            </td>
            <td>
              <Badge value={transfer.transfer_status} />
            </td>
            {actions && <td>{actions(transfer)}</td>}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
