import { randomUUID } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { processAlive, processStart } from '../process/process-alive.ts';

// call-<n>-p<pid>-t<start ticks>-<uuid>: the process that runs the call, so a directory a
// killed process left behind can be told from one a live call still uses.
const CALL_DIR = /^call-\d+-p(\d+)-t(\d*)-[0-9a-f-]{36}$/;

let ownTicks: string | undefined;

/**
 * The name of one call's directory (prompt, result, stream), after the process that
 * decides it. `nonce` is drawn by the caller before its deciding transaction (a
 * transaction step reads nothing of the world), which records the name in the call's
 * reservation.
 */
export function callDirName(call: number, nonce: string = randomUUID()): string {
  ownTicks ??= processStart(process.pid)?.ticks ?? '';
  return `call-${call}-p${process.pid}-t${ownTicks}-${nonce}`;
}

/** Where the directory `name` of a lane's call is. */
export function callDirPath(root: string, lane: string, name: string): string {
  return join(root, 'qa', lane, name);
}

/** Removes one call's directory once its end is recorded (best effort: a sweep meets it again). */
export function removeCallDir(root: string, lane: string, name: string): void {
  rmSync(callDirPath(root, lane, name), { recursive: true, force: true });
}

/**
 * Removes the call directories of `lane` whose process is gone: a call removes its own
 * directory once its end is recorded, so one left behind belongs to a process that was
 * killed (or a laneward that named them without their process: those are removed too).
 * A live process's directory is never touched: its call may still be running; nor one
 * that `keep` names (an open reservation's: its end is not recorded yet, and what its
 * observer wrote is how a later process settles it). Best effort: a directory that
 * cannot be read or removed is left for the next sweep.
 */
export function sweepStaleCalls(root: string, lane: string, keep: ReadonlySet<string>): void {
  const dir = join(root, 'qa', lane);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith('call-') || keep.has(name)) continue;
    const owner = CALL_DIR.exec(name);
    if (owner !== null && processAlive(Number(owner[1]), { ticks: owner[2] ?? '' })) continue;
    rmSync(join(dir, name), { recursive: true, force: true });
  }
}
