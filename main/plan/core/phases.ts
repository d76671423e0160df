import { buildConsensus } from '../../../formats/consensus/build.ts';
import { type Consensus } from '../../../formats/consensus/types.ts';
import { LanewardError } from '../../../formats/codes/error.ts';
import type { AttemptRecord, GateRecord, PhaseId, PhaseRecord, RunRecord, VoiceId } from '../../../formats/review/run-record.ts';
import { VOICES } from '../../../formats/review/run-record.ts';
import { phaseFindings } from './findings.ts';
import { phaseOf } from './records.ts';
import { admit } from './spend.ts';
import type { Step } from './step.ts';

/** Opens a phase: checks its predecessors' consensus, then mints both attempts under the cap. */
export function openPhase(run: RunRecord, id: PhaseId, step: Step): void {
  for (const earlier of run.order.slice(0, run.order.indexOf(id))) {
    const closed = run.phases[earlier];
    if (closed?.state === 'closed' && closed.consensus === null) {
      throw new LanewardError('CONSENSUS_MISSING', `phase ${earlier} closed without a consensus record; ${id} cannot open`);
    }
  }
  const phase = phaseOf(run, id);
  const each = admit(run.spend, 2);
  phase.state = 'open';
  phase.snapshot = run.snapshot;
  phase.opened_at = step.now;
  phase.closed_at = null;
  phase.consensus = null;
  run.current = id;
  run.state = 'awaiting_result';
  step.events.push({ type: 'phase_opened', at: step.now, phase: id, snapshot: run.snapshot });
  for (const voice of VOICES) mintAttempt(run, phase, voice, each, step);
}

/** A fresh attempt for one voice; `reserve` was already admitted. */
export function mintAttempt(run: RunRecord, phase: PhaseRecord, voice: VoiceId, reserve: number, step: Pick<Step, 'now' | 'events'>): AttemptRecord {
  const n = run.next_attempt++;
  const id = `${run.run}-a${n}`;
  const attempt: AttemptRecord = {
    id,
    phase: phase.id,
    voice,
    state: 'open',
    prompt: `${phase.id}-${voice}-prompt.md`,
    result: `${phase.id}-${voice}.a${n}.md`,
    minted_at: step.now,
    reserve_usd: reserve,
    minted_by: run.commands,
  };
  run.attempts[id] = attempt;
  phase[voice] = { status: 'running', attempt: id };
  step.events.push({ type: 'attempt_minted', at: step.now, attempt: id, phase: phase.id, voice, reserve_usd: reserve });
  return attempt;
}

/** Closes the phase once both voices are terminal and reports it; returns its consensus when it closed. */
export function closeIfDone(run: RunRecord, phase: PhaseRecord, step: Step): Consensus | null {
  if (phase.state !== 'open') return null;
  if (phase.native.status !== 'completed') return null;
  if (phase.outside.status === 'running' || phase.outside.status === 'pending') return null;
  const native = phaseFindings(run, phase, 'native', step);
  const outside = phase.outside.status === 'completed' ? phaseFindings(run, phase, 'outside', step) : null;
  const consensus = buildConsensus(phase.id, native, outside);
  phase.consensus = consensus;
  phase.state = 'closed';
  phase.closed_at = step.now;
  run.state = 'phase_closed';
  const counts = { confirmed: consensus.confirmed, unverified: consensus.unverified, disagree: consensus.disagree, new: consensus.new, native_only: consensus.native_only };
  step.events.push({ type: 'phase_closed', at: step.now, phase: phase.id, coverage: consensus.coverage, ...counts });
  step.report.closed.push({ phase: phase.id, ...counts, coverage: consensus.coverage });
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
