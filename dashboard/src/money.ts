// Amounts are decimal strings in the API and integers of kobo here: never floating point.

/** Kobo of a request amount (`"5000"`, `"5000.5"`, `"5000.50"`), or null when it is not one. */
export function parseAmount(text: string): bigint | null {
  const match = /^(\d{1,12})(?:\.(\d{1,2}))?$/.exec(text.trim().replace(/,/g, ""));
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
  return Number.isNaN(date.getTime()) ? timestamp : date.toLocaleString();
}
