import type { CrewSnapshot, LaneView, SnapshotSource } from '../../formats/console/snapshot.ts';

/** A snapshot source the test sets by hand; `set` notifies like a running crew would. */
export class FakeSource implements SnapshotSource {
  current: CrewSnapshot;
  reads = 0;
  private readonly listeners = new Set<() => void>();

  constructor(initial: CrewSnapshot) {
    this.current = initial;
  }

  snapshot(): CrewSnapshot {
    this.reads += 1;
    return this.current;
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get subscribers(): number {
    return this.listeners.size;
  }

  set(next: CrewSnapshot): void {
    this.current = next;
    for (const listener of this.listeners) listener();
  }
}

/** A crew snapshot whose by-state counts are derived from the lanes given. */
export function crewSnapshot(lanes: readonly LaneView[], extra: Partial<CrewSnapshot> = {}): CrewSnapshot {
  const byState: Record<string, number> = {};
  for (const lane of lanes) byState[lane.state] = (byState[lane.state] ?? 0) + 1;
  return {
    crew: 'demo',
    now: '2026-12-01T12:00:00.000Z',
    startedAt: '2026-12-01T11:59:58.500Z',
    source: 'live',
    lanesPerMinute: null,
    etaS: null,
    spend: { usd: 0, capUsd: null },
    stuckAfterS: 120,
    retryCommand: null,
    resumeCommand: null,
    elapsedS: 1.5,
    done: false,
    run: 'running',
    providers: [],
    lanes,
    byState,
    attempts: { running: 2, queued: 1, started: 3, finished: 1 },
    marksPerSecond: 12.5,
    renewalP99Ms: 0.75,
    histogram: { boundsMs: [0.25, 0.5, 1, 2], counts: [5, 9, 3, 1, 0] },
    summary: null,
    ...extra,
  };
}

/** `n` lanes named lane-000.. in `state`. */
export function lanesIn(state: string, n: number, from = 0): LaneView[] {
  return Array.from({ length: n }, (_, i) => ({ id: `lane-${String(from + i).padStart(3, '0')}`, state, attempts: 1, code: null }));
}
