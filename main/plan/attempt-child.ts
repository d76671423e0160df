import type { ChildRecord, OrphanEnd } from '../../formats/supervision/child-record.ts';
import type { AttemptRecord } from '../../formats/review/run-record.ts';
import type { SupervisionSpec } from '../../workers/supervise/spec.ts';
import type { SuperviseFn } from '../dispatch/dispatcher.ts';
import { adoptionSpec, childRuns, orphanPlan, tearDownChild } from '../dispatch/orphans.ts';
import { commit } from './commit.ts';
import type { Command } from './core/machine.ts';
import { locateRun } from './locate.ts';
import { emptyReport } from './report.ts';
import type { PlanEnv } from './settings.ts';
import { recordOutcome, type OutcomeFacts } from './voice-outcome.ts';

/**
 * Journals the child an attempt's provider runs as (journal `attempt_child`), right after
 * its spawn: a later driver finds it by this record if the one that spawned it dies.
 */
export async function recordChild(out: string, planEnv: PlanEnv, attemptId: string, child: ChildRecord): Promise<void> {
  await onRun(out, planEnv, { type: 'child', input: { attempt: attemptId, child } });
}

/**
 * Takes back the dispatch of an attempt whose provider never spawned (its driver died
 * between the dispatch and the spawn): nothing went out, so it may be started.
 */
export async function undispatch(out: string, planEnv: PlanEnv, attemptId: string): Promise<void> {
  await onRun(out, planEnv, { type: 'undispatch', input: { attempt: attemptId } });
}

/** How to adopt or tear down an orphan: the action it runs under, the dispatcher, the crew's cancel. */
export interface OrphanContext {
  /** The spec of the action the attempt was dispatched under (its argv is not used). */
  readonly base: SupervisionSpec;
  readonly supervise: SuperviseFn;
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
export async function settleOrphan(out: string, planEnv: PlanEnv, attempt: AttemptRecord, context: OrphanContext): Promise<OrphanEnd | undefined> {
  if (attempt.orphan !== undefined) return attempt.orphan;
  const child = attempt.child;
  if (child === undefined || child === null) return undefined;
  const now = () => new Date().toISOString();
  let end: OrphanEnd;
  if (!childRuns(child)) end = { how: 'gone', code: null, cleanup_confirmed: true, at: now() };
  else if (context.adopt ?? orphanPlan(child) === 'adopt') {
    const outcome = await context.supervise(adoptionSpec(context.base, child), context.cancel === undefined ? {} : { cancel: context.cancel });
    const facts: OutcomeFacts = { status: outcome.status, code: outcome.code, child_exit: null, provider_started: true, marks: 0, duration_ms: Math.round(outcome.durationMs), cleanup_confirmed: outcome.cleanupConfirmed };
    await recordOutcome(out, planEnv, attempt.id, facts);
    end = { how: 'adopted', code: outcome.code, cleanup_confirmed: outcome.cleanupConfirmed, at: now() };
  } else {
    const teardown = await tearDownChild(child, context.base);
    end = { how: 'torn_down', code: 'CANCELLED', cleanup_confirmed: teardown.confirmed, at: now() };
  }
  await onRun(out, planEnv, { type: 'orphan', input: { attempt: attempt.id, end } });
  return end;
}

/** One transition on the run in `out`, with nothing to report. */
async function onRun(out: string, planEnv: PlanEnv, command: Command): Promise<void> {
  const { store, record, runDir } = locateRun(out, planEnv);
  await commit(store, record.run, command, emptyReport(runDir, record.run));
}
