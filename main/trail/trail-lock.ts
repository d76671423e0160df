import { randomUUID } from 'node:crypto';
import { closeSync, linkSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { errnoCode, LanewardError } from '../../formats/codes/error.ts';

const WAIT_MS = 10_000;
const PAUSE_MS = 5;
// A lock file still empty after this long lost its creator between open and write.
const EMPTY_GRACE_MS = 5_000;

/**
 * Takes `path` exclusively and returns its release. The lock is a file created with
 * O_EXCL holding a token unique to this taker (`<pid> <uuid>`). A lock whose process is
 * gone is taken over, but only by one taker at a time (under `<path>.takeover`), which
 * re-reads the token before it removes the file: between that read and the removal the
 * file cannot change, since its holder is dead, creators need it absent and no other
 * taker is working. So a live holder's lock is never removed for a dead one's.
 */
export function takeLock(path: string): () => void {
  const token = `${process.pid} ${randomUUID()}`;
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    if (create(path, token)) return () => release(path, token);
    const holder = readToken(path);
    if (holder !== undefined && isStale(path, holder)) takeOver(path, holder, token);
    else if (Date.now() > deadline) {
      throw new LanewardError('IO_ERROR', `${path} is held by process ${holder?.split(' ')[0] ?? '?'} for over ${WAIT_MS / 1000} s`, { path });
    } else pause(PAUSE_MS);
  }
}

function create(path: string, token: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    if (errnoCode(error) === 'EEXIST') return false;
    throw new LanewardError('IO_ERROR', `${path} cannot be created (${errnoCode(error) ?? 'error'})`, { path });
  }
  try {
    writeSync(fd, token);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** The holder's token, or undefined when the lock was released meanwhile. */
function readToken(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw new LanewardError('IO_ERROR', `${path} cannot be read (${errnoCode(error) ?? 'error'})`, { path });
  }
}

function isStale(path: string, token: string): boolean {
  const pid = Number(token.split(' ')[0]);
  if (Number.isSafeInteger(pid) && pid > 0) return !alive(pid);
  // No pid yet: the creator is between open and write, or died there.
  const mtime = statSync(path, { throwIfNoEntry: false })?.mtimeMs;
  return mtime !== undefined && Date.now() - mtime > EMPTY_GRACE_MS;
}

/** Removes the lock `path` if it still holds the dead `stale` token; see takeLock. */
function takeOver(path: string, stale: string, token: string): void {
  const guard = `${path}.takeover`;
  if (!create(guard, token)) {
    const holder = readToken(guard);
    // A taker died inside the few microseconds it holds the guard: move the guard
    // aside, and put it back if what moved was not the dead taker's.
    if (holder !== undefined && isStale(guard, holder)) removeIfStill(guard, holder);
    pause(PAUSE_MS);
    return;
  }
  try {
    if (readToken(path) === stale) unlinkQuiet(path);
  } finally {
    release(guard, token);
  }
}

function removeIfStill(path: string, stale: string): void {
  const aside = `${path}.${randomUUID()}`;
  try {
    renameSync(path, aside);
  } catch {
    return; // someone else moved it first
  }
  if (readToken(aside) !== stale) {
    try {
      linkSync(aside, path);
    } catch {
      // a new guard exists already; the moved one's holder releases by token, harmlessly
    }
  }
  unlinkQuiet(aside);
}

function release(path: string, token: string): void {
  // Only our own token is removed: a lock is never released for another holder.
  if (readToken(path) === token) unlinkQuiet(path);
}

function unlinkQuiet(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if (errnoCode(error) !== 'ENOENT') throw error;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errnoCode(error) === 'EPERM';
  }
}

const cell = new Int32Array(new SharedArrayBuffer(4));

function pause(ms: number): void {
  Atomics.wait(cell, 0, 0, ms);
}
