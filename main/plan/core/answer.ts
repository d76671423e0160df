import { LanewardError } from '../../../formats/codes/error.ts';
import { decisionId } from '../../../formats/gate/decisions.ts';
import { answerGate, type Choice, type ParsedReply } from '../../../formats/gate/reply.ts';
import type { GateAnswer, RunRecord } from '../../../formats/review/run-record.ts';
import type { GateItem } from '../../../formats/schemas/gate.ts';
import { isDoIt } from './carry.ts';
import { recordChoice, settleGate } from './gate.ts';
import { voidCheck } from './phases.ts';
import type { TransitionContext } from './transition-context.ts';

export interface AnswerInput {
  readonly gateRev: number;
  readonly reply: string;
  /** `human` or `agent:<id>`, already checked. */
  readonly by?: string;
  /** The owner's own words, when an agent relays them. */
  readonly ownerReply?: string;
  /** Who the words are by, when not the owner's (an agent deciding on its own authority). */
  readonly wordsBy?: string;
  /** The rec_hash of the render the owner saw; needed once a recommendation changed. */
  readonly recHash?: string;
}

/**
 * Applies a reply to the gate through the reply grammar. A stale gate revision, an
 * unparsed reply or owner words that resolve differently apply nothing. A reply that
 * leaves approval items pending records only what it answered; a later reply never
 * overwrites an earlier answer. Unanswered auto items whose recommendation would change
 * the plan keep the plan's direction unless the owner approved with the recommended
 * changes (p1b) or said `rec`.
 */
export function answer(review: RunRecord, input: AnswerInput, context: TransitionContext): void {
  if (review.ceo_only) throw new LanewardError('CEO_ONLY_NO_GATE', `run ${review.run} is a CEO-only run: there is no gate to answer`);
  const gate = review.gate;
  if (gate === null || review.state !== 'gate_pending') {
    throw new LanewardError(gate === null ? 'PHASE_NOT_AWAITING' : 'GATE_REV_STALE', gate === null ? 'the run has no gate yet; drive it with plan next' : `the gate at gate_rev ${gate.rev} is already decided (${review.state})`);
  }
  if (review.session_kind === 'unattended' && input.by === undefined) {
    throw new LanewardError('ANSWER_BY_REQUIRED', 'an unattended run records who answered: pass --by human or --by agent:<id>');
  }
  const role = input.by === undefined ? null : input.by === 'human' ? 'human' : 'agent';
  if (role === 'agent' && input.ownerReply === undefined && input.wordsBy === undefined) {
    throw new LanewardError('OWNER_REPLY_REQUIRED', `${input.by} relays the owner: pass the owner's words (--owner-reply, --owner-reply-file or -) or --words-by ${input.by}`);
  }
  const parsed = answerGate({ gate_rev: gate.rev, items: gate.items }, input.reply, input.gateRev);
  if (!parsed.ok) throw new LanewardError(parsed.code, parsed.detail);
  const p1Item = gate.items.find((i) => i.id === 'p1')!;
  const takesRecs = parsed.mode === 'rec' || parsed.mode === 'rec_except' || chosenBy(parsed, p1Item) === 'b';
  if (takesRecs && gate.rec_rev > 1 && input.recHash !== gate.rec_hash) {
    throw new LanewardError('GATE_REC_STALE', `the recommendations changed (rec_rev ${gate.rec_rev}); answer with --rec-hash ${gate.rec_hash} after the owner saw them${input.recHash === undefined ? '' : ` (got ${input.recHash})`}`);
  }
  if (input.ownerReply !== undefined && input.wordsBy === undefined) {
    const words = answerGate({ gate_rev: gate.rev, items: gate.items }, isDoIt(input.ownerReply) ? 'rec' : input.ownerReply, gate.rev);
    if (!words.ok || !sameChoices(words, parsed)) {
      throw new LanewardError('GATE_OWNER_REPLY_MISMATCH', words.ok ? 'the owner\'s words resolve to other choices than --reply' : `the owner's words do not parse: ${words.detail}`);
    }
  }
  const before = context.events.length;
  // The owner answering makes a pending carry check moot.
  voidCheck(gate, review.spend);
  const complete = gate.items.every((item) => item.kind !== 'approval' || gate.answers[item.id] !== undefined || chosenBy(parsed, item) !== null);
  const p1 = gate.answers['p1']?.chosen ?? chosenBy(parsed, p1Item);
  const stamp = { reply: input.reply, at: context.now, by: input.by ?? null, role, owner_mode: parsed.mode, owner_reply: input.wordsBy === undefined ? (input.ownerReply ?? null) : null, words_by: input.wordsBy ?? null, rec_hash: gate.rec_hash } as const;
  for (const item of gate.items) {
    if (gate.answers[item.id] !== undefined) continue;
    const found = parsed.choices.find((c) => c.id === item.id)!;
    let chosen = answered(found) ? found.chosen : null;
    // Defaults apply only when the reply completes the gate.
    if (chosen === null && complete && item.kind === 'auto') {
      chosen = item.keep !== undefined && item.recommended !== item.keep && p1 !== 'b' ? item.keep : item.recommended;
    }
    if (chosen === null) continue;
    const given: GateAnswer = {
      chosen,
      status: chosen === item.recommended ? 'approved' : item.id === 'p1' && chosen === 'c' ? 'rejected' : 'overridden',
      source: answered(found) ? found.source : 'default',
      owner_named: found.owner_named,
      ...stamp,
    };
    gate.answers[item.id] = given;
    recordChoice(review, item, chosen, context);
    context.events.push({ type: 'decision_recorded', at: context.now, decision: decisionId(review.run, gate.rev, item.id), chosen, source: given.source, by: input.by ?? null });
  }
  if (context.events.length === before) {
    // Every item the reply answers was answered before (p1a after a hold, a second as-is):
    // refused like a reply to a decided gate, so two racing answers end the same whatever
    // their order: the first applies, the second is refused.
    const held = gate.answers['p1']?.chosen === 'c' ? ' (p1c holds it until the plan is revised)' : '';
    throw new LanewardError('GATE_REV_STALE', `the reply applies nothing: every item it answers is already answered at gate_rev ${gate.rev}${held}; a later reply never overwrites an earlier answer`);
  }
  if (complete) settleGate(review, gate.answers['p1']?.chosen ?? null, context);
}

function answered(found: Choice): boolean {
  return found.source === 'pick' || found.source === 'rec' || found.source === 'keep';
}

function chosenBy(parsed: ParsedReply, item: GateItem): string | null {
  const found = parsed.choices.find((c) => c.id === item.id);
  return found !== undefined && answered(found) ? found.chosen : null;
}

function sameChoices(a: ParsedReply, b: ParsedReply): boolean {
  return a.choices.every((c, i) => {
    const other = b.choices[i]!;
    return (answered(c) ? c.chosen : null) === (answered(other) ? other.chosen : null);
  });
}
