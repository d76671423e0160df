import { LanewardError } from '../../formats/error.ts';
import { decisionId } from '../../formats/gate-decisions.ts';
import { transact } from '../store/store.ts';
import { checkpointAfter } from './checkpoint.ts';
import { describeRun } from './describe.ts';
import { locateRun, type PlanEnv } from './locate.ts';
import { recHash } from './next.ts';
import { emptyReport, terminalStatus, type PlanReport } from './report.ts';
import { syncRunFiles } from './run-files.ts';

/**
 * `plan recommend --item ID --option KEY`: changes one recommendation before the gate is
 * relayed. The gate's rec_rev goes up and its rec_hash changes, so an answer that takes
 * recommendations (`rec`, `rec except`, `p1b`) must name the rec_hash of the render the
 * owner saw (GATE_REC_STALE otherwise).
 */
export async function planRecommend(options: { out: string | undefined; item?: string; option?: string }, penv: PlanEnv): Promise<PlanReport> {
  if (options.item === undefined || options.option === undefined) throw new LanewardError('USAGE', '--item <id> and --option <key> are required');
  const located = locateRun(options.out, penv);
  const report = emptyReport(located.runDir, located.record.run);
  const now = new Date().toISOString();
  const run = await transact(located.store, located.record.run, (current) => {
    if (current === undefined) throw new LanewardError('RUN_NOT_INITIALIZED', `run ${located.record.run} vanished`);
    if (current.ceo_only) throw new LanewardError('CEO_ONLY_NO_GATE', `run ${current.run} is a CEO-only run: there is no gate`);
    const gate = current.gate;
    if (gate === null || current.state !== 'gate_pending') throw new LanewardError('PHASE_NOT_AWAITING', 'the run has no open gate');
    const item = gate.items.find((i) => i.id === options.item);
    if (item === undefined) throw new LanewardError('DECISION_UNKNOWN', `gate_rev ${gate.rev} has no item ${options.item}`);
    if (!item.options.some((o) => o.key === options.option)) throw new LanewardError('DECISION_UNKNOWN', `item ${item.id} has no option ${options.option}`);
    if (gate.answers[item.id] !== undefined) throw new LanewardError('GATE_REV_STALE', `item ${item.id} is already answered`);
    const before = item.recommended;
    item.recommended = options.option!;
    gate.rec_rev += 1;
    gate.rec_hash = recHash(gate.items);
    current.updated_at = now;
    report.after.push(`RECOMMEND: ${decisionId(current.run, gate.rev, item.id)} ${before} -> ${item.recommended} rec_rev=${gate.rec_rev} rec_hash=${gate.rec_hash}`);
    return { change: { record: current, events: [{ type: 'recommendation_changed', at: now, item: item.id, from: before, to: item.recommended, rec_rev: gate.rec_rev }] }, result: current };
  });
  syncRunFiles(located.store, run, located.runDir);
  checkpointAfter(located.store, run, located.runDir, penv.env, report.after);
  describeRun(run, located.runDir, report, { open: false });
  report.status = terminalStatus(run.state);
  return report;
}
