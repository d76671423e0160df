import { randomUUID } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { processAlive, processStart } from '../process/process-alive.ts';

// call-<n>-p<pid>-t<start ticks>-<uuid>: the process that runs the call, so a directory a
// killed process left behind can be told from one a live call still uses.
const CALL_DIR = /^call-\d+-p(\d+)-t(\d*)-[0-9a-f-]{36}$/;

let ownTicks: string | undefined;

/** The directory of one call's files (prompt, result, stdout copy), named after its process. */
export function callDir(root: string, lane: string, call: number): string {
  ownTicks ??= processStart(process.pid)?.ticks ?? '';
  return join(root, 'qa', lane, `call-${call}-p${process.pid}-t${ownTicks}-${randomUUID()}`);
}

/**
 * Removes the call directories of `lane` whose process is gone: a call removes its own
 * directory when it ends, so one left behind belongs to a process that was killed (or a
 * laneward that named them without their process: those are removed too). A live
 * process's directory is never touched: its call may still be running. Best effort: a
 * directory that cannot be read or removed is left for the next sweep.
 */
export function sweepStaleCalls(root: string, lane: string): void {
  const dir = join(root, 'qa', lane);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith('call-')) continue;
    const owner = CALL_DIR.exec(name);
    if (owner !== null && processAlive(Number(owner[1]), { ticks: owner[2] ?? '' })) continue;
    rmSync(join(dir, name), { recursive: true, force: true });
  }
}
