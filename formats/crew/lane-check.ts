/**
 * The lane check: what each lane of a crew plans to change (its review run's tasks.jsonl
 * `files`) and has changed (its branch against the crew's base), against every other open
 * lane. Two lanes that name one file will conflict when the second one lands, or the
 * second one's agent works on a file the first one rewrites: said before any lands.
 */
export interface LaneFiles {
  readonly lane: string;
  /** Repository paths its plan names (tasks.jsonl `files`). */
  readonly planned: readonly string[];
  /** Repository paths its branch changed against the crew's base. */
  readonly changed: readonly string[];
}

export interface LaneCheckEvent {
  readonly kind: 'lane_check';
  readonly lane: string;
  readonly status: 'clear' | 'overlap';
  /** The lane's files that another open lane plans or changed too, sorted. */
  readonly files: readonly string[];
  /** The other lanes that name any of them, in crew order. */
  readonly with: readonly string[];
  readonly planned: number;
  readonly changed: number;
}

/**
 * Each lane's check against every other lane in `lanes` (the crew's open lanes, in crew
 * order). A file counts for a lane whether planned or changed: a plan that names a file
 * another lane already changed overlaps as surely as two changes do.
 */
export function laneChecks(lanes: readonly LaneFiles[]): LaneCheckEvent[] {
  const touched = lanes.map((l) => new Set([...l.planned, ...l.changed]));
  return lanes.map((lane, i) => {
    const files = new Set<string>();
    const others: string[] = [];
    lanes.forEach((other, j) => {
      if (j === i) return;
      let met = false;
      for (const file of touched[i]!) {
        if (!touched[j]!.has(file)) continue;
        files.add(file);
        met = true;
      }
      if (met) others.push(other.lane);
    });
    const sorted = [...files].sort();
    return { kind: 'lane_check', lane: lane.lane, status: sorted.length === 0 ? 'clear' : 'overlap', files: sorted, with: others, planned: new Set(lane.planned).size, changed: new Set(lane.changed).size };
  });
}

/** Paths go in one comma-separated field: a comma or whitespace in one is percent-escaped so the field still splits. */
export const pathField = (p: string) => p.replace(/[%,\s]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}`);

/** `LANE_CHECK: lane=<id> status=clear|overlap files=<a,b>|- with=<lanes>|- planned=<n> changed=<n>` */
export function laneCheckLine(e: LaneCheckEvent): string {
  const files = e.files.length === 0 ? '-' : e.files.map(pathField).join(',');
  const others = e.with.length === 0 ? '-' : e.with.join(',');
  return `LANE_CHECK: lane=${e.lane} status=${e.status} files=${files} with=${others} planned=${e.planned} changed=${e.changed}`;
}
