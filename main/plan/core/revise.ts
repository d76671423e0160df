import { LanewardError } from '../../../formats/codes/error.ts';
import type { PlanDoc } from '../../../formats/review/plan-doc.ts';
import type { PhaseId, RunRecord } from '../../../formats/review/run-record.ts';
import { voidCheck } from './phases.ts';
import { emptyPhase } from './records.ts';
import { settle } from './spend.ts';
import type { Step } from './step.ts';

const REVISABLE = new Set(['awaiting_result', 'phase_closed', 'gate_pending', 'complete']);

/** A plan change: a new plan (discharging the named accepted changes), or one change settled or withdrawn without an edit. */
export type ReviseInput =
  | { readonly kind: 'plan'; readonly plan: { readonly path: string; readonly sha256: string; readonly doc: PlanDoc }; readonly incorporates: readonly string[] }
  | { readonly kind: 'settle' | 'withdraw'; readonly decision: string };

/**
 * The owner changed the plan. Every phase whose reviewed implementation section differs
 * reopens, plus eng; the gate in force moves to the run's history so the next one is
 * gate_rev + 1. Past the round cap the phases stay closed and the change reaches the next
 * gate unreviewed.
 */
export function revise(run: RunRecord, input: ReviseInput, step: Step): void {
  run.commands += 1;
  if (run.ceo_only) throw new LanewardError('CEO_ONLY_NO_GATE', `run ${run.run} is a CEO-only run: there is nothing to revise`);
  if (!REVISABLE.has(run.state)) throw new LanewardError('PHASE_NOT_AWAITING', `a ${run.state} run cannot be revised`);
  if (input.kind === 'plan') revisePlan(run, input.plan, input.incorporates, step);
  else {
    const found = run.amendments.findIndex((a) => a.decision === input.decision);
    if (found < 0) throw unknownDecision(run, input.decision);
    run.amendments.splice(found, 1);
    const verb = input.kind === 'settle' ? 'settled' : 'withdrawn';
    step.events.push({ type: `amendment_${verb}`, at: step.now, decision: input.decision });
    step.report.after.push({ fact: 'amendment', verb, decision: input.decision, pending: run.amendments.length });
  }
  run.updated_at = step.now;
}

function revisePlan(run: RunRecord, plan: Extract<ReviseInput, { kind: 'plan' }>['plan'], incorporates: readonly string[], step: Step): void {
  if (plan.doc.snapshot === run.snapshot) {
    throw new LanewardError('PLAN_UNCHANGED', `the implementation plan of ${plan.path} is the one under review (snapshot ${run.snapshot.slice(0, 12)})`);
  }
  for (const id of incorporates) {
    if (!run.amendments.some((a) => a.decision === id)) throw unknownDecision(run, id);
  }
  run.amendments = run.amendments.filter((a) => !incorporates.includes(a.decision));
  const capped = isCapped(run);
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
  step.events.push({ type: 'plan_revised', at: step.now, plan: plan.path, snapshot: plan.doc.snapshot, reopened: reopen, incorporated: [...incorporates], plan_rev: run.plan_rev });
  step.report.after.push({ fact: 'revised', run: run.run, planRev: run.plan_rev, reopened: [...reopen], capped, incorporated: [...incorporates], pending: run.amendments.length });
}

function unknownDecision(run: RunRecord, id: string): LanewardError {
  return new LanewardError('DECISION_UNKNOWN', `no pending plan change ${id} (pending: ${run.amendments.map((a) => a.decision).join(', ') || 'none'})`);
}

/** Whether the run is past its round cap: a revise then reopens nothing. */
export function isCapped(run: RunRecord): boolean {
  return run.round_cap != null && run.gate_rev >= run.round_cap;
}

/** Phases whose reviewed snapshot differs from the new plan's, plus eng whenever any does. */
export function reopened(run: RunRecord, snapshot: string): PhaseId[] {
  const changed = run.order.filter((id) => (run.phases[id]?.snapshot ?? null) !== snapshot);
  if (changed.length > 0 && run.order.includes('eng') && !changed.includes('eng')) changed.push('eng');
  return run.order.filter((id) => changed.includes(id));
}
