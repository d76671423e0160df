import { MAX_TIMER_MS } from '../../formats/supervision/limits.ts';

/** Milliseconds on the one monotonic clock every budget uses (same origin in every thread). */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/**
 * One timer for an absolute monotonic deadline. Timers fire early (by up to a
 * millisecond) and late; an early wake re-arms for the rest, so `fire` never runs before
 * the deadline, and never before the I/O already waiting has been read. `rearm` moves
 * the deadline (a lease renewal) without a second timer.
 */
export class DeadlineTimer {
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private deadline: number;
  private readonly fire: (lateMs: number) => void;

  constructor(deadline: number, fire: (lateMs: number) => void) {
    this.deadline = deadline;
    this.fire = fire;
    this.arm();
  }

  rearm(deadline: number): void {
    // Hint: renewing only moves the deadline; the running timer checks it when it wakes
    // and sleeps again for the rest, so a burst of marks costs no timer churn.
    this.deadline = deadline;
  }

  clear(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
  }

  private arm(): void {
    // Hint: Node rounds timers to whole milliseconds; arming for the floor and finishing
    // the last fraction on setImmediate keeps lateness near the loop's own.
    // Longer than a runtime timer can hold: wake at the limit and sleep again.
    const wait = Math.min(MAX_TIMER_MS, Math.max(0, Math.floor(this.deadline - nowMs())));
    this.timer = setTimeout(() => this.check(true), wait);
  }

  private check(fromTimer: boolean): void {
    this.timer = undefined;
    this.immediate = undefined;
    const late = nowMs() - this.deadline;
    // Timers run before the loop reads its pipes: a loop held up (a busy machine) would
    // find the deadline passed before reading marks that were already waiting. The
    // decision waits for one poll phase (setImmediate runs after it), so ready progress
    // is read first; an idle loop pays a fraction of a millisecond for it.
    if (late >= 0 && !fromTimer) this.fire(late);
    else if (late > -1) this.immediate = setImmediate(() => this.check(false));
    else this.arm();
  }
}
