import { closeSync, constants, fstatSync, openSync, writeSync } from 'node:fs';
import { errnoCode } from '../../formats/codes/error.ts';
import { outputClosed } from '../interrupt.ts';

/** How often a blocked stderr is tried again while a flush waits. */
const RETRY_MS = 5;

/**
 * The guard's own lines on stderr, written without ever blocking: for a pipe, FIFO or
 * terminal, a descriptor of its own on the same file (`/proc/self/fd/2` reopened
 * non-blocking), so a probe that shares fd 2 and switches it to blocking mode cannot make
 * a guard write block; a regular file is written through fd 2 itself.
 * Lines that cannot be written yet wait in order; `flush` gives them a bounded time.
 * Where fd 2 cannot be reopened (a socket), the process's own stderr stream is used,
 * switched back to non-blocking before each write.
 */
export class GuardStderr {
  private fd: number | null | undefined;
  private readonly pending: Buffer[] = [];
  /** Stream writes (the fallback) not yet reported done. */
  private inflight = 0;
  private broken = false;

  /** Writes `text` now if stderr takes it, or queues it behind what is waiting. */
  write(text: string): void {
    this.pending.push(Buffer.from(text));
    this.pump();
  }

  /** Writes `text` and everything queued within `timeoutMs`; false when it could not. */
  async flush(text: string, timeoutMs: number): Promise<boolean> {
    this.write(text);
    const end = Date.now() + timeoutMs;
    while (!this.broken && (this.pending.length > 0 || this.inflight > 0)) {
      if (Date.now() >= end) return false;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      this.pump();
    }
    return !this.broken;
  }

  private pump(): void {
    const fd = this.descriptor();
    if (fd === null) return this.viaStream();
    while (!this.broken && this.pending.length > 0) {
      const head = this.pending[0]!;
      let written: number;
      try {
        written = writeSync(fd, head);
      } catch (error) {
        if (errnoCode(error) === 'EAGAIN') return; // full: try again later
        // The reader went away: a supervising command takes that as a cancellation.
        this.broken = true;
        if (errnoCode(error) === 'EPIPE') outputClosed();
        return;
      }
      if (written === head.length) this.pending.shift();
      else this.pending[0] = head.subarray(written);
    }
  }

  private descriptor(): number | null {
    if (this.fd === undefined) {
      try {
        // A regular file never blocks, and its offset is shared with the probe's writes:
        // written through fd 2 itself, a guard line can never be overwritten by the probe.
        if (fstatSync(2).isFile()) this.fd = 2;
        else {
          const fd = openSync('/proc/self/fd/2', constants.O_WRONLY | constants.O_NONBLOCK | constants.O_APPEND | constants.O_NOCTTY);
          this.fd = fd;
          process.once('exit', () => closeSync(fd));
        }
      } catch {
        this.fd = null;
      }
    }
    return this.fd;
  }

  /** The fallback: the libuv stream queues what it cannot write; it is asked not to block. */
  private viaStream(): void {
    const handle = (process.stderr as unknown as { _handle?: { setBlocking?: (blocking: boolean) => number } })._handle;
    while (this.pending.length > 0) {
      const chunk = this.pending.shift()!;
      handle?.setBlocking?.(false);
      this.inflight++;
      process.stderr.write(chunk, (error) => {
        this.inflight--;
        if (error !== null && error !== undefined) this.broken = true;
      });
    }
  }
}
