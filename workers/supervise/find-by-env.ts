import { readdirSync, readFileSync } from 'node:fs';
import { canRun, readProcStat, statScratch } from './proc-stat.ts';

/** A live process found by a variable of its environment: the group its supervisor started. */
export interface FoundChild {
  readonly pid: number;
  readonly pgid: number;
  readonly ticks: number;
}

/**
 * The live group leader that carries `name=value` in its environment, or undefined. A supervised child's environment names its
 * attempt, and its descendants inherit it: this finds a child whose spawn its supervisor
 * never got to journal (killed in between). Only a leader is returned: a teardown proves
 * a tree gone from its leader, and a descendant outliving its leader is not chased (as for
 * a journaled orphan). Processes of other users, and environments that cannot be read,
 * are passed over: a supervisor's children are its user's.
 */
export function findLiveByEnv(name: string, value: string): FoundChild | undefined {
  const needle = envNeedle(name, value);
  const scratch = statScratch();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue;
    if (environHas(pid, needle) !== true) continue;
    const stat = readProcStat(pid, scratch);
    if (stat === undefined || !canRun(stat)) continue;
    if (stat.pgid === pid) return { pid, pgid: pid, ticks: stat.startTime };
  }
  return undefined;
}

/** The bytes a `name=value` variable is found by in an environment. */
export function envNeedle(name: string, value: string): Buffer {
  return Buffer.from(`${name}=${value}\0`);
}

/**
 * Whether `pid` was started with the variable `needle` ({@link envNeedle}) in its
 * environment. False for a process that is gone or another user's (a supervisor's
 * children are its user's); undefined when it cannot be told now: an empty read, as a
 * process in the middle of exec gives.
 */
export function environHas(pid: number, needle: Buffer): boolean | undefined {
  let environ: Buffer;
  try {
    environ = readFileSync(`/proc/${pid}/environ`);
  } catch {
    return false;
  }
  if (environ.length === 0) return undefined;
  // A whole variable: at the start, or right after the NUL that ends the one before.
  const at = environ.indexOf(needle);
  return at >= 0 && (at === 0 || environ[at - 1] === 0);
}

/**
 * The value of variable `name` in the environment `pid` was started with, or undefined
 * (no such variable, a process gone, another user's, or mid-exec).
 */
export function envValue(pid: number, name: string): string | undefined {
  let environ: string;
  try {
    environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
  } catch {
    return undefined;
  }
  const prefix = `${name}=`;
  return environ.split('\0').find((entry) => entry.startsWith(prefix))?.slice(prefix.length);
}
