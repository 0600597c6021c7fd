// What a person reads when something is refused: the Dashboard's own words for each code of the
// catalog (the API's messages are written for the developers who call it: field paths, permission
// codes, regular expressions). No field names, no permission codes, no ids; waits in minutes,
// amounts with separators. A request id is offered only where support needs it (`96`).
import { Refusal } from "./api";

/** Where a refusal happened, when that changes what it means to a person. */
export type Context = "login" | "invitation" | "otp" | "session";

/** What the API calls a field, as a form labels it. */
const LABELS: Record<string, string> = {
  account_number: "Account number",
  account_name: "Account name",
  amount: "Amount",
  bank_code: "Bank",
  bulk_transfer_id: "Bulk payment",
  item_count: "Rows to pay",
  total: "Total",
  beneficiary_account_number: "Beneficiary's account number",
  beneficiary_account_name: "Beneficiary's name",
  bvn: "BVN",
  nin: "NIN",
  business_id: "Business",
  confirm_password: "Confirm password",
  cursor_created_at: "Page",
  cursor_id: "Page",
  description: "Description",
  email: "Email",
  end_date: "To date",
  event_types: "Events",
  first_name: "First name",
  ip_whitelist: "Allowed addresses",
  last_name: "Last name",
  limit: "Page size",
  member_id: "Member",
  min_amount: "Amount",
  name: "Name",
  narration: "Narration",
  new_password: "New password",
  old_password: "Current password",
  otp: "One-time code",
  parent_account_number: "Linked account",
  password: "Password",
  permission_codes: "Permissions",
  phone: "Phone",
  reason: "Reason",
  reference: "Your reference",
  reference_number: "Kobo reference",
  role_id: "Role",
  search: "Search",
  source_account_name: "From account",
  source_account_number: "From account",
  start_date: "From date",
  token: "Invitation link",
  url: "URL",
  user_id: "Member",
};

/** `filters.account_number` or `permission_codes[2]` as a form's label. */
export function label(field: string): string {
  const last = field.split(".").pop()?.replace(/\[\d+\]$/, "") ?? field;
  const known = LABELS[last];
  if (known) return known;
  const words = last.replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** `NGN 5000000.00` in a message as `₦5,000,000.00`. */
export function withSeparators(text: string): string {
  return text.replace(/(?:NGN|₦)\s?(\d+)(\.\d+)?/g, (_all, whole: string, fraction: string | undefined) => {
    const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    return `₦${grouped}${fraction ?? ""}`;
  });
}

/** What a validation message's reason means to a person (never a pattern or a type). */
function plainReason(field: string, reason: string): string {
  const last = field.split(".").pop() ?? field;
  if (/account_number$/.test(last)) return "an account number has 10 digits.";
  if (last === "bvn" || last === "nin") return "it has 11 digits.";
  if (last === "phone") return "write 11 digits, like 08031234567.";
  if (/amount$/.test(last) && /positive|fraction|pattern|match/i.test(reason)) {
    return "write an amount like 25,000 or 25,000.50.";
  }
  if (/pattern|match|\^|\$|regular expression|format/i.test(reason)) return "it is not written the way it should be.";
  const short = /at least (\d+) characters/.exec(reason);
  if (short) return `it is too short: at least ${short[1]} characters.`;
  const long = /at most (\d+) characters|longer than (\d+)/.exec(reason);
  if (long) return `it is too long: at most ${long[1] ?? long[2]} characters.`;
  if (/required|missing/i.test(reason)) return "it is needed.";
  return withSeparators(
    reason
      .replace(/`[^`]*`/g, (code) => label(code.slice(1, -1)).toLowerCase())
      // A field named without backticks ("must not be after end_date") is a form's label too.
      .replace(/\b[a-z]+(?:_[a-z]+)+\b/g, (name) => (LABELS[name] ? label(name).toLowerCase() : name))
      // Counts with separators ("holds 20,001 transactions"); account numbers and BVNs stay whole.
      .replace(/\b\d{5,9}\b/g, (digits) => digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",")),
  );
}

/** `in 1 minute`, `in 12 minutes`, `in about an hour`, from seconds. */
export function inMinutes(seconds: number): string {
  const minutes = Math.max(1, Math.ceil(seconds / 60));
  if (minutes >= 55 && minutes <= 65) return "in about an hour";
  if (minutes > 65) return `in about ${Math.round(minutes / 60)} hours`;
  return minutes === 1 ? "in 1 minute" : `in ${minutes} minutes`;
}

/** A refusal (or any failure) in the Dashboard's words. */
export function say(error: unknown, context?: Context): string {
  if (!(error instanceof Refusal)) return "Something went wrong in the Dashboard. Reload the page and try again.";
  const message = error.message;
  switch (error.code) {
    case "network":
      return "Kobo cannot be reached. Check your connection and try again.";
    case "01": {
      const field = /^`([^`]+)`:\s*(.*)$/.exec(message);
      if (field?.[1] && field[2] !== undefined) return `${label(field[1])}: ${plainReason(field[1], field[2])}`;
      if (/business_id/.test(message)) return "This email and password open several businesses: say which one.";
      return withSeparators(message.replace(/`([^`]+)`/g, (_all, name: string) => label(name)));
    }
    case "02":
      return "Give the customer's BVN or NIN.";
    case "06":
      return "No account has this number at this bank. Check the number and the bank.";
    case "26":
      return withSeparators(message);
    case "27":
      return "This was already sent with other details. Start again from the beginning.";
    case "28":
      return "Kobo is still working on the first try. Wait a moment, then look before trying again.";
    case "29": {
      const when = inMinutes(error.retryAfter ?? 60);
      if (context === "otp") return `Too many wrong codes. You can try again ${when}.`;
      if (context === "login") return `Too many tries to log in. You can try again ${when}.`;
      return `Too many requests. You can try again ${when}.`;
    }
    case "41":
      if (context === "login") {
        return "The email or password is not right, or your access to this business was removed.";
      }
      if (context === "invitation") {
        return "This invitation link no longer works: it was used, replaced by a newer one, or it expired. Ask whoever invited you to send a new one.";
      }
      return "Your session has ended: you may have logged out elsewhere, changed your password, or had your access removed. Log in again.";
    case "42":
      return "That account is not one of your business's accounts.";
    case "43":
      return "Your role does not allow this. Ask an owner or an admin of your business.";
    case "44":
      return "No account matches.";
    case "45":
      return "That one-time code is not right, or it has expired. Send a new code and type it.";
    case "46":
      return "Your current password is not right.";
    case "47":
      return "Not found: it may have been removed, or the link is wrong.";
    case "48":
      return withSeparators(message);
    case "49":
      return "The beneficiary's name does not match what the bank has on record.";
    case "60":
      return "Your business is not active yet: the bank activates it before you can open accounts or send money.";
    case "80":
      return "The banking network is not answering right now. Nothing was sent: try again in a few minutes.";
    case "83":
      return withSeparators(message);
    case "96":
      return `Something went wrong at Kobo. Try again; if it goes on, give support this reference: ${error.requestId ?? "none"}.`;
    case "97":
      return "Kobo cannot reach its records right now, and nothing was kept. Try again in a few seconds.";
    case "98":
      return "Kobo could not confirm whether this payment went through. Look at your transfers before sending it again.";
    default:
      return withSeparators(message);
  }
}
