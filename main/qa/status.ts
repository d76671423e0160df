import type { Store } from '../store/store.ts';
import { checkLaneId } from './lane-id.ts';
import { report, type QaReport } from './report.ts';

/** `qa status`: the lane's state, read only (QA_NO_OBSERVER for an unknown lane). */
export function qaStatus(store: Store, lane: string): QaReport {
  checkLaneId(lane);
  const record = store.lanes.get(lane);
  if (record === undefined) return report(lane, 'QA_NO_OBSERVER', [], undefined, `no lane ${lane} in this state root`);
  return report(lane, null, [], record);
}
