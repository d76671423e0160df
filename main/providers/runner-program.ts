import { delimiter, join, resolve } from 'node:path';
import { pinOf } from '../../formats/providers/pins.ts';
import { PRESETS } from '../../formats/providers/presets.ts';
import { isPresetRunner, type RunnerConfig } from '../../formats/providers/runner.ts';
import { unrunnable } from '../process/runnable.ts';
import { locateCli } from './locate.ts';

/** Why `program` (argv[0]) would not start from `cwd` with `path`, or null. */
export function programProblem(program: string, cwd: string, path: string | undefined): string | null {
  if (program === '') return 'is empty';
  // A path (absolute or relative) is run as is, from the children's working directory.
  if (program.includes('/')) {
    const problem = unrunnable(resolve(cwd, program));
    return problem === null ? null : `${resolve(cwd, program)} ${problem}`;
  }
  for (const dir of (path ?? '').split(delimiter)) {
    // An empty PATH entry is the working directory, as execvp reads it.
    if (unrunnable(join(resolve(cwd, dir), program)) === null) return null;
  }
  return 'is not found on PATH';
}

/**
 * A runner's program, checked before anything starts: an argv's first word, a preset's
 * `bin`, or its CLI located (PATH, node_modules/.bin, laneward's cache) and made the
 * runner's `bin`, so each call starts the program that was checked. `problem` says why
 * it would not start, or is null.
 */
export function runnerProgram(runner: RunnerConfig, cwd: string, env: NodeJS.ProcessEnv): { problem: string | null; runner: RunnerConfig } {
  if (!isPresetRunner(runner)) {
    const program = runner[0] ?? '';
    const problem = programProblem(program, cwd, env['PATH']);
    return { problem: problem === null ? null : `program ${JSON.stringify(program)} ${problem}`, runner };
  }
  if (runner.bin !== undefined) {
    const problem = programProblem(runner.bin, cwd, env['PATH']);
    return { problem: problem === null ? null : `preset ${runner.preset}: bin ${JSON.stringify(runner.bin)} ${problem}`, runner };
  }
  const found = locateCli(pinOf(runner.preset), { cwd, env });
  if (found.path === null) {
    const binary = PRESETS[runner.preset].binary;
    return { problem: `preset ${runner.preset}: ${binary} is not on PATH, in node_modules/.bin or in laneward's cache (laneward providers --install installs it)`, runner };
  }
  return { problem: null, runner: { ...runner, bin: found.path } };
}
