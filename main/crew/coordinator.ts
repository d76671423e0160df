import type { LaneSpec } from '../../formats/crew/file.ts';
import type { LaneProgress } from '../../formats/crew/record.ts';
import type { SuperviseFn } from '../dispatch/dispatcher.ts';
import type { Store } from '../store/store.ts';
import type { CrewActions } from './crew-actions.ts';
import { driveLane } from './lane-driver.ts';
import type { OrphanSettlements } from './orphan-sweep.ts';
import type { QaPort, ReviewPort } from './ports.ts';
import type { WorkspacePort } from './lane-context.ts';
import type { Prices } from '../providers/cost.ts';

export interface CrewPlan {
  readonly crew: string;
  readonly out: string;
  readonly lanes: readonly LaneSpec[];
  /** Lanes in flight at once; the others wait their turn in file order. */
  readonly lanesAtOnce: number;
  readonly agentTurns: number;
  /** Failed lanes run again, as new attempts. */
  readonly retryFailed: boolean;
}

export interface CrewDeps {
  readonly store: Store;
  readonly actions: CrewActions;
  readonly review: ReviewPort;
  readonly qa: QaPort;
  readonly supervise: SuperviseFn;
  readonly orphans?: OrphanSettlements;
  readonly workspace?: WorkspacePort;
  readonly prices?: Prices;
}

export interface CrewTally {
  readonly lanes: number;
  readonly complete: number;
  readonly failed: number;
  readonly interrupted: number;
}

/**
 * Runs every lane of a crew, at most `lanesAtOnce` at a time (their children are bounded
 * separately, by the dispatcher's limit). A lane's end never stops the others; a cancel
 * stops every lane in flight where it is, saved, so the crew can be started again, and
 * starts no other: a lane still waiting its turn gets no run directory, no record and no
 * line. Returns the lanes driven, in file order.
 */
export async function runLanes(
  plan: CrewPlan,
  deps: CrewDeps,
  options: { cancel: AbortSignal; onChange: (progress: LaneProgress) => void; onLaneEnd: (progress: LaneProgress) => void },
): Promise<LaneProgress[]> {
  const results: LaneProgress[] = new Array(plan.lanes.length);
  let next = 0;
  const ctx = {
    crew: plan.crew,
    out: plan.out,
    agentTurns: plan.agentTurns,
    retryFailed: plan.retryFailed,
    cancel: options.cancel,
    onChange: options.onChange,
    ...deps,
  };
  const worker = async () => {
    // A cancel (a signal, the --deadline) ends the queue: the lanes left were never started.
    while (next < plan.lanes.length && !options.cancel.aborted) {
      const index = next++;
      const progress = await driveLane(ctx, plan.lanes[index]!);
      results[index] = progress;
      options.onLaneEnd(progress);
    }
  };
  await Promise.all(Array.from({ length: Math.min(plan.lanesAtOnce, plan.lanes.length) }, worker));
  return results.filter((lane) => lane !== undefined);
}

/** Every lane of the crew (`total`) is counted: one never started is unfinished, so interrupted. */
export function tally(lanes: readonly LaneProgress[], total: number): CrewTally {
  const of = (stage: string) => lanes.filter((l) => l.stage === stage).length;
  return { lanes: total, complete: of('complete'), failed: of('failed'), interrupted: total - of('complete') - of('failed') };
}
