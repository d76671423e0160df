import type { LaneProgress } from '../../formats/crew/record.ts';
import type { CrewSnapshot, LaneView, ProviderPause, SnapshotSource } from '../../formats/crew/snapshot.ts';
import type { DispatchStats } from '../dispatch/dispatcher.ts';

/** The live figures the dispatcher keeps. */
export type LiveStats = DispatchStats;

/** Upper bounds of the latency histogram's buckets, in ms; the last bucket is open. */
export const HISTOGRAM_BOUNDS_MS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 25, 50, 100] as const;

const RATE_WINDOW_MS = 2_000;

/**
 * The crew's state for its views: lanes by state from saved progress, attempts and
 * renewal latency from the dispatcher. Listeners hear of every change; the views decide
 * how often they redraw.
 */
export class CrewView implements SnapshotSource {
  private readonly lanes = new Map<string, LaneView>();
  private readonly listeners = new Set<() => void>();
  private readonly startedAt = performance.now();
  private readonly marks: { at: number; marks: number }[] = [];
  private summary: string | null = null;
  private done = false;

  constructor(
    private readonly crew: string,
    private readonly stats: () => LiveStats,
    laneIds: readonly string[],
    private readonly providers: () => readonly ProviderPause[] = () => [],
  ) {
    for (const id of laneIds) this.lanes.set(id, { id, state: 'queued', attempts: 0, code: null });
  }

  lane(progress: LaneProgress): void {
    this.lanes.set(progress.lane, {
      id: progress.lane,
      state: progress.stage,
      attempts: progress.attempts,
      code: progress.code,
      ...(progress.agentUsd === undefined ? {} : { agentUsd: progress.agentUsd }),
      ...(progress.branch == null ? {} : { branch: progress.branch }),
    });
    this.changed();
  }

  finish(summary: string): void {
    this.summary = summary;
    this.done = true;
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

  snapshot(): CrewSnapshot {
    const stats = this.stats();
    const now = performance.now();
    this.marks.push({ at: now, marks: stats.marks });
    while (this.marks.length > 2 && now - this.marks[0]!.at > RATE_WINDOW_MS) this.marks.shift();
    const first = this.marks[0]!;
    const span = (now - first.at) / 1000;
    const lanes = [...this.lanes.values()];
    const byState: Record<string, number> = {};
    for (const lane of lanes) byState[lane.state] = (byState[lane.state] ?? 0) + 1;
    return {
      crew: this.crew,
      elapsedS: (now - this.startedAt) / 1000,
      done: this.done,
      lanes,
      byState,
      attempts: { running: stats.running, queued: stats.queued, started: stats.started, finished: stats.finished },
      marksPerSecond: span > 0 ? (stats.marks - first.marks) / span : 0,
      renewalP99Ms: percentile(stats.renewalLatencyMs, 0.99),
      histogram: histogram(stats.renewalLatencyMs),
      providers: this.providers(),
      summary: this.summary,
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

/** The terminal's one-line view. */
export function viewLine(s: CrewSnapshot): string {
  const states = Object.entries(s.byState)
    .map(([state, n]) => `${state} ${n}`)
    .join(', ');
  const p99 = s.renewalP99Ms === null ? '-' : `${s.renewalP99Ms.toFixed(2)} ms`;
  const paused = s.providers.filter((p) => p.pausedUntil !== null).map((p) => `${p.provider} paused until ${p.pausedUntil}`);
  const held = paused.length === 0 ? '' : ` | rate limited: ${paused.join(', ')}`;
  return `${s.crew} ${s.elapsedS.toFixed(0)}s | lanes: ${states} | running ${s.attempts.running} queued ${s.attempts.queued} | ${s.marksPerSecond.toFixed(0)} marks/s | renewal p99 ${p99}${held}`;
}
