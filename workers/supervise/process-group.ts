import type { ChildProcess, StdioOptions } from 'node:child_process';
import { createRequire } from 'node:module';
import { constants } from 'node:os';

export interface GroupSpawn {
  readonly argv: readonly string[];
  readonly stdio: StdioOptions;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
}

// Hint: node:child_process costs ~4.5 ms to load, and a bundle's ESM imports all load at
// start-up; required on first use, it is paid only by commands that spawn.
const requireBuiltin = createRequire(import.meta.url);

/**
 * Starts argv[0] with its arguments, never through a shell, as the leader of a new
 * session and process group (pgid = sid = pid), so the whole tree can be found and
 * signalled. Spawn failures arrive as the child's 'error' event, as Node reports them.
 */
export function spawnGroup(options: GroupSpawn): ChildProcess {
  const [command, ...args] = options.argv;
  // An empty name is a command that cannot be found, not an invalid argument.
  if (command === undefined || command === '') throw Object.assign(new Error('empty command name'), { code: 'ENOENT' });
  const childProcess = requireBuiltin('node:child_process') as typeof import('node:child_process');
  return childProcess.spawn(command, args, {
    detached: true,
    stdio: options.stdio,
    env: options.env ?? process.env,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    windowsHide: true,
  });
}

/** The conventional exit status of a process killed by `signal`: 128 + its number. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}
