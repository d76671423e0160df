import { LanewardError } from '../../formats/error.ts';
import { transact } from '../store/store.ts';
import { checkpointAfter } from './checkpoint.ts';
import { describeRun } from './describe.ts';
import { locateRun, type PlanEnv } from './locate.ts';
import { attemptOf, phaseOf } from './machine.ts';
import { emptyReport, terminalStatus, type PlanReport } from './report.ts';
import { release, usd } from './spend.ts';

/**
 * `plan release --attempt <id>`: the parent says an open attempt will never run. Its
 * reservation is returned and its voice waits for a fresh attempt, which the next `next`
 * mints (the parent asked for it by releasing).
 */
export async function planRelease(options: { out: string | undefined; attempt: string | undefined }, penv: PlanEnv): Promise<PlanReport> {
  if (options.attempt === undefined) throw new LanewardError('USAGE', '--attempt <id> is required');
  const located = locateRun(options.out, penv);
  const report = emptyReport(located.runDir, located.record.run);
  const now = new Date().toISOString();
  const run = await transact(located.store, located.record.run, (current) => {
    if (current === undefined) throw new LanewardError('RUN_NOT_INITIALIZED', `run ${located.record.run} vanished`);
    current.commands += 1;
    const attempt = attemptOf(current, options.attempt!);
    if (attempt === undefined) throw new LanewardError('ATTEMPT_MISMATCH', `no attempt ${options.attempt} in run ${current.run}`);
    if (attempt.state !== 'open') throw new LanewardError('ATTEMPT_MISMATCH', `attempt ${attempt.id} is ${attempt.state}; only an open attempt can be released`);
    const freed = release(current.spend, attempt);
    attempt.state = 'released';
    const phase = phaseOf(current, attempt.phase);
    if (phase[attempt.voice].attempt === attempt.id) phase[attempt.voice] = { status: 'pending', attempt: null };
    report.after.push(`RELEASED: ${attempt.id} phase=${attempt.phase} voice=${attempt.voice} freed=${usd(freed)}`);
    current.updated_at = now;
    return { change: { record: current, events: [{ type: 'attempt_released', at: now, attempt: attempt.id, freed_usd: freed }] }, result: current };
  });
  checkpointAfter(located.store, run, located.runDir, penv.env, report.after);
  describeRun(run, located.runDir, report, { open: false });
  report.status = terminalStatus(run.state);
  return report;
}
