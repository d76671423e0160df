import type { LaneProgress } from '../../formats/crew/record.ts';

/** How often the gates of lanes parked for their owner are looked at: an answer from another shell is taken within this. */
export const OWNER_POLL_MS = 250;
/**
 * What each parked lane adds to the interval: each look reads the lane's run from the store,
 * so 2,000 parked lanes are looked at every 4 s, not 8,000 reads a second.
 */
export const OWNER_POLL_PER_LANE_MS = 2;

/** The interval between two looks at `parked` lanes' gates. */
export function ownerPollMs(parked: number): number {
  return Math.max(OWNER_POLL_MS, parked * OWNER_POLL_PER_LANE_MS);
}

export interface DriveLimits {
  readonly lanesAtOnce: number;
  /** How long to wait for answers once only parked lanes are left; 0: end then. */
  readonly ownerWaitMs: number;
  readonly cancel: AbortSignal;
  /**
   * `conflicts[i]`: the lanes lane i may not run beside (their plans share a file:
   * formats/crew/lane-order.ts). Absent: every lane may run beside every other.
   */
  readonly conflicts?: readonly (readonly number[])[];
}

export interface DriveSteps {
  /** Drives lane `index` from where its saved progress says it is, to its end or its gate. */
  drive(index: number): Promise<LaneProgress>;
  /** Whether a lane that came back is parked at its gate for its owner. */
  parked(progress: LaneProgress): boolean;
  /** Whether a parked lane's gate was answered (it is driven on then). */
  decided(progress: LaneProgress): boolean;
  /** A lane's end, once per drive: a parked lane's when the crew stops waiting for it. */
  ended(progress: LaneProgress): void;
  /** Hands the crew's control (crew retry|cancel) its hold on the lanes, once, before any lane starts. */
  bind?(handle: DriveHandle): void;
}

/** Where lane `index` is in this crew's drive. */
export type LanePlace = 'waiting' | 'running' | 'parked' | 'ended';

/** What an operator's request may do to the lanes of a drive under way. */
export interface DriveHandle {
  place(index: number): LanePlace;
  /**
   * Drives a lane that is parked or ended again, ahead of lanes not yet started (a retry,
   * a cancel of a lane waiting for its owner); false for one waiting its turn or running,
   * or once the drive is over.
   */
  again(index: number): boolean;
}

/**
 * Runs lanes `0..count-1`, at most `lanesAtOnce` at a time, in order. A lane that comes
 * back parked for its owner gives up its turn: its gate is looked at every
 * {@link ownerPollMs}, and once answered (by `crew answer` from any shell, through the
 * store) the lane is driven on, ahead of lanes not yet started. The crew ends when no lane
 * runs and none is left to start, after waiting `ownerWaitMs` for the parked ones, or at
 * a cancel: lanes in flight stop themselves, no other starts, and parked lanes stay
 * parked (a crew started again continues each one its owner answered). Returns the lanes
 * driven, in file order.
 *
 * With `conflicts`, a lane starts only while none it conflicts with is in flight and every
 * earlier one it conflicts with has been started: overlapping lanes run one after another
 * in file order, and a later lane without conflicts is started past one that waits. A
 * lane parked at its gate holds nothing (its agent has not run), so a later overlapping
 * lane may run meanwhile; once answered, it waits for that one to end.
 */
export async function driveParked(count: number, limits: DriveLimits, steps: DriveSteps): Promise<LaneProgress[]> {
  const results: (LaneProgress | undefined)[] = new Array(count);
  const parked = new Set<number>();
  const answered: number[] = [];
  const conflicts = limits.conflicts;
  const started = new Array<boolean>(count).fill(false);
  // Per lane, kept as lanes start and end so a look is O(1) (2,000 lanes naming one file
  // would otherwise make each look O(lanes²)): conflicting lanes in flight, and earlier
  // conflicting lanes never started.
  const near = new Array<number>(count).fill(0);
  const earlier = (conflicts ?? []).map((others, i) => others.filter((j) => j < i).length);
  // The lowest index never started: every lane before it has been.
  let next = 0;
  let unstarted = count;
  let inFlight = 0;
  let idleSince: number | null = null;
  let lastLook = performance.now();
  let wake: () => void = () => undefined;
  const onCancel = () => wake();
  limits.cancel.addEventListener('abort', onCancel, { once: true });
  const running = new Set<number>();
  let over = false;
  steps.bind?.({
    place: (index) => (running.has(index) ? 'running' : parked.has(index) ? 'parked' : results[index] !== undefined ? 'ended' : 'waiting'),
    again(index) {
      if (over || limits.cancel.aborted || running.has(index) || answered.includes(index) || results[index] === undefined) return false;
      parked.delete(index);
      answered.unshift(index);
      wake();
      return true;
    },
  });
  /** Whether lane `index` may start now (see above); always, without conflicts. */
  const free = (index: number) => conflicts === undefined || (near[index] === 0 && (earlier[index] ?? 0) === 0);
  /** The lane to start next: an answered one first, then the first never started, each only when free. */
  const pick = (): number | undefined => {
    const ready = answered.findIndex(free);
    if (ready >= 0) return answered.splice(ready, 1)[0];
    while (next < count && started[next]) next += 1;
    // Hint: without conflicts the first never-started lane is free at once; only an ordered crew scans past it.
    for (let i = next; i < count; i++) if (!started[i] && free(i)) return i;
    return undefined;
  };
  const start = (index: number) => {
    inFlight += 1;
    running.add(index);
    const first = !started[index];
    if (first) {
      started[index] = true;
      unstarted -= 1;
    }
    for (const j of conflicts?.[index] ?? []) {
      near[j]! += 1;
      if (first && j > index) earlier[j]! -= 1;
    }
    void steps
      .drive(index)
      .then((progress) => {
        results[index] = progress;
        if (steps.parked(progress) && !limits.cancel.aborted) parked.add(index);
        else steps.ended(progress);
      })
      .finally(() => {
        inFlight -= 1;
        running.delete(index);
        for (const j of conflicts?.[index] ?? []) near[j]! -= 1;
        wake();
      });
  };
  /** Each parked lane whose gate was answered goes back in line, ahead of lanes not yet started. */
  const look = () => {
    lastLook = performance.now();
    for (const index of [...parked]) {
      if (limits.cancel.aborted || !steps.decided(results[index]!)) continue;
      parked.delete(index);
      answered.push(index);
    }
  };
  try {
    for (;;) {
      while (inFlight < limits.lanesAtOnce && !limits.cancel.aborted) {
        const index = pick();
        if (index === undefined) break;
        start(index);
      }
      const idle = inFlight === 0 && answered.length === 0 && (unstarted === 0 || limits.cancel.aborted);
      if (idle && (parked.size === 0 || limits.cancel.aborted)) break;
      if (idle) {
        // Before the crew ends (or waits on), a last look: an answer given while the other lanes ran is taken now.
        look();
        if (answered.length > 0) continue;
        idleSince ??= performance.now();
        if (performance.now() - idleSince >= limits.ownerWaitMs) break;
      } else idleSince = null;
      await new Promise<void>((resolve) => {
        const timer = parked.size > 0 ? setTimeout(resolve, Math.max(0, lastLook + ownerPollMs(parked.size) - performance.now())) : undefined;
        wake = () => {
          if (timer !== undefined) clearTimeout(timer);
          resolve();
        };
      });
      wake = () => undefined;
      // Woken by a lane's end as often as by the timer: the gates are looked at only once the interval passed.
      if (parked.size === 0 || performance.now() - lastLook < ownerPollMs(parked.size)) continue;
      look();
    }
  } finally {
    over = true;
    limits.cancel.removeEventListener('abort', onCancel);
  }
  // Lanes still parked end here, once: their lines say they wait, and how to answer them.
  for (const index of [...parked].sort((a, b) => a - b)) steps.ended(results[index]!);
  return results.filter((lane): lane is LaneProgress => lane !== undefined);
}
