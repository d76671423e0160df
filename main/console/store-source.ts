import type { LaneStory } from '../../formats/console/lane-story.ts';
import type { CrewSnapshot, SnapshotSource } from '../../formats/console/snapshot.ts';
import type { CrewRunRecord } from '../../formats/crew/record.ts';
import { holderAlive } from '../process/process-alive.ts';
import { readCrewRun, type Store } from '../store/store.ts';
import { countByState, crewFigures, laneViewOf, queuedLane } from './lane-view.ts';
import { reviewLedger } from './review-spend.ts';
import { DEFAULT_STUCK_AFTER_S, HISTOGRAM_BOUNDS_MS } from './view-state.ts';

/** Whether the crew runs now (in some process), ended, or stopped without an end (killed, or never run). */
export type CrewRunState = 'running' | 'done' | 'stopped';

/**
 * A crew read from its state root by a process that does not run it: finished, failed,
 * killed or still running elsewhere. It reads only (a read-only store serves it) and makes
 * each lane the way the live view does, so a finished crew's page is the page its run
 * showed at its end. Subscribers are told to look again every `pollMs`.
 */
export class StoreSource implements SnapshotSource {
  private readonly spend: ReturnType<typeof reviewLedger>;

  constructor(
    private readonly store: Store,
    private readonly crew: { readonly name: string; readonly laneIds: readonly string[]; readonly retryCommand: string; readonly capUsd: number | null; readonly reserveUsd?: number },
    private readonly options: { readonly stuckAfterS?: number; readonly pollMs?: number; readonly laneStory?: (id: string) => LaneStory | undefined } = {},
  ) {
    this.spend = reviewLedger(store);
  }

  /** Running (its driver lives), done (its run recorded an end) or stopped. */
  runState(): CrewRunState {
    const driver = this.store.crewDrivers.get(this.crew.name);
    if (driver !== undefined && holderAlive(driver)) return 'running';
    return readCrewRun(this.store, this.crew.name)?.endedAt != null ? 'done' : 'stopped';
  }

  snapshot(): CrewSnapshot {
    const run: CrewRunRecord | undefined = readCrewRun(this.store, this.crew.name);
    const lanes = this.crew.laneIds.map((id) => {
      const progress = this.store.crewLanes.get([this.crew.name, id]);
      return progress === undefined ? queuedLane(id) : laneViewOf(progress, this.spend(progress));
    });
    const done = run?.endedAt != null;
    // A finished crew is shown as of its end: what its own view showed last.
    const nowMs = done ? Date.parse(run.endedAt!) : Date.now();
    const startedAt = run?.startedAt ?? null;
    const final = done ? run.final : null;
    return {
      crew: this.crew.name,
      now: new Date(nowMs).toISOString(),
      startedAt,
      elapsedS: startedAt === null ? 0 : Math.max(0, (nowMs - Date.parse(startedAt)) / 1000),
      done,
      source: 'store',
      byState: countByState(lanes),
      ...crewFigures(lanes, { startedAt, nowMs, capUsd: run === undefined ? this.crew.capUsd : (run.capUsd ?? null), reserveUsd: run?.reserveUsd ?? this.crew.reserveUsd }),
      stuckAfterS: this.options.stuckAfterS ?? run?.stuckAfterS ?? DEFAULT_STUCK_AFTER_S,
      attempts: final?.attempts ?? { running: 0, queued: 0, started: 0, finished: 0 },
      marksPerSecond: 0,
      renewalP99Ms: final?.renewalP99Ms ?? null,
      histogram: final?.histogram ?? { boundsMs: HISTOGRAM_BOUNDS_MS, counts: new Array<number>(HISTOGRAM_BOUNDS_MS.length + 1).fill(0) },
      providers: final?.providers ?? [],
      summary: run?.summary ?? null,
      retryCommand: run?.retryCommand ?? this.crew.retryCommand,
      lanes,
    };
  }

  subscribe(listener: () => void): () => void {
    const timer = setInterval(listener, this.options.pollMs ?? 1_000);
    timer.unref();
    return () => clearInterval(timer);
  }

  laneStory(id: string): LaneStory | undefined {
    return this.crew.laneIds.includes(id) ? this.options.laneStory?.(id) : undefined;
  }
}
