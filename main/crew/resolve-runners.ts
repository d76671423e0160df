import { forLane, type LaneSpec, type Runners } from '../../formats/crew/file.ts';
import { isPresetRunner, type RunnerConfig } from '../../formats/providers/runner.ts';
import { LanewardError } from '../../formats/codes/error.ts';
import { runnerProgram } from '../providers/runner-program.ts';

const ROLES: readonly (keyof Runners)[] = ['native', 'outside', 'observer', 'agent'];

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
        checked = runnerProgram(runner, cwd, env);
        seen.set(key, checked);
      }
      if (checked.problem !== null) throw new LanewardError('CREW_INVALID', `lane ${lane.id}: runners.${role}: ${checked.problem}`, { path: file });
      runners[role] = isPresetRunner(runner) && isPresetRunner(checked.runner) ? { ...runner, bin: checked.runner.bin! } : runner;
    }
    return { ...lane, runners };
  });
}
