import type { ChildRecord, OrphanEnd } from '../../../formats/supervision/child-record.ts';
import { LanewardError } from '../../../formats/codes/error.ts';
import type { AttemptRecord, RunRecord } from '../../../formats/review/run-record.ts';
import { attemptOf } from './records.ts';
import type { TransitionContext } from './transition-context.ts';

function need(review: RunRecord, id: string): AttemptRecord {
  const attempt = attemptOf(review, id);
  if (attempt === undefined) throw new LanewardError('ATTEMPT_MISMATCH', `no attempt ${id} in run ${review.run}`);
  return attempt;
}

/** The child an attempt's provider runs as, journaled right after its spawn: a later driver finds it here. */
export function recordChild(review: RunRecord, input: { readonly attempt: string; readonly child: ChildRecord }, step: Pick<TransitionContext, 'now' | 'events'>): void {
  const attempt = need(review, input.attempt);
  const { child } = input;
  attempt.child = child;
  step.events.push({ type: 'attempt_child', at: step.now, attempt: attempt.id, pid: child.pid, pgid: child.pgid, ticks: child.ticks, mode: child.mode, deadline_at: child.deadline_at });
}

/** Takes back the dispatch of an attempt whose provider never spawned: nothing went out. */
export function undispatch(review: RunRecord, input: { readonly attempt: string }, step: Pick<TransitionContext, 'now' | 'events'>): void {
  const attempt = need(review, input.attempt);
  if (attempt.child !== null || attempt.state !== 'open') throw new LanewardError('ATTEMPT_MISMATCH', `attempt ${input.attempt} spawned a child or is ${attempt.state}; not dispatched again`);
  delete attempt.dispatched_at;
  delete attempt.dispatched_by;
  delete attempt.child;
  step.events.push({ type: 'attempt_undispatched', at: step.now, attempt: attempt.id, why: 'its driver ended before any child spawned' });
}

/** How a later driver settled an orphaned child (adopted, torn down, or already gone). */
export function settleOrphan(review: RunRecord, input: { readonly attempt: string; readonly end: OrphanEnd }, step: Pick<TransitionContext, 'now' | 'events'>): void {
  const attempt = need(review, input.attempt);
  attempt.orphan = input.end;
  const pid = attempt.child?.pid ?? null;
  step.events.push({ type: 'orphan_settled', at: step.now, attempt: attempt.id, pid, how: input.end.how, code: input.end.code, cleanup_confirmed: input.end.cleanup_confirmed });
}
