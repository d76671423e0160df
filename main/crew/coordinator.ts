import type { LaneSpec } from '../../formats/crew/file.ts';
import { isOwnerWaiting, type LaneProgress } from '../../formats/crew/record.ts';
import { driveParked, type DriveHandle } from './owner-wait.ts';
import type { LaneCancels } from './lane-cancels.ts';
import type { SuperviseFn } from '../dispatch/dispatcher.ts';
import type { Store } from '../store/store.ts';
import type { CrewActions } from './crew-actions.ts';
import { driveLane } from './lane-driver.ts';
import type { OrphanSettlements } from './orphan-sweep.ts';
import type { QaPort, ReviewPort } from './ports.ts';
import type { LandPort, WorkspacePort } from './lane-context.ts';
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
  /** How long the crew waits for the owner's answers once only lanes parked at their gates are left (0: it ends then). */
  readonly ownerWaitMs?: number;
  /** `"overlap": "order"`: the lanes each lane may not run beside (formats/crew/lane-order.ts); absent: none. */
  readonly conflicts?: readonly (readonly number[])[];
}

export interface CrewDeps {
  readonly store: Store;
  readonly actions: CrewActions;
  readonly review: ReviewPort;
  readonly qa: QaPort;
  readonly supervise: SuperviseFn;
  readonly orphans?: OrphanSettlements;
  readonly workspace?: WorkspacePort;
  readonly land?: LandPort;
  readonly prices?: Prices;
  /** Operators' cancels and retries of single lanes, applied by the crew's control (crew-control-apply.ts). */
  readonly cancels?: LaneCancels;
}

export interface CrewTally {
  readonly lanes: number;
  readonly complete: number;
  readonly failed: number;
  readonly interrupted: number;
  /** Lanes parked at their gates for the owner's answer (not counted as interrupted). */
  readonly waiting: number;
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
  options: { cancel: AbortSignal; onChange: (progress: LaneProgress) => void; onLaneEnd: (progress: LaneProgress) => void; bind?: (handle: DriveHandle) => void },
): Promise<LaneProgress[]> {
  const ctx = {
    crew: plan.crew,
    out: plan.out,
    agentTurns: plan.agentTurns,
    retryFailed: plan.retryFailed,
    cancel: options.cancel,
    onChange: options.onChange,
    ...deps,
  };
  // A lane parked for its owner gives up its turn; the crew drives it on once its gate is answered (owner-wait.ts).
  const decided = deps.review.gateDecided === undefined ? () => false : (lane: LaneProgress) => deps.review.gateDecided!(lane.runDir);
  return driveParked(plan.lanes.length, { lanesAtOnce: plan.lanesAtOnce, ownerWaitMs: plan.ownerWaitMs ?? 0, cancel: options.cancel, ...(plan.conflicts === undefined ? {} : { conflicts: plan.conflicts }) }, {
    drive: (index) => driveLane(ctx, plan.lanes[index]!),
    parked: isOwnerWaiting,
    decided,
    ended: options.onLaneEnd,
    ...(options.bind === undefined ? {} : { bind: options.bind }),
  });
}

/** Every lane of the crew (`total`) is counted: one never started is unfinished, so interrupted. */
export function tally(lanes: readonly LaneProgress[], total: number): CrewTally {
  const of = (stage: string) => lanes.filter((l) => l.stage === stage).length;
  const waiting = lanes.filter(isOwnerWaiting).length;
  return { lanes: total, complete: of('complete'), failed: of('failed'), interrupted: total - of('complete') - of('failed') - waiting, waiting };
}
