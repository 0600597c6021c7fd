// Pieces every page uses: loading with refusals shown as the API gave them, cursor paging,
// the OTP step, a secret shown once, status badges.
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { call, client, Refusal, type Pagination, type Schemas } from "./api";
import { isSandbox } from "./session";
import { follow, href } from "./router";

/** A refusal as the catalog words it, with its code and request id for support. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const refusal = error instanceof Refusal ? error : null;
  return (
    <div class="notice error" role="alert">
      <strong>{refusal ? refusal.message : "Something went wrong in the Dashboard."}</strong>
      {refusal && (
        <span class="muted">
          {" "}
          (code {refusal.code}
          {refusal.requestId ? `, request ${refusal.requestId}` : ""})
        </span>
      )}
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
export function useCursorPages<T>(
  load: (cursor: Cursor | undefined) => Promise<{ data: T[]; pagination?: Pagination | null }>,
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
    items: page.value?.data ?? [],
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

export function Pager({ pages, label }: { pages: { pageNumber: number; hasPrevious: boolean; hasNext: boolean; next: () => void; previous: () => void; loading: boolean }; label: string }) {
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" class="secondary" disabled={!pages.hasPrevious || pages.loading} onClick={pages.previous}>
        ← Newer
      </button>
      <span class="muted">Page {pages.pageNumber}</span>
      <button type="button" class="secondary" disabled={!pages.hasNext || pages.loading} onClick={pages.next}>
        Older →
      </button>
    </nav>
  );
}

export function Field({ label, children, hint }: { label: string; children: ComponentChildren; hint?: ComponentChildren }) {
  return (
    <label class="field">
      <span class="label">{label}</span>
      {children}
      {hint && <span class="hint">{hint}</span>}
    </label>
  );
}

const FINAL = new Set(["success", "failed", "reversed", "rejected", "cancelled", "expired", "delivered", "accepted", "active"]);
const BAD = new Set(["failed", "reversed", "rejected", "cancelled", "expired", "error", "blocked", "closed", "inactive"]);

export function Badge({ value }: { value: string }) {
  const kind = BAD.has(value) ? "bad" : FINAL.has(value) ? "good" : "pending";
  return <span class={`badge ${kind}`}>{value.replace(/_/g, " ")}</span>;
}

/**
 * The second factor of a payment or an approval: asks `generate_otp` for a code (emailed; in
 * the sandbox also shown here, as the API returns it) and lets the member type it.
 */
export function OtpStep({ value, onChange }: { value: string; onChange: (otp: string) => void }) {
  const [delivery, setDelivery] = useState<Schemas["OtpDelivery"] | null>(null);
  const action = useAction();
  const input = useRef<HTMLInputElement>(null);
  const send = () =>
    action.run(async () => {
      const answer = await call(client.POST("/api/v1/auth/web/generate_otp", { body: {} }));
      setDelivery(answer.data);
      onChange("");
      input.current?.focus();
    });
  useEffect(() => {
    void send();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  return (
    <div class="otp">
      <ErrorNote error={action.error} />
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
      <Field label="One-time code">
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
