import { LanewardError } from '../../../formats/codes/error.ts';
import type { AttemptRecord, PhaseId, PhaseRecord, RunRecord, VoiceId } from '../../../formats/review/run-record.ts';

/** Lookups into the run record that every transition shares. */

export function emptyPhase(id: PhaseId): PhaseRecord {
  return {
    id,
    state: 'waiting',
    snapshot: null,
    native: { status: 'pending', attempt: null },
    outside: { status: 'pending', attempt: null },
    opened_at: null,
    closed_at: null,
    consensus: null,
  };
}

export function phaseOf(review: RunRecord, id: PhaseId): PhaseRecord {
  const phase = review.phases[id];
  if (phase === undefined) throw new LanewardError('PHASE_NOT_AWAITING', `phase ${id} is not in this run (order ${review.order.join(',')})`);
  return phase;
}

/** The attempt a parent named, looked up as data: `__proto__` or `constructor` name none. */
export function attemptOf(review: RunRecord, id: string): AttemptRecord | undefined {
  return Object.hasOwn(review.attempts, id) ? review.attempts[id] : undefined;
}

/** The attempt a voice's end closes, with its phase: open, and the one its phase waits for. */
export function openAttempt(review: RunRecord, attemptId: string, verb: string): { attempt: AttemptRecord; phase: PhaseRecord } {
  const attempt = attemptOf(review, attemptId);
  if (attempt === undefined) throw new LanewardError('ATTEMPT_MISMATCH', `no attempt ${attemptId} in run ${review.run}`);
  if (attempt.state !== 'open') throw new LanewardError('ATTEMPT_MISMATCH', `attempt ${attemptId} is ${attempt.state}; it can no longer ${verb}`);
  const phase = phaseOf(review, attempt.phase);
  if (phase.state !== 'open' || phase[attempt.voice].attempt !== attemptId) {
    throw new LanewardError('PHASE_NOT_AWAITING', `phase ${attempt.phase} is ${phase.state}; it is not waiting for ${attempt.voice} attempt ${attemptId}`);
  }
  return { attempt, phase };
}

export function byMint(a: AttemptRecord, b: AttemptRecord): number {
  return Number(a.id.slice(a.id.lastIndexOf('-a') + 2)) - Number(b.id.slice(b.id.lastIndexOf('-a') + 2));
}

/** The first phase in the run's order that has not closed, or null when all have. */
export function nextPhase(review: RunRecord): PhaseId | null {
  return review.order.find((id) => review.phases[id]?.state !== 'closed') ?? null;
}

/** Whether the attempt is the bound result a phase currently stands on. */
export function isCurrent(review: RunRecord, attempt: string): boolean {
  return review.order.some((id) => review.phases[id]?.native.attempt === attempt || review.phases[id]?.outside.attempt === attempt);
}

export type { VoiceId };
