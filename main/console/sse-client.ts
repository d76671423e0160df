import type { ServerResponse } from 'node:http';

/**
 * One open /events stream. It never holds more than the write in flight: while the socket
 * is not draining, a newer snapshot only marks the client stale (the latest is sent once
 * it drains), heartbeats are skipped, and a socket still not draining after `stallMs` is
 * dropped. A client gone mid-write is forgotten through `onGone` when its response closes.
 */
export class SseClient {
  private readonly res: ServerResponse;
  private readonly latest: () => string;
  private readonly stallMs: number;
  private waiting = false;
  private stale = false;
  private lastData: string | undefined;
  private stallTimer: NodeJS.Timeout | undefined;

  constructor(res: ServerResponse, options: { latest: () => string; stallMs: number; onGone: (client: SseClient) => void }) {
    this.res = res;
    this.latest = options.latest;
    this.stallMs = options.stallMs;
    res.on('drain', () => this.drained());
    res.on('close', () => {
      this.clearStall();
      options.onGone(this);
    });
  }

  /** Sends `data` (a snapshot's JSON) as one event, unless this client already has it. */
  send(data: string): void {
    // '' is no snapshot yet (a source that failed before its first): nothing to send.
    if (!this.open() || data === '') return;
    if (this.waiting) {
      this.stale = true;
      return;
    }
    if (data === this.lastData) return;
    this.lastData = data;
    // JSON.stringify escapes every line break inside strings: the event is one data line.
    this.write(`data: ${data}\n\n`);
  }

  /** A comment line, so proxies and idle timers see traffic on a quiet stream. */
  heartbeat(): void {
    if (this.open() && !this.waiting) this.write(': heartbeat\n\n');
  }

  /** Ends the stream (the server is closing). */
  end(): void {
    this.clearStall();
    if (this.open()) this.res.end();
  }

  private open(): boolean {
    return !this.res.destroyed && !this.res.writableEnded;
  }

  private write(frame: string): void {
    if (this.res.write(frame)) return;
    this.waiting = true;
    this.stallTimer = setTimeout(() => {
      // Still not draining: the reader stopped reading. Drop it rather than buffer more.
      if (this.waiting) this.res.destroy();
    }, this.stallMs);
    this.stallTimer.unref();
  }

  private drained(): void {
    this.waiting = false;
    this.clearStall();
    if (this.stale) {
      this.stale = false;
      this.send(this.latest());
    }
  }

  private clearStall(): void {
    if (this.stallTimer !== undefined) clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
  }
}
