// The member's session: the token (in this tab's sessionStorage, never a cookie, so it is
// sent only by this app's own calls and gone when the tab closes), the profile and the
// permissions that decide what the pages offer.
import { useEffect, useState } from "preact/hooks";
import { call, client, Refusal, setBearer, whenSessionEnds, type Schemas } from "./api";
import type { paths } from "./generated/kobo";
import { PERMISSION_OF } from "./generated/permissions";

const STORAGE_KEY = "kobo.dashboard.session";

export interface Session {
  token: string;
  expiresAt: number;
  profile: Schemas["Profile"];
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

function begin(token: string, expiresAt: number, profileData: Schemas["Profile"]): void {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ token, expiresAt }));
  clearTimeout(expiry);
  expiry = setTimeout(() => end("Your session expired: log in again."), Math.max(0, expiresAt - Date.now()));
  set({ session: { token, expiresAt, profile: profileData }, ended: null, restoring: false });
}

/** Forgets the session here (the server's side is `logout`'s business). */
export function end(reason: string | null): void {
  sessionStorage.removeItem(STORAGE_KEY);
  clearTimeout(expiry);
  setBearer(null);
  set({ session: null, ended: reason, restoring: false });
}

whenSessionEnds((refusal: Refusal) => end(`Your session has ended: ${refusal.message}`));

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
  try {
    begin(grant.access_token, expiresAt, await profile());
  } catch (error) {
    setBearer(null);
    throw error;
  }
}

export async function logOut(): Promise<void> {
  try {
    await call(client.POST("/api/v1/auth/web/logout", { body: {} }));
  } finally {
    end("You have logged out.");
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
    const { token, expiresAt } = JSON.parse(saved) as { token: string; expiresAt: number };
    if (typeof token !== "string" || !(expiresAt > Date.now())) throw new Error("expired");
    setBearer(token);
    begin(token, expiresAt, await profile());
  } catch (error) {
    end(error instanceof Refusal && error.code !== "41" ? error.message : null);
  }
}

/** Reads the profile again (after a change to the member's own role, for instance). */
export async function refreshProfile(): Promise<void> {
  const session = state.session;
  if (!session) return;
  begin(session.token, session.expiresAt, await profile());
}
