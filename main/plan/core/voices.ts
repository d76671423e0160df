import { LanewardError } from '../../../formats/codes/error.ts';
import type { AttemptRecord, RunRecord } from '../../../formats/review/run-record.ts';
import { closeIfDone } from './phases.ts';
import { attemptOf, openAttempt, phaseOf } from './records.ts';
import { release, settle } from './spend.ts';
import type { TransitionContext } from './transition-context.ts';

/** The facts of one supervision that the journal keeps (snake_case, like every journal field). */
export interface OutcomeFacts {
  readonly status: string;
  readonly code: string | null;
  readonly child_exit: number | null;
  /** The signal that ended the provider, if one did (absent on journals kept before it was). */
  readonly signal?: string | null;
  /** The last lines of its stderr, escaped and bounded (workers/supervise/stderr-tail.ts); absent on journals kept before. */
  readonly stderr?: readonly string[];
  readonly provider_started: boolean;
  readonly marks: number;
  readonly duration_ms: number;
  readonly cleanup_confirmed: boolean;
  /** A preset's provider session, usage and cost, as its stream reported them. */
  readonly session?: string | null;
  readonly usage?: { readonly input: number; readonly output: number; readonly cachedInput: number } | null;
  readonly cost_usd?: number | null;
  readonly rate_limit?: { readonly status: number | null; readonly retry_after_s: number | null };
}

/**
 * `plan run` handed an open attempt to a supervisor: from here its provider may have
 * started, so no later driver starts it again. `by` is the dispatching process.
 */
export function dispatch(review: RunRecord, input: { readonly attempt: string; readonly by: { readonly pid: number; readonly ticks: string } }, step: Pick<TransitionContext, 'now' | 'events'>): void {
  const attempt = attemptOf(review, input.attempt);
  if (attempt === undefined || attempt.state !== 'open') {
    throw new LanewardError('ATTEMPT_MISMATCH', `attempt ${input.attempt} is ${attempt?.state ?? 'absent'}; only an open attempt is dispatched`);
  }
  // Two drivers on one run: the second to reach the slot starts nothing.
  if (attempt.dispatched_at !== undefined) throw inFlight(attempt);
  attempt.dispatched_at = step.now;
  attempt.dispatched_by = input.by;
  // No child yet: set at its spawn (attempt_child). A driver that dies in between spawned none.
  attempt.child = null;
  step.events.push({ type: 'attempt_dispatched', at: step.now, attempt: attempt.id, phase: attempt.phase, voice: attempt.voice });
}

/** The refusal for an attempt another driver dispatched. */
export function inFlight(attempt: AttemptRecord): LanewardError {
  const by = attempt.dispatched_by === undefined ? 'another plan run' : `process ${attempt.dispatched_by.pid}`;
  return new LanewardError('ATTEMPT_IN_FLIGHT', `attempt ${attempt.id} was dispatched at ${attempt.dispatched_at} by ${by}, which still drives this run; not started twice`);
}

/**
 * Journals one supervision's outcome, whatever it was. A supervision cancelled before its
 * provider started takes the dispatch mark back: nothing went out, so it may start later.
 */
export function recordOutcome(review: RunRecord, input: { readonly attempt: string; readonly facts: OutcomeFacts }, step: Pick<TransitionContext, 'now' | 'events'>): void {
  const attempt = attemptOf(review, input.attempt);
  if (attempt === undefined) throw new LanewardError('ATTEMPT_MISMATCH', `no attempt ${input.attempt} in run ${review.run}`);
  const { facts } = input;
  step.events.push({ type: 'attempt_outcome', at: step.now, attempt: attempt.id, phase: attempt.phase, voice: attempt.voice, ...facts });
  if (!facts.provider_started && facts.code === 'CANCELLED' && attempt.state === 'open') {
    delete attempt.dispatched_at;
    delete attempt.dispatched_by;
    delete attempt.child;
  }
}

/**
 * Closes one voice of an open attempt as a typed failure: `failed` when the call may have
 * gone out (its reservation settles as unknown spend), `unavailable` when nothing was
 * sent (the reservation goes back). A failed call whose cost its stream gave (`usageUsd`)
 * settles at that cost, never at its reservation. A failed outside voice leaves the phase native-only
 * once native binds; a failed native voice leaves the phase open until the parent
 * redispatches it. Never retried here.
 */
export function failVoice(
  review: RunRecord,
  input: { readonly attempt: string; readonly status: 'failed' | 'unavailable'; readonly code: string; readonly detail: string; readonly usageUsd?: number },
  context: TransitionContext,
): void {
  review.commands += 1;
  const { attempt, phase } = openAttempt(review, input.attempt, 'fail');
  if (input.status === 'unavailable') release(review.spend, attempt);
  else settle(review.spend, attempt, input.usageUsd ?? null);
  attempt.state = input.status;
  attempt.code = input.code;
  attempt.why = `${input.code}: ${input.detail}`;
  phase[attempt.voice] = { status: input.status, attempt: attempt.id };
  context.events.push({ type: `voice_${input.status}`, at: context.now, attempt: attempt.id, phase: attempt.phase, voice: attempt.voice, code: input.code, why: attempt.why });
  context.report.after.push({ fact: 'voice', attempt: attempt.id, phase: attempt.phase, voice: attempt.voice, status: input.status, code: input.code });
  closeIfDone(review, phase, context);
  review.updated_at = context.now;
}

/**
 * Gives up an open attempt that its own driver cancelled after the provider started (an
 * interruption, or a sibling that broke): not a provider failure, so the voice is not
 * failed. The attempt is abandoned (its reservation settles at the cost its stream gave, else
 * as unknown spend) and its voice
 * waits again with no attempt, which the next `plan next` fills.
 */
export function cancelVoice(review: RunRecord, input: { readonly attempt: string; readonly why: string; readonly usageUsd?: number }, context: TransitionContext): void {
  review.commands += 1;
  const { attempt, phase } = openAttempt(review, input.attempt, 'be cancelled');
  settle(review.spend, attempt, input.usageUsd ?? null);
  attempt.state = 'abandoned';
  attempt.code = 'CANCELLED';
  attempt.why = `CANCELLED: ${input.why}`;
  phase[attempt.voice] = { status: 'pending', attempt: null };
  context.events.push({ type: 'attempt_abandoned', at: context.now, attempt: attempt.id, phase: attempt.phase, voice: attempt.voice, code: 'CANCELLED', why: attempt.why });
  context.report.after.push({ fact: 'voice', attempt: attempt.id, phase: attempt.phase, voice: attempt.voice, status: 'cancelled', code: 'CANCELLED' });
  review.updated_at = context.now;
}

/**
 * The parent says an open attempt will never run: its reservation goes back and its voice
 * waits for a fresh attempt, which the next `next` mints.
 */
export function releaseAttempt(review: RunRecord, input: { readonly attempt: string }, context: TransitionContext): void {
  review.commands += 1;
  const attempt = attemptOf(review, input.attempt);
  if (attempt === undefined) throw new LanewardError('ATTEMPT_MISMATCH', `no attempt ${input.attempt} in run ${review.run}`);
  if (attempt.state !== 'open') throw new LanewardError('ATTEMPT_MISMATCH', `attempt ${attempt.id} is ${attempt.state}; only an open attempt can be released`);
  const freed = release(review.spend, attempt);
  attempt.state = 'released';
  const phase = phaseOf(review, attempt.phase);
  if (phase[attempt.voice].attempt === attempt.id) phase[attempt.voice] = { status: 'pending', attempt: null };
  context.report.after.push({ fact: 'released', attempt: attempt.id, phase: attempt.phase, voice: attempt.voice, freedUsd: freed });
  context.events.push({ type: 'attempt_released', at: context.now, attempt: attempt.id, freed_usd: freed });
  review.updated_at = context.now;
}
