import { resolve } from 'node:path';
import { LanewardError } from '../../formats/error.ts';
import type { JournalEvent, PhaseId, RunRecord } from '../../formats/review-run.ts';
import { transact } from '../store/store.ts';
import { archiveFiles } from './archive.ts';
import { checkpointAfter } from './checkpoint.ts';
import { describeRun } from './describe.ts';
import { locateRun, type PlanEnv } from './locate.ts';
import { emptyPhase, voidCheck } from './machine.ts';
import { readPlanFile } from './plan-file.ts';
import { emptyReport, terminalStatus, type PlanReport } from './report.ts';
import { syncRunFiles } from './run-files.ts';
import { settle } from './spend.ts';

export interface ReviseOptions {
  readonly out: string | undefined;
  readonly plan?: string;
  readonly incorporates?: readonly string[];
  readonly settle?: string;
  readonly withdraw?: string;
}

const REVISABLE = new Set(['awaiting_result', 'phase_closed', 'gate_pending', 'complete']);

/**
 * `plan revise`: the owner changed the plan. Every phase whose reviewed implementation
 * section differs reopens, plus eng; the gate in force moves to the run's history so the
 * next one is gate_rev + 1. `--incorporates` discharges the named accepted changes (and
 * refuses an unchanged plan); `--settle` and `--withdraw` discharge one change without a
 * plan edit. One transaction: a crash leaves the run unrevised or revised, and the files
 * derived from it are rewritten by the next command (archives are copies made first).
 */
export async function planRevise(options: ReviseOptions, penv: PlanEnv): Promise<PlanReport> {
  const modes = [options.plan, options.settle, options.withdraw].filter((v) => v !== undefined).length;
  if (modes !== 1) throw new LanewardError('USAGE', 'pass exactly one of --plan <file>, --settle <id> or --withdraw <id>');
  if (options.incorporates !== undefined && options.plan === undefined) throw new LanewardError('USAGE', '--incorporates goes with --plan');
  const located = locateRun(options.out, penv);
  const { store, runDir } = located;
  const runId = located.record.run;
  const report = emptyReport(runDir, runId);
  const now = new Date().toISOString();
  const plan = options.plan === undefined ? undefined : readPlanFile(resolve(penv.cwd, options.plan));
  if (located.record.ceo_only) throw new LanewardError('CEO_ONLY_NO_GATE', `run ${runId} is a CEO-only run: there is nothing to revise`);

  if (plan !== undefined) {
    const capped = located.record.round_cap != null && located.record.gate_rev >= located.record.round_cap;
    const reopen = capped ? [] : reopened(located.record, plan.doc.snapshot);
    const names = reopen.flatMap((p) => [`${p}-native-prompt.md`, `${p}-outside-prompt.md`, `${p}-consensus.json`, `${p}-consensus.md`]);
    archiveFiles(runDir, names, Math.max(1, located.record.gate_rev));
  }
  const record = await transact(store, runId, (current) => {
    if (current === undefined) throw new LanewardError('RUN_NOT_INITIALIZED', `run ${runId} vanished from ${store.root}`);
    const run = current;
    run.commands += 1;
    if (!REVISABLE.has(run.state)) throw new LanewardError('PHASE_NOT_AWAITING', `a ${run.state} run cannot be revised`);
    const events: JournalEvent[] = [];
    if (options.settle !== undefined || options.withdraw !== undefined) {
      const id = (options.settle ?? options.withdraw)!;
      const found = run.amendments.findIndex((a) => a.decision === id);
      if (found < 0) throw new LanewardError('DECISION_UNKNOWN', `no pending plan change ${id} (pending: ${run.amendments.map((a) => a.decision).join(', ') || 'none'})`);
      run.amendments.splice(found, 1);
      const verb = options.settle !== undefined ? 'settled' : 'withdrawn';
      events.push({ type: `amendment_${verb}`, at: now, decision: id });
      report.after.push(`${verb === 'settled' ? 'SETTLED' : 'WITHDRAWN'}: ${id} pending=${run.amendments.length}`);
    } else {
      revisePlan(run, plan!, options.incorporates ?? [], now, events, report);
    }
    run.updated_at = now;
    return { change: { record: run, events }, result: run };
  });
  syncRunFiles(store, record, runDir);
  checkpointAfter(store, record, runDir, penv.env, report.after);
  describeRun(record, runDir, report, { open: true });
  report.status = terminalStatus(record.state);
  return report;
}

function revisePlan(run: RunRecord, plan: ReturnType<typeof readPlanFile>, incorporates: readonly string[], now: string, events: JournalEvent[], report: PlanReport): void {
  if (plan.doc.snapshot === run.snapshot) {
    throw new LanewardError('PLAN_UNCHANGED', `the implementation plan of ${plan.path} is the one under review (snapshot ${run.snapshot.slice(0, 12)})`);
  }
  for (const id of incorporates) {
    if (!run.amendments.some((a) => a.decision === id)) {
      throw new LanewardError('DECISION_UNKNOWN', `no pending plan change ${id} (pending: ${run.amendments.map((a) => a.decision).join(', ') || 'none'})`);
    }
  }
  run.amendments = run.amendments.filter((a) => !incorporates.includes(a.decision));
  // Past the round cap the phases stay closed: the change reaches the next gate unreviewed.
  const capped = run.round_cap != null && run.gate_rev >= run.round_cap;
  const reopen = capped ? [] : reopened(run, plan.doc.snapshot);
  if (capped) run.delta = { from: run.snapshot, rev: run.gate_rev };
  for (const id of reopen) {
    const phase = run.phases[id]!;
    for (const voice of ['native', 'outside'] as const) {
      const attempt = phase[voice].attempt === null ? undefined : run.attempts[phase[voice].attempt!];
      // An attempt on the old plan may have gone out: its reservation stays as unknown spend.
      if (attempt?.state === 'open') {
        settle(run.spend, attempt, null);
        attempt.state = 'abandoned';
      }
    }
    run.phases[id] = emptyPhase(id);
  }
  run.plan_sha256 = plan.sha256;
  run.snapshot = plan.doc.snapshot;
  run.implementation = plan.doc.implementation;
  run.plan_items = [...plan.doc.items];
  if (run.gate !== null) {
    run.past_gates.push(voidCheck(run.gate, run.spend));
    run.gate = null;
  }
  run.current = null;
  run.state = 'phase_closed';
  run.plan_rev = (run.plan_rev ?? 1) + 1;
  events.push({ type: 'plan_revised', at: now, plan: plan.path, snapshot: plan.doc.snapshot, reopened: reopen, incorporated: [...incorporates], plan_rev: run.plan_rev });
  report.after.push(`REVISED: run=${run.run} plan_rev=${run.plan_rev} reopened=${reopen.join(',') || '-'}${capped ? ' capped=yes' : ''} incorporated=${incorporates.join(',') || '-'} pending=${run.amendments.length}`);
}

/** Phases whose reviewed snapshot differs from the new plan's, plus eng whenever any does. */
function reopened(run: RunRecord, snapshot: string): PhaseId[] {
  const changed = run.order.filter((id) => (run.phases[id]?.snapshot ?? null) !== snapshot);
  if (changed.length > 0 && run.order.includes('eng') && !changed.includes('eng')) changed.push('eng');
  return run.order.filter((id) => changed.includes(id));
}
