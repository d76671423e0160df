/** Milliseconds on the one monotonic clock every budget uses (same origin in every thread). */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/**
 * One timer for an absolute monotonic deadline. Timers may fire early (by up to a
 * millisecond) and late; when it fires early it re-arms for the rest, so `fire` never
 * runs before the deadline. `rearm` moves the deadline (a lease renewal) without
 * creating a second timer.
 */
export class DeadlineTimer {
  private timer: NodeJS.Timeout | undefined;
  private deadline: number;
  private readonly fire: (lateMs: number) => void;

  constructor(deadline: number, fire: (lateMs: number) => void) {
    this.deadline = deadline;
    this.fire = fire;
    this.arm();
  }

  get at(): number {
    return this.deadline;
  }

  rearm(deadline: number): void {
    this.deadline = deadline;
    // Hint: renewing only moves the deadline; the running timer checks it when it fires
    // and re-arms for the rest, so a burst of marks costs no timer churn.
  }

  clear(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    const wait = Math.max(0, this.deadline - nowMs());
    this.timer = setTimeout(() => this.check(), Math.ceil(wait));
  }

  private check(): void {
    this.timer = undefined;
    const late = nowMs() - this.deadline;
    if (late < 0) {
      this.arm();
      return;
    }
    this.fire(late);
  }
}
