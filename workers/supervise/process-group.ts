import type { ChildProcess, StdioOptions } from 'node:child_process';
import { createRequire } from 'node:module';
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import { constants } from 'node:os';
import { errnoCode } from '../../formats/error.ts';

export interface GroupSpawn {
  readonly argv: readonly string[];
  readonly stdio: StdioOptions;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
}

/**
 * Starts argv[0] with its arguments, never through a shell, as the leader of a new
 * session and process group (pgid = pid), so the whole tree can be signalled at once.
 * Spawn failures arrive as the child's 'error' event, as Node reports them.
 */
// Hint: node:child_process costs ~4.5 ms to load, and a bundle's ESM imports all load at
// start-up; required on first use, it is paid only by commands that spawn.
const requireBuiltin = createRequire(import.meta.url);
let childProcess: typeof import('node:child_process') | undefined;

export function spawnGroup(options: GroupSpawn): ChildProcess {
  const [command, ...args] = options.argv;
  // An empty name is a command that cannot be found, not an invalid argument.
  if (command === undefined || command === '') throw Object.assign(new Error('empty command name'), { code: 'ENOENT' });
  childProcess ??= requireBuiltin('node:child_process') as typeof import('node:child_process');
  return childProcess.spawn(command, args, {
    detached: true,
    stdio: options.stdio,
    env: options.env ?? process.env,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    windowsHide: true,
  });
}

/**
 * Signals the supervised tree: the leader's process group at once, then any other
 * process of the leader's session (a descendant that moved to a group of its own stays in
 * the session; only one that calls setsid leaves it). True when anything was signalled.
 * The group goes first so the first signal never waits for /proc.
 */
export function signalTree(leader: number, signal: NodeJS.Signals): boolean {
  let sent = signalGroup(leader, signal);
  for (const pid of liveTreeMembers(leader)) {
    if (processGroupOf(pid) === leader) continue; // the group signal reached it
    try {
      process.kill(pid, signal);
      sent = true;
    } catch {
      // Gone since we looked.
    }
  }
  return sent;
}

function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    if (errnoCode(error) === 'ESRCH') return false;
    throw error;
  }
}

interface ProcStat {
  readonly state: string;
  readonly pgid: number;
  readonly sid: number;
}

// Hint: open/read/close into one buffer costs a third of readFileSync, which stats the
// file and allocates; a storm of teardowns reads thousands of these.
const statBuffer = Buffer.allocUnsafe(1024);

function readStat(pid: number): ProcStat | undefined {
  let stat: string;
  try {
    const fd = openSync(`/proc/${pid}/stat`, 'r');
    try {
      stat = statBuffer.toString('latin1', 0, readSync(fd, statBuffer, 0, statBuffer.length, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined; // exited
  }
  // Fields after the command name, which may itself hold spaces and parentheses:
  // state, ppid, pgrp, session.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0]!, pgid: Number(fields[2]), sid: Number(fields[3]) };
}

function processGroupOf(pid: number): number | undefined {
  return known.get(pid)?.pgid;
}

/**
 * Every process this thread has seen, with its group and session, kept up to date
 * incrementally: each refresh lists /proc (one directory read) and reads the stat of new
 * pids only. Hundreds of concurrent teardowns share it; each then re-reads only its own
 * tree's pids, so a storm of expiries does not turn the loop into a /proc reader.
 */
const known = new Map<number, { pgid: number; sid: number }>();
let listedAt = Number.NEGATIVE_INFINITY;
let procReadable = true;
const LIST_MS = 10;

function refresh(force: boolean): void {
  const now = performance.now();
  if (!force && now - listedAt < LIST_MS) return;
  listedAt = now;
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    procReadable = false;
    return;
  }
  const present = new Set<number>();
  for (const name of names) {
    const first = name.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    const pid = Number(name);
    present.add(pid);
    if (known.has(pid)) continue;
    const stat = readStat(pid);
    if (stat !== undefined) known.set(pid, { pgid: stat.pgid, sid: stat.sid });
  }
  for (const pid of known.keys()) if (!present.has(pid)) known.delete(pid);
}

/**
 * Pids of the tree (the leader's group and session) that can still run. Zombies are
 * excluded: a zombie has exited and only waits to be reaped (here PID 1 reaps orphans
 * seconds late), yet it keeps `kill(-pgid, 0)` succeeding, so that call proves nothing.
 * Every candidate's stat is read afresh, so a pid that changed group or was reused is
 * judged by what it is now.
 */
export function liveTreeMembers(leader: number): number[] {
  refresh(false);
  if (!procReadable) return fallbackMembers(leader);
  return treeMembers(leader);
}

let waiting: { leader: number; resolve: (gone: boolean) => void }[] = [];

/**
 * Whether the tree is gone, proven. "Gone" needs a /proc listing taken after every member
 * was seen dead, or a child forked just before its parent died would be missed; the
 * proofs asked for in one turn of the event loop share that one listing.
 */
export function treeGone(leader: number): Promise<boolean> {
  if (liveTreeMembers(leader).length > 0) return Promise.resolve(false);
  if (!procReadable) return Promise.resolve(true);
  return new Promise((resolve) => {
    if (waiting.length === 0) setImmediate(settleProofs);
    waiting.push({ leader, resolve });
  });
}

function settleProofs(): void {
  const batch = waiting;
  waiting = [];
  refresh(true);
  for (const { leader, resolve } of batch) resolve(treeMembers(leader).length === 0);
}

function treeMembers(leader: number): number[] {
  const live: number[] = [];
  for (const [pid, seen] of known) {
    if (seen.pgid !== leader && seen.sid !== leader) continue;
    const stat = readStat(pid);
    if (stat === undefined) {
      known.delete(pid);
      continue;
    }
    known.set(pid, { pgid: stat.pgid, sid: stat.sid });
    if ((stat.pgid === leader || stat.sid === leader) && stat.state !== 'Z' && stat.state !== 'X') live.push(pid);
  }
  return live;
}

/** Without /proc the best available answer is whether the group accepts signals. */
function fallbackMembers(pgid: number): number[] {
  try {
    process.kill(-pgid, 0);
    return [pgid];
  } catch {
    return [];
  }
}

/** The conventional exit status of a process killed by `signal`: 128 + its number. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}
