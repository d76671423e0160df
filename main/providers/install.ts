import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { errnoCode, isLanewardError, LanewardError, oneLineMessage } from '../../formats/codes/error.ts';
import { packageSpec, type ProviderPin } from '../../formats/providers/pins.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { acquireLock } from '../fs/file-lock.ts';
import { makeDirs } from '../fs/make-dirs.ts';
import { readInstalled, writeInstalled } from './installed-record.ts';
import { cliVersion, INSTALL_VERSION_TIMEOUT_MS, withoutKeys } from './locate.ts';

export interface InstallOptions {
  /** npm's environment (PATH finds npm); API keys are removed. Default process.env. */
  readonly env?: NodeJS.ProcessEnv;
  /** How long another process's install is waited for. Default 20 minutes. */
  readonly lockWaitMs?: number;
  /** How long each installed CLI may take to answer --version. Default a minute. */
  readonly versionTimeoutMs?: number;
  /** How long npm may run before it is killed. Default 20 minutes. */
  readonly npmTimeoutMs?: number;
}

/** The CLIs together are some 370 MB from the registry: minutes on a slow link. */
const WAIT_MS = 20 * 60_000;
const NPM_TAIL_MAX = 4096;
const CACHE_PACKAGE = { name: 'laneward-clis', private: true, description: 'The agent CLIs laneward installs for its provider presets (laneward providers --install).' };

/**
 * Installs the pinned versions of `pins` into `<cacheDir>/node_modules` with npm, one run
 * for all of them, and returns the pins it installed (none when another process finished
 * them meanwhile). One installer at a time per cache (`<cacheDir>/.install.lock`; a dead
 * holder's lock is taken over). A CLI counts as installed only after npm exited 0 and the
 * program answered `--version` with its pinned version; the record of that is dropped
 * before npm starts, so a killed install is redone, never taken for a finished one.
 */
export async function installClis(
  pins: readonly ProviderPin[],
  cacheDir: string,
  io: { err(line: string): void },
  options: InstallOptions = {},
): Promise<readonly ProviderPin[]> {
  const dir = resolve(cacheDir);
  const env = withoutKeys(options.env ?? process.env);
  makeDirs(dir, { code: 'PROVIDER_INSTALL_FAILED' });
  const release = lock(join(dir, '.install.lock'), options.lockWaitMs ?? WAIT_MS);
  try {
    const todo: ProviderPin[] = [];
    for (const pin of pins) if (!(await installedAt(pin, dir, env, options.versionTimeoutMs ?? INSTALL_VERSION_TIMEOUT_MS))) todo.push(pin);
    if (todo.length === 0) return [];
    // npm install --prefix wants a project there; without one it walks up to a parent's.
    // --save-exact keeps its package.json at the pins (npm would write ^ ranges).
    if (!existsSync(join(dir, 'package.json'))) writeFileAtomic(join(dir, 'package.json'), `${JSON.stringify(CACHE_PACKAGE, null, 2)}\n`);
    const record = { ...readInstalled(dir) };
    for (const pin of todo) delete record[pin.preset];
    writeInstalled(dir, record);
    const specs = todo.map(packageSpec);
    io.err(`PROVIDERS: installing ${specs.join(' ')} into ${dir}`);
    await runNpm(['install', '--no-audit', '--no-fund', '--ignore-scripts', '--save-exact', '--prefix', dir, ...specs], dir, env, options.npmTimeoutMs ?? WAIT_MS);
    for (const pin of todo) if (pin.postinstall !== undefined) await runPostinstall(pin, pin.postinstall, dir, env);
    for (const pin of todo) {
      const bin = join(dir, 'node_modules', '.bin', pin.binary);
      const version = await cliVersion(bin, { env, cwd: dir, timeoutMs: options.versionTimeoutMs ?? INSTALL_VERSION_TIMEOUT_MS });
      if (version !== pin.version) {
        throw new LanewardError('PROVIDER_INSTALL_FAILED', `npm finished but ${bin} --version printed ${version ?? 'no version'}, not ${pin.version}`, { path: bin });
      }
      record[pin.preset] = pin.version;
    }
    writeInstalled(dir, record);
    return todo;
  } finally {
    release();
  }
}

/** Whether `pin` is in the cache already: recorded as installed and answering its version. */
async function installedAt(pin: ProviderPin, dir: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<boolean> {
  if (readInstalled(dir)[pin.preset] !== pin.version) return false;
  return (await cliVersion(join(dir, 'node_modules', '.bin', pin.binary), { env, cwd: dir, timeoutMs })) === pin.version;
}

function lock(path: string, waitMs: number): () => void {
  try {
    return acquireLock(path, { waitMs, code: 'PROVIDER_INSTALL_FAILED' });
  } catch (error) {
    if (isLanewardError(error)) throw error;
    throw new LanewardError('PROVIDER_INSTALL_FAILED', `cannot take the install lock: ${oneLineMessage(error)}`, { path });
  }
}

/**
 * Runs npm (found on PATH, no shell) with its output kept off laneward's stdout, which
 * carries the listing; the tail of its stderr goes into the error when it fails.
 */
function runNpm(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<void> {
  return new Promise((resolveRun, reject) => {
    let tail = '';
    let settled = false;
    const failed = (message: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new LanewardError('PROVIDER_INSTALL_FAILED', message, { path: cwd }));
    };
    // In laneward's own process group, so a Ctrl-C in the terminal stops npm too.
    const child = spawn('npm', args, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      failed(`npm ran over ${Math.round(timeoutMs / 1000)} s and was stopped`);
    }, timeoutMs);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      tail = (tail + chunk).slice(-NPM_TAIL_MAX);
    });
    child.on('error', (error) => failed(errnoCode(error) === 'ENOENT' ? 'npm is not found on PATH' : `npm could not be started: ${oneLineMessage(error)}`));
    child.on('close', (code, signal) => {
      if (code === 0) {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolveRun();
        return;
      }
      const last = tail.trim().split('\n').slice(-3).join(' ');
      failed(`npm install exited with ${signal ?? `status ${code}`}${last === '' ? '' : `: ${oneLineMessage(last)}`}`);
    });
  });
}

/**
 * The one install script a pin names, run as npm would have run it (node, in the
 * package's folder) but only that one: --ignore-scripts keeps every other package's
 * scripts from running. Absent when the package is not what npm should have put there;
 * the --version check that follows reports that.
 */
async function runPostinstall(pin: ProviderPin, postinstall: string, dir: string, env: NodeJS.ProcessEnv): Promise<void> {
  const packageDir = join(dir, 'node_modules', pin.packageName);
  const script = join(packageDir, postinstall);
  if (!existsSync(script)) return;
  const result = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error; tail: string }>((resolveRun) => {
    let tail = '';
    const child = spawn(process.execPath, [script], { cwd: packageDir, env, stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      tail = (tail + chunk).slice(-NPM_TAIL_MAX);
    });
    child.on('error', (error) => resolveRun({ code: null, signal: null, error, tail }));
    child.on('close', (code, signal) => resolveRun({ code, signal, tail }));
  });
  if (result.code === 0) return;
  const last = result.tail.trim().split('\n').slice(-3).join(' ');
  const why = result.error !== undefined ? oneLineMessage(result.error) : `exited with ${result.signal ?? `status ${result.code}`}`;
  throw new LanewardError('PROVIDER_INSTALL_FAILED', `${pin.packageName}'s ${postinstall} ${why}${last === '' ? '' : `: ${oneLineMessage(last)}`}`, { path: script });
}
