// Pieces every page uses: loading with refusals shown as the API gave them, cursor paging,
// the OTP step, a secret shown once, status badges.
import { cloneElement, isValidElement, type ComponentChildren } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { call, client, Refusal, type Pagination, type Schemas } from "./api";
import { isSandbox } from "./session";
import { say, type Context } from "./words";
import { follow, href } from "./router";

/**
 * A refusal in the Dashboard's own words (`words.ts`): no codes, field names or ids, but the
 * request id where support needs it. The catalog's code stays on the element for tests and
 * support (`data-code`).
 */
export function ErrorNote({ error, context }: { error: unknown; context?: Context }) {
  if (!error) return null;
  const refusal = error instanceof Refusal ? error : null;
  return (
    <div class="notice error" role="alert" data-code={refusal?.code}>
      <strong>{say(error, context)}</strong>
    </div>
  );
}

export function Notice({ children, kind = "info" }: { children: ComponentChildren; kind?: "info" | "success" | "warning" }) {
  return (
    <div class={`notice ${kind}`} role="status">
      {children}
    </div>
  );
}

export function Link({ to, children, class: className }: { to: string; children: ComponentChildren; class?: string }) {
  return (
    <a href={href(to)} class={className} onClick={(event) => follow(event, to)}>
      {children}
    </a>
  );
}

/** Runs `task` while `busy` says so and keeps its refusal; returns whether it succeeded. */
export function useAction(): {
  busy: boolean;
  error: unknown;
  run: (task: () => Promise<void>) => Promise<boolean>;
  clear: () => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async (task: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await task();
      return true;
    } catch (caught) {
      setError(caught);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(null) };
}

/** Loads once per change of `key` (and on `reload`). */
export function useLoad<T>(load: () => Promise<T>, key: string): {
  value: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
} {
  const [value, setValue] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setLoading(true);
    setError(null);
    load().then(
      (loaded) => {
        if (!current) return;
        setValue(loaded);
        setLoading(false);
      },
      (caught: unknown) => {
        if (!current) return;
        setError(caught);
        setLoading(false);
      },
    );
    return () => {
      current = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, round]);
  return { value, error, loading, reload: () => setRound((n) => n + 1) };
}

export interface Cursor {
  cursor_created_at: string;
  cursor_id: string;
}

/**
 * Keyset paging as the spec describes it: the next page starts after the last item of this one
 * (`next_cursor_created_at` / `next_cursor_id`), so rows inserted meanwhile never shift a page;
 * "Previous" goes back through the cursors already used. No page numbers, no jumps.
 */
export function useCursorPages<Answer extends { data: unknown[]; pagination?: Pagination | null }>(
  load: (cursor: Cursor | undefined) => Promise<Answer>,
  key: string,
) {
  // The cursors used so far, for these filters (`key`): new filters start again from the top.
  const [state, setState] = useState<{ key: string; cursors: (Cursor | undefined)[] }>({ key, cursors: [undefined] });
  const cursors = state.key === key ? state.cursors : [undefined];
  const setCursors = (change: (list: (Cursor | undefined)[]) => (Cursor | undefined)[]) =>
    setState({ key, cursors: change(cursors) });
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(() => load(cursor), `${key}|${cursors.length}|${cursor?.cursor_id ?? ""}`);
  const pagination = page.value?.pagination;
  return {
    items: (page.value?.data ?? []) as Answer["data"],
    /** The whole answer of the page shown (a statement's figures come with its lines). */
    answer: page.value,
    error: page.error,
    loading: page.loading,
    reload: page.reload,
    pageNumber: cursors.length,
    hasPrevious: cursors.length > 1,
    hasNext: Boolean(pagination?.has_more && pagination.next_cursor_created_at && pagination.next_cursor_id),
    next: () => {
      if (pagination?.next_cursor_created_at && pagination.next_cursor_id) {
        const nextCursor = { cursor_created_at: pagination.next_cursor_created_at, cursor_id: pagination.next_cursor_id };
        setCursors((list) => [...list, nextCursor]);
      }
    },
    previous: () => setCursors((list) => (list.length > 1 ? list.slice(0, -1) : list)),
    first: () => setCursors(() => [undefined]),
  };
}

export function Pager({
  pages,
  label,
  oldestFirst = false,
}: {
  pages: { pageNumber: number; hasPrevious: boolean; hasNext: boolean; next: () => void; previous: () => void; loading: boolean };
  label: string;
  /** The list runs from the oldest (the approvals' queue): its next page holds newer items. */
  oldestFirst?: boolean;
}) {
  // One page is all there is: no buttons that lead nowhere.
  if (!pages.hasPrevious && !pages.hasNext) return null;
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" class="secondary" disabled={!pages.hasPrevious || pages.loading} onClick={pages.previous}>
        {oldestFirst ? "← Older" : "← Newer"}
      </button>
      <span class="muted">Page {pages.pageNumber}</span>
      <button type="button" class="secondary" disabled={!pages.hasNext || pages.loading} onClick={pages.next}>
        {oldestFirst ? "Newer →" : "Older →"}
      </button>
    </nav>
  );
}

let fields = 0;

/**
 * A labelled form control: the label names the control alone (`for`, not wrapped around it, so
 * a select's options are not part of its name), the hint describes it (`aria-describedby`).
 */
export function Field({ label, children, hint }: { label: string; children: ComponentChildren; hint?: ComponentChildren }) {
  const [id] = useState(() => `field-${(fields += 1)}`);
  if (!isValidElement(children)) {
    return (
      <label class="field">
        <span class="label">{label}</span>
        {children}
        {hint && <span class="hint">{hint}</span>}
      </label>
    );
  }
  const control = cloneElement(children, { id, "aria-describedby": hint ? `${id}-hint` : undefined });
  return (
    <div class="field">
      <label class="label" for={id}>
        {label}
      </label>
      {control}
      {hint && (
        <span class="hint" id={`${id}-hint`}>
          {hint}
        </span>
      )}
    </div>
  );
}

const FINAL = new Set(["success", "failed", "reversed", "rejected", "cancelled", "expired", "delivered", "accepted", "active", "ready"]);
const BAD = new Set(["failed", "reversed", "rejected", "cancelled", "expired", "error", "blocked", "closed", "inactive", "deactivated"]);

/** Statuses as a person says them. */
const STATUS_WORDS: Record<string, string> = {
  pending_approval: "waiting for approval",
  awaiting_approval: "waiting for approval",
  processing: "on its way",
  running: "being written",
  success: "done",
  not_required: "not needed",
  approved: "approved",
  invitation_pending: "invited",
  invitation_expired: "invitation expired",
};

export function statusWords(value: string): string {
  return STATUS_WORDS[value] ?? value.replace(/_/g, " ");
}

/** A status as a pill: green when it ended well, red when it did not, amber while it waits (or `kind`). */
export function Badge({ value, text, kind }: { value: string; text?: string; kind?: "good" | "bad" | "pending" | "plain" }) {
  const shown = kind ?? (BAD.has(value) ? "bad" : FINAL.has(value) ? "good" : "pending");
  return <span class={shown === "plain" ? "badge" : `badge ${shown}`}>{text ?? statusWords(value)}</span>;
}

/**
 * An action that asks first: the button, then in its place what it will do and two buttons,
 * the action's and "Keep" (no browser dialog, so the question is part of the page).
 */
export function Confirmed({
  label,
  question,
  confirm,
  onConfirm,
  danger = false,
  disabled = false,
}: {
  label: string;
  question: ComponentChildren;
  confirm: string;
  onConfirm: () => void;
  danger?: boolean;
  disabled?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" class={danger ? "danger" : "secondary"} disabled={disabled} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <div class="confirm" role="group" aria-label={label}>
      <p>{question}</p>
      <div class="actions">
        <button
          type="button"
          class={danger ? "danger solid" : ""}
          disabled={disabled}
          onClick={() => {
            setAsking(false);
            onConfirm();
          }}
        >
          {confirm}
        </button>
        <button type="button" class="secondary" onClick={() => setAsking(false)}>
          Keep
        </button>
      </div>
    </div>
  );
}

/** A code from `generate_otp`: the member's own, for a payment or an approval. */
async function memberOtp(): Promise<Schemas["OtpDelivery"]> {
  return (await call(client.POST("/api/v1/auth/web/generate_otp", { body: {} }))).data;
}

/**
 * The second factor of a payment or an approval: asks for a code (`generate_otp`, or `request`:
 * a code bound to one thing, such as a bulk payment), emailed; in the sandbox also shown here,
 * as the API returns it; and lets the member type it.
 */
export function OtpStep({ value, onChange, request = memberOtp }: { value: string; onChange: (otp: string) => void; request?: () => Promise<Schemas["OtpDelivery"]> }) {
  const [delivery, setDelivery] = useState<Schemas["OtpDelivery"] | null>(null);
  const action = useAction();
  const input = useRef<HTMLInputElement>(null);
  const send = () =>
    action.run(async () => {
      setDelivery(await request());
      onChange("");
      input.current?.focus();
    });
  useEffect(() => {
    void send();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  return (
    <div class="otp">
      <ErrorNote error={action.error} context="otp" />
      {delivery && (
        <p>
          A one-time code was sent to <strong>{delivery.destination}</strong>; it expires in{" "}
          {Math.round(delivery.expires_in / 60)} minutes.
        </p>
      )}
      {delivery?.otp && isSandbox() && (
        <Notice kind="warning">
          Sandbox: the code is <code class="sandbox-otp">{delivery.otp}</code> (production sends it by email only).
        </Notice>
      )}
      <Field label="One-time code" hint="6 digits, from the email we sent you">
        <input
          ref={input}
          name="otp"
          inputMode="numeric"
          autoComplete="one-time-code"
          maxLength={6}
          value={value}
          onInput={(event) => onChange(event.currentTarget.value.trim())}
        />
      </Field>
      <button type="button" class="link" disabled={action.busy} onClick={() => void send()}>
        Send a new code
      </button>
    </div>
  );
}

/** A secret the API shows once: displayed until the member says they stored it. */
export function SecretOnce({ title, secret, children, onDone }: { title: string; secret: string; children?: ComponentChildren; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="notice warning secret" role="status">
      <strong>{title}</strong>
      <p>Store it now: it is shown only this once.</p>
      <code class="secret-value">{secret}</code>
      {children}
      <div class="actions">
        <button
          type="button"
          class="secondary"
          onClick={() => {
            void navigator.clipboard?.writeText(secret).then(() => setCopied(true));
          }}
        >
          {copied ? "Copied" : "Copy"}
        </button>
        <button type="button" onClick={onDone}>
          I have stored it
        </button>
      </div>
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty muted">{children}</p>;
}

/** Omits empty strings from a filter object, so the API gets only what was chosen. */
export function chosen<T extends object>(filters: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(filters)) {
    if (value !== "" && value !== undefined && value !== null) out[key] = value;
  }
  return out as T;
}

/** An optional time to pay at, typed in Lagos time (`datetime-local`): empty, paid once authorised. */
export function ScheduleField({ value, onChange }: { value: string; onChange: (value: string) => void }) {
  return (
    <Field
      label="Pay at (optional)"
      hint="Lagos time, up to 90 days ahead. Empty: paid as soon as it is authorised. Otherwise the money is set aside when it is authorised, and paid at that time."
    >
      <input name="execute_at" type="datetime-local" value={value} onInput={(e) => onChange(e.currentTarget.value)} />
    </Field>
  );
}
