import type { LaneProgress } from '../../formats/crew/record.ts';
import type { LaneCheckEvent } from '../../formats/crew/lane-check.ts';
import type { LaneOrderEvent } from '../../formats/crew/lane-order.ts';
import type { LaneStory } from '../../formats/console/lane-story.ts';
import type { CallCode, CrewSnapshot, LaneView, ProviderPause, SnapshotSource } from '../../formats/console/snapshot.ts';
import { countByState, crewFigures, laneViewOf, queuedLane } from './lane-view.ts';
import type { DispatchStats } from '../dispatch/dispatcher.ts';
import type { SpendRecord } from '../../formats/review/run-record.ts';

/** The live figures the dispatcher keeps. */
export type LiveStats = DispatchStats;

/** Upper bounds of the latency histogram's buckets, in ms; the last bucket is open. */
export const HISTOGRAM_BOUNDS_MS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 25, 50, 100] as const;

const RATE_WINDOW_MS = 2_000;

/** What a live view knows of its crew beyond its lanes. */
export interface CrewViewOptions {
  /** When the crew run started (ISO); default: when the view was made. */
  readonly startedAt?: string;
  /** The crew-wide spend cap (limits.spend_cap_usd), if any. */
  readonly capUsd?: number | null;
  /** What a call of unknown cost counts against the cap (limits.reserve_usd). */
  readonly reserveUsd?: number;
  /** Seconds without a sign of life after which a running lane is stuck. */
  readonly stuckAfterS?: number;
  /** The command that runs failed lanes again. */
  readonly retryCommand?: string | null;
  /** The command that answers every lane waiting for its owner (`crew answer --all`). */
  readonly answerCommand?: string | null;
  /** The command that continues the crew's unfinished lanes, shown once it ended interrupted. */
  readonly resumeCommand?: string | null;
  /** A lane's review run ledger, read when its progress changes. */
  readonly review?: (progress: LaneProgress) => Pick<SpendRecord, 'spent' | 'unknown_n'> | null;
  /** Each lane's plan title, read once when the crew loaded (lanes without one are absent). */
  readonly titles?: ReadonlyMap<string, string>;
  /** A lane's whole story, for its page. */
  readonly laneStory?: (id: string) => LaneStory | undefined;
  /** A lane's supervised calls that ended with a code, read when its progress changes. */
  readonly callCodes?: (progress: LaneProgress) => readonly CallCode[];
}

/** A running lane quiet this long is shown as stuck, unless the crew says otherwise. */
export const DEFAULT_STUCK_AFTER_S = 120;
// A lane's sign of life is refreshed from marks at most this often: a stuck lane is minutes
// quiet, and every refresh is a change every viewer is sent.
const ACTIVITY_STEP_MS = 5_000;

/**
 * The crew's state for its views, kept by the crew process: lanes from saved progress,
 * attempts and renewal latency from the dispatcher, signs of life from admitted marks.
 * Listeners hear of every change; the views decide how often they redraw.
 */
export class CrewView implements SnapshotSource {
  private readonly lanes = new Map<string, LaneView>();
  private readonly progress = new Map<string, LaneProgress>();
  private readonly markAt = new Map<string, number>();
  private readonly checks = new Map<string, NonNullable<LaneView['check']>>();
  private readonly orders = new Map<string, NonNullable<LaneView['order']>>();
  private readonly listeners = new Set<() => void>();
  /** Lanes whose view is behind their saved progress (see {@link refresh}). */
  private readonly stale = new Set<string>();
  private readonly startedAt: string;
  /** Epoch ms the crew ended, once it has: a finished view stays as it was at its end. */
  private endedMs: number | null = null;
  private readonly marks: { at: number; marks: number }[] = [];
  private summary: string | null = null;
  private done = false;

  constructor(
    private readonly crew: string,
    private readonly stats: () => LiveStats,
    laneIds: readonly string[],
    private readonly providers: () => readonly ProviderPause[] = () => [],
    private readonly options: CrewViewOptions = {},
  ) {
    for (const id of laneIds) this.lanes.set(id, queuedLane(id, options.titles?.get(id)));
    this.startedAt = options.startedAt ?? new Date().toISOString();
  }

  /** A lane's saved progress changed. */
  update(progress: LaneProgress): void {
    this.progress.set(progress.lane, progress);
    this.refresh(progress);
    this.changed();
  }

  /** The crew's lane check for one lane: kept on its view from now on. */
  laneCheck(check: LaneCheckEvent): void {
    this.checks.set(check.lane, { status: check.status, files: check.files, with: check.with });
    const progress = this.progress.get(check.lane);
    const lane = this.lanes.get(check.lane);
    if (progress !== undefined) this.refresh(progress);
    else if (lane !== undefined) this.lanes.set(check.lane, { ...lane, check: this.checks.get(check.lane)! });
    this.changed();
  }

  /** The crew's lane order for one lane (`"overlap": "order"`): the earlier lanes it runs after, kept on its view. */
  laneOrder(order: LaneOrderEvent): void {
    this.orders.set(order.lane, { after: order.after, files: order.files });
    const progress = this.progress.get(order.lane);
    const lane = this.lanes.get(order.lane);
    if (progress !== undefined) this.refresh(progress);
    else if (lane !== undefined) this.lanes.set(order.lane, { ...lane, order: this.orders.get(order.lane)! });
    this.changed();
  }

  /** One of the lane's children had admitted progress now. */
  activity(lane: string): void {
    const progress = this.progress.get(lane);
    if (progress === undefined) return;
    const now = Date.now();
    if (now - (this.markAt.get(lane) ?? 0) < ACTIVITY_STEP_MS) return;
    this.markAt.set(lane, now);
    this.refresh(progress);
    this.changed();
  }

  /**
   * A lane's view is made again only when one is read (a snapshot): a lane saves its
   * progress several times a call, and its view reads its journals (its call codes, its
   * spend), which a crew nobody watches, or a page that redraws four times a second, must
   * not pay on every save.
   */
  private refresh(progress: LaneProgress): void {
    this.stale.add(progress.lane);
  }

  /** The views of the lanes that changed since the last read, made now. */
  private settle(): void {
    for (const id of this.stale) {
      const progress = this.progress.get(id);
      if (progress !== undefined) this.remake(progress);
    }
    this.stale.clear();
  }

  private remake(progress: LaneProgress): void {
    const mark = this.markAt.get(progress.lane);
    const check = this.checks.get(progress.lane);
    const order = this.orders.get(progress.lane);
    const view = laneViewOf(progress, this.options.review?.(progress) ?? null, mark === undefined ? undefined : new Date(mark).toISOString(), this.options.callCodes?.(progress) ?? [], this.options.titles?.get(progress.lane));
    this.lanes.set(progress.lane, { ...view, ...(check === undefined ? {} : { check }), ...(order === undefined ? {} : { order }) });
  }

  finish(summary: string): void {
    this.summary = summary;
    this.done = true;
    this.endedMs = Date.now();
    this.changed();
  }

  /** Called on a timer by whoever shows the view, so rates move while no lane changes. */
  changed(): void {
    for (const listener of this.listeners) listener();
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  laneStory(id: string): LaneStory | undefined {
    const found = this.lanes.has(id) ? this.options.laneStory?.(id) : undefined;
    const title = this.options.titles?.get(id);
    const story = found === undefined || title === undefined ? found : { ...found, title };
    const running = story?.running ?? null;
    const mark = this.markAt.get(id);
    if (story === undefined || running === null || mark === undefined) return story;
    // The last admitted mark this crew saw moves the lease's end: it was renewed then.
    const markAt = new Date(Math.max(mark, Date.parse(running.since))).toISOString();
    const lease = running.leaseDeadlineAt == null ? null : new Date(Date.parse(running.leaseDeadlineAt) - Date.parse(running.since) + Date.parse(markAt)).toISOString();
    return { ...story, running: { ...running, lastMarkAt: markAt, leaseDeadlineAt: lease } };
  }

  snapshot(): CrewSnapshot {
    const stats = this.stats();
    const now = performance.now();
    const nowMs = this.endedMs ?? Date.now();
    this.marks.push({ at: now, marks: stats.marks });
    while (this.marks.length > 2 && now - this.marks[0]!.at > RATE_WINDOW_MS) this.marks.shift();
    const first = this.marks[0]!;
    const span = (now - first.at) / 1000;
    this.settle();
    const lanes = [...this.lanes.values()];
    // Ended with a lane neither complete nor failed (interrupted, or never started): interrupted.
    const unfinished = lanes.some((lane) => lane.state !== 'complete' && lane.state !== 'failed');
    return {
      crew: this.crew,
      now: new Date(nowMs).toISOString(),
      startedAt: this.startedAt,
      elapsedS: Math.max(0, (nowMs - Date.parse(this.startedAt)) / 1000),
      done: this.done,
      run: !this.done ? 'running' : unfinished ? 'interrupted' : 'done',
      source: 'live',
      byState: countByState(lanes),
      ...crewFigures(lanes, { startedAt: this.startedAt, nowMs, capUsd: this.options.capUsd ?? null, reserveUsd: this.options.reserveUsd, ...(this.done ? {} : { stuckAfterS: this.options.stuckAfterS ?? DEFAULT_STUCK_AFTER_S }) }),
      stuckAfterS: this.options.stuckAfterS ?? DEFAULT_STUCK_AFTER_S,
      attempts: { running: stats.running, queued: stats.queued, started: stats.started, finished: stats.finished },
      marksPerSecond: span > 0 ? (stats.marks - first.marks) / span : 0,
      renewalP99Ms: percentile(stats.renewalLatencyMs, 0.99),
      histogram: histogram(stats.renewalLatencyMs),
      providers: this.providers(),
      summary: this.summary,
      retryCommand: this.options.retryCommand ?? null,
      resumeCommand: this.options.resumeCommand ?? null,
      ...(this.options.answerCommand == null ? {} : { answerCommand: this.options.answerCommand }),
      lanes,
    };
  }
}

export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

function histogram(values: readonly number[]): CrewSnapshot['histogram'] {
  const counts = new Array<number>(HISTOGRAM_BOUNDS_MS.length + 1).fill(0);
  for (const value of values) {
    const at = HISTOGRAM_BOUNDS_MS.findIndex((bound) => value <= bound);
    counts[at === -1 ? HISTOGRAM_BOUNDS_MS.length : at]! += 1;
  }
  return { boundsMs: HISTOGRAM_BOUNDS_MS, counts };
}
