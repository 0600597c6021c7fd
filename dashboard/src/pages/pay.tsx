// Paying a beneficiary, in three steps with their own addresses: the details (`/pay`), the
// check (`/pay/review`: the name the bank confirmed, fee, VAT, total, and whether the account
// holds it), and the one-time code (`/pay/confirm`). What was typed is kept in this tab
// (sessionStorage) until the payment is sent, so a reload or Back at any step finds it again,
// with the same Idempotency-Key: a retry cannot pay twice. Once sent, the payment's receipt has
// its own address (`/transfers/<reference>`). Saved beneficiaries fill the details in one pick,
// and the check step offers to save a beneficiary not saved yet (saved before the money is sent,
// so a save that fails is said, and stops nothing already paid).
import { useEffect, useState } from "preact/hooks";
import { call, client, newIdempotencyKey, type Schemas } from "../api";
import { amountField, charges, KOBO_BANK_CODE, koboOf, koboText, lagosInstant, naira, parseAmount, scheduleProblem } from "../money";
import { AccountPicker, ownAccounts, type Account } from "../picker";
import { navigate, useLocation } from "../router";
import { can, isSandbox } from "../session";
import { ErrorNote, Field, Notice, OtpStep, ScheduleField, useAction, useLoad } from "../ui";

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
  /** The source account as read when the beneficiary was checked. */
  source: Account;
  enquiry: Schemas["NameEnquiryResult"];
  /** One key for this payment: a retry after a lost answer cannot send the money twice. */
  idempotencyKey: string;
}

interface Draft {
  details: Details;
  review: Review | null;
}

const DRAFT_KEY = "kobo.dashboard.payment";

const EMPTY: Details = { source: "", bankCode: KOBO_BANK_CODE, beneficiary: "", amount: "", narration: "", reference: "" };

function loadDraft(): Draft {
  try {
    const saved = JSON.parse(sessionStorage.getItem(DRAFT_KEY) ?? "null") as Draft | null;
    if (saved && typeof saved === "object" && saved.details) return saved;
  } catch {
    // A draft this version cannot read: start again.
  }
  return { details: { ...EMPTY }, review: null };
}

function saveDraft(draft: Draft | null): void {
  if (draft) sessionStorage.setItem(DRAFT_KEY, JSON.stringify(draft));
  else sessionStorage.removeItem(DRAFT_KEY);
}

function useBanks() {
  return useLoad(async () => {
    const answer = await call(client.POST("/api/v1/transaction/transfer/web/fetch_banks", { body: {} }));
    // Kobo's own accounts first: most payments of a business stay within the bank.
    return [...answer.data].sort((a, b) => Number(b.code === KOBO_BANK_CODE) - Number(a.code === KOBO_BANK_CODE));
  }, "banks");
}

/** An account of the business by its number (a customer's account too), as `get_account` reads it. */
async function accountByNumber(number: string): Promise<Account> {
  const answer = await call(client.POST("/api/v1/account/web/get_account", { body: { account_number: number } }));
  return answer.data;
}

type Saved = Schemas["SavedBeneficiary"];

/** The business's saved beneficiaries, newest first (`search`: a name, a nickname or a number). */
async function savedBeneficiaries(search: string): Promise<Saved[]> {
  const body = search.trim() ? { search: search.trim(), limit: 100 } : { limit: 100 };
  const answer = await call(client.POST("/api/v1/transaction/transfer/web/fetch_beneficiaries", { body }));
  return answer.data;
}

function savedLabel(saved: Saved): string {
  const name = saved.nickname ? `${saved.nickname} (${saved.account_name})` : saved.account_name;
  return `${name} · ${saved.account_number} · ${saved.bank_name}`;
}

/** Pick a saved beneficiary: its bank and account number fill the form. */
function SavedPicker({ onPick }: { onPick: (saved: Saved) => void }) {
  const [search, setSearch] = useState("");
  const saved = useLoad(() => savedBeneficiaries(search), `saved|${search}`);
  const forget = useAction();
  const [chosen, setChosen] = useState("");
  const list = saved.value ?? [];
  if (!search && list.length === 0 && !saved.error) return null;
  const picked = list.find((item) => item.beneficiary_id === chosen);
  return (
    <div class="grid" data-testid="saved-beneficiaries">
      <ErrorNote error={saved.error ?? forget.error} />
      <Field label="Find a saved beneficiary" hint="A name, a nickname or an account number">
        <input name="saved_search" autoComplete="off" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
      </Field>
      <Field label="Saved beneficiary" hint={list.length === 100 ? "The 100 newest: search for others" : undefined}>
        <select
          name="saved_beneficiary"
          value={chosen}
          onChange={(e) => {
            const id = e.currentTarget.value;
            setChosen(id);
            const item = list.find((one) => one.beneficiary_id === id);
            if (item) onPick(item);
          }}
        >
          <option value="">{list.length ? "Choose one, or type the details below" : "None found"}</option>
          {list.map((item) => (
            <option value={item.beneficiary_id}>{savedLabel(item)}</option>
          ))}
        </select>
      </Field>
      {picked && (
        <div>
          <button
            type="button"
            class="secondary"
            disabled={forget.busy}
            onClick={() =>
              forget.run(async () => {
                await call(client.POST("/api/v1/transaction/transfer/web/delete_beneficiary", { body: { beneficiary_id: picked.beneficiary_id } }));
                setChosen("");
                saved.reload();
              })
            }
          >
            Forget {picked.nickname ?? picked.account_name}
          </button>
        </div>
      )}
    </div>
  );
}

/** The sandbox's test beneficiaries (spec/openapi.yaml, "Sandbox"). */
const SANDBOX_BENEFICIARIES = [
  ["000013", "0123456788", "Emeka Nwosu, GTBank: succeeds"],
  ["000013", "0690000036", "Bisi Alade, GTBank: fails, then reversed"],
  ["000013", "0690000043", "Sani Bello, GTBank: pending about a minute"],
] as const;

export function PayPage({ step }: { step: string }) {
  const [draft, setDraft] = useState(loadDraft);
  const update = (next: Draft) => {
    saveDraft(next);
    setDraft(next);
  };
  if (step === "review" || step === "confirm") {
    if (!draft.review) {
      // Nothing to check (a reload after the payment was sent, or an old address).
      navigate("pay", { replace: true });
      return null;
    }
    return (
      <Confirm
        review={draft.review}
        confirming={step === "confirm"}
        onBack={() => {
          update({ details: draft.details, review: null });
          navigate("pay");
        }}
      />
    );
  }
  return (
    <DetailsForm
      details={draft.details}
      onChange={(details) => update({ details, review: null })}
      onChecked={(review) => {
        update({ details: review.details, review });
        navigate("pay/review");
      }}
    />
  );
}

function DetailsForm({ details, onChange, onChecked }: { details: Details; onChange: (details: Details) => void; onChecked: (review: Review) => void }) {
  const { query } = useLocation();
  const from = query.get("from") ?? "";
  const own = useLoad(ownAccounts, "own-accounts");
  // The account asked for in the address (`/pay?from=...`), else the one chosen before, else
  // the main account: where a business's money usually is.
  const wanted = from || details.source;
  const chosenOwn = (own.value ?? []).find((account) => account.account_number === wanted);
  const other = useLoad(
    async () => (wanted && own.value && !chosenOwn ? accountByNumber(wanted) : null),
    `${wanted}|${own.value ? "own" : ""}|${chosenOwn ? "found" : ""}`,
  );
  const [picked, setPicked] = useState<Account | null>(null);
  // A customer's account asked for by number is read on its own; until it is (or is refused),
  // the picker shows nothing rather than the main account, which it would then replace.
  const otherAccount = other.value && other.value.account_number === wanted ? other.value : null;
  const resolving = Boolean(wanted) && !chosenOwn && !otherAccount && !other.error && !own.error;
  const fallback = (own.value ?? []).find((account) => account.account_class === "primary") ?? own.value?.[0] ?? null;
  const source: Account | null = picked ?? chosenOwn ?? otherAccount ?? (resolving ? null : fallback);
  const banks = useBanks();
  const enquiry = useAction();
  const [problem, setProblem] = useState<string | null>(null);
  const edit = (change: Partial<Details>) => onChange({ ...details, source: source?.account_number ?? details.source, ...change });
  const kobo = parseAmount(details.amount);
  const check = async (event: Event) => {
    event.preventDefault();
    setProblem(null);
    if (!source) return setProblem("Choose the account the money leaves.");
    if (!/^\d{10}$/.test(details.beneficiary.trim())) return setProblem("Beneficiary's account number: an account number has 10 digits.");
    if (kobo === null || kobo <= 0n) return setProblem("Amount: write an amount like 25,000 or 25,000.50.");
    await enquiry.run(async () => {
      const answer = await call(
        client.POST("/api/v1/transaction/transfer/web/name_enquiry", {
          body: { beneficiary_account_number: details.beneficiary.trim(), bank_code: details.bankCode, source_account_number: source.account_number },
        }),
      );
      // The balance as it is now, not as the list showed it a while ago.
      const fresh = await accountByNumber(source.account_number);
      onChecked({
        details: { ...details, source: source.account_number, amount: amountField(kobo) },
        source: fresh,
        enquiry: answer.data,
        idempotencyKey: newIdempotencyKey(),
      });
    });
  };
  const total = kobo === null ? null : kobo + charges(kobo, details.bankCode !== KOBO_BANK_CODE).fee + charges(kobo, details.bankCode !== KOBO_BANK_CODE).vat;
  const short = source && total !== null && total > koboOf(source.balance);
  return (
    <section>
      <h1>Pay</h1>
      <ErrorNote error={own.error ?? other.error ?? banks.error} />
      <form noValidate class="card" onSubmit={check}>
        <h2>1. Who and how much</h2>
        <ErrorNote error={enquiry.error} />
        {problem && (
          <div class="notice error" role="alert">
            <strong>{problem}</strong>
          </div>
        )}
        <AccountPicker
          label="From account"
          own={own.value ?? []}
          value={source}
          onChange={(account) => {
            setPicked(account);
            onChange({ ...details, source: account.account_number });
          }}
        />
        <SavedPicker onPick={(saved) => edit({ bankCode: saved.bank_code, beneficiary: saved.account_number })} />
        <div class="grid">
          <Field label="Bank">
            <select name="bank_code" value={details.bankCode} onChange={(e) => edit({ bankCode: e.currentTarget.value })}>
              {(banks.value ?? [{ code: KOBO_BANK_CODE, name: "Kobo" }]).map((bank) => (
                <option value={bank.code}>{bank.name}</option>
              ))}
            </select>
          </Field>
          <Field label="Beneficiary account number">
            <input name="beneficiary" inputMode="numeric" autoComplete="off" maxLength={10} value={details.beneficiary} onInput={(e) => edit({ beneficiary: e.currentTarget.value })} />
          </Field>
          <Field
            label="Amount (NGN)"
            hint={short && source ? <span class="warn">More than {source.account_name} holds ({naira(source.balance)})</span> : "Like 25,000 or 25,000.50"}
          >
            <input name="amount" inputMode="decimal" autoComplete="off" placeholder="25,000.00" value={details.amount} onInput={(e) => edit({ amount: e.currentTarget.value })} />
          </Field>
          <Field label="Narration" hint="Optional: shown to you and the beneficiary">
            <input name="narration" maxLength={100} value={details.narration} onInput={(e) => edit({ narration: e.currentTarget.value })} />
          </Field>
          <Field label="Your reference" hint="Optional: your own, unique for ever">
            <input name="reference" value={details.reference} onInput={(e) => edit({ reference: e.currentTarget.value })} />
          </Field>
        </div>
        {isSandbox() && (
          <Notice>
            Sandbox beneficiaries:{" "}
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

function Confirm({ review, confirming, onBack }: { review: Review; confirming: boolean; onBack: () => void }) {
  const [otp, setOtp] = useState("");
  const [keep, setKeep] = useState(false);
  // Saved already? Then there is nothing to offer.
  const known = useLoad(
    async () =>
      (await savedBeneficiaries(review.enquiry.account_number)).some(
        (saved) => saved.bank_code === review.enquiry.bank_code && saved.account_number === review.enquiry.account_number,
      ),
    `known|${review.enquiry.bank_code}|${review.enquiry.account_number}`,
  );
  const send = useAction();
  const { details, source, enquiry } = review;
  const interBank = details.bankCode !== KOBO_BANK_CODE;
  const kobo = parseAmount(details.amount) ?? 0n;
  const cost = charges(kobo, interBank);
  const total = kobo + cost.fee + cost.vat;
  const balance = koboOf(source.balance);
  const enough = total <= balance;
  useEffect(() => {
    // A person who comes back to the code step without enough money goes back to the check.
    if (confirming && !enough) navigate("pay/review", { replace: true });
  }, [confirming, enough]);
  const submit = async (event: Event) => {
    event.preventDefault();
    await send.run(async () => {
      if (keep && known.value === false) {
        // Saved first: saving again is harmless (the same beneficiary comes back), so a retry
        // after a refused payment saves nothing twice.
        await call(
          client.POST("/api/v1/transaction/transfer/web/create_beneficiary", {
            body: { account_number: enquiry.account_number, bank_code: enquiry.bank_code, account_name: enquiry.account_name },
          }),
        );
      }
      const body: Schemas["FundsTransferRequest"] = {
        source_account_number: source.account_number,
        source_account_name: source.account_name,
        beneficiary_account_number: enquiry.account_number,
        beneficiary_account_name: enquiry.account_name,
        bank_code: enquiry.bank_code,
        bank_name: enquiry.bank_name,
        amount: details.amount,
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
      saveDraft(null);
      // The receipt, at its own address: a reload or a bookmark finds it again.
      navigate(`transfers/${encodeURIComponent(answer.data.reference_number)}`, { replace: true });
    });
  };
  return (
    <section>
      <h1>Pay</h1>
      <form noValidate class="card" onSubmit={submit}>
        <h2>{confirming ? "3. Your one-time code" : "2. Check and confirm"}</h2>
        <dl class="details review">
          <dt>Beneficiary</dt>
          <dd>
            <strong data-testid="confirmed-name">{enquiry.account_name}</strong>
            <div class="muted">
              {enquiry.account_number} · {enquiry.bank_name} · the name the bank confirmed
            </div>
          </dd>
          <dt>From</dt>
          <dd>
            {source.account_name} · <span class="mono">{source.account_number}</span>
            <div class="muted" data-testid="review-balance">
              Balance {naira(source.balance)}
            </div>
          </dd>
          <dt>Amount</dt>
          <dd data-testid="review-amount">₦{koboText(kobo)}</dd>
          <dt>Fee</dt>
          <dd data-testid="review-fee">₦{koboText(cost.fee)}</dd>
          <dt>VAT (7.5% of the fee)</dt>
          <dd data-testid="review-vat">₦{koboText(cost.vat)}</dd>
          <dt>Total debited</dt>
          <dd data-testid="review-total">
            <strong>₦{koboText(total)}</strong>
          </dd>
          {enough && (
            <>
              <dt>Balance after</dt>
              <dd data-testid="review-after">₦{koboText(balance - total)}</dd>
            </>
          )}
          <dt>Narration</dt>
          <dd>{details.narration.trim() || `Transfer from ${source.account_name}`}</dd>
        </dl>
        {!enough ? (
          <div class="notice error" role="alert" data-testid="not-enough">
            <strong>
              Not enough money: {source.account_name} holds {naira(source.balance)} and this payment needs ₦{koboText(total)}. Choose
              another account or a smaller amount; no code was sent.
            </strong>
          </div>
        ) : (
          <p class="muted">
            {interBank
              ? "Sent to the other bank over NIP: the amount, fee and VAT leave the account at once; the other bank confirms within minutes."
              : "Within Kobo: free, and the beneficiary is credited at once."}{" "}
            If your business has an approval policy, a second member may need to approve it.
          </p>
        )}
        <ErrorNote error={send.error} context="otp" />
        {confirming && enough ? (
          <>
            {known.value === false && (
              <label class="check">
                <input type="checkbox" name="save_beneficiary" checked={keep} onChange={(e) => setKeep(e.currentTarget.checked)} /> Save {enquiry.account_name} to
                your beneficiaries
              </label>
            )}
            {known.value === true && <p class="muted" data-testid="already-saved">{enquiry.account_name} is one of your saved beneficiaries.</p>}
            <OtpStep value={otp} onChange={setOtp} />
            <div class="actions">
              <button type="submit" disabled={send.busy}>
                {send.busy ? "Sending…" : `Send ₦${koboText(kobo)}`}
              </button>
              <button type="button" class="secondary" onClick={onBack}>
                Change the details
              </button>
            </div>
          </>
        ) : (
          <div class="actions">
            {enough && (
              <button type="button" onClick={() => navigate("pay/confirm")}>
                Confirm
              </button>
            )}
            <button type="button" class="secondary" onClick={onBack}>
              Change the details
            </button>
          </div>
        )}
      </form>
      {!confirming && enough && <PayLater review={review} />}
    </section>
  );
}

/**
 * The payment scheduled instead of sent now: a bulk payment of this one row (`execute_at`), which
 * Kobo checks again, the member authorises with a code, and the worker pays at that time.
 */
function PayLater({ review }: { review: Review }) {
  const [at, setAt] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  // One key for this schedule: a retry after a lost answer cannot schedule it twice.
  const [key] = useState(newIdempotencyKey);
  const action = useAction();
  if (!can("/api/v1/transaction/transfer/web/create_bulk_transfer")) return null;
  const submit = (event: Event) => {
    event.preventDefault();
    const wrong = scheduleProblem(at);
    setProblem(wrong);
    const instant = lagosInstant(at);
    if (wrong || !instant) return;
    const { details, enquiry, source } = review;
    void action.run(async () => {
      const answer = await call(
        client.POST("/api/v1/transaction/transfer/web/create_bulk_transfer", {
          body: {
            source_account_number: source.account_number,
            on_invalid: "refuse_batch",
            execute_at: instant,
            items: [
              {
                account_number: enquiry.account_number,
                bank_code: enquiry.bank_code,
                account_name: enquiry.account_name,
                amount: details.amount,
                ...(details.narration.trim() ? { narration: details.narration.trim() } : {}),
                ...(details.reference.trim() ? { reference: details.reference.trim() } : {}),
              },
            ],
          },
          params: { header: { "Idempotency-Key": key } },
        }),
      );
      saveDraft(null);
      navigate(`bulk/${answer.data.bulk_transfer_id}`);
    });
  };
  return (
    <form noValidate class="card" onSubmit={submit} data-testid="pay-later">
      <h2>Or pay it later</h2>
      <p class="muted">
        Kobo checks the beneficiary again, you authorise it with a code, and the money is set aside until the time you choose; it is
        paid then, and you can cancel it until then.
      </p>
      <ScheduleField value={at} onChange={setAt} />
      {problem && (
        <div class="notice error" role="alert">
          <strong>{problem}</strong>
        </div>
      )}
      <ErrorNote error={action.error} />
      <button type="submit" class="secondary" disabled={action.busy}>
        {action.busy ? "Scheduling…" : "Schedule this payment"}
      </button>
    </form>
  );
}
