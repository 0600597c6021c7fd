// The checker's queue, each held payment with what a person decides on (who made it, why, to
// whom as the bank confirmed the name, from which account and what it keeps once it is sent),
// approved with one's own code or rejected with a reason; the bulk payments held whole, each
// leading to its page where it is approved or rejected; and the approval policy that fills
// the queue.
import { useState } from "preact/hooks";
import { call, client, newIdempotencyKey, Refusal, type Schemas } from "../api";
import { amountField, koboText, naira, parseAmount, when } from "../money";
import { navigate } from "../router";
import { can, currentSession } from "../session";
import { notifyApprovalsChanged } from "../waiting";
import { Badge, Empty, ErrorNote, Field, Link, Notice, OtpStep, Pager, useAction, useCursorPages, useLoad } from "../ui";
import { BulkStatus, useWho } from "./bulk";

type Detail = Schemas["TransferDetail"];

export function ApprovalsPage() {
  const [round, setRound] = useState(0);
  const [reviewing, setReviewing] = useState<{ transfer: Detail; decision: "approve" | "reject" } | null>(null);
  const me = currentSession()?.profile.member.id;
  const pages = useCursorPages(
    async (cursor) => call(client.POST("/api/v1/transaction/transfer/web/fetch_pending_transfers", { body: { limit: 20, ...cursor } })),
    `pending-${round}`,
  );
  const canReview = can("/api/v1/transaction/transfer/web/approve_transfer");
  const finish = (transfer: Schemas["Transfer"]) => {
    setReviewing(null);
    setRound((n) => n + 1);
    notifyApprovalsChanged();
    navigate(`transfers/${encodeURIComponent(transfer.reference_number)}`);
  };
  return (
    <section>
      <h1>Approvals</h1>
      {can("/api/v1/transaction/transfer/web/get_approval_policy") && <Policy />}
      <h2>Waiting for approval</h2>
      <p class="muted">Oldest first. Whoever made a payment cannot approve it: another member does, with their own one-time code.</p>
      <ErrorNote error={pages.error} />
      {pages.items.length === 0 && !pages.loading ? (
        <Empty>Nothing is waiting for approval.</Empty>
      ) : (
        <div class="held-list">
          {pages.items.map((transfer) =>
            reviewing?.transfer.id === transfer.id ? (
              <Review key={transfer.id} transfer={transfer} decision={reviewing.decision} onDone={finish} onCancel={() => setReviewing(null)} />
            ) : (
              <Held
                key={transfer.id}
                transfer={transfer}
                mine={transfer.initiated_by === me}
                canReview={canReview}
                onReview={(decision) => setReviewing({ transfer, decision })}
              />
            ),
          )}
        </div>
      )}
      <Pager pages={pages} label="Approvals" oldestFirst />
      {can("/api/v1/transaction/transfer/web/fetch_bulk_transfers") && <HeldBatches />}
    </section>
  );
}

/** Bulk payments held whole by the approval policy, their money set aside: each opens its page to decide. */
function HeldBatches() {
  const me = currentSession()?.profile.member.id;
  const who = useWho();
  const pages = useCursorPages(
    async (cursor) =>
      call(client.POST("/api/v1/transaction/transfer/web/fetch_bulk_transfers", { body: { status: "pending_approval", limit: 20, ...cursor } })),
    "held-batches",
  );
  const canReview = can("/api/v1/transaction/transfer/web/approve_bulk_transfer");
  return (
    <>
      <h2>Bulk payments waiting for approval</h2>
      <ErrorNote error={pages.error} />
      {pages.items.length === 0 && !pages.loading ? (
        <Empty>No bulk payment is waiting for approval.</Empty>
      ) : (
        <div class="held-list">
          {pages.items.map((batch) => (
            <article key={batch.bulk_transfer_id} class="card held held-batch" data-batch={batch.bulk_transfer_id}>
              <div class="heading">
                <h3>
                  {naira(batch.totals.total)} to {batch.counts.valid.toLocaleString("en")} {batch.counts.valid === 1 ? "beneficiary" : "beneficiaries"}
                </h3>
                <BulkStatus status={batch.status} />
              </div>
              <dl class="details">
                <dt>Authorised by</dt>
                <dd data-testid="held-batch-maker">
                  {who(batch.authorised_by, batch.authorised_by_name)} · {when(batch.authorised_at)}
                </dd>
                <dt>From</dt>
                <dd>
                  <span class="mono">{batch.source_account_number}</span>
                  <div class="muted">{naira(batch.totals.reserved)} already set aside</div>
                </dd>
                <dt>Rows</dt>
                <dd>
                  {batch.counts.valid.toLocaleString("en")} to pay
                  {batch.counts.invalid > 0 && `, ${batch.counts.invalid.toLocaleString("en")} left out (cannot be paid)`} ·{" "}
                  {naira(batch.totals.amount)} + {naira(batch.totals.fees)} fees + {naira(batch.totals.vat)} VAT
                </dd>
                {batch.reference && (
                  <>
                    <dt>Reference</dt>
                    <dd class="mono">{batch.reference}</dd>
                  </>
                )}
              </dl>
              <div class="actions">
                <Link to={`bulk/${batch.bulk_transfer_id}`} class="button">
                  {canReview && batch.authorised_by !== me ? "Review and decide" : "Open the batch"}
                </Link>
                {canReview && batch.authorised_by === me && <span class="muted">You authorised it: another member approves it.</span>}
              </div>
            </article>
          ))}
        </div>
      )}
      <Pager pages={pages} label="Bulk payments waiting" oldestFirst />
    </>
  );
}

/** What a checker reads of a held payment before deciding. */
function Facts({ transfer }: { transfer: Detail }) {
  return (
    <dl class="details">
      <dt>To</dt>
      <dd data-testid="held-beneficiary">
        {transfer.beneficiary_account_name}
        <div class="muted">
          <span class="mono">{transfer.beneficiary_account_number}</span> · {transfer.bank_name} · the name the bank confirmed
        </div>
      </dd>
      <dt>Made by</dt>
      <dd data-testid="held-maker">
        {transfer.initiated_by_name ?? "Your integration"} · {when(transfer.created_at)}
      </dd>
      <dt>Narration</dt>
      <dd data-testid="held-narration">{transfer.narration}</dd>
      <dt>From</dt>
      <dd>
        {transfer.source_account_name} · <span class="mono">{transfer.source_account_number}</span>
        {transfer.source_account_balance !== null && (
          <div class="muted" data-testid="held-balance-after">
            Balance once approved: {naira(transfer.source_account_balance)} (the amount is already set aside)
          </div>
        )}
      </dd>
      {transfer.fee !== "0.00" && (
        <>
          <dt>Fee and VAT</dt>
          <dd>
            {naira(transfer.fee)} + {naira(transfer.vat)}
          </dd>
        </>
      )}
      <dt>Reference</dt>
      <dd>
        <Link to={`transfers/${encodeURIComponent(transfer.reference_number)}`}>
          <span class="mono">{transfer.reference_number}</span>
        </Link>
        {transfer.expires_at && <span class="muted"> · expires {when(transfer.expires_at)} if nobody approves it</span>}
      </dd>
    </dl>
  );
}

function Held({ transfer, mine, canReview, onReview }: { transfer: Detail; mine: boolean; canReview: boolean; onReview: (decision: "approve" | "reject") => void }) {
  return (
    <article class="card held" data-reference={transfer.reference_number}>
      <div class="heading">
        <h3>
          {naira(transfer.amount)} to {transfer.beneficiary_account_name}
        </h3>
        <Badge value="pending_approval" />
      </div>
      <Facts transfer={transfer} />
      {canReview && (
        <div class="actions">
          <button type="button" disabled={mine} onClick={() => onReview("approve")}>
            Approve
          </button>
          <button type="button" class="danger" onClick={() => onReview("reject")}>
            Reject
          </button>
          {mine && <span class="muted">You made this payment: another member approves it.</span>}
        </div>
      )}
    </article>
  );
}

function Review({ transfer, decision, onDone, onCancel }: { transfer: Detail; decision: "approve" | "reject"; onDone: (t: Schemas["Transfer"]) => void; onCancel: () => void }) {
  const [otp, setOtp] = useState("");
  const [reason, setReason] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const [key] = useState(newIdempotencyKey);
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    if (decision === "reject" && !reason.trim()) return setProblem("Reason: say why, for whoever made it.");
    setProblem(null);
    await action.run(async () => {
      const answer =
        decision === "approve"
          ? await call(
              client.POST("/api/v1/transaction/transfer/web/approve_transfer", {
                body: { reference_number: transfer.reference_number, otp },
                params: { header: { "Idempotency-Key": key } },
              }),
            )
          : await call(client.POST("/api/v1/transaction/transfer/web/reject_transfer", { body: { reference_number: transfer.reference_number, reason: reason.trim() } }));
      onDone(answer.data);
    });
  };
  return (
    <form noValidate class="card held reviewing" onSubmit={submit} data-testid="review" data-reference={transfer.reference_number}>
      <h3>
        {decision === "approve" ? "Approve" : "Reject"} {naira(transfer.amount)} to {transfer.beneficiary_account_name}
      </h3>
      <Facts transfer={transfer} />
      <ErrorNote error={action.error} context="otp" />
      {problem && (
        <div class="notice error" role="alert">
          <strong>{problem}</strong>
        </div>
      )}
      {decision === "approve" ? (
        <>
          <p>Approving sends the money now.</p>
          <OtpStep value={otp} onChange={setOtp} />
        </>
      ) : (
        <Field label="Reason" hint="Whoever made it reads it in their email and on the receipt">
          <input name="reason" maxLength={255} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
        </Field>
      )}
      <div class="actions">
        <button type="submit" class={decision === "reject" ? "danger solid" : ""} disabled={action.busy}>
          {decision === "approve" ? "Approve and send" : "Reject the payment"}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Back
        </button>
      </div>
    </form>
  );
}

function Policy() {
  const policy = useLoad(async () => {
    try {
      return (await call(client.POST("/api/v1/transaction/transfer/web/get_approval_policy", { body: {} }))).data;
    } catch (error) {
      // `47`: the business has no policy, so transfers are never held.
      if (error instanceof Refusal && error.code === "47") return null;
      throw error;
    }
  }, "policy");
  const [minAmount, setMinAmount] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [key] = useState(newIdempotencyKey);
  const action = useAction();
  const manage = can("/api/v1/transaction/transfer/web/update_approval_policy");
  const current = policy.value;
  const typed = minAmount ?? (current ? koboText(parseAmount(current.min_amount) ?? 0n) : "");
  const save = (isActive: boolean) => {
    // Written as people write amounts (`1,000,000`), sent as the API takes them.
    const kobo = parseAmount(typed === "" ? "0" : typed);
    if (kobo === null) return setProblem("Amount: write an amount like 1,000,000 or 250,000.50.");
    setProblem(null);
    return action.run(async () => {
      const body = { min_amount: amountField(kobo), is_active: isActive };
      if (current) {
        await call(client.POST("/api/v1/transaction/transfer/web/update_approval_policy", { body }));
      } else {
        await call(
          client.POST("/api/v1/transaction/transfer/web/create_approval_policy", {
            body,
            params: { header: { "Idempotency-Key": key } },
          }),
        );
      }
      setMinAmount(null);
      policy.reload();
    });
  };
  return (
    <div class="card" data-testid="policy">
      <h2>Approval policy</h2>
      <ErrorNote error={policy.error ?? action.error} />
      {problem && (
        <div class="notice error" role="alert">
          <strong>{problem}</strong>
        </div>
      )}
      {policy.loading && !current ? (
        <p class="muted">Loading…</p>
      ) : current ? (
        <p>
          <Badge value={current.is_active ? "active" : "inactive"} text={current.is_active ? "on" : "paused"} />{" "}
          {current.is_active
            ? `Payments of ${naira(current.min_amount)} or more wait for a second member's approval; the members who may approve are emailed.`
            : "Paused: new payments are not held."}{" "}
          <span class="muted">Changed {when(current.updated_at)}.</span>
        </p>
      ) : (
        <Notice>No approval policy: payments are never held for approval.</Notice>
      )}
      {manage && (
        <form
          noValidate
          class="inline"
          onSubmit={(event) => {
            event.preventDefault();
            void save(true);
          }}
        >
          <Field label="Hold payments from (NGN)" hint="0 holds every payment">
            <input name="min_amount" inputMode="decimal" placeholder="1,000,000" value={typed} onInput={(e) => setMinAmount(e.currentTarget.value)} />
          </Field>
          <button type="submit" disabled={action.busy}>
            {current ? (current.is_active ? "Save" : "Save and turn on") : "Turn on approvals"}
          </button>
          {current?.is_active && (
            <button type="button" class="secondary" disabled={action.busy} onClick={() => void save(false)}>
              Pause
            </button>
          )}
        </form>
      )}
    </div>
  );
}
