import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildId } from '../../scripts/build-id.mjs';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BUNDLE = `${ROOT}dist/laneward.cjs`;
const DENO = `${ROOT}node_modules/.bin/deno`;

export interface CliResult {
  readonly code: number | null;
  /** The signal that ended the child when `code` is null: a crash (SIGSEGV, SIGABRT) or a kill. */
  readonly signal?: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** True when the child outran `timeoutMs` and was killed (SIGKILL): it hung. */
  readonly timedOut?: boolean;
}

const builtId = () => {
  try {
    return readFileSync(`${ROOT}dist/build-id`, 'utf8').trim();
  } catch {
    return undefined;
  }
};

/**
 * Rebuilds the bundles when dist/ was not built from the sources as they are now (its
 * build id differs), so a test file run alone after an edit never tests a stale bundle.
 * Test files run in parallel: one builds under a lock directory, the others wait for it
 * and then find the id matching.
 */
export function ensureBuilt(): void {
  const wanted = buildId(ROOT);
  if (builtId() === wanted) return;
  const lock = `${ROOT}.build-lock`;
  const end = Date.now() + 180_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > end) throw new Error(`waited too long for ${lock}; remove it if no build runs`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
  try {
    if (builtId() === wanted) return;
    const built = spawnSync(process.execPath, [`${ROOT}scripts/build.mjs`], { encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`build failed: ${built.stderr}`);
  } finally {
    rmdirSync(lock);
  }
}

/** Runs the built CLI as a child process, under node or deno, with no stdin. */
export function laneward(
  args: readonly string[],
  options: { runtime?: 'node' | 'deno'; cwd?: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {},
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
    // A child that may hang is killed outright: a blocked read never runs a SIGTERM handler.
    ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs, killSignal: 'SIGKILL' as const }),
  });
  if (child.error && (child.error as NodeJS.ErrnoException).code === 'ETIMEDOUT') {
    return { code: child.status, stdout: child.stdout, stderr: child.stderr, timedOut: true };
  }
  if (child.error) throw child.error;
  // Only a child a signal ended carries one: results compare whole (toEqual) otherwise.
  return { code: child.status, ...(child.signal === null ? {} : { signal: child.signal }), stdout: child.stdout, stderr: child.stderr };
}

/** Every error line must be the one rendered format, ending in its result code. */
export const ERROR_LINE = /^laneward [a-z ]+: [^()]+ \(.+\); fix: .+ \(([A-Z_]+)\)$/;

export function codesOf(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => ERROR_LINE.exec(line)?.[1] ?? `UNRENDERED: ${line}`);
}
