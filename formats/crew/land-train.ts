import type { ResultCode } from '../codes/codes.ts';

/**
 * The merge train's outcomes as facts (main/land/* makes them, main/cli/crew-land.ts
 * prints them): one per lane of the crew, in the order the train took them.
 */
export type LandStatus = 'landed' | 'conflict' | 'refused' | 'check_failed';

export interface LaneLanded {
  readonly lane: string;
  readonly status: LandStatus;
  /** The lane's branch tip before the train touched it; null when it has none. */
  readonly from: string | null;
  /** Where the lane's work now is on the base (landed only). */
  readonly to: string | null;
  /** Why a lane did not land: one of the codes' table. */
  readonly code: ResultCode | null;
  /** True when an earlier train (one killed, say) had already landed it: nothing moved now. */
  readonly already: boolean;
  readonly branch: string | null;
}

/** What the receipt's carry did, for the `CARRY:` line. */
export type CarryEvent =
  | { readonly kind: 'carry'; readonly lane: string; readonly status: 'carried'; readonly from: string; readonly to: string; readonly reason: string }
  | { readonly kind: 'carry'; readonly lane: string; readonly status: 'current'; readonly head: string }
  | { readonly kind: 'carry'; readonly lane: string; readonly status: 'refused'; readonly code: ResultCode };

export interface LandSummary {
  readonly lanes: number;
  readonly landed: number;
  readonly conflict: number;
  readonly refused: number;
  readonly check_failed: number;
  readonly base: string;
}

const short = (sha: string | null) => (sha === null ? '-' : sha.slice(0, 12));

/** `LAND: lane=<id> status=<s> from=<12>|- to=<12>|- [code=<CODE>]` */
export function landLine(l: LaneLanded): string {
  return `LAND: lane=${l.lane} status=${l.status} from=${short(l.from)} to=${short(l.to)}${l.code === null ? '' : ` code=${l.code}`}`;
}

/** The contract's `CARRY:` line: `carried from <old> to <new> (<reason>)`, `current`, or `refused (<CODE>)`. */
export function carryLine(c: CarryEvent): string {
  if (c.status === 'carried') return `CARRY: carried from ${short(c.from)} to ${short(c.to)} (${c.reason})`;
  if (c.status === 'current') return 'CARRY: current';
  return `CARRY: refused (${c.code})`;
}

/** `LAND_SUMMARY: lanes=<n> landed=<n> conflict=<n> refused=<n> check_failed=<n> base=<12>` */
export function landSummaryLine(s: LandSummary): string {
  return `LAND_SUMMARY: lanes=${s.lanes} landed=${s.landed} conflict=${s.conflict} refused=${s.refused} check_failed=${s.check_failed} base=${short(s.base)}`;
}

export function landSummary(lanes: readonly LaneLanded[], base: string): LandSummary {
  const n = (status: LandStatus) => lanes.filter((l) => l.status === status).length;
  return { lanes: lanes.length, landed: n('landed'), conflict: n('conflict'), refused: n('refused'), check_failed: n('check_failed'), base };
}

/**
 * The code the train's exit status is read from: a lane that failed to land (a conflict,
 * a check, a rejected push) outranks one refused before anything ran; null when every
 * lane landed.
 */
export function trainCode(lanes: readonly LaneLanded[]): ResultCode | null {
  const failed = lanes.find((l) => l.status === 'conflict' || l.status === 'check_failed' || l.code === 'LAND_LEASE_REJECTED');
  return failed?.code ?? lanes.find((l) => l.status !== 'landed')?.code ?? null;
}

/** What a lane's exported tasks say of its dependencies: its task ids and pr labels, and what its tasks depend on. */
export interface LaneTasks {
  readonly lane: string;
  readonly ids: readonly string[];
  readonly prs: readonly string[];
  readonly dependsOn: readonly string[];
}

/**
 * The order the train takes the lanes in: a lane after every lane it depends on, and
 * otherwise in crew file order. A lane depends on another when one of its tasks'
 * `depends_on` names the other lane's id, one of its task ids or a `pr` label its tasks
 * carry (a name its own tasks carry is its own business). A cycle cannot be honoured:
 * its lanes keep file order. Also returns each lane's dependencies, for the refusal of a
 * lane whose dependency did not land.
 */
export function landOrder(lanes: readonly LaneTasks[]): { readonly order: string[]; readonly deps: ReadonlyMap<string, readonly string[]> } {
  const owner = new Map<string, string>();
  for (const l of lanes) {
    owner.set(l.lane, l.lane);
    for (const name of [...l.ids, ...l.prs]) if (!owner.has(name)) owner.set(name, l.lane);
  }
  const deps = new Map<string, string[]>();
  for (const l of lanes) {
    const own = new Set([...l.ids, ...l.prs]);
    const on = new Set<string>();
    for (const name of l.dependsOn) {
      const other = owner.get(name);
      if (other !== undefined && other !== l.lane && !own.has(name)) on.add(other);
    }
    deps.set(l.lane, [...on]);
  }
  const order: string[] = [];
  const placed = new Set<string>();
  // Repeatedly take the first lane in file order whose dependencies are all placed.
  while (order.length < lanes.length) {
    const next = lanes.find((l) => !placed.has(l.lane) && deps.get(l.lane)!.every((d) => placed.has(d))) ?? lanes.find((l) => !placed.has(l.lane))!;
    order.push(next.lane);
    placed.add(next.lane);
  }
  return { order, deps };
}
