// What waits for the member: the payments they may approve (others' payments and bulk payments
// held by the approval policy), counted on the menu's Approvals entry, read again at each page change, a
// minute after the last read, and when an approval or a rejection changes the queue.
import { useEffect, useState } from "preact/hooks";
import { call, client } from "./api";
import { can, currentSession } from "./session";

/** More than this shows as "99+". */
const SHOWN_MAX = 99;

const listeners = new Set<() => void>();

/** Reads the count again (after an approval, a rejection or a new held payment). */
export function notifyApprovalsChanged(): void {
  listeners.forEach((listener) => listener());
}

/**
 * How many held payments made by others wait (single transfers and bulk payments, each batch
 * one); null when the member can approve neither.
 */
export async function waitingForMe(): Promise<number | null> {
  const transfers =
    can("/api/v1/transaction/transfer/web/approve_transfer") && can("/api/v1/transaction/transfer/web/fetch_pending_transfers");
  const batches =
    can("/api/v1/transaction/transfer/web/approve_bulk_transfer") && can("/api/v1/transaction/transfer/web/fetch_bulk_transfers");
  if (!transfers && !batches) return null;
  const me = currentSession()?.profile.member.id;
  const [held, heldBatches] = await Promise.all([
    transfers ? call(client.POST("/api/v1/transaction/transfer/web/fetch_pending_transfers", { body: { limit: 100 } })) : null,
    batches
      ? call(client.POST("/api/v1/transaction/transfer/web/fetch_bulk_transfers", { body: { status: "pending_approval", limit: 100 } }))
      : null,
  ]);
  return (
    (held?.data.filter((transfer) => transfer.initiated_by !== me).length ?? 0) +
    (heldBatches?.data.filter((batch) => batch.authorised_by !== me).length ?? 0)
  );
}

export function countText(count: number): string {
  return count > SHOWN_MAX ? `${SHOWN_MAX}+` : String(count);
}

/** The count of payments waiting for this member, read again when `key` changes. */
export function useWaitingCount(key: unknown): number | null {
  const [count, setCount] = useState<number | null>(null);
  const [round, setRound] = useState(0);
  useEffect(() => {
    const listener = () => setRound((n) => n + 1);
    listeners.add(listener);
    const timer = setInterval(listener, 60_000);
    return () => {
      listeners.delete(listener);
      clearInterval(timer);
    };
  }, []);
  useEffect(() => {
    let current = true;
    waitingForMe().then(
      (found) => current && setCount(found),
      () => current && setCount(null),
    );
    return () => {
      current = false;
    };
  }, [key, round]);
  return count;
}
