import { spawn } from 'node:child_process';
import { homedir } from 'node:os';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { PROVIDER_KEY_ENV, type ProviderPin } from '../../formats/providers/pins.ts';
import { unrunnable } from '../process/runnable.ts';
import { readInstalled } from './installed-record.ts';

/** Where a CLI was found, in lookup order; `missing` when nowhere. */
export type FoundWhere = 'path' | 'node_modules' | 'cache' | 'missing';

export interface Located {
  /** The absolute path of the program, or null when it is missing. */
  readonly path: string | null;
  readonly found: FoundWhere;
}

export interface LocateOptions {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** Where `laneward providers --install` puts the CLIs; default {@link cacheDirOf}. */
  readonly cacheDir?: string;
}

/** The variable that names the CLI cache directory (it holds node_modules and installed.json). */
export const CACHE_ENV = 'LANEWARD_CACHE';

/** glibc's default search path (confstr _CS_PATH): what execvp walks when PATH is unset. */
const DEFAULT_PATH = '/bin:/usr/bin';
const VERSION_TIMEOUT_MS = 5_000;
/**
 * The check of a CLI just installed: its first start reads a cold disk cache (gemini took
 * 5.03 s once), so a slow answer is not a failed install; only a wrong one, or none in a
 * minute, is.
 */
export const INSTALL_VERSION_TIMEOUT_MS = 60_000;
const VERSION_OUTPUT_MAX = 64 * 1024;

/**
 * The per-user CLI cache: $LANEWARD_CACHE (relative to `cwd`), else
 * $XDG_CACHE_HOME/laneward, else $HOME/.cache/laneward. Per user, not per directory: the
 * CLIs are some 860 MB, and a cache under the working directory was not found (and was
 * downloaded again) from the next directory. A relative XDG_CACHE_HOME is ignored, as the
 * XDG base directory rules say.
 */
export function cacheDirOf(env: NodeJS.ProcessEnv, cwd: string): string {
  const named = env[CACHE_ENV] ?? '';
  if (named !== '') return resolve(cwd, named);
  const xdg = env['XDG_CACHE_HOME'] ?? '';
  if (isAbsolute(xdg)) return join(xdg, 'laneward');
  const home = env['HOME'] ?? '';
  return join(home !== '' ? home : homedir(), '.cache', 'laneward');
}

/**
 * Finds a preset's program: on PATH first (as execvp would run it: each entry in order,
 * an empty entry meaning the working directory, skipping what cannot run), then in
 * `<cwd>/node_modules/.bin`, then in the per-user cache (cacheDirOf), where it counts only
 * when its install finished and was verified (installed-record.ts).
 */
export function locateCli(pin: ProviderPin, options: LocateOptions): Located {
  const cwd = resolve(options.cwd);
  for (const dir of (options.env['PATH'] ?? DEFAULT_PATH).split(delimiter)) {
    const file = join(resolve(cwd, dir), pin.binary);
    if (unrunnable(file) === null) return { path: file, found: 'path' };
  }
  const local = join(cwd, 'node_modules', '.bin', pin.binary);
  if (unrunnable(local) === null) return { path: local, found: 'node_modules' };
  const cacheDir = resolve(cwd, options.cacheDir ?? cacheDirOf(options.env, cwd));
  const cached = join(cacheDir, 'node_modules', '.bin', pin.binary);
  if (readInstalled(cacheDir)[pin.preset] === pin.version && unrunnable(cached) === null) return { path: cached, found: 'cache' };
  return { path: null, found: 'missing' };
}

/** Whether any of the preset's key variables is set (non-empty). The value is never read out. */
export function keyIsSet(pin: ProviderPin, env: NodeJS.ProcessEnv): boolean {
  return pin.keyEnv.some((name) => (env[name] ?? '') !== '');
}

/** `env` without any provider's API key: a version probe has no use for one. */
export function withoutKeys(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env };
  for (const name of PROVIDER_KEY_ENV) delete copy[name];
  return copy;
}

/** The first version number in a `--version` output: `2.1.328 (Claude Code)`, `codex-cli 0.169.0`. */
export function parseVersion(output: string): string | null {
  return /\b(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\b/.exec(output)?.[1] ?? null;
}

/**
 * Runs `<cli> --version` and returns the version it prints, or null when it does not start,
 * fails, prints none or outlasts `timeoutMs` (5 s). No shell, stdin closed, no API key in
 * its environment; it runs in its own process group, which is killed whole on timeout (the
 * codex and gemini programs are node scripts that may start children of their own).
 */
export function cliVersion(path: string, options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<string | null> {
  return new Promise((resolveVersion) => {
    let output = '';
    let settled = false;
    const finish = (version: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolveVersion(version);
    };
    let child;
    try {
      child = spawn(path, ['--version'], {
        cwd: options.cwd,
        env: withoutKeys(options.env ?? process.env),
        stdio: ['ignore', 'pipe', 'ignore'],
        detached: true,
      });
    } catch {
      finish(null);
      return;
    }
    const timer = setTimeout(() => {
      killGroup(child.pid);
      finish(null);
    }, options.timeoutMs ?? VERSION_TIMEOUT_MS);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (output.length < VERSION_OUTPUT_MAX) output += chunk;
    });
    child.on('error', () => finish(null));
    child.on('close', (code) => finish(code === 0 ? parseVersion(output) : null));
  });
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}
