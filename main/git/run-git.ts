import { execFile, spawn, spawnSync } from 'node:child_process';

/** What one git command did: its exit status (null: it never ran or was killed) and output. */
export interface GitResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Set when git could not be started at all (ENOENT: git is not installed). */
  readonly spawnError?: string;
}

/**
 * Options every laneward git command runs with, before its own arguments. No hooks run
 * (core.hooksPath points nowhere: `--no-verify` alone still runs post-commit and
 * post-checkout), no fsmonitor command, no signing, no automatic gc or maintenance forked
 * into the background of a lane, no pager.
 */
const FIXED_CONFIG = [
  '-c', 'core.hooksPath=/dev/null',
  '-c', 'core.fsmonitor=false',
  '-c', 'commit.gpgSign=false',
  '-c', 'tag.gpgSign=false',
  '-c', 'gc.auto=0',
  '-c', 'maintenance.auto=false',
  '-c', 'core.pager=cat',
];

/**
 * The environment git runs in: the caller's, less every GIT_* variable. One inherited from
 * a parent (GIT_DIR or GIT_INDEX_FILE from a hook, GIT_AUTHOR_NAME from a shell) would point
 * the command at another repository or index, or override the fixed commit identity.
 * Messages in the C locale, so the ones laneward reads are the ones it expects; never a
 * credential prompt.
 */
function gitEnv(extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('GIT_')) env[key] = value;
  return { ...env, LC_ALL: 'C', LANGUAGE: 'C', GIT_TERMINAL_PROMPT: '0', ...extra };
}

export interface GitOptions {
  /** The directory git runs in (`git -C`); the command finds its repository from there. */
  readonly cwd: string;
  /** Variables added to the cleaned environment (GIT_INDEX_FILE for a scratch index). */
  readonly env?: Readonly<Record<string, string>>;
  /** Killed (SIGKILL) after this long, for a read a page waits on; status null then. Default: none. */
  readonly timeoutMs?: number;
  /** Output read at most, in bytes (git is killed past it: spawnError names ERR_CHILD_PROCESS_STDIO_MAXBUFFER). Default 64 MiB. */
  readonly maxBuffer?: number;
}

const MAX_BUFFER = 64 * 1024 * 1024;

/** One git command as an argv array, never through a shell; resolves with its result, never rejects. */
export function git(args: readonly string[], options: GitOptions): Promise<GitResult> {
  return new Promise((resolve) => {
    execFile(
      'git',
      [...FIXED_CONFIG, ...args],
      { cwd: options.cwd, env: gitEnv(options.env ?? {}), encoding: 'utf8', maxBuffer: options.maxBuffer ?? MAX_BUFFER, windowsHide: true, ...timeout(options) },
      (error, stdout, stderr) => {
        const code = (error as (NodeJS.ErrnoException & { code?: unknown }) | null)?.code;
        if (error !== null && typeof code === 'string') {
          resolve({ status: null, stdout, stderr, spawnError: `${code}: ${error.message}` });
          return;
        }
        const status = error === null ? 0 : typeof code === 'number' ? code : null;
        resolve({ status, stdout, stderr });
      },
    );
  });
}

/** {@link git} with `input` written to its stdin (`cat-file --batch-check`); resolves, never rejects. */
export function gitWithInput(args: readonly string[], input: string, options: GitOptions): Promise<GitResult> {
  return new Promise((resolve) => {
    const child = spawn('git', [...FIXED_CONFIG, ...args], { cwd: options.cwd, env: gitEnv(options.env ?? {}), stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
    let stdout = '';
    let stderr = '';
    let spawnError: string | undefined;
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', (error) => (spawnError = error.message));
    // A git that exits before reading all of it (a bad argument) must not crash the caller.
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
    child.on('close', (status) => resolve({ status, stdout, stderr, ...(spawnError === undefined ? {} : { spawnError }) }));
  });
}

/** {@link git}, synchronously: for checks made once before anything starts (loading a crew file). */
export function gitSync(args: readonly string[], options: GitOptions): GitResult {
  const child = spawnSync('git', [...FIXED_CONFIG, ...args], {
    cwd: options.cwd,
    env: gitEnv(options.env ?? {}),
    encoding: 'utf8',
    maxBuffer: MAX_BUFFER,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...timeout(options),
  });
  if (child.error !== undefined) return { status: null, stdout: child.stdout ?? '', stderr: child.stderr ?? '', spawnError: child.error.message };
  return { status: child.status, stdout: child.stdout, stderr: child.stderr };
}

function timeout(options: GitOptions): { timeout?: number; killSignal?: NodeJS.Signals } {
  return options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs, killSignal: 'SIGKILL' };
}

/** Why a git command failed, as one short clause for an error message. */
export function gitFailure(args: readonly string[], result: GitResult): string {
  if (result.spawnError !== undefined) return `git could not be run (${result.spawnError})`;
  const said = result.stderr.trim().split('\n').filter((line) => line.trim() !== '').slice(-2).join('; ');
  return `git ${args[0] ?? ''} exited ${result.status ?? 'by a signal'}${said === '' ? '' : `: ${said}`}`;
}
