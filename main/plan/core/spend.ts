import { LanewardError } from '../../../formats/codes/error.ts';
import type { AttemptRecord, SpendRecord } from '../../../formats/review/run-record.ts';

/** What each attempt reserves under a cap when the parent gave no --estimate-usd. */
export const DEFAULT_RESERVE_USD = 2;

export function newSpend(cap: number | null, estimate: number | null): SpendRecord {
  return { cap, estimate, spent: 0, reserved: 0, unknown_n: 0, unknown_usd: 0 };
}

/** The dollars one new attempt holds: the estimate, else the default under a cap, else 0. */
export function reservation(spend: SpendRecord): number {
  return spend.estimate ?? (spend.cap === null ? 0 : DEFAULT_RESERVE_USD);
}

export function worstCase(spend: SpendRecord): number {
  return spend.spent + spend.reserved + spend.unknown_usd;
}

/** Admits `count` new attempts or refuses them all: a phase never opens half-funded. */
export function admit(spend: SpendRecord, count: number): number {
  const each = reservation(spend);
  if (spend.cap !== null && worstCase(spend) + each * count > spend.cap + 1e-9) {
    throw new LanewardError(
      'SPEND_CAP_EXCEEDED',
      `${count} attempt(s) at ${usd(each)} would take the worst case from ${usd(worstCase(spend))} past the cap ${usd(spend.cap)}`,
    );
  }
  spend.reserved += each * count;
  return each;
}

/** A bound attempt settles at its usage; without one its reservation stays as unknown spend. */
export function settle(spend: SpendRecord, attempt: AttemptRecord, usage: number | null): void {
  spend.reserved = Math.max(0, spend.reserved - attempt.reserve_usd);
  if (usage !== null) spend.spent += usage;
  else {
    spend.unknown_n += 1;
    spend.unknown_usd += attempt.reserve_usd;
  }
  attempt.reserve_usd = 0;
}

/** A released attempt gives its reservation back. */
export function release(spend: SpendRecord, attempt: AttemptRecord): number {
  const freed = attempt.reserve_usd;
  spend.reserved = Math.max(0, spend.reserved - freed);
  attempt.reserve_usd = 0;
  return freed;
}

export function spendLine(spend: SpendRecord): string {
  return `SPEND: spent=${usd(spend.spent)} reserved=${usd(spend.reserved)} unknown=${spend.unknown_n}(${usd(spend.unknown_usd)}) worst_case=${usd(worstCase(spend))} cap=${spend.cap === null ? 'none' : usd(spend.cap)}`;
}

export function usd(value: number): string {
  return value.toFixed(2);
}
