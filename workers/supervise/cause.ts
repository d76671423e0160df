import { nowMs } from './monotonic-timer.ts';
import type { OutcomeCode } from './outcome.ts';

/** Why a supervision ends, as first recorded: later causes are consequences and dropped. */
export interface Cause {
  readonly code: OutcomeCode;
  /** When it was found, on the monotonic clock: teardown times count from here. */
  readonly at: number;
  /** How late the timer that found it fired (a deadline or a lease), else null. */
  readonly lateMs: number | null;
}

export const cause = (code: OutcomeCode, lateMs: number | null = null): Cause => ({ code, at: nowMs(), lateMs });
