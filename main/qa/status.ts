import type { Store } from '../store/store.ts';
import { checkLaneId } from './lane-id.ts';
import { report, type QaReport } from './report.ts';

/** `qa status`: the lane's state, read only (QA_NO_OBSERVER for an unknown lane). */
export function qaStatus(store: Store, lane: string): QaReport {
  checkLaneId(lane);
  const record = store.lanes.get(lane);
  if (record === undefined) return noLane(lane);
  return report(lane, null, [], record);
}

/** The report on a lane the state root does not hold (or a root that holds no store). */
export function noLane(lane: string): QaReport {
  checkLaneId(lane);
  return report(lane, 'QA_NO_OBSERVER', [], undefined, `no lane ${lane} in this state root`);
}
