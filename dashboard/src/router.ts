// Client-side routes under /dashboard/ (kobo answers index.html for each of them), with the
// history API: a link is a real URL that can be bookmarked, reloaded or opened in a new tab.
import { useEffect, useState } from "preact/hooks";

export const BASE = "/dashboard/";

export interface Location {
  /** The route under the base, without a leading slash: "", "transfers", "accounts/1000000014". */
  route: string;
  query: URLSearchParams;
  /** Counts navigations: following a link to the page one is on draws it afresh. */
  seq: number;
}

let seq = 0;

function read(): Location {
  const path = window.location.pathname;
  const route = path.startsWith(BASE) ? path.slice(BASE.length) : "";
  return { route: route.replace(/\/+$/, ""), query: new URLSearchParams(window.location.search), seq };
}

const listeners = new Set<() => void>();
window.addEventListener("popstate", () => {
  seq += 1;
  listeners.forEach((listener) => listener());
});

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = BASE + to.replace(/^\/+/, "");
  if (options.replace) window.history.replaceState(null, "", url);
  else window.history.pushState(null, "", url);
  seq += 1;
  listeners.forEach((listener) => listener());
  window.scrollTo(0, 0);
}

export function useLocation(): Location {
  const [location, setLocation] = useState(read);
  useEffect(() => {
    const listener = () => setLocation(read());
    listeners.add(listener);
    return () => listeners.delete(listener);
  }, []);
  return location;
}

/** An `<a>` to a route of the app, followed without a page load. */
export function href(route: string): string {
  return BASE + route;
}

export function follow(event: MouseEvent, route: string): void {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(route);
}

/**
 * `route` with `params` as its query string, leaving out empty values: a page's filters in its
 * address, so a reload, a bookmark or Back finds them again.
 */
export function withQuery(route: string, params: Record<string, string | number | boolean | null | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") query.set(name, String(value));
  }
  const text = query.toString();
  return text ? `${route}?${text}` : route;
}

/** The query's values by name, leaving out the empty ones. */
export function queryValues(query: URLSearchParams): Record<string, string> {
  const values: Record<string, string> = {};
  query.forEach((value, name) => {
    if (value !== "") values[name] = value;
  });
  return values;
}

/** The query's values of `names` (those given, not empty), as a list's filters. */
export function pick(query: URLSearchParams, names: readonly string[]): Record<string, string> {
  const values: Record<string, string> = {};
  for (const name of names) {
    const value = query.get(name);
    if (value) values[name] = value;
  }
  return values;
}

/**
 * A list's filters: `applied` (what the list shows), `draft` (what the form holds) and `apply`.
 * A list that is a page keeps them in the page's address, so a reload, a bookmark or Back finds
 * them again (`apply` follows a link to the same page with them); a list inside another page
 * (an account's transactions) keeps them to itself (`local`).
 */
export function useFilters<T extends object>(parse: (query: URLSearchParams) => T, local = false) {
  const location = useLocation();
  const [own, setOwn] = useState<T>(() => parse(new URLSearchParams()));
  const applied = local ? own : parse(location.query);
  const [draft, setDraft] = useState<T>(applied);
  const apply = (next: T) => {
    if (local) setOwn(next);
    else navigate(withQuery(location.route, next as Record<string, string | number | boolean | null | undefined>));
  };
  return { applied, draft, setDraft, apply };
}
