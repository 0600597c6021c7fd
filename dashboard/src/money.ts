// Amounts are decimal strings in the API and integers of kobo here: never floating point.

/**
 * Kobo of an amount a person typed (`"5000"`, `"25,000"`, `"1,000,000.50"`, `"₦ 5 000"`), or
 * null when it is not one.
 */
export function parseAmount(text: string): bigint | null {
  const match = /^(\d{1,12})(?:\.(\d{1,2}))?$/.exec(text.trim().replace(/^₦|^NGN/i, "").replace(/[,\s]/g, ""));
  if (!match) return null;
  const naira = BigInt(match[1] ?? "0");
  const fraction = BigInt((match[2] ?? "").padEnd(2, "0"));
  return naira * 100n + fraction;
}

/** `1234567` kobo as `12,345.67`. */
export function koboText(kobo: bigint): string {
  const negative = kobo < 0n;
  const value = negative ? -kobo : kobo;
  const naira = (value / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const fraction = (value % 100n).toString().padStart(2, "0");
  return `${negative ? "-" : ""}${naira}.${fraction}`;
}

/**
 * An amount or balance of the API (`"125000.500000000"`) as `₦125,000.50`: two fraction digits,
 * more only when a balance holds more than whole kobo.
 */
export function naira(amount: string): string {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(amount);
  if (!match) return amount;
  const whole = (match[2] ?? "0").replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  let fraction = (match[3] ?? "").replace(/0+$/, "");
  if (fraction.length < 2) fraction = fraction.padEnd(2, "0");
  return `${match[1]}₦${whole}.${fraction}`;
}

/** Kobo's own bank code: transfers to it are intra-bank. */
export const KOBO_BANK_CODE = "090823";

/**
 * What an inter-bank transfer costs, as funds_transfer's description in the spec states it
 * ("Fees and limits"): the NIP fee (NGN 10.00 up to 5,000.00; 25.00 up to 50,000.00; 50.00
 * above) and 7.5% VAT on it, rounded half up to the kobo. Intra-bank transfers are free. This is
 * a preview before confirming; the transfer's answer gives the fee and VAT actually charged.
 */
export function charges(amount: bigint, interBank: boolean): { fee: bigint; vat: bigint } {
  if (!interBank) return { fee: 0n, vat: 0n };
  const fee = amount <= 500_000n ? 1_000n : amount <= 5_000_000n ? 2_500n : 5_000n;
  const vat = (fee * 750n + 5_000n) / 10_000n;
  return { fee, vat };
}

/** A timestamp of the API in the reader's time zone. */
export function when(timestamp: string | null | undefined): string {
  if (!timestamp) return "—";
  const date = new Date(timestamp);
  return Number.isNaN(date.getTime()) ? timestamp : date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** Kobo as the API takes an amount: `"1000000.00"`. */
export function amountField(kobo: bigint): string {
  return `${kobo / 100n}.${(kobo % 100n).toString().padStart(2, "0")}`;
}

/** Kobo of an amount or balance of the API (`"125000.500000000"`), cut to whole kobo. */
export function koboOf(amount: string): bigint {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(amount);
  if (!match) return 0n;
  const kobo = BigInt(match[2] ?? "0") * 100n + BigInt((match[3] ?? "").padEnd(2, "0").slice(0, 2));
  return match[1] ? -kobo : kobo;
}

/** `2026-11-02T09:40:00Z` as `2 Nov 2026`. */
export function day(timestamp: string | null | undefined): string {
  if (!timestamp) return "—";
  const date = new Date(timestamp.length === 10 ? `${timestamp}T00:00:00Z` : timestamp);
  return Number.isNaN(date.getTime())
    ? timestamp
    : date.toLocaleDateString(undefined, { day: "numeric", month: "short", year: "numeric", timeZone: timestamp.length === 10 ? "UTC" : undefined });
}

/** Lagos is UTC+01:00 all year (West Africa Time, no daylight saving). */
const LAGOS_OFFSET_MS = 60 * 60 * 1000;

/** Today's date in Lagos, `2026-11-30`: the day a statement's period is counted in. */
export function lagosToday(now: number = Date.now()): string {
  return new Date(now + LAGOS_OFFSET_MS).toISOString().slice(0, 10);
}

/** A timestamp of the API in Lagos time, `2 Nov 2026, 10:20`, whatever the reader's time zone. */
export function lagosTime(timestamp: string | null | undefined): string {
  if (!timestamp) return "—";
  const date = new Date(timestamp);
  if (Number.isNaN(date.getTime())) return timestamp;
  return new Date(date.getTime() + LAGOS_OFFSET_MS).toLocaleString(undefined, {
    day: "numeric",
    month: "short",
    year: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
    timeZone: "UTC",
  });
}

/**
 * A time typed in Lagos (`2026-12-25T09:00`, as a `datetime-local` field gives it) as the API
 * takes it, `2026-12-25T09:00:00+01:00`; null when it is not such a time.
 */
export function lagosInstant(local: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(local) || Number.isNaN(Date.parse(`${local}:00+01:00`))) return null;
  return `${local}:00+01:00`;
}

/**
 * Why a payment cannot be scheduled at `local` (Lagos): not a time, less than a minute ahead or
 * more than 90 days ahead (the API's bounds); null when it can.
 */
export function scheduleProblem(local: string, now: number = Date.now()): string | null {
  const instant = lagosInstant(local);
  if (!instant) return "Pay at: choose a date and a time.";
  const at = Date.parse(instant);
  if (at < now + 60_000) return "Pay at: choose a time still ahead.";
  if (at > now + 90 * 86_400_000) return "Pay at: at most 90 days ahead.";
  return null;
}

/** Days from `start` to `end` (`YYYY-MM-DD`), both counted; null when either is not a date. */
export function daysBetween(start: string, end: string): number | null {
  const from = Date.parse(`${start}T00:00:00Z`);
  const until = Date.parse(`${end}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(start) || !/^\d{4}-\d{2}-\d{2}$/.test(end) || Number.isNaN(from) || Number.isNaN(until)) return null;
  return Math.round((until - from) / 86_400_000) + 1;
}
