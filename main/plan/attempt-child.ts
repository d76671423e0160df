import type { ChildRecord, OrphanEnd } from '../../formats/child-record.ts';
import { LanewardError } from '../../formats/error.ts';
import type { AttemptRecord, JournalEvent, RunRecord } from '../../formats/review-run.ts';
import type { SupervisionSpec } from '../../workers/supervise/spec.ts';
import type { SuperviseFn } from '../dispatch/dispatcher.ts';
import { adoptionSpec, childRuns, orphanPlan, tearDownChild } from '../dispatch/orphans.ts';
import { transact, type Store } from '../store/store.ts';
import { locateRun, type PlanEnv } from './locate.ts';
import { attemptOf } from './machine.ts';
import { recordOutcome, type OutcomeFacts } from './voice-outcome.ts';

/**
 * Journals the child an attempt's provider runs as (journal `attempt_child`), right after
 * its spawn: a later driver finds it by this record if the one that spawned it dies.
 */
export async function recordChild(out: string, penv: PlanEnv, attemptId: string, child: ChildRecord): Promise<void> {
  const { store, record } = locateRun(out, penv);
  await onAttempt(store, record.run, attemptId, (attempt, now) => {
    attempt.child = child;
    return [{ type: 'attempt_child', at: now, attempt: attempt.id, pid: child.pid, pgid: child.pgid, ticks: child.ticks, mode: child.mode, deadline_at: child.deadline_at }];
  });
}

/**
 * Takes back the dispatch of an attempt whose provider never spawned (its driver died
 * between the dispatch and the spawn): nothing went out, so it may be started.
 */
export async function undispatch(out: string, penv: PlanEnv, attemptId: string): Promise<void> {
  const { store, record } = locateRun(out, penv);
  await onAttempt(store, record.run, attemptId, (attempt, now) => {
    if (attempt.child !== null || attempt.state !== 'open') throw new LanewardError('ATTEMPT_MISMATCH', `attempt ${attemptId} spawned a child or is ${attempt.state}; not dispatched again`);
    delete attempt.dispatched_at;
    delete attempt.dispatched_by;
    delete attempt.child;
    return [{ type: 'attempt_undispatched', at: now, attempt: attempt.id, why: 'its driver ended before any child spawned' }];
  });
}

/** How to adopt or tear down an orphan: the action it runs under, the dispatcher, the crew's cancel. */
export interface OrphanContext {
  /** The spec of the action the attempt was dispatched under (its argv is not used). */
  readonly base: SupervisionSpec;
  readonly run: SuperviseFn;
  readonly cancel?: AbortSignal;
  /** Adopt or tear down, when the caller decides (a crew past its limit); default {@link orphanPlan}. */
  readonly adopt?: boolean;
}

/**
 * Settles the child of an attempt whose driver died, once: a live one is adopted (held in
 * a slot of `run` to its recorded deadline) or torn down with proof, as {@link orphanPlan}
 * says; one already gone is noted gone. The settlement is journaled on the attempt
 * (`orphan_settled`) before this resolves, so a driver killed afterwards does not take a
 * child it tore down for one that vanished. Undefined when the attempt has no child.
 */
export async function settleOrphan(out: string, penv: PlanEnv, attempt: AttemptRecord, context: OrphanContext): Promise<OrphanEnd | undefined> {
  if (attempt.orphan !== undefined) return attempt.orphan;
  const child = attempt.child;
  if (child === undefined || child === null) return undefined;
  const now = () => new Date().toISOString();
  let end: OrphanEnd;
  if (!childRuns(child)) end = { how: 'gone', code: null, cleanup_confirmed: true, at: now() };
  else if (context.adopt ?? orphanPlan(child) === 'adopt') {
    const outcome = await context.run(adoptionSpec(context.base, child), context.cancel === undefined ? {} : { cancel: context.cancel });
    const facts: OutcomeFacts = { status: outcome.status, code: outcome.code, child_exit: null, provider_started: true, marks: 0, duration_ms: Math.round(outcome.durationMs), cleanup_confirmed: outcome.cleanupConfirmed };
    await recordOutcome(out, penv, attempt.id, facts);
    end = { how: 'adopted', code: outcome.code, cleanup_confirmed: outcome.cleanupConfirmed, at: now() };
  } else {
    const teardown = await tearDownChild(child, context.base);
    end = { how: 'torn_down', code: 'CANCELLED', cleanup_confirmed: teardown.confirmed, at: now() };
  }
  const { store, record } = locateRun(out, penv);
  await onAttempt(store, record.run, attempt.id, (current, at) => {
    current.orphan = end;
    return [{ type: 'orphan_settled', at, attempt: current.id, pid: child.pid, how: end.how, code: end.code, cleanup_confirmed: end.cleanup_confirmed }];
  });
  return end;
}

/** One change to one attempt of a run, with its journal events, in one transaction. */
async function onAttempt(store: Store, run: string, attemptId: string, change: (attempt: AttemptRecord, now: string) => JournalEvent[]): Promise<void> {
  const now = new Date().toISOString();
  await transact(store, run, (current: RunRecord | undefined) => {
    if (current === undefined) throw new LanewardError('RUN_NOT_INITIALIZED', `run ${run} vanished from its state root`);
    const attempt = attemptOf(current, attemptId);
    if (attempt === undefined) throw new LanewardError('ATTEMPT_MISMATCH', `no attempt ${attemptId} in run ${run}`);
    const events = change(attempt, now);
    return { change: { record: current, events }, result: undefined };
  });
}
