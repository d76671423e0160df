import { closeSync, constants, ftruncateSync, openSync, readSync, watch, type FSWatcher } from 'node:fs';

/**
 * How often a followed file is looked at besides its change events: inotify coalesces
 * events and a watch can fail to start (no inotify instances left), so a look on a timer
 * bounds the latency when no event comes. Hint: one read(2) returning 0 per look.
 */
const LOOK_EVERY_MS = 50;
const CHUNK_BYTES = 64 * 1024;

/**
 * Opens the file a provider's output is written to, for the provider itself: created or
 * truncated, append-only, never through a symbolic link. The provider holds this
 * descriptor, not the supervisor, so what it writes reaches the file after the
 * supervisor is gone (a pipe's reader dies with its process, and the stream with it).
 */
export function openStreamSink(path: string): number {
  // Truncated apart from the open: Deno refuses O_TRUNC together with O_APPEND.
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_NOFOLLOW, 0o600);
  try {
    ftruncateSync(fd, 0);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
}

/**
 * Follows a file another process appends to, from offset 0: every byte reaches `onChunk`
 * once, in order, as the file grows. Woken by the file's change events and by a look
 * every {@link LOOK_EVERY_MS}. A file has no EOF while a writer lives: `drain` reads to its
 * end once the caller knows no writer is left (the tree proven gone), and stops.
 */
export class StreamFollower {
  private readonly fd: number;
  private readonly onChunk: (chunk: Buffer) => void;
  private watcher: FSWatcher | undefined;
  private readonly look: NodeJS.Timeout;
  private stopped = false;
  private readonly scratch = Buffer.allocUnsafe(CHUNK_BYTES);
  /** Bytes read so far. */
  offset = 0;

  /** Throws when the file cannot be opened for reading (the caller types it). */
  constructor(path: string, onChunk: (chunk: Buffer) => void) {
    this.fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    this.onChunk = onChunk;
    try {
      this.watcher = watch(path, { persistent: false }, () => this.read());
      this.watcher.on('error', () => this.unwatch());
    } catch {
      // No watch (inotify exhausted, a runtime without it): the timer alone follows the file.
      this.watcher = undefined;
    }
    this.look = setInterval(() => this.read(), LOOK_EVERY_MS);
    this.look.unref();
    // Whatever is in the file already (an orphan's stream, read by its adopter) comes first.
    queueMicrotask(() => this.read());
  }

  /** Reads what the file holds beyond the offset, in chunks, to its current end. */
  read(): void {
    while (!this.stopped) {
      let n: number;
      try {
        n = readSync(this.fd, this.scratch, 0, CHUNK_BYTES, this.offset);
      } catch {
        return;
      }
      if (n === 0) return;
      this.offset += n;
      // Hint: one scratch buffer per follower, and only what was read is copied out: most
      // looks (every 50 ms of every live call) read nothing and allocate nothing.
      this.onChunk(Buffer.from(this.scratch.subarray(0, n)));
    }
  }

  /** Reads to the end (no writer is left) and stops following. */
  drain(): void {
    this.read();
    this.stop();
  }

  /** Stops following; nothing more reaches `onChunk`. Idempotent. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.look);
    this.unwatch();
    closeSync(this.fd);
  }

  private unwatch(): void {
    this.watcher?.close();
    this.watcher = undefined;
  }
}
