import type { LaneStory } from '../../formats/console/lane-story.ts';
import type { CrewRunState, CrewSnapshot, SnapshotSource } from '../../formats/console/snapshot.ts';
import { isTerminalStage, type CrewRunRecord, type LaneProgress } from '../../formats/crew/record.ts';
import { holderAlive } from '../process/process-alive.ts';
import { readCrewRun, type Store } from '../store/store.ts';
import { countByState, crewFigures, laneViewOf, queuedLane } from './lane-view.ts';
import { reviewLedger } from './review-spend.ts';
import { cachedCallCodes } from './call-codes.ts';
import { DEFAULT_STUCK_AFTER_S, HISTOGRAM_BOUNDS_MS } from './view-state.ts';
import { readLandRecord } from '../land/land-record.ts';

export type { CrewRunState };

/** When a crew whose process is gone last changed: its lanes' last save, else its start. */
function lastChangeMs(startedAt: string | null, progress: readonly (LaneProgress | undefined)[]): number {
  let last = startedAt === null ? Number.NaN : Date.parse(startedAt);
  for (const p of progress) {
    const at = p === undefined ? Number.NaN : Date.parse(p.updatedAt);
    if (Number.isFinite(at) && !(at <= last)) last = at;
  }
  return Number.isFinite(last) ? last : Date.now();
}

/**
 * A crew read from its state root by a process that does not run it: finished, failed,
 * killed or still running elsewhere. It reads only (a read-only store serves it) and makes
 * each lane the way the live view does, so a finished crew's page is the page its run
 * showed at its end. Subscribers are told to look again every `pollMs`.
 */
export class StoreSource implements SnapshotSource {
  private readonly spend: ReturnType<typeof reviewLedger>;
  private readonly calls: ReturnType<typeof cachedCallCodes>;

  constructor(
    private readonly store: Store,
    private readonly crew: { readonly name: string; readonly laneIds: readonly string[]; readonly retryCommand: string; readonly resumeCommand: string; readonly capUsd: number | null; readonly reserveUsd?: number; readonly answerCommand?: string; readonly titles?: ReadonlyMap<string, string> },
    private readonly options: { readonly stuckAfterS?: number; readonly pollMs?: number; readonly laneStory?: (id: string) => LaneStory | undefined } = {},
  ) {
    this.spend = reviewLedger(store);
    this.calls = cachedCallCodes(store);
  }

  /** How the crew run stands: its driver lives, it recorded an end (with every lane ended, or not), or neither. */
  runState(): CrewRunState {
    return this.read().state;
  }

  snapshot(): CrewSnapshot {
    const { state, run, progress } = this.read();
    const lanes = this.crew.laneIds.map((id, i) => {
      const saved = progress[i];
      const title = this.crew.titles?.get(id);
      if (saved === undefined) return queuedLane(id, title);
      const view = laneViewOf(saved, this.spend(saved), undefined, this.calls(saved), title);
      // The merge train writes beside the lane's run, never in the store: read for complete lanes only.
      const land = saved.stage === 'complete' ? readLandRecord(saved.runDir) : undefined;
      return land === undefined ? view : { ...view, land };
    });
    const done = state === 'done' || state === 'interrupted';
    const startedAt = run?.startedAt ?? null;
    // A crew runs in no process once it ended or its process is gone: its clock stops where
    // it stopped (its end, else the last change any lane saved), so neither its elapsed time
    // nor its lanes' quiet grows, and no lane is called stuck.
    const nowMs = state === 'running' ? Date.now() : done ? Date.parse(run!.endedAt!) : lastChangeMs(startedAt, progress);
    const final = done ? run!.final : null;
    const figures = crewFigures(lanes, { startedAt, nowMs, capUsd: run === undefined ? this.crew.capUsd : (run.capUsd ?? null), reserveUsd: run?.reserveUsd ?? this.crew.reserveUsd, ...(state === 'running' ? { stuckAfterS: this.options.stuckAfterS ?? run?.stuckAfterS ?? DEFAULT_STUCK_AFTER_S } : {}) });
    return {
      crew: this.crew.name,
      now: new Date(nowMs).toISOString(),
      startedAt,
      elapsedS: startedAt === null ? 0 : Math.max(0, (nowMs - Date.parse(startedAt)) / 1000),
      done,
      run: state,
      source: 'store',
      byState: countByState(lanes),
      ...figures,
      // Nothing runs: no lane ends at any rate until the crew is started again.
      etaS: state === 'running' || figures.etaS === 0 ? figures.etaS : null,
      stuckAfterS: this.options.stuckAfterS ?? run?.stuckAfterS ?? DEFAULT_STUCK_AFTER_S,
      attempts: final?.attempts ?? { running: 0, queued: 0, started: 0, finished: 0 },
      marksPerSecond: 0,
      renewalP99Ms: final?.renewalP99Ms ?? null,
      histogram: final?.histogram ?? { boundsMs: HISTOGRAM_BOUNDS_MS, counts: new Array<number>(HISTOGRAM_BOUNDS_MS.length + 1).fill(0) },
      providers: final?.providers ?? [],
      summary: run?.summary ?? null,
      retryCommand: run?.retryCommand ?? this.crew.retryCommand,
      // A crew never run has nothing to continue (crew run starts it, as for any crew).
      resumeCommand: run === undefined ? null : this.crew.resumeCommand,
      ...(this.crew.answerCommand === undefined ? {} : { answerCommand: this.crew.answerCommand }),
      lanes,
    };
  }

  /**
   * The crew's run record, its lanes' progress and how it stands, read together: running
   * while its driver (pid and start tick) lives; else done or interrupted when its run
   * recorded an end (interrupted: a lane neither complete nor failed, a queued one too);
   * else stopped (its process was killed, or it never ran).
   */
  private read(): { state: CrewRunState; run: CrewRunRecord | undefined; progress: (LaneProgress | undefined)[] } {
    const driver = this.store.crewDrivers.get(this.crew.name);
    const run = readCrewRun(this.store, this.crew.name);
    const progress = this.crew.laneIds.map((id) => this.store.crewLanes.get([this.crew.name, id]));
    if (driver !== undefined && holderAlive(driver)) return { state: 'running', run, progress };
    if (run?.endedAt == null) return { state: 'stopped', run, progress };
    const unfinished = progress.some((p) => p === undefined || !isTerminalStage(p.stage) || p.stage === 'interrupted');
    return { state: unfinished ? 'interrupted' : 'done', run, progress };
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
