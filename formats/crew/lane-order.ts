import { pathField } from './lane-check.ts';

/**
 * Lanes whose plans overlap, ordered: with a crew's `"overlap": "order"`, a lane whose
 * plan names a file an earlier lane's plan names too runs after that lane instead of
 * beside it, so two agents never work on one file at once. Read from the plans when the
 * crew loads, before anything runs; lanes that share no file keep the crew's concurrency.
 */
export interface LaneOrderEvent {
  readonly kind: 'lane_order';
  readonly lane: string;
  /** The earlier lanes (crew order) whose plans name any of {@link files}. */
  readonly after: readonly string[];
  /** The planned files it shares with them, sorted. */
  readonly files: readonly string[];
}

/** The crew's order: for each lane (by index), the other lanes it may not run beside, and a line for each lane that waits. */
export interface LaneOrder {
  /** `conflicts[i]`: the indices of every other lane whose plan shares a file with lane i's, ascending. */
  readonly conflicts: readonly (readonly number[])[];
  /** One per lane with an earlier overlapping lane, in crew order. */
  readonly events: readonly LaneOrderEvent[];
}

/** The order of `lanes` (crew order, each with its plan's files). O(files) with an index per file. */
export function laneOrder(lanes: readonly { readonly lane: string; readonly files: readonly string[] }[]): LaneOrder {
  const byFile = new Map<string, number[]>();
  lanes.forEach((lane, i) => {
    for (const file of new Set(lane.files)) {
      const holders = byFile.get(file) ?? [];
      holders.push(i);
      byFile.set(file, holders);
    }
  });
  const conflicts = lanes.map(() => new Set<number>());
  const shared = lanes.map(() => new Set<string>());
  const earlier = lanes.map(() => new Set<number>());
  for (const [file, holders] of byFile) {
    if (holders.length < 2) continue;
    for (const i of holders) {
      for (const j of holders) {
        if (i === j) continue;
        conflicts[i]!.add(j);
        if (j < i) {
          earlier[i]!.add(j);
          shared[i]!.add(file);
        }
      }
    }
  }
  const events: LaneOrderEvent[] = [];
  lanes.forEach((lane, i) => {
    if (earlier[i]!.size === 0) return;
    events.push({ kind: 'lane_order', lane: lane.lane, after: [...earlier[i]!].sort((a, b) => a - b).map((j) => lanes[j]!.lane), files: [...shared[i]!].sort() });
  });
  return { conflicts: conflicts.map((set) => [...set].sort((a, b) => a - b)), events };
}

/** `LANE_ORDER: lane=<id> after=<ids> files=<a,b>` */
export function laneOrderLine(e: LaneOrderEvent): string {
  return `LANE_ORDER: lane=${e.lane} after=${e.after.join(',')} files=${e.files.map(pathField).join(',')}`;
}
