import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BUNDLE = `${ROOT}dist/laneward.mjs`;
const DENO = `${ROOT}node_modules/.bin/deno`;

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Builds the bundles once if a test file runs without `npm test` having built them. */
export function ensureBuilt(): void {
  if (existsSync(BUNDLE)) return;
  const built = spawnSync(process.execPath, [`${ROOT}scripts/build.mjs`], { encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`build failed: ${built.stderr}`);
}

/** Runs the built CLI as a child process, under node or deno, with no stdin. */
export function laneward(
  args: readonly string[],
  options: { runtime?: 'node' | 'deno'; cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {},
): CliResult {
  const [command, prefix] =
    options.runtime === 'deno' ? [DENO, ['run', '-A', '--quiet', BUNDLE]] : [process.execPath, [BUNDLE]];
  const child = spawnSync(command, [...prefix, ...args], {
    encoding: 'utf8',
    cwd: options.cwd ?? ROOT,
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    ...(options.input === undefined ? {} : { input: options.input }),
    env: { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1', ...options.env },
    maxBuffer: 64 * 1024 * 1024,
  });
  if (child.error) throw child.error;
  return { code: child.status, stdout: child.stdout, stderr: child.stderr };
}

/** Every error line must be the one rendered format, ending in its result code. */
export const ERROR_LINE = /^laneward [a-z ]+: [^()]+ \(.+\); fix: .+ \(([A-Z_]+)\)$/;

export function codesOf(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => ERROR_LINE.exec(line)?.[1] ?? `UNRENDERED: ${line}`);
}
