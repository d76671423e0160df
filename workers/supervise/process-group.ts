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
  return spawn(command!, args, {
    detached: true,
    stdio: options.stdio,
    env: options.env ?? process.env,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    windowsHide: true,
  });
}

/** Signals every process of the group; a group already gone is not an error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    if (errnoCode(error) === 'ESRCH') return false;
    throw error;
  }
}

/** One reading of /proc shared by every teardown polling in this thread at that moment. */
let census: { at: number; live: Map<number, number[]> } | undefined;
const CENSUS_MS = 4;

/**
 * Pids of the group's processes that can still run. Zombies are excluded: a zombie has
 * exited and only waits to be reaped (here PID 1 reaps orphans seconds late), yet it
 * keeps `kill(-pgid, 0)` succeeding, so that call proves only absence. When it fails the
 * group is gone; otherwise /proc is read, once per couple of milliseconds for all groups
 * (hundreds of concurrent teardowns would otherwise each read every process's stat).
 */
export function liveGroupMembers(pgid: number): number[] {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    if (errnoCode(error) === 'ESRCH') return [];
  }
  const now = performance.now();
  if (census === undefined || now - census.at > CENSUS_MS) census = readCensus(now);
  return census?.live.get(pgid) ?? fallbackMembers(pgid);
}

function readCensus(at: number): { at: number; live: Map<number, number[]> } | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const live = new Map<number, number[]>();
  for (const name of entries) {
    const first = name.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'latin1');
    } catch {
      continue; // exited while we looked
    }
    // Fields after the command name, which may itself hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') continue;
    const group = Number(fields[2]);
    const members = live.get(group);
    if (members === undefined) live.set(group, [Number(name)]);
    else members.push(Number(name));
  }
  return { at, live };
}

/** Without /proc the best available answer is whether the group accepts signals. */
function fallbackMembers(pgid: number): number[] {
  return census === undefined ? [pgid] : [];
}

/** The conventional exit status of a process killed by `signal`: 128 + its number. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}
