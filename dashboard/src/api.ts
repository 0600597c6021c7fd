// The one client of the API: openapi-fetch over the types openapi-typescript generates from
// spec/openapi.yaml (npm run generate), so every path, body and answer the Dashboard uses is
// checked against the spec by `tsc --noEmit`.
import createClient from "openapi-fetch";
import type { components, paths } from "./generated/kobo";

export type Schemas = components["schemas"];
export type ErrorEnvelope = Schemas["ErrorEnvelope"];
export type Pagination = Schemas["Pagination"];

/**
 * A refusal, as the API gave it: the catalog's code, the API's message (for the API's readers;
 * `src/words.ts` says it to a person), the request id and, for `29` and `97`, the seconds to
 * wait (`Retry-After`).
 */
export class Refusal extends Error {
  readonly code: string;
  readonly requestId: string | null;
  readonly retryAfter: number | null;
  constructor(code: string, message: string, requestId: string | null, retryAfter: number | null = null) {
    super(message);
    this.code = code;
    this.requestId = requestId;
    this.retryAfter = retryAfter;
  }
}

let bearer: string | null = null;
let onSessionEnded: (refusal: Refusal) => void = () => {};

/** The token sent with every call (null: none). */
export function setBearer(token: string | null): void {
  bearer = token;
}

/** Called when a call made with the session's token is refused `41`: the session is over. */
export function whenSessionEnds(handler: (refusal: Refusal) => void): void {
  onSessionEnded = handler;
}

export const client = createClient<paths>({ baseUrl: "" });

client.use({
  onRequest({ request }) {
    if (bearer) {
      request.headers.set("Authorization", `Bearer ${bearer}`);
    }
    return request;
  },
});

interface Answer<T> {
  data?: T;
  error?: ErrorEnvelope | unknown;
  response: Response;
}

/**
 * The success envelope of a call, or a `Refusal` with the error envelope's code and message.
 * A transport failure (no answer at all) is a refusal too, with code `network`.
 */
export async function call<T>(pending: Promise<Answer<T>>): Promise<T> {
  let answer: Answer<T>;
  try {
    answer = await pending;
  } catch {
    throw new Refusal("network", "Kobo cannot be reached: check your connection and try again.", null);
  }
  const requestId = answer.response.headers.get("X-Request-Id");
  if (answer.data !== undefined && answer.response.ok) {
    return answer.data;
  }
  const envelope = answer.error as Partial<ErrorEnvelope> | undefined;
  const wait = Number(answer.response.headers.get("Retry-After") ?? "");
  const retryAfter = Number.isFinite(wait) && wait > 0 ? wait : null;
  const refusal =
    envelope && typeof envelope.message === "string" && typeof envelope.response_code === "string"
      ? new Refusal(envelope.response_code, envelope.message, requestId, retryAfter)
      : new Refusal(String(answer.response.status), `Unexpected answer (HTTP ${answer.response.status}).`, requestId, retryAfter);
  if (refusal.code === "41" && bearer !== null) {
    onSessionEnded(refusal);
  }
  throw refusal;
}

/** A fresh `Idempotency-Key` (a UUID v4), also where `crypto.randomUUID` is not offered. */
export function newIdempotencyKey(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
