/** Renewal latencies kept for p99 and the histogram: the most recent ones only. */
export const LATENCY_WINDOW = 2048;

/**
 * The counters behind {@link DispatchStats}. Marks of a running supervision are the
 * renewals reported so far (one renewal may carry several marks); once it finishes, its
 * outcome's exact count replaces them.
 */
export class DispatchCounters {
  started = 0;
  finished = 0;
  private finishedMarks = 0;
  private runningMarks = 0;
  private readonly window: number[] = [];
  private next = 0;

  renewals(count: number, latenciesMs: readonly number[]): void {
    this.runningMarks += count;
    for (const latency of latenciesMs) {
      if (this.window.length < LATENCY_WINDOW) this.window.push(latency);
      else this.window[this.next] = latency;
      this.next = (this.next + 1) % LATENCY_WINDOW;
    }
  }

  /** A supervision ended: its reported renewals give way to its outcome's marks. */
  finish(reported: number, marks: number): void {
    this.runningMarks -= reported;
    this.finishedMarks += marks;
    this.finished += 1;
  }

  get marks(): number {
    return this.finishedMarks + this.runningMarks;
  }

  latencies(): number[] {
    return this.window.length < LATENCY_WINDOW ? [...this.window] : [...this.window.slice(this.next), ...this.window.slice(0, this.next)];
  }
}
