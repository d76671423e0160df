import { LanewardError } from '../../../formats/codes/error.ts';
import type { PhaseTiming, RunRecord } from '../../../formats/review/run-record.ts';
import { tryCarry } from './carry.ts';
import { startCheck } from './carry-check.ts';
import { numberedFindings } from './findings.ts';
import { recordAndSettle, writeGate } from './gate.ts';
import { mintAttempt, openPhase } from './phases.ts';
import { attemptOf, isCurrent, nextPhase, phaseOf } from './records.ts';
import { admit, settle } from './spend.ts';
import type { TransitionContext } from './transition-context.ts';
import { cycleFact, phaseTimings } from './timing.ts';

export interface AdvanceInput {
  /** An open (or failed native) attempt to replace with a fresh one. */
  readonly redispatch?: string;
  /** The first next's --ceo-only, given again: refused on a full run. */
  readonly ceoOnly?: boolean;
  /** The plan file's sha256 on disk now (a carry is refused once it changed). */
  readonly planFileSha: string | null;
}

/**
 * Moves a run one step: mints attempts for voices a release left empty and reports the
 * attempts an earlier command left open; opens the next phase once one closed; after the
 * last, ends a CEO-only run or writes the gate (and carries it or starts its check).
 * Returns the phase timings to keep in the history when the last phase closed.
 */
export function advance(review: RunRecord, input: AdvanceInput, context: TransitionContext): { key: [string, string]; value: PhaseTiming }[] {
  if (input.ceoOnly === true && !review.ceo_only) {
    throw new LanewardError('CEO_ONLY_AFTER_INIT', `run ${review.run} is a full run; --ceo-only goes on a run's first next`);
  }
  review.commands += 1;
  if (review.amendments.length > 0 && review.state !== 'incomplete') {
    throw new LanewardError('PLAN_AMEND_PENDING', `${review.amendments.length} accepted plan change(s) wait to be incorporated: ${review.amendments.map((a) => a.decision).join(', ')}`);
  }
  if (input.redispatch !== undefined) redispatch(review, input.redispatch, context);
  if (review.state === 'awaiting_result' && review.current !== null) {
    const phase = phaseOf(review, review.current);
    for (const voice of ['native', 'outside'] as const) {
      // A released attempt leaves its voice without one: the parent asked for a fresh one.
      if (phase[voice].attempt === null && phase[voice].status === 'pending') mintAttempt(review, phase, voice, admit(review.spend, 1), context);
    }
    for (const attempt of Object.values(review.attempts)) {
      if (attempt.state === 'open' && attempt.minted_by < review.commands) {
        context.report.unknown.push({ attempt: attempt.id, phase: attempt.phase, voice: attempt.voice });
      }
    }
    return [];
  }
  if (review.state !== 'phase_closed') return [];
  const following = nextPhase(review);
  if (following !== null) {
    openPhase(review, following, context);
    return [];
  }
  if (review.ceo_only) {
    review.state = 'reviewed';
    review.current = null;
    context.events.push({ type: 'reviewed', at: context.now });
    const c = review.phases.ceo!.consensus!;
    context.report.after.push({ fact: 'reviewed', run: review.run, phase: 'ceo', confirmed: c.confirmed, new: c.new, native_only: c.native_only });
  } else {
    writeGate(review, context);
    const urgentOpen = numberedFindings(review, context).filter((f) => f.urgent === true && isCurrent(review, f.attempt)).map((f) => f.id);
    const carry = tryCarry(review, { urgentOpen, planFileSha: input.planFileSha }, context);
    if (carry === 'check') startCheck(review, context);
    if (carry === 'carried') recordAndSettle(review, context);
  }
  context.report.after.push(cycleFact(review));
  return phaseTimings(review);
}

function redispatch(review: RunRecord, id: string, context: TransitionContext): void {
  const old = attemptOf(review, id);
  if (old === undefined) throw new LanewardError('ATTEMPT_MISMATCH', `no attempt ${id} in run ${review.run}`);
  // A native voice that failed (plan run records it; nothing retries it by itself) is
  // redispatched only here, by the parent's explicit choice: the phase cannot close without it.
  const failedNative = old.voice === 'native' && (old.state === 'failed' || old.state === 'unavailable');
  if ((old.state !== 'open' && !failedNative) || review.current !== old.phase || review.state !== 'awaiting_result' || phaseOf(review, old.phase)[old.voice].attempt !== id) {
    throw new LanewardError('PHASE_NOT_AWAITING', `attempt ${id} is ${old.state}; only an open attempt (or a failed native one) of the open phase can be redispatched`);
  }
  if (old.state === 'open') {
    // The call may have gone out: its reservation stays counted, as unknown spend.
    settle(review.spend, old, null);
    old.state = 'abandoned';
    context.events.push({ type: 'attempt_abandoned', at: context.now, attempt: id });
  }
  mintAttempt(review, phaseOf(review, old.phase), old.voice, admit(review.spend, 1), context);
}
