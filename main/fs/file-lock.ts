import { randomBytes, createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync, symlinkSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { ResultCode } from '../../formats/codes/codes.ts';
import { errnoCode, LanewardError } from '../../formats/codes/error.ts';
import { processAlive, processStart } from '../process/process-alive.ts';

const WAIT_MS = 10_000;
const POLL_MS = 15;
const MAX_CLAIMS = 64;

export interface LockOptions {
  /** How long a live holder is waited for before the lock is refused. Default 10 s. */
  readonly waitMs?: number;
  /** The code of the refusal: a live holder kept it past waitMs. Default ACK_LOCKED. */
  readonly code?: ResultCode;
}

/**
 * An exclusive lock on one file, safe to take over from a holder that died. The one lock
 * of the runtime: artifact ack (run.json.lock) and the trail (<trail>.lock) both take it.
 *
 * The lock is a symlink whose target is the holder's token (`pid:start-tick:random`):
 * symlink(2) creates it with its content in one step and fails if it exists, so a lock
 * is never seen half-written. A lock whose holder is gone (no such pid, a zombie, a pid
 * since reused by a process that started later, an empty or unreadable file) is stale.
 * `kill(pid, 0)` alone would not do: a pid reused by an unrelated live process passes
 * it, so a dead holder's lock would be waited on forever (or, worse, a judgment of
 * "alive" would rest on a stranger). The start tick in the token tells the two apart.
 * A regular file is a lock an older writer left: a bare pid (ack) or `<pid> <uuid>`
 * (the trail), judged by whether that pid's process started before the file was written.
 *
 * Removing a stale lock is the unsafe step: two waiters that both judged it stale must
 * not both remove "the lock", since by the second removal it may be a live one. So a
 * waiter first claims the stale lock: it creates `<lock>.break.<id>.<n>` (again a
 * symlink with its token), where `<id>` names that very lock file (its token, inode and
 * time) and n = 1, 2, ... goes past claims whose makers died. Only the holder of the
 * lowest claim with a live maker acts; it re-checks that the lock is still the stale one
 * (nobody else can remove or replace it meanwhile) and unlinks it. Everyone then races
 * for the lock afresh.
 */
export function acquireLock(lockPath: string, options: LockOptions = {}): () => void {
  const waitMs = options.waitMs ?? WAIT_MS;
  const token = ownToken();
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      symlinkSync(token, lockPath);
      return () => release(lockPath, token);
    } catch (error) {
      // Anything but "held" (EACCES, ENOENT, EROFS, ...) is the caller's to report.
      if (errnoCode(error) !== 'EEXIST') throw error;
    }
    const held = identify(lockPath);
    if (held === undefined) continue; // released meanwhile
    if (!held.alive) {
      breakStale(lockPath, held.id, token);
      continue;
    }
    if (Date.now() > deadline) {
      throw new LanewardError(options.code ?? 'ACK_LOCKED', `${lockPath} is held by live process ${held.pid} for over ${waitMs / 1000} s`, { path: lockPath });
    }
    sleep(POLL_MS);
  }
}

/**
 * Removes what dead lock takers leave beside `lockPath` (claims of finished takeovers).
 * Only called by the lock's holder: no claim can then be needed by anyone.
 */
export function sweepClaims(lockPath: string): void {
  const prefix = `${basename(lockPath)}.break.`;
  for (const name of readdirSync(dirname(lockPath))) {
    if (!name.startsWith(prefix)) continue;
    const claim = identify(join(dirname(lockPath), name));
    if (claim !== undefined && !claim.alive) unlinkQuietly(join(dirname(lockPath), name));
  }
}

/** The pid holding `lockPath` now, when a live process holds it. */
export function livePidHolding(lockPath: string): number | undefined {
  const held = identify(lockPath);
  return held !== undefined && held.alive ? held.pid : undefined;
}

let ownTokenCache: string | undefined;

function ownToken(): string {
  ownTokenCache ??= `${process.pid}:${processStart(process.pid)?.ticks ?? ''}`;
  return `${ownTokenCache}:${randomBytes(12).toString('hex')}`;
}

interface Held {
  readonly id: string;
  readonly alive: boolean;
  readonly pid: number;
}

/**
 * Who holds a lock or claim file, read through its current inode: a symlink token, or
 * (a lock left by an older writer) a regular file holding a pid. Undefined when absent.
 */
function identify(path: string): Held | undefined {
  let stat;
  let text: string;
  try {
    stat = lstatSync(path);
    text = stat.isSymbolicLink() ? readlinkSync(path) : readFileSync(path, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    // Present but unreadable as either: nobody can ever prove holding it.
    text = '';
    stat = lstatSync(path, { throwIfNoEntry: false });
    if (stat === undefined) return undefined;
  }
  const id = createHash('sha256').update(`${text}\0${stat.ino}\0${stat.mtimeMs}`).digest('hex').slice(0, 24);
  // A token carries its start tick; a bare pid (an older writer's regular file: `<pid>`
  // or `<pid> <uuid>`) is checked against when its file was written.
  const token = /^(\d+):(\d*):/.exec(text);
  const bare = token === null ? /^\s*(\d+)(?:\s|$)/.exec(text) : null;
  const pid = Number(token?.[1] ?? bare?.[1] ?? 0);
  const alive = token !== null ? processAlive(pid, { ticks: token[2]! }) : bare !== null && processAlive(pid, { writtenAtMs: stat.mtimeMs });
  return { id, alive, pid };
}

function breakStale(lockPath: string, staleId: string, token: string): void {
  for (let n = 1; n <= MAX_CLAIMS; n++) {
    const claim = `${lockPath}.break.${staleId}.${n}`;
    try {
      symlinkSync(token, claim);
    } catch (error) {
      if (errnoCode(error) !== 'EEXIST') throw error;
      const maker = identify(claim);
      if (maker !== undefined && maker.alive) {
        sleep(POLL_MS); // a live taker is at it; look again afterwards
        return;
      }
      continue; // its maker died (or it just went): the next claim decides
    }
    try {
      // Still that very stale lock? Then only this claim's holder may remove it.
      if (identify(lockPath)?.id === staleId) unlinkQuietly(lockPath);
    } finally {
      for (let k = n; k >= 1; k--) unlinkQuietly(`${lockPath}.break.${staleId}.${k}`);
    }
    return;
  }
  throw new LanewardError('ACK_LOCKED', `${lockPath}: too many abandoned takeovers`, { path: lockPath });
}

function release(lockPath: string, token: string): void {
  try {
    if (readlinkSync(lockPath) === token) unlinkSync(lockPath);
  } catch {
    // Already gone: nothing to release.
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Gone already.
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4));

function sleep(ms: number): void {
  Atomics.wait(pause, 0, 0, ms);
}
