import { LanewardError } from '../../formats/codes/error.ts';
import { runCommand } from './commit.ts';
import { locateRun } from './locate.ts';
import type { PlanReport } from './report.ts';
import type { PlanEnv } from './settings.ts';

/**
 * `plan recommend --item ID --option KEY`: changes one recommendation before the gate is
 * relayed (see core/recommend.ts); an answer that takes recommendations must then name
 * the rec_hash of the render the owner saw (GATE_REC_STALE otherwise).
 */
export async function planRecommend(options: { out: string | undefined; item?: string; option?: string }, planEnv: PlanEnv): Promise<PlanReport> {
  if (options.item === undefined || options.option === undefined) throw new LanewardError('USAGE', '--item <id> and --option <key> are required');
  const located = locateRun(options.out, planEnv);
  return (await runCommand(located, planEnv, { type: 'recommend', input: { item: options.item, option: options.option } }, { open: false })).report;
}
