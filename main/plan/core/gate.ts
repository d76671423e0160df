import { LanewardError } from '../../../formats/codes/error.ts';
import { decisionId } from '../../../formats/gate/decisions.ts';
import { sha256 } from '../../../formats/text/sha256.ts';
import { draftGate } from '../../../formats/gate/draft.ts';
import type { RunRecord } from '../../../formats/review/run-record.ts';
import type { GateItem } from '../../../formats/schemas/gate.ts';
import { phaseFindings } from './findings.ts';
import { voidCheck } from './phases.ts';
import { phaseOf } from './records.ts';
import type { TransitionContext } from './transition-context.ts';

/** The hash of the recommendations the owner is shown; a later `rec` is checked against it. */
export function recHash(items: readonly Pick<GateItem, 'id' | 'recommended'>[]): string {
  return sha256(items.map((item) => `${item.id}:${item.recommended}`).join('\n')).slice(0, 16);
}

/** Writes the gate of this round from every closed phase's consensus and findings. */
export function writeGate(review: RunRecord, context: TransitionContext): void {
  const phases = review.order.map((id) => {
    const phase = phaseOf(review, id);
    if (phase.consensus === null) throw new LanewardError('CONSENSUS_MISSING', `phase ${id} has no consensus; the gate cannot be written`);
    const findings = [
      ...phaseFindings(review, phase, 'native', context),
      ...(phase.outside.status === 'completed' ? phaseFindings(review, phase, 'outside', context) : []),
    ];
    return { consensus: phase.consensus, findings };
  });
  const draft = draftGate(phases);
  let deltaItem: string | undefined;
  if (review.delta != null) {
    const last = review.order[review.order.length - 1]!;
    deltaItem = `d${draft.items.filter((i) => i.id.startsWith('d')).length + 1}`;
    draft.items.splice(draft.items.length - 1, 0, {
      id: deltaItem,
      title: `Plan changed after ${last} cap (unreviewed since gate_rev ${review.delta.rev})`,
      kind: 'auto',
      options: [
        { key: 'a', text: 'accept the changed plan without another review round' },
        { key: 'b', text: 'reopen the phases for another round on the changed plan' },
      ],
      recommended: 'a',
      keep: 'a',
    });
    draft.findings[deltaItem] = [];
    review.delta = null;
  }
  if (review.gate !== null) review.past_gates.push(voidCheck(review.gate, review.spend));
  review.gate_rev += 1;
  review.gate = { rev: review.gate_rev, rec_rev: 1, items: draft.items, written_at: context.now, rec_hash: recHash(draft.items), findings: draft.findings, answers: {}, implementation: review.implementation, ...(deltaItem === undefined ? {} : { delta_item: deltaItem }) };
  review.state = 'gate_pending';
  review.current = null;
  context.events.push({ type: 'gate_written', at: context.now, gate_rev: review.gate_rev, items: draft.items.length });
}

/** APPROVED for every recorded choice; APPLY and a pending amendment for a plan change. */
export function recordChoice(review: RunRecord, item: GateItem, chosen: string, step: Pick<TransitionContext, 'report'>): void {
  const decision = decisionId(review.run, review.gate!.rev, item.id);
  step.report.approved.push({ decision, key: chosen });
  if (item.keep !== undefined && chosen !== item.keep && item.id !== 'p1') {
    const text = item.options.find((o) => o.key === chosen)?.text ?? chosen;
    review.amendments.push({ decision, title: item.title, chosen: text });
    step.report.applied.push({ decision, title: item.title, chosen: text });
  }
}

/** The run's state once every approval item is answered, by what p1 chose. */
export function settleGate(review: RunRecord, p1: string | null, step: Pick<TransitionContext, 'now' | 'events'>): void {
  if (p1 === 'a' || p1 === 'b') review.state = 'complete';
  else if (p1 === 'e') review.state = 'incomplete';
  else if (p1 === 'd') rerunAll(review, step);
  // p1c: the owner holds the gate until the plan is revised; it stays gate_pending.
  step.events.push({ type: 'gate_settled', at: step.now, gate_rev: review.gate!.rev, p1, state: review.state });
}

/** A gate answered in full (by the owner, a carry or a carry check): every choice recorded, then settled. */
export function recordAndSettle(review: RunRecord, context: TransitionContext): void {
  const gate = review.gate!;
  for (const item of gate.items) recordChoice(review, item, gate.answers[item.id]!.chosen, context);
  settleGate(review, gate.answers['p1']!.chosen, context);
}

/** p1d: every phase runs again on the current plan; the next gate is gate_rev + 1. */
function rerunAll(review: RunRecord, step: Pick<TransitionContext, 'now' | 'events'>): void {
  for (const id of review.order) {
    const phase = review.phases[id]!;
    phase.state = 'waiting';
    phase.native = { status: 'pending', attempt: null };
    phase.outside = { status: 'pending', attempt: null };
    phase.consensus = null;
  }
  review.amendments = [];
  review.current = null;
  review.state = 'phase_closed';
  step.events.push({ type: 'phases_reopened', at: step.now, phases: review.order });
}
