import { readFileSync } from 'node:fs';
import { errnoCode } from '../../formats/codes/error.ts';
import { canRun, readProcStat, statScratch } from '../../workers/supervise/proc-stat.ts';

/**
 * When a process started, in clock ticks since boot (`/proc/<pid>/stat`, field 22), and
 * whether it is a zombie; undefined where there is no /proc or no such process.
 */
export function processStart(pid: number): { ticks: string; zombie: boolean } | undefined {
  // One reader of /proc/<pid>/stat for the whole runtime: the supervisor's.
  const stat = readProcStat(pid, scratch);
  return stat === undefined ? undefined : { ticks: String(stat.startTime), zombie: !canRun(stat) };
}

const scratch = statScratch();

let bootSeconds: number | undefined;

/** A process's start as epoch milliseconds (to about a second), where /proc tells it. */
export function processStartedAtMs(pid: number): number | undefined {
  const start = processStart(pid);
  if (start === undefined) return undefined;
  try {
    bootSeconds ??= Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1]);
  } catch {
    return undefined;
  }
  // USER_HZ is 100 on every Linux ABI Node and Deno run on.
  const ms = (bootSeconds + Number(start.ticks) / 100) * 1000;
  return Number.isFinite(ms) ? ms : undefined;
}

/** Whether a recorded holder (a run's driver, an attempt's dispatcher, a crew) still runs. */
export function holderAlive(holder: { readonly pid: number; readonly ticks: string }): boolean {
  return processAlive(holder.pid, { ticks: holder.ticks });
}

/**
 * Whether `pid` still names the process that wrote something: it exists, is not a
 * zombie (this sandbox's init reaps orphans late), and, given `ticks`, started at that
 * very tick, or, given `writtenAtMs`, started before the thing was written (a pid
 * reused by a later process fails either test).
 */
export function processAlive(pid: number, proof: { ticks?: string; writtenAtMs?: number } = {}): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if (errnoCode(error) !== 'EPERM') return false;
  }
  const start = processStart(pid);
  if (start === undefined) return true;
  if (start.zombie) return false;
  if (proof.ticks !== undefined && proof.ticks !== '' && start.ticks !== proof.ticks) return false;
  if (proof.writtenAtMs !== undefined) {
    const startedAt = processStartedAtMs(pid);
    // A second of slack: boot time and ticks are coarser than a file's mtime.
    if (startedAt !== undefined && startedAt > proof.writtenAtMs + 1000) return false;
  }
  return true;
}
