import { delimiter, join, resolve } from 'node:path';
import { forLane, type LaneSpec, type Runners } from '../../formats/crew/file.ts';
import { PRESETS } from '../../formats/providers/presets.ts';
import { pinOf } from '../../formats/providers/pins.ts';
import { isPresetRunner, type RunnerConfig } from '../../formats/providers/runner.ts';
import { locateCli } from '../providers/locate.ts';
import { LanewardError } from '../../formats/codes/error.ts';
import { unrunnable } from '../process/runnable.ts';

const ROLES: readonly (keyof Runners)[] = ['native', 'outside', 'observer', 'agent'];

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
 * Every lane's runner programs (argv[0] of native, outside, observer and agent, overrides
 * included, or a preset's CLI) resolved before anything starts: a typo would otherwise
 * fail every lane in turn, each after its earlier stages ran. Each program is looked up
 * once. Returns the lanes with every preset's `bin` made absolute, so each call starts the
 * program that was checked.
 */
export function checkRunners(file: string, lanes: readonly LaneSpec[], cwd: string, env: NodeJS.ProcessEnv): LaneSpec[] {
  const seen = new Map<string, { problem: string | null; runner: RunnerConfig }>();
  return lanes.map((lane) => {
    const runners: Record<keyof Runners, RunnerConfig> = { ...lane.runners };
    for (const role of ROLES) {
      const runner = forLane(lane.runners[role], lane.id);
      const key = JSON.stringify(isPresetRunner(runner) ? [runner.preset, runner.bin ?? null] : runner.slice(0, 1));
      let checked = seen.get(key);
      if (checked === undefined) {
        checked = checkRunner(runner, cwd, env);
        seen.set(key, checked);
      }
      if (checked.problem !== null) throw new LanewardError('CREW_INVALID', `lane ${lane.id}: runners.${role}: ${checked.problem}`, { path: file });
      runners[role] = isPresetRunner(runner) && isPresetRunner(checked.runner) ? { ...runner, bin: checked.runner.bin! } : runner;
    }
    return { ...lane, runners };
  });
}

function checkRunner(runner: RunnerConfig, cwd: string, env: NodeJS.ProcessEnv): { problem: string | null; runner: RunnerConfig } {
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
