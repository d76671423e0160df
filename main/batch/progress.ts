import type { BatchOutput } from './batch-output.ts';

const WIDTH = 24;
const REDRAW_MS = 100;

/**
 * A one-line progress display on a terminal's stderr: done/total, runs/s, ETA and the
 * invalid count. Silent when stderr is not a terminal. Lines printed meanwhile go through
 * {@link ProgressBar.print}, which clears the bar so it never splits them; the bar comes
 * back on a later tick. It is drawn at most every REDRAW_MS (about ten times a second)
 * however many runs finish or lines print, and once more for the last run.
 */
export class ProgressBar {
  private readonly io: BatchOutput;
  private readonly total: number;
  private readonly clock: () => number;
  private readonly started: number;
  private readonly enabled: boolean;
  private lastDraw = 0;
  private shown = false;
  done = 0;
  invalid = 0;

  constructor(io: BatchOutput, total: number, clock: () => number = () => performance.now()) {
    this.io = io;
    this.total = total;
    this.clock = clock;
    this.started = clock();
    this.lastDraw = -REDRAW_MS;
    this.enabled = io.stderrIsTTY && total > 0;
  }

  tick(invalid: boolean): void {
    this.done += 1;
    if (invalid) this.invalid += 1;
    if (!this.enabled) return;
    const now = this.clock();
    if (now - this.lastDraw >= REDRAW_MS || this.done === this.total) this.draw(now);
  }

  /** Clears the bar (if shown) and writes; the bar is drawn again by a later tick, not here. */
  print(write: () => void): void {
    if (this.shown) {
      this.io.errRaw('\r\x1b[2K');
      this.shown = false;
    }
    write();
  }

  finish(): void {
    if (this.shown) this.io.errRaw('\r\x1b[2K');
    this.shown = false;
  }

  private draw(now: number): void {
    this.lastDraw = now;
    this.shown = true;
    const seconds = Math.max((now - this.started) / 1000, 1e-3);
    const rate = this.done / seconds;
    const eta = rate > 0 ? (this.total - this.done) / rate : 0;
    const filled = Math.round((this.done / this.total) * WIDTH);
    const bar = '#'.repeat(filled) + '-'.repeat(WIDTH - filled);
    this.io.errRaw(
      `\r\x1b[2K[${bar}] ${this.done}/${this.total} runs  ${rate.toFixed(0)} runs/s  ETA ${formatSeconds(eta)}  invalid ${this.invalid}`,
    );
  }
}

function formatSeconds(seconds: number): string {
  if (seconds < 60) return `${seconds.toFixed(0)}s`;
  const m = Math.floor(seconds / 60);
  return `${m}m${String(Math.round(seconds % 60)).padStart(2, '0')}s`;
}
