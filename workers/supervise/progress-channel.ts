import type { Readable } from 'node:stream';
import { nowMs } from './monotonic-timer.ts';

/** The one byte an `fd` action's provider writes on fd 3 for each admitted mark. */
const MARK = 0x01;

/** What the progress pipe tells its supervision. */
export interface ChannelEvents {
  /** `count` marks in one read, made at `readAt` (a renewal's latency runs from there). */
  readonly marks: (count: number, readAt: number) => void;
  /** A byte other than a mark: PROGRESS_INVALID. */
  readonly invalid: (readAt: number) => void;
  /** EOF on the pipe. */
  readonly closed: () => void;
}

/**
 * Reads an `fd` action's progress pipe (fd 3): every byte must be a mark. EOF is no
 * verdict of its own: a provider closes its fds as it exits, and its exit event can be
 * read long after the EOF on a loaded machine (a wall timer here failed healthy
 * providers). Nothing renews the lease after EOF, so the lease decides: a provider that
 * exits before it ends is fine, one still running then lost its channel.
 */
export function readProgressChannel(progress: Readable, events: ChannelEvents): void {
  progress.on('data', (chunk: Buffer) => {
    const readAt = nowMs();
    for (let i = 0; i < chunk.length; i++) {
      if (chunk[i] !== MARK) return events.invalid(readAt);
    }
    events.marks(chunk.length, readAt);
  });
  progress.once('end', () => events.closed());
}
