// Paying a beneficiary: the details, the name enquiry's confirmed name with the fee and VAT,
// the OTP at confirmation, then the transfer followed until its status is final.
import { useState } from "preact/hooks";
import { call, client, newIdempotencyKey, type Schemas } from "../api";
import { charges, KOBO_BANK_CODE, koboText, naira, parseAmount } from "../money";
import { useLocation } from "../router";
import { isSandbox } from "../session";
import { ErrorNote, Field, Link, Notice, OtpStep, useAction, useLoad } from "../ui";
import { FollowedTransfer } from "./transfers";

type Account = Schemas["AccountSummary"];

interface Details {
  source: string;
  bankCode: string;
  beneficiary: string;
  amount: string;
  narration: string;
  reference: string;
}

interface Review {
  details: Details;
  source: Account;
  enquiry: Schemas["NameEnquiryResult"];
  /** One key for this payment: a retry after a lost answer cannot send the money twice. */
  idempotencyKey: string;
}

function useSources() {
  return useLoad(async () => {
    const answer = await call(client.POST("/api/v1/account/web/fetch_account_summaries", { body: { is_available: true, limit: 100 } }));
    return answer.data;
  }, "sources");
}

function useBanks() {
  return useLoad(async () => {
    const answer = await call(client.POST("/api/v1/transaction/transfer/web/fetch_banks", { body: {} }));
    // Kobo's own accounts first: most payments of a business stay within the bank.
    return [...answer.data].sort((a, b) => Number(b.code === KOBO_BANK_CODE) - Number(a.code === KOBO_BANK_CODE));
  }, "banks");
}

/** The sandbox's test beneficiaries (spec/openapi.yaml, "Sandbox"). */
const SANDBOX_BENEFICIARIES = [
  ["000013", "0123456788", "Emeka Nwosu, GTBank: succeeds"],
  ["000013", "0690000036", "Bisi Alade, GTBank: fails, then reversed"],
  ["000013", "0690000043", "Sani Bello, GTBank: pending about a minute"],
] as const;

export function PayPage() {
  const { query } = useLocation();
  const [details, setDetails] = useState<Details>({
    source: query.get("from") ?? "",
    bankCode: KOBO_BANK_CODE,
    beneficiary: "",
    amount: "",
    narration: "",
    reference: "",
  });
  const [review, setReview] = useState<Review | null>(null);
  const [sent, setSent] = useState<Schemas["Transfer"] | null>(null);
  const sources = useSources();
  const banks = useBanks();
  const enquiry = useAction();

  if (sent) {
    return (
      <section>
        <h1>Payment sent</h1>
        <FollowedTransfer initial={sent} />
        <p>
          <button
            type="button"
            onClick={() => {
              setSent(null);
              setReview(null);
              setDetails({ ...details, beneficiary: "", amount: "", narration: "", reference: "" });
            }}
          >
            Make another payment
          </button>{" "}
          <Link to="transfers">All transfers</Link>
        </p>
      </section>
    );
  }
  if (review) {
    return <Confirm review={review} onBack={() => setReview(null)} onSent={setSent} />;
  }

  const accounts = sources.value ?? [];
  const edit = (change: Partial<Details>) => setDetails({ ...details, ...change });
  // The chosen account, else the main pool account (where a business's money usually is).
  const source =
    accounts.find((account) => account.account_number === details.source) ??
    accounts.find((account) => account.account_class === "primary") ??
    accounts[0];
  const check = async (event: Event) => {
    event.preventDefault();
    await enquiry.run(async () => {
      const from = source?.account_number ?? details.source;
      const answer = await call(
        client.POST("/api/v1/transaction/transfer/web/name_enquiry", {
          body: { beneficiary_account_number: details.beneficiary.trim(), bank_code: details.bankCode, source_account_number: from },
        }),
      );
      if (!source) return;
      setReview({ details: { ...details, source: source.account_number }, source, enquiry: answer.data, idempotencyKey: newIdempotencyKey() });
    });
  };
  return (
    <section>
      <h1>Pay</h1>
      <ErrorNote error={sources.error ?? banks.error} />
      <form noValidate class="card" onSubmit={check}>
        <h2>1. Who and how much</h2>
        <ErrorNote error={enquiry.error} />
        <Field label="From account">
          <select name="source" value={source?.account_number ?? ""} onChange={(e) => edit({ source: e.currentTarget.value })}>
            {accounts.map((account) => (
              <option value={account.account_number}>
                {account.account_name} · {account.account_number} · {naira(account.balance)}
              </option>
            ))}
          </select>
        </Field>
        <div class="grid">
          <Field label="Bank">
            <select name="bank_code" value={details.bankCode} onChange={(e) => edit({ bankCode: e.currentTarget.value })}>
              {(banks.value ?? [{ code: KOBO_BANK_CODE, name: "Kobo" }]).map((bank) => (
                <option value={bank.code}>
                  {bank.name} ({bank.code})
                </option>
              ))}
            </select>
          </Field>
          <Field label="Beneficiary account number">
            <input name="beneficiary" inputMode="numeric" autoComplete="off" value={details.beneficiary} onInput={(e) => edit({ beneficiary: e.currentTarget.value })} />
          </Field>
          <Field label="Amount (NGN)">
            <input name="amount" inputMode="decimal" autoComplete="off" placeholder="5000.00" value={details.amount} onInput={(e) => edit({ amount: e.currentTarget.value })} />
          </Field>
          <Field label="Narration" hint="Optional: shown to you and the beneficiary">
            <input name="narration" maxLength={100} value={details.narration} onInput={(e) => edit({ narration: e.currentTarget.value })} />
          </Field>
          <Field label="Your reference" hint="Optional: your own id, unique for ever">
            <input name="reference" value={details.reference} onInput={(e) => edit({ reference: e.currentTarget.value })} />
          </Field>
        </div>
        {isSandbox() && (
          <Notice>
            Sandbox beneficiaries (from the spec):{" "}
            {SANDBOX_BENEFICIARIES.map(([bank, account, what]) => (
              <button type="button" class="chip" onClick={() => edit({ bankCode: bank, beneficiary: account })}>
                <code>{account}</code> {what}
              </button>
            ))}{" "}
            or any Kobo account number.
          </Notice>
        )}
        <button type="submit" disabled={enquiry.busy || !source}>
          {enquiry.busy ? "Checking the beneficiary…" : "Check the beneficiary"}
        </button>
      </form>
    </section>
  );
}

function Confirm({ review, onBack, onSent }: { review: Review; onBack: () => void; onSent: (transfer: Schemas["Transfer"]) => void }) {
  const [otp, setOtp] = useState("");
  const [confirming, setConfirming] = useState(false);
  const send = useAction();
  const { details, source, enquiry } = review;
  const interBank = details.bankCode !== KOBO_BANK_CODE;
  const kobo = parseAmount(details.amount);
  const cost = kobo === null ? null : charges(kobo, interBank);
  const submit = async (event: Event) => {
    event.preventDefault();
    await send.run(async () => {
      const body: Schemas["FundsTransferRequest"] = {
        source_account_number: source.account_number,
        source_account_name: source.account_name,
        beneficiary_account_number: enquiry.account_number,
        beneficiary_account_name: enquiry.account_name,
        bank_code: enquiry.bank_code,
        bank_name: enquiry.bank_name,
        amount: details.amount.trim(),
        transfer_type: interBank ? "inter" : "intra",
        otp,
        kyc: enquiry.kyc,
        ...(enquiry.bvn ? { bvn: enquiry.bvn } : {}),
        ...(details.narration.trim() ? { narration: details.narration.trim() } : {}),
        ...(details.reference.trim() ? { reference: details.reference.trim() } : {}),
      };
      const answer = await call(
        client.POST("/api/v1/transaction/transfer/web/funds_transfer", {
          body,
          params: { header: { "Idempotency-Key": review.idempotencyKey } },
        }),
      );
      onSent(answer.data);
    });
  };
  return (
    <section>
      <h1>Pay</h1>
      <form noValidate class="card" onSubmit={submit}>
        <h2>2. Check and confirm</h2>
        <dl class="details review">
          <dt>Beneficiary</dt>
          <dd>
            <strong data-testid="confirmed-name">{enquiry.account_name}</strong>
            <div class="muted">
              {enquiry.account_number} · {enquiry.bank_name} · KYC tier {enquiry.kyc}
            </div>
          </dd>
          <dt>From</dt>
          <dd>
            {source.account_name} · {source.account_number} (balance {naira(source.balance)})
          </dd>
          <dt>Amount</dt>
          <dd data-testid="review-amount">{kobo === null ? details.amount : `₦${koboText(kobo)}`}</dd>
          <dt>Fee</dt>
          <dd data-testid="review-fee">{cost ? `₦${koboText(cost.fee)}` : "—"}</dd>
          <dt>VAT (7.5% of the fee)</dt>
          <dd data-testid="review-vat">{cost ? `₦${koboText(cost.vat)}` : "—"}</dd>
          <dt>Total debited</dt>
          <dd data-testid="review-total">
            <strong>{kobo !== null && cost ? `₦${koboText(kobo + cost.fee + cost.vat)}` : "—"}</strong>
          </dd>
          <dt>Narration</dt>
          <dd>{details.narration.trim() || `Transfer from ${source.account_name}`}</dd>
        </dl>
        <p class="muted">
          {interBank
            ? "Sent over NIP: the amount, fee and VAT leave the account at once; the other bank confirms within minutes."
            : "Within Kobo: free, and the beneficiary is credited at once."}{" "}
          An approval policy may hold it for a second member.
        </p>
        <ErrorNote error={send.error} />
        {confirming ? (
          <>
            <OtpStep value={otp} onChange={setOtp} />
            <div class="actions">
              <button type="submit" disabled={send.busy}>
                {send.busy ? "Sending…" : `Send ${kobo === null ? "" : `₦${koboText(kobo)}`}`}
              </button>
              <button type="button" class="secondary" onClick={onBack}>
                Change the details
              </button>
            </div>
          </>
        ) : (
          <div class="actions">
            <button type="button" onClick={() => setConfirming(true)}>
              Confirm
            </button>
            <button type="button" class="secondary" onClick={onBack}>
              Change the details
            </button>
          </div>
        )}
        {send.error !== null && <Notice>A refused transfer spends its code: ask for a new one before sending again.</Notice>}
      </form>
    </section>
  );
}
