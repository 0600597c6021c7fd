// The member's session: the token (in this tab's sessionStorage, never a cookie, so it is
// sent only by this app's own calls and gone when the tab closes), the profile and the
// permissions that decide what the pages offer.
import { useEffect, useState } from "preact/hooks";
import { call, client, Refusal, setBearer, whenSessionEnds, type Schemas } from "./api";
import type { paths } from "./generated/kobo";
import { PERMISSION_OF } from "./generated/permissions";
import { say } from "./words";

const STORAGE_KEY = "kobo.dashboard.session";

export interface Session {
  token: string;
  expiresAt: number;
  /** Milliseconds without activity after which the session ends (the server's idle timeout). */
  idleMs: number;
  profile: Schemas["Profile"];
}

/** Where the time of the member's last activity is kept, so a reload does not forget it. */
const ACTIVITY_KEY = "kobo.dashboard.activity";
/** The idle timeout until `login` says otherwise (its documented default). */
const DEFAULT_IDLE_MS = 30 * 60 * 1000;

/** Why a session left alone ended: the reason the login page shows. */
export function idleEnded(idleMs: number): string {
  const minutes = Math.round(idleMs / 60_000);
  return `You were logged out after ${minutes === 1 ? "1 minute" : `${minutes} minutes`} without activity, to keep your business safe.`;
}

interface State {
  session: Session | null;
  /** Why the last session ended, shown on the login page. */
  ended: string | null;
  restoring: boolean;
}

let state: State = { session: null, ended: null, restoring: true };
const listeners = new Set<() => void>();
let expiry: ReturnType<typeof setTimeout> | undefined;

function set(next: Partial<State>): void {
  state = { ...state, ...next };
  for (const listener of listeners) listener();
}

export function useSessionState(): State {
  const [, redraw] = useState(0);
  useEffect(() => {
    const listener = () => redraw((n) => n + 1);
    listeners.add(listener);
    return () => listeners.delete(listener);
  }, []);
  return state;
}

export function currentSession(): Session | null {
  return state.session;
}

/** Whether the member's role allows the operation at `path` (the spec's `x-permission`). */
export function can(path: keyof paths): boolean {
  const needed = PERMISSION_OF[path];
  if (!needed || needed === "self.manage") return state.session !== null;
  return state.session?.profile.role.permission_codes.includes(needed) ?? false;
}

export function isSandbox(): boolean {
  return state.session?.profile.business.environment === "sandbox";
}

async function profile(): Promise<Schemas["Profile"]> {
  const answer = await call(client.POST("/api/v1/auth/web/get_profile", { body: {} }));
  return answer.data;
}

function begin(token: string, expiresAt: number, idleMs: number, profileData: Schemas["Profile"]): void {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ token, expiresAt, idleMs }));
  clearTimeout(expiry);
  expiry = setTimeout(() => end("Your session expired: log in again."), Math.max(0, expiresAt - Date.now()));
  set({ session: { token, expiresAt, idleMs, profile: profileData }, ended: null, restoring: false });
  watchIdleness(idleMs);
}

/** Forgets the session here (the server's side is `logout`'s business). */
export function end(reason: string | null): void {
  sessionStorage.removeItem(STORAGE_KEY);
  sessionStorage.removeItem(ACTIVITY_KEY);
  clearTimeout(expiry);
  clearInterval(idleCheck);
  setBearer(null);
  set({ session: null, ended: reason, restoring: false });
}

whenSessionEnds(() =>
  end("Your session has ended: you may have logged out elsewhere, changed your password, or had your access removed, or it was idle too long. Log in again."),
);

// The idle timeout: the server ends a Dashboard session after `idle_expires_in` seconds
// without a request; the Dashboard, which follows some statuses by itself (a transfer waiting
// for approval), counts a person's own activity instead (a key, a click, a touch) and logs out
// when there was none for as long, so a screen left open shows nothing to the next person.
let idleCheck: ReturnType<typeof setInterval> | undefined;
let lastNoted = 0;

function lastActivity(): number {
  return Number(sessionStorage.getItem(ACTIVITY_KEY) ?? "0") || Date.now();
}

function noteActivity(): void {
  const now = Date.now();
  // At most once a few seconds: a key held down writes nothing more.
  if (now - lastNoted < 5_000) return;
  lastNoted = now;
  sessionStorage.setItem(ACTIVITY_KEY, String(now));
}

for (const kind of ["pointerdown", "keydown", "wheel", "touchstart"] as const) {
  window.addEventListener(kind, () => state.session && noteActivity(), { passive: true, capture: true });
}

function watchIdleness(idleMs: number): void {
  clearInterval(idleCheck);
  if (!sessionStorage.getItem(ACTIVITY_KEY)) sessionStorage.setItem(ACTIVITY_KEY, String(Date.now()));
  idleCheck = setInterval(() => {
    if (Date.now() - lastActivity() >= idleMs) void logOut(idleEnded(idleMs));
  }, 15_000);
}

/** Logs in; `business_id` when the email and password match several businesses. */
export async function logIn(email: string, password: string, businessId?: string): Promise<void> {
  const answer = await call(
    client.POST("/api/v1/auth/web/login", {
      body: businessId ? { email, password, business_id: businessId } : { email, password },
    }),
  );
  const grant = answer.data;
  const expiresAt = Date.now() + grant.expires_in * 1000;
  setBearer(grant.access_token);
  sessionStorage.setItem(ACTIVITY_KEY, String(Date.now()));
  try {
    begin(grant.access_token, expiresAt, grant.idle_expires_in * 1000, await profile());
  } catch (error) {
    setBearer(null);
    throw error;
  }
}

export async function logOut(reason = "You have logged out."): Promise<void> {
  try {
    await call(client.POST("/api/v1/auth/web/logout", { body: {} }));
  } catch {
    // Already over on the server's side (idle, revoked): the session ends here all the same.
  } finally {
    end(reason);
  }
}

/** Picks up the session this tab had, if its token still works. */
export async function restore(): Promise<void> {
  const saved = sessionStorage.getItem(STORAGE_KEY);
  if (!saved) {
    set({ restoring: false });
    return;
  }
  try {
    const { token, expiresAt, idleMs } = JSON.parse(saved) as { token: string; expiresAt: number; idleMs?: number };
    if (typeof token !== "string" || !(expiresAt > Date.now())) throw new Error("expired");
    const idle = idleMs ?? DEFAULT_IDLE_MS;
    if (Date.now() - lastActivity() >= idle) {
      setBearer(token);
      await logOut(idleEnded(idle));
      return;
    }
    setBearer(token);
    begin(token, expiresAt, idle, await profile());
  } catch (error) {
    end(error instanceof Refusal && error.code !== "41" ? say(error) : null);
  }
}

/** Reads the profile again (after a change to the member's own role, for instance). */
export async function refreshProfile(): Promise<void> {
  const session = state.session;
  if (!session) return;
  begin(session.token, session.expiresAt, session.idleMs, await profile());
}
