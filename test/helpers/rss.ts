import { spawnSync } from 'node:child_process';
import { BUNDLE, ROOT } from './cli.ts';

const PROBE = 'data:text/javascript,process.on("exit",()=>process.stderr.write("MAXRSS "+process.resourceUsage().maxRSS+"\\n"))';

/** Runs the built CLI and reports its peak resident memory in MB with its output. */
export function lanewardWithRss(args: readonly string[]): { code: number | null; stdout: string; stderr: string; rssMb: number } {
  const child = spawnSync(process.execPath, ['--import', PROBE, BUNDLE, ...args], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const kb = Number(/MAXRSS (\d+)/.exec(child.stderr)?.[1] ?? Number.NaN);
  return { code: child.status, stdout: child.stdout, stderr: child.stderr.replace(/MAXRSS \d+\n/, ''), rssMb: kb / 1024 };
}
