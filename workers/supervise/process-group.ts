import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
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
export function spawnGroup(options: GroupSpawn): ChildProcess {
  const [command, ...args] = options.argv;
  // An empty name is a command that cannot be found, not an invalid argument.
  if (command === undefined || command === '') throw Object.assign(new Error('empty command name'), { code: 'ENOENT' });
  return spawn(command, args, {
    detached: true,
    stdio: options.stdio,
    env: options.env ?? process.env,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    windowsHide: true,
  });
}

/**
 * Signals the supervised tree: the leader's process group at once, then every other
 * process of the leader's session (a descendant that moved to a group of its own stays in
 * the session; only one that calls setsid leaves it). True when anything was signalled.
 */
export function signalTree(leader: number, signal: NodeJS.Signals): boolean {
  let sent = signalGroup(leader, signal);
  const strays = currentCensus()?.bySession.get(leader) ?? [];
  for (const pid of strays) {
    try {
      process.kill(pid, signal);
      sent = true;
    } catch {
      // Gone since the census.
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

interface Census {
  readonly at: number;
  /** Live (non-zombie) pids by process group, and by session. */
  readonly byGroup: Map<number, number[]>;
  readonly bySession: Map<number, number[]>;
}

/** One reading of /proc shared by every teardown polling in this thread at that moment. */
let census: Census | undefined;
const CENSUS_MS = 10;

/**
 * Pids of the tree (the leader's group and session) that can still run. Zombies are
 * excluded: a zombie has exited and only waits to be reaped (here PID 1 reaps orphans
 * seconds late), yet it keeps `kill(-pgid, 0)` succeeding, so that call proves nothing.
 * /proc is read at most once per {@link CENSUS_MS} for all trees of this thread: hundreds
 * of concurrent teardowns would otherwise each read every process's stat.
 */
export function liveTreeMembers(leader: number): number[] {
  const seen = currentCensus();
  if (seen === undefined) return fallbackMembers(leader);
  const group = seen.byGroup.get(leader) ?? [];
  const session = seen.bySession.get(leader) ?? [];
  return session.length === 0 ? group : [...new Set([...group, ...session])];
}

/**
 * The census, re-read when older than {@link CENSUS_MS}. A process forked since then is
 * caught by the next poll: teardown re-sends SIGKILL on every poll after the grace.
 */
function currentCensus(): Census | undefined {
  const now = performance.now();
  if (census === undefined || now - census.at > CENSUS_MS) census = readCensus(now);
  return census;
}

function readCensus(at: number): Census | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const byGroup = new Map<number, number[]>();
  const bySession = new Map<number, number[]>();
  const add = (map: Map<number, number[]>, key: number, pid: number) => {
    const list = map.get(key);
    if (list === undefined) map.set(key, [pid]);
    else list.push(pid);
  };
  for (const name of entries) {
    const first = name.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'latin1');
    } catch {
      continue; // exited while we looked
    }
    // Fields after the command name, which may itself hold spaces and parentheses:
    // state, ppid, pgrp, session.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') continue;
    const pid = Number(name);
    add(byGroup, Number(fields[2]), pid);
    add(bySession, Number(fields[3]), pid);
  }
  return { at, byGroup, bySession };
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
