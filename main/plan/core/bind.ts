import { LanewardError } from '../../../formats/codes/error.ts';
import { familiesConflict, type FamilyAnswer } from '../../../formats/review/model-family.ts';
import type { ReviewFinding } from '../../../formats/review/finding.ts';
import type { PhaseId, RunRecord, VoiceId } from '../../../formats/review/run-record.ts';
import { closeIfDone } from './phases.ts';
import { attemptOf, phaseOf } from './records.ts';
import { release, settle } from './spend.ts';
import type { TransitionContext } from './transition-context.ts';

/** One voice's end as a parent submits it: a parsed result, or an outside voice that could not review. */
export type SubmitInput = {
  readonly attempt: string;
  readonly phase: PhaseId;
  readonly voice: VoiceId;
  /** The snapshot the result was read against. */
  readonly snapshot: string;
  readonly usageUsd?: number;
} & (
  | {
      readonly kind: 'result';
      readonly digest: string;
      readonly findings: readonly ReviewFinding[];
      readonly receipt: 'input' | 'attested';
      readonly model: string;
      readonly family: FamilyAnswer | null;
      readonly runner: string;
      readonly attest: string | null;
      /** The result did not parse: refused once the attempt checks pass (they take precedence). */
      readonly invalid?: LanewardError;
    }
  | { readonly kind: 'unavailable' | 'failed'; readonly why: string }
);

/**
 * Binds one voice's result to its attempt exactly once, or closes the outside voice. A
 * result already bound with the same bytes is reported again and changes nothing (false);
 * other bytes, or an attempt no longer open, are ATTEMPT_MISMATCH. Closes the phase when
 * both voices are done. Returns whether the record changed.
 */
export function submit(review: RunRecord, input: SubmitInput, context: TransitionContext): boolean {
  review.commands += 1;
  const attempt = attemptOf(review, input.attempt);
  if (attempt === undefined) throw new LanewardError('ATTEMPT_MISMATCH', `no attempt ${input.attempt} in run ${review.run}`);
  if (attempt.phase !== input.phase || attempt.voice !== input.voice) {
    throw new LanewardError('ATTEMPT_MISMATCH', `attempt ${input.attempt} is phase=${attempt.phase} voice=${attempt.voice}, not phase=${input.phase} voice=${input.voice}`);
  }
  if (attempt.state === 'bound' && input.kind === 'result') {
    if (attempt.bound!.sha256 !== input.digest) {
      throw new LanewardError('ATTEMPT_MISMATCH', `attempt ${input.attempt} is already bound to other bytes (sha256 ${attempt.bound!.sha256.slice(0, 12)})`);
    }
    context.report.bound.push({ attempt: attempt.id, phase: input.phase, voice: input.voice, model: attempt.bound!.model, findings: attempt.bound!.findings, sha256: input.digest, again: true });
    return false;
  }
  if (attempt.state !== 'open') throw new LanewardError('ATTEMPT_MISMATCH', `attempt ${input.attempt} is ${attempt.state}; it can no longer be bound`);
  const phase = phaseOf(review, input.phase);
  if (phase.state !== 'open' || phase[input.voice].attempt !== input.attempt) {
    throw new LanewardError('PHASE_NOT_AWAITING', `phase ${input.phase} is ${phase.state}; it is not waiting for ${input.voice} attempt ${input.attempt}`);
  }
  if ((phase.snapshot ?? review.snapshot) !== input.snapshot) throw new LanewardError('PHASE_NOT_AWAITING', `phase ${input.phase} moved to another snapshot while the result was read`);

  if (input.kind !== 'result') {
    if (input.voice !== 'outside') throw new LanewardError('PHASE_NOT_AWAITING', `only the outside voice closes as ${input.kind}; native ${input.attempt} waits for its result`);
    // Nothing went out for an unavailable voice; a failed call may have cost money.
    if (input.kind === 'unavailable') release(review.spend, attempt);
    else settle(review.spend, attempt, input.usageUsd ?? null);
    attempt.state = input.kind;
    attempt.why = input.why;
    phase.outside = { status: input.kind, attempt: attempt.id };
    context.events.push({ type: `voice_${input.kind}`, at: context.now, attempt: attempt.id, phase: input.phase, why: input.why });
    context.report.after.push({ fact: 'voice', attempt: attempt.id, phase: input.phase, voice: 'outside', status: input.kind, code: null });
  } else {
    if (input.invalid !== undefined) throw input.invalid;
    const other = phase[input.voice === 'native' ? 'outside' : 'native'];
    const otherBound = other.attempt === null ? undefined : review.attempts[other.attempt]?.bound;
    if (otherBound !== undefined && input.family !== null && familiesConflict(input.family, { family: otherBound.family, prefix: null, source: null })) {
      throw new LanewardError('MODEL_FAMILY_CONFLICT', `${input.model} and ${otherBound.model} are both ${input.family.family}`);
    }
    if (input.family !== null && input.family.family === null) {
      const note = `model family unknown for ${input.model} (${input.phase} ${input.voice})`;
      if (!review.deviations.includes(note)) review.deviations.push(note);
    }
    settle(review.spend, attempt, input.usageUsd ?? null);
    attempt.state = 'bound';
    attempt.bound = {
      sha256: input.digest,
      model: input.model,
      family: input.family?.family ?? null,
      runner: input.runner,
      receipt: input.receipt,
      attest: input.attest,
      findings: input.findings.length,
      usage_usd: input.usageUsd ?? null,
      at: context.now,
    };
    phase[input.voice] = { status: 'completed', attempt: attempt.id };
    context.events.push({ type: 'result_bound', at: context.now, attempt: attempt.id, phase: input.phase, voice: input.voice, sha256: input.digest, findings: input.findings.length, receipt: input.receipt });
    context.report.bound.push({ attempt: attempt.id, phase: input.phase, voice: input.voice, model: input.model, findings: input.findings.length, sha256: input.digest, again: false });
  }
  closeIfDone(review, phase, context);
  review.updated_at = context.now;
  return true;
}
