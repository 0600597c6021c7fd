// The checker's queue (approve with one's own OTP, or reject with a reason) and the approval
// policy that fills it.
import { useState } from "preact/hooks";
import { call, client, newIdempotencyKey, Refusal, type Schemas } from "../api";
import { naira, when } from "../money";
import { can, currentSession } from "../session";
import { Badge, Empty, ErrorNote, Field, Notice, OtpStep, Pager, useAction, useCursorPages, useLoad } from "../ui";
import { FollowedTransfer, TransferTable } from "./transfers";

type Transfer = Schemas["Transfer"];

export function ApprovalsPage() {
  const [round, setRound] = useState(0);
  const [reviewing, setReviewing] = useState<{ transfer: Transfer; decision: "approve" | "reject" } | null>(null);
  const [decided, setDecided] = useState<Transfer | null>(null);
  const me = currentSession()?.profile.member.id;
  const pages = useCursorPages(
    async (cursor) => call(client.POST("/api/v1/transaction/transfer/web/fetch_pending_transfers", { body: { limit: 20, ...cursor } })),
    `pending-${round}`,
  );
  const canReview = can("/api/v1/transaction/transfer/web/approve_transfer");
  const finish = (transfer: Transfer) => {
    setReviewing(null);
    setDecided(transfer);
    setRound((n) => n + 1);
  };
  return (
    <section>
      <h1>Approvals</h1>
      {can("/api/v1/transaction/transfer/web/get_approval_policy") && <Policy />}
      <h2>Waiting for approval</h2>
      <p class="muted">Oldest first. The maker of a transfer cannot approve it: another member does, with their own code.</p>
      {decided && <FollowedTransfer initial={decided} />}
      {reviewing && (
        <Review
          transfer={reviewing.transfer}
          decision={reviewing.decision}
          onDone={finish}
          onCancel={() => setReviewing(null)}
        />
      )}
      <ErrorNote error={pages.error} />
      {pages.items.length === 0 && !pages.loading ? (
        <Empty>Nothing is waiting for approval.</Empty>
      ) : (
        <TransferTable
          transfers={pages.items}
          actions={(transfer) =>
            canReview && (
              <div class="actions">
                <button
                  type="button"
                  disabled={transfer.initiated_by === me}
                  title={transfer.initiated_by === me ? "You made this transfer: another member approves it" : undefined}
                  onClick={() => setReviewing({ transfer, decision: "approve" })}
                >
                  Approve
                </button>
                <button type="button" class="danger" onClick={() => setReviewing({ transfer, decision: "reject" })}>
                  Reject
                </button>
              </div>
            )
          }
        />
      )}
      <Pager pages={pages} label="Approvals" />
    </section>
  );
}

function Review({ transfer, decision, onDone, onCancel }: { transfer: Transfer; decision: "approve" | "reject"; onDone: (t: Transfer) => void; onCancel: () => void }) {
  const [otp, setOtp] = useState("");
  const [reason, setReason] = useState("");
  const [key] = useState(newIdempotencyKey);
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    await action.run(async () => {
      const answer =
        decision === "approve"
          ? await call(
              client.POST("/api/v1/transaction/transfer/web/approve_transfer", {
                body: { reference_number: transfer.reference_number, otp },
                params: { header: { "Idempotency-Key": key } },
              }),
            )
          : await call(client.POST("/api/v1/transaction/transfer/web/reject_transfer", { body: { reference_number: transfer.reference_number, reason } }));
      onDone(answer.data);
    });
  };
  return (
    <form noValidate class="card" onSubmit={submit} data-testid="review">
      <h2>
        {decision === "approve" ? "Approve" : "Reject"} {naira(transfer.amount)} to {transfer.beneficiary_account_name}
      </h2>
      <p class="muted">
        {transfer.reference_number} · from {transfer.source_account_number} · {transfer.bank_name} · made {when(transfer.created_at)}
        {transfer.fee !== "0.00" && ` · fee ${naira(transfer.fee)} + VAT ${naira(transfer.vat)}`}
      </p>
      <ErrorNote error={action.error} />
      {decision === "approve" ? (
        <>
          <p>Approving sends the money now.</p>
          <OtpStep value={otp} onChange={setOtp} />
        </>
      ) : (
        <Field label="Reason" hint="Shown as the transfer's failure reason">
          <input name="reason" maxLength={255} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
        </Field>
      )}
      <div class="actions">
        <button type="submit" class={decision === "reject" ? "danger" : ""} disabled={action.busy}>
          {decision === "approve" ? "Approve and send" : "Reject"}
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
  const [key] = useState(newIdempotencyKey);
  const action = useAction();
  const manage = can("/api/v1/transaction/transfer/web/update_approval_policy");
  const current = policy.value;
  const amount = minAmount ?? current?.min_amount ?? "0.00";
  const save = (isActive: boolean) =>
    action.run(async () => {
      if (current) {
        await call(client.POST("/api/v1/transaction/transfer/web/update_approval_policy", { body: { min_amount: amount.trim(), is_active: isActive } }));
      } else {
        await call(
          client.POST("/api/v1/transaction/transfer/web/create_approval_policy", {
            body: { min_amount: amount.trim(), is_active: isActive },
            params: { header: { "Idempotency-Key": key } },
          }),
        );
      }
      setMinAmount(null);
      policy.reload();
    });
  return (
    <div class="card" data-testid="policy">
      <h2>Approval policy</h2>
      <ErrorNote error={policy.error ?? action.error} />
      {policy.loading && !current ? (
        <p class="muted">Loading…</p>
      ) : current ? (
        <p>
          <Badge value={current.is_active ? "active" : "inactive"} />{" "}
          {current.is_active
            ? `Transfers of ${naira(current.min_amount)} or more wait for a second member's approval.`
            : "Paused: new transfers are not held."}{" "}
          <span class="muted">Changed {when(current.updated_at)}.</span>
        </p>
      ) : (
        <Notice>No approval policy: transfers are never held for approval.</Notice>
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
          <Field label="Hold transfers from (NGN)" hint="0.00 holds every transfer">
            <input name="min_amount" inputMode="decimal" value={amount} onInput={(e) => setMinAmount(e.currentTarget.value)} />
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
