import type { ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { errnoCode } from '../../formats/codes/error.ts';
import { launchFailureCode, stdioFor } from './child-stdio.ts';
import type { OutcomeCode } from './outcome.ts';
import { spawnGroup } from './process-group.ts';
import type { SupervisionSpec } from './spec.ts';

/** The variable a preset's CLI tree is tagged with (see Supervision's treeTag). */
export const TREE_VAR = 'LANEWARD_TREE';

/** Why the provider did not start: the outcome's code and the errno behind it. */
export interface SpawnRefusal {
  readonly code: OutcomeCode;
  readonly errno: string;
}

/**
 * Spawns the provider, once, in a process group of its own: argv (no shell), stdin the
 * prompt file when given, stdout and stderr the output files' descriptors (`sinks`) or
 * pipes, fd 3 a progress pipe for an `fd` action, and `treeTag` in its environment.
 * `onChild` receives the child as soon as it exists, `onSpawn` once it runs, both inside
 * the event that tells (nothing of the child's can be missed before them). Resolves true
 * once it runs, or the refusal. The stdin descriptor is closed once the child holds its copy.
 */
export function spawnProvider(
  spec: SupervisionSpec,
  sinks: readonly number[],
  treeTag: string | undefined,
  handlers: { readonly onChild: (child: ChildProcess) => void; readonly onSpawn: (child: ChildProcess) => void },
): Promise<true | SpawnRefusal> {
  const fd = spec.progress === 'fd';
  let stdin: number | undefined;
  if (spec.stdinFile !== undefined) {
    try {
      stdin = openSync(spec.stdinFile, 'r');
    } catch (error) {
      return Promise.resolve({ code: 'SPAWN_FAILED', errno: errnoCode(error) ?? 'UNKNOWN' });
    }
  }
  return new Promise<true | SpawnRefusal>((resolve) => {
    const refuse = (error: unknown) => {
      const errno = errnoCode(error) ?? 'UNKNOWN';
      resolve({ code: launchFailureCode(errno, fd), errno });
    };
    let child: ChildProcess;
    try {
      child = spawnGroup({
        argv: spec.argv,
        stdio: stdioFor(spec.stdio, fd, stdin, sinks),
        env: { ...process.env, ...spec.env, ...(fd ? { LANEWARD_PROGRESS_FD: '3', DENO_EXTRA_STDIO_FDS: '3' } : {}), ...(treeTag === undefined ? {} : { [TREE_VAR]: treeTag }) },
        ...(spec.cwd === undefined ? {} : { cwd: spec.cwd }),
      });
    } catch (error) {
      refuse(error);
      return;
    }
    handlers.onChild(child);
    // 'error' before 'spawn' is a launch failure; later ones (a failed kill) change nothing.
    child.on('error', (error) => {
      if (child.pid === undefined) refuse(error);
    });
    child.once('spawn', () => {
      handlers.onSpawn(child);
      resolve(true);
    });
  }).finally(() => {
    // The child holds its own copy of the stdin descriptor once spawned (or never will).
    if (stdin !== undefined) closeSync(stdin);
    stdin = undefined;
  });
}
