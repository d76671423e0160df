import { closeSync, constants, fstatSync, fsyncSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import { basename } from 'node:path';
import { errnoCode, LanewardError } from '../../formats/codes/error.ts';
import {
  newestStart,
  parseTrail,
  renderTrailRow,
  startNames,
  startRow,
  TRAIL_HEADER,
  type ParsedTrail,
  type TrailRow,
} from '../../formats/trail/tsv.ts';
import { acquireLock, sweepClaims } from '../fs/file-lock.ts';

/** A trail larger than this is refused rather than read: every append reads it whole. */
export const TRAIL_MAX_BYTES = 64 * 1024 * 1024;

export type TrailOutcome =
  | { readonly kind: 'appended'; readonly row: number; readonly at: string }
  | { readonly kind: 'started'; readonly row: number; readonly at: string }
  | { readonly kind: 'already'; readonly row: number }
  | { readonly kind: 'refused'; readonly newest: { row: number; run: string } | undefined };

export type TrailFields = Omit<TrailRow, 'at' | 'run'>;

/**
 * Appends one row. With `run`, only while the newest start row names that run
 * (`refused` otherwise, nothing written); without it, always.
 */
export function appendTrail(file: string, fields: TrailFields, run: string | undefined, at: string): TrailOutcome {
  return underLock(file, (trail) => {
    if (run !== undefined && !startNames(trail, run)) return { outcome: { kind: 'refused', newest: newestStart(trail) } };
    const row = renderTrailRow({ at, run: run ?? '', ...fields });
    return { outcome: { kind: 'appended', row: trail.rows.length + 1, at }, write: row };
  });
}

/** Appends a start row for `run`, unless the newest start row names it already. */
export function startTrail(file: string, run: string, at: string): TrailOutcome {
  return underLock(file, (trail) => {
    const newest = newestStart(trail);
    if (newest !== undefined && startNames(trail, run)) return { outcome: { kind: 'already', row: newest.row } };
    const row = renderTrailRow(startRow(trail, run, basename(file), at));
    return { outcome: { kind: 'started', row: trail.rows.length + 1, at }, write: row };
  });
}

interface Step {
  readonly outcome: TrailOutcome;
  readonly write?: string;
}

/**
 * Reads the trail, decides and appends under one exclusive lock, so a start check and
 * the row it guards cannot interleave with another writer and row numbers are exact.
 * The row goes out in ONE write(2) on an O_APPEND descriptor, a complete line with its
 * newline, so even a writer that ignores the lock cannot tear it or land inside it.
 */
function underLock(file: string, decide: (trail: ParsedTrail) => Step): TrailOutcome {
  // Refuse a FIFO, a directory or a device before any lock file is made beside it.
  const before = statSync(file, { throwIfNoEntry: false });
  if (before !== undefined && !before.isFile()) throw unreadable(file, 'not a regular file');
  const release = takeLock(`${file}.lock`);
  let fd: number | undefined;
  try {
    sweepClaims(`${file}.lock`);
    fd = openTrail(file, false);
    const text = fd === undefined ? '' : readWhole(fd, file);
    if (text !== '' && !text.startsWith(TRAIL_HEADER)) throw unreadable(file, 'the first line is not the trail header');
    const trail = parseTrail(text);
    const context = decide(trail);
    if (context.write !== undefined) {
      // The file is made only when a row goes in, so a refusal leaves no empty trail.
      fd ??= openTrail(file, true)!;
      // A new file gets its header in the same write as its first row; a line left
      // without its newline by a writer that died is ended first, kept as it is.
      const prefix = text === '' ? TRAIL_HEADER : trail.tornTail ? '\n' : '';
      const bytes = Buffer.from(prefix + context.write);
      const written = writeSync(fd, bytes);
      if (written !== bytes.length) throw new LanewardError('IO_ERROR', `short write (${written} of ${bytes.length} bytes)`, { path: file });
      fsyncSync(fd);
    }
    return context.outcome;
  } finally {
    if (fd !== undefined) closeSync(fd);
    release();
  }
}

/**
 * The trail's lock (the runtime's one file lock, takeover-safe against a reused pid);
 * a live holder past 10 s is refused IO_ERROR, as is a lock file that cannot be made.
 */
function takeLock(path: string): () => void {
  try {
    return acquireLock(path, { code: 'IO_ERROR' });
  } catch (error) {
    if (error instanceof LanewardError) throw error;
    throw new LanewardError('IO_ERROR', `${path} cannot be created (${errnoCode(error) ?? 'error'})`, { path, cause: error });
  }
}

/** The trail opened for reading and appending; undefined when absent and not `create`. */
function openTrail(file: string, create: boolean): number | undefined {
  try {
    // O_NONBLOCK: a FIFO swapped in after the check above still cannot hang the open.
    const flags = constants.O_RDWR | constants.O_APPEND | constants.O_NONBLOCK | (create ? constants.O_CREAT : 0);
    const fd = openSync(file, flags, 0o644);
    if (!fstatSync(fd).isFile()) {
      closeSync(fd);
      throw unreadable(file, 'not a regular file');
    }
    return fd;
  } catch (error) {
    if (error instanceof LanewardError) throw error;
    const code = errnoCode(error);
    if (code === 'ENOENT' && !create) return undefined;
    if (code === 'EISDIR' || code === 'ENXIO') throw unreadable(file, 'not a regular file');
    throw new LanewardError('IO_ERROR', `${file} cannot be opened (${code ?? 'error'})`, { path: file });
  }
}

function readWhole(fd: number, file: string): string {
  const size = fstatSync(fd).size;
  if (size > TRAIL_MAX_BYTES) throw unreadable(file, `over ${TRAIL_MAX_BYTES} bytes`);
  const buffer = Buffer.allocUnsafe(size);
  let total = 0;
  while (total < size) {
    const n = readSync(fd, buffer, total, size - total, total);
    if (n === 0) break;
    total += n;
  }
  return buffer.subarray(0, total).toString('utf8');
}

function unreadable(file: string, detail: string): LanewardError {
  return new LanewardError('TRAIL_UNREADABLE', detail, { path: file });
}
