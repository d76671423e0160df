import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
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

/** Wall milliseconds of each of `samples` runs of a command, alternating the commands. */
export function wallTimes(commands: Record<string, readonly string[]>, samples: number): Record<string, number[]> {
  const out: Record<string, number[]> = Object.fromEntries(Object.keys(commands).map((name) => [name, []]));
  for (let i = 0; i < samples; i++) {
    for (const [name, argv] of Object.entries(commands)) {
      const started = process.hrtime.bigint();
      const child = spawnSync(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'inherit'] });
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (child.status !== 0) throw new Error(`${argv.join(' ')} exited ${child.status}`);
      out[name]!.push(ms);
    }
  }
  return out;
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
