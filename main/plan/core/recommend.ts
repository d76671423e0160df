import { LanewardError } from '../../../formats/codes/error.ts';
import { decisionId } from '../../../formats/gate/decisions.ts';
import type { RunRecord } from '../../../formats/review/run-record.ts';
import { recHash } from './gate.ts';
import type { TransitionContext } from './transition-context.ts';

/**
 * Changes one recommendation before the gate is relayed: rec_rev goes up and rec_hash
 * changes, so an answer that takes recommendations must name the rec_hash the owner saw.
 */
export function recommend(review: RunRecord, input: { readonly item: string; readonly option: string }, context: TransitionContext): void {
  if (review.ceo_only) throw new LanewardError('CEO_ONLY_NO_GATE', `run ${review.run} is a CEO-only run: there is no gate`);
  const gate = review.gate;
  if (gate === null || review.state !== 'gate_pending') throw new LanewardError('PHASE_NOT_AWAITING', 'the run has no open gate');
  const item = gate.items.find((i) => i.id === input.item);
  if (item === undefined) throw new LanewardError('DECISION_UNKNOWN', `gate_rev ${gate.rev} has no item ${input.item}`);
  if (!item.options.some((o) => o.key === input.option)) throw new LanewardError('DECISION_UNKNOWN', `item ${item.id} has no option ${input.option}`);
  if (gate.answers[item.id] !== undefined) throw new LanewardError('GATE_REV_STALE', `item ${item.id} is already answered`);
  const before = item.recommended;
  item.recommended = input.option;
  gate.rec_rev += 1;
  gate.rec_hash = recHash(gate.items);
  review.updated_at = context.now;
  context.report.after.push({ fact: 'recommend', decision: decisionId(review.run, gate.rev, item.id), from: before, to: item.recommended, recRev: gate.rec_rev, recHash: gate.rec_hash });
  context.events.push({ type: 'recommendation_changed', at: context.now, item: item.id, from: before, to: item.recommended, rec_rev: gate.rec_rev });
}
