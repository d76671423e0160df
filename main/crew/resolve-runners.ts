import { delimiter, join, resolve } from 'node:path';
import { fillArgv, type LaneSpec, type Runners } from '../../formats/crew/file.ts';
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
 * included) resolved before anything starts: a typo would otherwise fail every lane in
 * turn, each after its earlier stages ran. Each program is looked up once.
 */
export function checkRunners(file: string, lanes: readonly LaneSpec[], cwd: string, env: NodeJS.ProcessEnv): void {
  const seen = new Map<string, string | null>();
  for (const lane of lanes) {
    for (const role of ROLES) {
      const program = fillArgv(lane.runners[role].slice(0, 1), { lane: lane.id })[0] ?? '';
      let problem = seen.get(program);
      if (problem === undefined) {
        problem = programProblem(program, cwd, env['PATH']);
        seen.set(program, problem);
      }
      if (problem !== null) {
        throw new LanewardError('CREW_INVALID', `lane ${lane.id}: runners.${role}: program ${JSON.stringify(program)} ${problem}`, { path: file });
      }
    }
  }
}
