import { LanewardError } from '../../formats/codes/error.ts';
import { runCommand } from './commit.ts';
import { locateRun } from './locate.ts';
import type { PlanReport } from './report.ts';
import type { PlanEnv } from './settings.ts';

/**
 * `plan release --attempt <id>`: the parent says an open attempt will never run. Its
 * reservation is returned and its voice waits for a fresh attempt, which the next `next`
 * mints (the parent asked for it by releasing).
 */
export async function planRelease(options: { out: string | undefined; attempt: string | undefined }, planEnv: PlanEnv): Promise<PlanReport> {
  if (options.attempt === undefined) throw new LanewardError('USAGE', '--attempt <id> is required');
  const located = locateRun(options.out, planEnv);
  return (await runCommand(located, planEnv, { type: 'release', input: { attempt: options.attempt } }, { open: false, files: false })).report;
}
