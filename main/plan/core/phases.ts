import { buildConsensus } from '../../../formats/consensus/build.ts';
import { type Consensus } from '../../../formats/consensus/types.ts';
import { LanewardError } from '../../../formats/codes/error.ts';
import type { AttemptRecord, GateRecord, PhaseId, PhaseRecord, RunRecord, VoiceId } from '../../../formats/review/run-record.ts';
import { VOICES } from '../../../formats/review/run-record.ts';
import { phaseFindings } from './findings.ts';
import { phaseOf } from './records.ts';
import { admit } from './spend.ts';
import type { TransitionContext } from './transition-context.ts';

/** Opens a phase: checks its predecessors' consensus, then mints both attempts under the cap. */
export function openPhase(review: RunRecord, id: PhaseId, context: TransitionContext): void {
  for (const earlier of review.order.slice(0, review.order.indexOf(id))) {
    const closed = review.phases[earlier];
    if (closed?.state === 'closed' && closed.consensus === null) {
      throw new LanewardError('CONSENSUS_MISSING', `phase ${earlier} closed without a consensus record; ${id} cannot open`);
    }
  }
  const phase = phaseOf(review, id);
  const each = admit(review.spend, 2);
  phase.state = 'open';
  phase.snapshot = review.snapshot;
  phase.opened_at = context.now;
  phase.closed_at = null;
  phase.consensus = null;
  review.current = id;
  review.state = 'awaiting_result';
  context.events.push({ type: 'phase_opened', at: context.now, phase: id, snapshot: review.snapshot });
  for (const voice of VOICES) mintAttempt(review, phase, voice, each, context);
}

/** A fresh attempt for one voice; `reserve` was already admitted. */
export function mintAttempt(review: RunRecord, phase: PhaseRecord, voice: VoiceId, reserve: number, step: Pick<TransitionContext, 'now' | 'events'>): AttemptRecord {
  const n = review.next_attempt++;
  const id = `${review.run}-a${n}`;
  const attempt: AttemptRecord = {
    id,
    phase: phase.id,
    voice,
    state: 'open',
    prompt: `${phase.id}-${voice}-prompt.md`,
    result: `${phase.id}-${voice}.a${n}.md`,
    minted_at: step.now,
    reserve_usd: reserve,
    minted_by: review.commands,
  };
  review.attempts[id] = attempt;
  phase[voice] = { status: 'running', attempt: id };
  step.events.push({ type: 'attempt_minted', at: step.now, attempt: id, phase: phase.id, voice, reserve_usd: reserve });
  return attempt;
}

/** Closes the phase once both voices are terminal and reports it; returns its consensus when it closed. */
export function closeIfDone(review: RunRecord, phase: PhaseRecord, context: TransitionContext): Consensus | null {
  if (phase.state !== 'open') return null;
  if (phase.native.status !== 'completed') return null;
  if (phase.outside.status === 'running' || phase.outside.status === 'pending') return null;
  const native = phaseFindings(review, phase, 'native', context);
  const outside = phase.outside.status === 'completed' ? phaseFindings(review, phase, 'outside', context) : null;
  const consensus = buildConsensus(phase.id, native, outside);
  phase.consensus = consensus;
  phase.state = 'closed';
  phase.closed_at = context.now;
  review.state = 'phase_closed';
  const counts = { confirmed: consensus.confirmed, unverified: consensus.unverified, disagree: consensus.disagree, new: consensus.new, native_only: consensus.native_only };
  context.events.push({ type: 'phase_closed', at: context.now, phase: phase.id, coverage: consensus.coverage, ...counts });
  context.report.closed.push({ phase: phase.id, ...counts, coverage: consensus.coverage });
  return consensus;
}

/** A gate leaving force voids its pending carry check; the check's reservation goes back. */
export function voidCheck(gate: GateRecord, spend?: RunRecord['spend']): GateRecord {
  if (gate.check?.state === 'open') {
    gate.check.state = 'void';
    if (spend !== undefined) spend.reserved = Math.max(0, spend.reserved - gate.check.reserve_usd);
    gate.check.reserve_usd = 0;
  }
  return gate;
}
