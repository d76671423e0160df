import type { ServerResponse } from 'node:http';
import type { BrotliCompress, Gzip } from 'node:zlib';

/**
 * One open /events stream. It never holds more than the write in flight: while the socket
 * is not draining, newer messages are not written (once it drains, the one message that
 * catches it up is), heartbeats are skipped, and a socket still not draining after
 * `stallMs` is dropped. A client gone mid-write is forgotten through `onGone` when its
 * response closes. With an `encoder` (gzip or br, piped into the response) every frame is
 * written to it and flushed at once: a compressed stream still brings each event when it
 * happens, and back-pressure is the encoder's (it fills when the response stops draining).
 */
export class SseClient {
  private readonly res: ServerResponse;
  private readonly since: (from: number) => { readonly seq: number; readonly data: string };
  private readonly stallMs: number;
  private waiting = false;
  /** The number of the last message written (-1: none). */
  private seq = -1;
  private stallTimer: NodeJS.Timeout | undefined;
  private readonly encoder: Gzip | BrotliCompress | undefined;

  constructor(
    res: ServerResponse,
    options: { since: (from: number) => { readonly seq: number; readonly data: string }; stallMs: number; onGone: (client: SseClient) => void; encoder?: Gzip | BrotliCompress },
  ) {
    this.res = res;
    this.since = options.since;
    this.stallMs = options.stallMs;
    this.encoder = options.encoder;
    if (this.encoder !== undefined) {
      this.encoder.on('error', () => res.destroy());
      this.encoder.pipe(res);
    }
    (this.encoder ?? res).on('drain', () => this.drained());
    res.on('close', () => {
      this.clearStall();
      this.encoder?.destroy();
      options.onGone(this);
    });
  }

  /** Writes the message that brings this client to the latest number, unless it is there or its socket is not draining. */
  catchUp(): void {
    if (!this.open() || this.waiting) return;
    const { seq, data } = this.since(this.seq);
    if (data === '') return;
    this.seq = seq;
    this.write(`id: ${seq}\ndata: ${data}\n\n`);
  }

  /** A comment line, so proxies and idle timers see traffic on a quiet stream. */
  heartbeat(): void {
    if (this.open() && !this.waiting) this.write(': heartbeat\n\n');
  }

  /** Ends the stream (the server is closing). */
  end(): void {
    this.clearStall();
    if (this.open()) (this.encoder ?? this.res).end();
  }

  private open(): boolean {
    return !this.res.destroyed && !this.res.writableEnded;
  }

  private write(frame: string): void {
    const written = (this.encoder ?? this.res).write(frame);
    this.encoder?.flush();
    if (written) return;
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
    this.catchUp();
  }

  private clearStall(): void {
    if (this.stallTimer !== undefined) clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
  }
}
