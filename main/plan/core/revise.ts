import { LanewardError } from '../../../formats/codes/error.ts';
import type { PlanDoc } from '../../../formats/review/plan-doc.ts';
import type { PhaseId, RunRecord } from '../../../formats/review/run-record.ts';
import { voidCheck } from './phases.ts';
import { emptyPhase } from './records.ts';
import { settle } from './spend.ts';
import type { TransitionContext } from './transition-context.ts';

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
export function revise(review: RunRecord, input: ReviseInput, context: TransitionContext): void {
  review.commands += 1;
  if (review.ceo_only) throw new LanewardError('CEO_ONLY_NO_GATE', `run ${review.run} is a CEO-only run: there is nothing to revise`);
  if (!REVISABLE.has(review.state)) throw new LanewardError('PHASE_NOT_AWAITING', `a ${review.state} run cannot be revised`);
  if (input.kind === 'plan') revisePlan(review, input.plan, input.incorporates, context);
  else {
    const found = review.amendments.findIndex((a) => a.decision === input.decision);
    if (found < 0) throw unknownDecision(review, input.decision);
    review.amendments.splice(found, 1);
    const verb = input.kind === 'settle' ? 'settled' : 'withdrawn';
    context.events.push({ type: `amendment_${verb}`, at: context.now, decision: input.decision });
    context.report.after.push({ fact: 'amendment', verb, decision: input.decision, pending: review.amendments.length });
  }
  review.updated_at = context.now;
}

function revisePlan(review: RunRecord, plan: Extract<ReviseInput, { kind: 'plan' }>['plan'], incorporates: readonly string[], context: TransitionContext): void {
  if (plan.doc.snapshot === review.snapshot) {
    throw new LanewardError('PLAN_UNCHANGED', `the implementation plan of ${plan.path} is the one under review (snapshot ${review.snapshot.slice(0, 12)})`);
  }
  for (const id of incorporates) {
    if (!review.amendments.some((a) => a.decision === id)) throw unknownDecision(review, id);
  }
  review.amendments = review.amendments.filter((a) => !incorporates.includes(a.decision));
  const capped = isCapped(review);
  const reopen = capped ? [] : reopened(review, plan.doc.snapshot);
  if (capped) review.delta = { from: review.snapshot, rev: review.gate_rev };
  for (const id of reopen) {
    const phase = review.phases[id]!;
    for (const voice of ['native', 'outside'] as const) {
      const attempt = phase[voice].attempt === null ? undefined : review.attempts[phase[voice].attempt!];
      // An attempt on the old plan may have gone out: its reservation stays as unknown spend.
      if (attempt?.state === 'open') {
        settle(review.spend, attempt, null);
        attempt.state = 'abandoned';
      }
    }
    review.phases[id] = emptyPhase(id);
  }
  review.plan_sha256 = plan.sha256;
  review.snapshot = plan.doc.snapshot;
  review.implementation = plan.doc.implementation;
  review.plan_items = [...plan.doc.items];
  if (review.gate !== null) {
    review.past_gates.push(voidCheck(review.gate, review.spend));
    review.gate = null;
  }
  review.current = null;
  review.state = 'phase_closed';
  review.plan_rev = (review.plan_rev ?? 1) + 1;
  context.events.push({ type: 'plan_revised', at: context.now, plan: plan.path, snapshot: plan.doc.snapshot, reopened: reopen, incorporated: [...incorporates], plan_rev: review.plan_rev });
  context.report.after.push({ fact: 'revised', run: review.run, planRev: review.plan_rev, reopened: [...reopen], capped, incorporated: [...incorporates], pending: review.amendments.length });
}

function unknownDecision(review: RunRecord, id: string): LanewardError {
  return new LanewardError('DECISION_UNKNOWN', `no pending plan change ${id} (pending: ${review.amendments.map((a) => a.decision).join(', ') || 'none'})`);
}

/** Whether the run is past its round cap: a revise then reopens nothing. */
export function isCapped(review: RunRecord): boolean {
  return review.round_cap != null && review.gate_rev >= review.round_cap;
}

/** Phases whose reviewed snapshot differs from the new plan's, plus eng whenever any does. */
export function reopened(review: RunRecord, snapshot: string): PhaseId[] {
  const changed = review.order.filter((id) => (review.phases[id]?.snapshot ?? null) !== snapshot);
  if (changed.length > 0 && review.order.includes('eng') && !changed.includes('eng')) changed.push('eng');
  return review.order.filter((id) => changed.includes(id));
}
