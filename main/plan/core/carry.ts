import { decisionId } from '../../../formats/gate/decisions.ts';
import type { GateAnswer, GateRecord, RunRecord } from '../../../formats/review/run-record.ts';
import type { GateItem } from '../../../formats/schemas/gate.ts';
import type { TransitionContext } from './transition-context.ts';

export const CARRIER = 'agent:laneward';
const DO_IT = /^\s*do\s+it[\s.!]*$/i;

/** The owner's words "do it" stand for `rec` when an agent relays them. */
export function isDoIt(words: string): boolean {
  return DO_IT.test(words);
}

/** What a carry needs to know that is not in the run record. */
export interface CarryFacts {
  /** Urgent findings of the attempts phases stand on now. */
  readonly urgentOpen: readonly string[];
  /** The plan file's sha256 as it is on disk now (null when it cannot be read). */
  readonly planFileSha: string | null;
}

/**
 * Answers a gate revision after the first with the owner's recorded words from the
 * revision before it, when nothing new needs them. Every condition is checked in turn;
 * the first that fails is printed as `CARRY: no (<why>)` and the gate goes to the owner.
 * An unreviewed post-cap delta item needs a carry check first: the result is then
 * `check`, and `plan check` finishes the carry (or leaves the gate to the owner).
 */
export function tryCarry(review: RunRecord, facts: CarryFacts, context: TransitionContext): 'carried' | 'check' | 'refused' | 'none' {
  const gate = review.gate;
  const prev = review.past_gates[review.past_gates.length - 1];
  if (gate === null || prev === undefined || gate.rev < 2) return 'none';
  const origin = new Map(prev.items.map((item) => [signature(item), item]));
  const why = refusal(review, prev, prev.answers['p1'], facts, gate, origin);
  if (why !== null) {
    refuseCarry(gate.rev, why, context);
    return 'refused';
  }
  const delta = gate.delta_item === undefined ? undefined : gate.items.find((i) => i.id === gate.delta_item);
  if (delta !== undefined && delta.recommended === 'a' && gate.check?.state !== 'pass') return 'check';
  applyCarry(review, context);
  return 'carried';
}

export function refuseCarry(rev: number, why: string, step: Pick<TransitionContext, 'now' | 'events' | 'report'>): void {
  step.report.carry.push({ fact: 'carry_refused', why });
  step.events.push({ type: 'carry_refused', at: step.now, gate_rev: rev, why });
}

/** Answers every item of the gate from the revision before it, as the owner did there. */
export function applyCarry(review: RunRecord, step: Pick<TransitionContext, 'now' | 'events' | 'report'>): void {
  const { now, events, report } = step;
  const gate = review.gate!;
  const prev = review.past_gates[review.past_gates.length - 1]!;
  const origin = new Map(prev.items.map((item) => [signature(item), item]));
  const p1 = prev.answers['p1'];
  const words = p1!.owner_reply ?? p1!.reply;
  const base = { status: 'approved' as const, owner_named: false, owner_mode: p1!.owner_mode, reply: p1!.reply, at: now, by: CARRIER, role: 'agent' as const, owner_reply: p1!.owner_reply, words_by: null, rec_hash: gate.rec_hash };
  for (const item of gate.items) {
    const from = item.id === 'p1' ? prev.items.find((i) => i.id === 'p1') : origin.get(signature(item));
    const earlier = from === undefined ? undefined : prev.answers[from.id];
    const chosen = earlier?.chosen ?? item.recommended;
    // The unreviewed delta is carried on the check's verdict, not the owner's words.
    const underDoIt = from === undefined && item.id !== gate.delta_item;
    const answer: GateAnswer = {
      ...base,
      chosen,
      status: chosen === item.recommended ? 'approved' : 'overridden',
      source: 'carried',
      carried: { from: decisionId(review.run, prev.rev, from?.id ?? item.id), rev: prev.rev, by: earlier?.by ?? p1!.by },
      ...(underDoIt ? { carried_under: 'do it' as const } : {}),
    };
    gate.answers[item.id] = answer;
    if (underDoIt) report.carry.push({ fact: 'carried_under_do_it', decision: decisionId(review.run, gate.rev, item.id), title: item.title, chosen });
  }
  gate.carried = true;
  report.carry.unshift({ fact: 'carried', gateRev: gate.rev, fromRev: prev.rev, words, by: p1!.by ?? null });
  events.push({ type: 'gate_carried', at: now, gate_rev: gate.rev, from_rev: prev.rev });
}

function refusal(
  review: RunRecord,
  prev: GateRecord,
  p1: GateAnswer | undefined,
  facts: CarryFacts,
  gate: GateRecord,
  origin: ReadonlyMap<string, GateItem>,
): string | null {
  if (!review.carry_forward) return 'carry-forward is off for this run (--no-carry-forward)';
  if (p1 === undefined || (p1.chosen !== 'a' && p1.chosen !== 'b')) return `gate_rev ${prev.rev} was not approved (p1${p1?.chosen ?? ' pending'})`;
  if (prev.carried === true) return `gate_rev ${prev.rev} was itself carried`;
  const pending = prev.items.filter((item) => prev.answers[item.id] === undefined).map((item) => item.id);
  if (pending.length > 0) return `gate_rev ${prev.rev} left ${pending.join(',')} pending`;
  if (p1.words_by !== null) return `the words at gate_rev ${prev.rev} were ${p1.words_by}'s, not the owner's`;
  if (p1.role === 'agent' && p1.owner_reply === null) return `the owner's words at gate_rev ${prev.rev} were not recorded`;
  if (review.amendments.length > 0) return `accepted changes not incorporated: ${review.amendments.map((a) => a.decision).join(',')}`;
  if (facts.planFileSha !== review.plan_sha256) return 'the plan file changed after the revise that took the changes';
  if (facts.urgentOpen.length > 0) return `an urgent finding is open: ${facts.urgentOpen.join(',')}`;
  const doIt = isDoIt(p1.owner_reply ?? p1.reply);
  for (const item of gate.items) {
    if (item.id === 'p1' || item.id === gate.delta_item || origin.has(signature(item))) continue;
    const quiet = doIt && item.kind === 'auto' && !item.id.startsWith('uc') && item.keep !== undefined && item.recommended === item.keep;
    if (!quiet) return `new item ${item.id} needs the owner${doIt ? '' : ` (the words were ${p1.owner_mode}, which carries no new item)`}`;
  }
  return null;
}

/** The same proposal on two gates: same kind, title and option texts. */
function signature(item: GateItem): string {
  return JSON.stringify([item.kind, item.title, item.options.map((o) => [o.key, o.text])]);
}
