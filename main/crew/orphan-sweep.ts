import type { ChildRecord } from '../../formats/supervision/child-record.ts';
import type { LaneSpec } from '../../formats/crew/file.ts';
import type { RunRecord } from '../../formats/review/run-record.ts';
import type { SupervisionSpec } from '../../workers/supervise/spec.ts';
import type { SuperviseFn } from '../dispatch/dispatcher.ts';
import { join } from 'node:path';
import { forLane } from '../../formats/crew/file.ts';
import { adoptionSpec, childRuns, followsFile, orphanPlan, tearDownChild } from '../dispatch/orphans.ts';
import { withAttemptOutput } from '../plan/attempt-output.ts';
import { launchOf, launchSpec } from '../providers/launch.ts';
import { turnSpec } from './turn-spec.ts';
import { dispatcherAlive, locateRun, readBinding, settleOrphan, type PlanEnv } from '../plan/index.ts';
import type { Store } from '../store/store.ts';
import type { CrewActions } from './crew-actions.ts';

/** Settlements of a dead crew's orphans, under way or done, for the lanes to wait on. */
export interface OrphanSettlements {
  /** A run directory's reviewer attempts being settled, by attempt id. */
  review(runDir: string): ReadonlyMap<string, Promise<unknown>> | undefined;
  /** A lane's agent turn being settled. */
  agent(lane: string): Promise<unknown> | undefined;
}

/**
 * Adopts a live orphan (`adopt`: held in a slot of `run` to its recorded deadline; resolves
 * when it ended) or tears it down with proof. True when its tree is proven gone.
 */
export async function settleChild(child: ChildRecord, base: SupervisionSpec, supervise: SuperviseFn, adopt = orphanPlan(child) === 'adopt', cancel?: AbortSignal): Promise<boolean> {
  if (!adopt) return (await tearDownChild(child, base)).confirmed;
  const outcome = await supervise(adoptionSpec(base, child), cancel === undefined ? {} : { cancel });
  return outcome.cleanupConfirmed;
}

export interface SweepContext {
  readonly crew: string;
  readonly lanes: readonly LaneSpec[];
  readonly store: Store;
  readonly planEnv: PlanEnv;
  readonly actions: CrewActions;
  readonly supervise: SuperviseFn;
  /** The crew's concurrency limit: orphans past it are torn down, never adopted. */
  readonly limit: number;
  readonly cancel: AbortSignal;
}

/**
 * Before any lane of a crew starts: every child a crew that died left running (reviewers
 * of dispatched attempts, agents of dispatched turns), of every lane, not only of those
 * driven first, is settled. Those to tear down are torn down, proven gone, before this
 * resolves; those to adopt take slots of the crew's dispatcher now, ahead of any new
 * child, at most `limit` of them (the rest are torn down): live orphans and new children
 * together never exceed the limit. Each lane waits for its own settlements.
 */
export async function sweepOrphans(context: SweepContext): Promise<OrphanSettlements> {
  let slots = context.limit;
  // An orphan that writes its output to a file is always adopted: tearing it down would
  // send its prompt to the model a second time. One past the limit waits for a slot (the
  // adoption reads its whole stream then, or finds it ended and reads what it wrote).
  const wantsAdopt = (child: ChildRecord) => {
    const adopt = followsFile(child) || (orphanPlan(child) === 'adopt' && slots > 0);
    if (adopt) slots -= 1;
    return adopt;
  };
  const teardowns: Promise<unknown>[] = [];
  const reviews = new Map<string, Map<string, Promise<unknown>>>();
  const agents = new Map<string, Promise<unknown>>();
  // A settlement that failed (a store that cannot be written) is met again by the lane, which settles it itself.
  const keep = (settling: Promise<unknown>, adopt: boolean) => {
    const kept = settling.catch(() => undefined);
    if (!adopt) teardowns.push(kept);
    return kept;
  };
  for (const lane of context.lanes) {
    const progress = context.store.crewLanes.get([context.crew, lane.id]);
    if (progress === undefined) continue;
    const turn = progress.turnChild;
    if (progress.turnsDispatched > progress.turnsDone && turn !== undefined && turn !== null && childRuns(turn)) {
      const adopt = wantsAdopt(turn);
      const base = turnSpec(context.actions, lane, progress, progress.turnsDispatched).spec;
      agents.set(lane.id, keep(settleChild(turn, base, context.supervise, adopt, context.cancel), adopt));
    }
    // A lane whose run directory cannot be read fails in its own review stage, where its
    // plan run settles its orphans itself: it never stops the other lanes from starting.
    let record: RunRecord;
    let runDir: string;
    try {
      if (readBinding(progress.runDir) === undefined) continue;
      ({ record, runDir } = locateRun(progress.runDir, context.planEnv));
    } catch {
      continue;
    }
    for (const attempt of Object.values(record.attempts)) {
      const child = attempt.child;
      if (attempt.state !== 'open' || attempt.dispatched_at === undefined || attempt.orphan !== undefined || child === undefined || child === null) continue;
      if (dispatcherAlive(attempt) || !childRuns(child)) continue;
      const adopt = wantsAdopt(child);
      // The spec it was launched under: the adoption follows the output files it writes.
      const runner = forLane(attempt.voice === 'native' ? lane.runners.native : lane.runners.outside, lane.id);
      const launch = launchOf(runner, { role: 'reviewer', prompt: join(runDir, attempt.prompt), result: join(runDir, attempt.result) });
      const base = withAttemptOutput(launchSpec(context.actions.spec('reviewer', []), launch, {}), runDir, attempt.id);
      const settling = settleOrphan(progress.runDir, context.planEnv, attempt, { base, supervise: context.supervise, cancel: context.cancel, adopt });
      const byAttempt = reviews.get(progress.runDir) ?? new Map<string, Promise<unknown>>();
      byAttempt.set(attempt.id, keep(settling, adopt));
      reviews.set(progress.runDir, byAttempt);
    }
  }
  await Promise.all(teardowns);
  return { review: (runDir) => reviews.get(runDir), agent: (lane) => agents.get(lane) };
}
