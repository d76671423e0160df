import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The single-thread baseline as a whole process, the way a user times it from the shell:
 * read every file of every run directory below the archive, hash it and JSON.parse it
 * (JSONL line by line). Written out as a plain script so node starts it like any other.
 */
const BASELINE_SCRIPT = `
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) { walk(path); continue; }
    const data = readFileSync(path);
    createHash('sha256').update(data).digest('hex');
    if (name.endsWith('.jsonl')) { for (const row of data.toString('utf8').split('\\n')) if (row !== '') JSON.parse(row); }
    else if (name.endsWith('.json')) JSON.parse(data.toString('utf8'));
  }
};
walk(process.argv[2]);
`;

/** One command's samples: wall milliseconds, and CPU milliseconds (user + sys, every thread). */
export interface Timed {
  readonly wall: number[];
  readonly cpu: number[];
}

// Linux's clock ticks per second for /proc times (USER_HZ): 100 on every kernel node runs on.
const TICKS_PER_SECOND = 100;

/**
 * CPU milliseconds of this process's children that have been waited for (cutime + cstime
 * in /proc/self/stat, all their threads included), or NaN off Linux. The bench reads it
 * before and after a spawnSync: the difference is that child's user + sys time.
 */
export function childrenCpuMs(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3 (state).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

/** Wall and CPU milliseconds of each of `samples` runs of a command, alternating the commands. */
export function wallTimes(commands: Record<string, readonly string[]>, samples: number, env?: NodeJS.ProcessEnv): Record<string, Timed> {
  const out: Record<string, Timed> = Object.fromEntries(Object.keys(commands).map((name) => [name, { wall: [], cpu: [] }]));
  for (let i = 0; i < samples; i++) {
    for (const [name, argv] of Object.entries(commands)) {
      const cpuBefore = childrenCpuMs();
      const started = process.hrtime.bigint();
      const child = spawnSync(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'inherit'], ...(env === undefined ? {} : { env }) });
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (child.status !== 0) throw new Error(`${argv.join(' ')} exited ${child.status}`);
      out[name]!.wall.push(ms);
      out[name]!.cpu.push(childrenCpuMs() - cpuBefore);
    }
  }
  return out;
}

export function mean(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Writes the baseline script into `dir` and returns its path. */
export function baselineScript(dir: string): string {
  const path = join(dir, 'baseline.mjs');
  writeFileSync(path, BASELINE_SCRIPT);
  return path;
}
