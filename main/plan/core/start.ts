import type { PlanDoc } from '../../../formats/review/plan-doc.ts';
import type { PlanScope } from '../../../formats/review/plan-scope.ts';
import type { PhaseId, RunRecord, SessionKind } from '../../../formats/review/run-record.ts';
import { openPhase } from './phases.ts';
import { emptyPhase } from './records.ts';
import { newSpend } from './spend.ts';
import type { TransitionContext } from './transition-context.ts';

/** Everything a run starts from, read and checked by the command. */
export interface StartInput {
  readonly run: string;
  readonly plan: { readonly path: string; readonly sha256: string; readonly doc: PlanDoc };
  readonly scope: Pick<PlanScope, 'ui' | 'dx' | 'source'>;
  readonly sessionKind: SessionKind;
  readonly ceoOnly?: boolean;
  readonly spendCap?: number;
  readonly estimateUsd?: number;
  /** false: every gate goes to the owner. */
  readonly carryForward?: boolean;
  readonly roundCap?: number;
  readonly carryCheckCap?: number;
}

/** A new run with its first phase open (both attempts minted under the cap). */
export function startRun(input: StartInput, context: TransitionContext): RunRecord {
  const { plan, scope } = input;
  const order: PhaseId[] = input.ceoOnly === true ? ['ceo'] : ['ceo', ...(scope.ui ? (['design'] as const) : []), ...(scope.dx ? (['dx'] as const) : []), 'eng'];
  const review: RunRecord = {
    v: 1,
    run: input.run,
    created_at: context.now,
    updated_at: context.now,
    seq: 0,
    commands: 0,
    state: 'awaiting_result',
    session_kind: input.sessionKind,
    plan_source: plan.path,
    plan_sha256: plan.sha256,
    plan_items: [...plan.doc.items],
    implementation: plan.doc.implementation,
    snapshot: plan.doc.snapshot,
    order,
    ceo_only: input.ceoOnly === true,
    carry_forward: true,
    scope: { ui: scope.ui, dx: scope.dx, source: scope.source },
    phases: Object.fromEntries(order.map((p) => [p, emptyPhase(p)])),
    current: null,
    attempts: {},
    next_attempt: 1,
    spend: newSpend(input.spendCap ?? null, input.estimateUsd ?? null),
    gate_rev: 0,
    gate: null,
    past_gates: [],
    amendments: [],
    deviations: [],
    export: null,
  };
  if (input.carryForward === false) review.carry_forward = false;
  if (input.roundCap !== undefined) review.round_cap = input.roundCap;
  if (input.carryCheckCap !== undefined) review.carry_check_cap = input.carryCheckCap;
  context.events.push({ type: 'run_started', at: context.now, plan: plan.path, snapshot: plan.doc.snapshot, order, session_kind: input.sessionKind });
  review.commands += 1;
  openPhase(review, order[0]!, context);
  return review;
}
