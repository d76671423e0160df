import type { GuardEvent, Receipt } from '../../formats/supervision/receipt.ts';

/** One guard line's payload at this moment, against the receipt (if one was read). */
export function guardEvent(kind: GuardEvent['event'], receipt: Receipt | null, extra: Record<string, unknown> = {}): GuardEvent {
  const now = Date.now();
  const deadline = receipt === null ? null : Date.parse(receipt.deadlineAt);
  return {
    event: kind,
    observedAt: new Date(now).toISOString(),
    deadlineAt: receipt?.deadlineAt ?? null,
    remainingMs: deadline === null ? 0 : Math.max(0, deadline - now),
    expired: deadline !== null && now >= deadline,
    ...extra,
  };
}
