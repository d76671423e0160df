import { describe, expect, it } from 'vitest';
import { newLane } from '../formats/crew/record.ts';
import { regionLines } from '../main/console/live-region.ts';
import { CrewView, percentile, type LiveStats } from '../main/console/view-state.ts';

describe('the crew view', () => {
  it('should count lanes by state, attempts from the dispatcher, and bucket renewal latency', () => {
    let stats: LiveStats = { running: 3, queued: 5, started: 10, finished: 7, marks: 0, renewalLatencyMs: [0.05, 0.3, 0.3, 4, 250] };
    const view = new CrewView('c', () => stats, ['a', 'b', 'c']);
    let heard = 0;
    const stop = view.subscribe(() => heard++);
    view.update({ ...newLane('c', 'a', '/r/a', 'now'), stage: 'review', attempts: 2 });
    view.update({ ...newLane('c', 'b', '/r/b', 'now'), stage: 'failed', code: 'LEASE_EXPIRED' });
    const s = view.snapshot();
    expect(heard).toBe(2);
    stop();
    expect(s.byState).toEqual({ queued: 1, bootstrap: 0, review: 1, answer: 0, work: 0, pregate: 0, 'cross-check': 0, export: 0, complete: 0, failed: 1, interrupted: 0 });
    expect(s.lanes.find((l) => l.id === 'b')).toMatchObject({ id: 'b', state: 'failed', attempts: 0, code: 'LEASE_EXPIRED', costUsd: 0 });
    expect(s.attempts).toEqual({ running: 3, queued: 5, started: 10, finished: 7 });
    expect(s.histogram.counts).toEqual([1, 0, 2, 0, 0, 1, 0, 0, 0, 0, 1]);
    expect(s.histogram.counts).toHaveLength(s.histogram.boundsMs.length + 1);
    expect(s.renewalP99Ms).toBe(250);
    stats = { ...stats, marks: 500 };
    view.finish('CREW_SUMMARY: lanes=3');
    const done = view.snapshot();
    expect(done.done).toBe(true);
    expect(done.summary).toBe('CREW_SUMMARY: lanes=3');
    expect(done.marksPerSecond).toBeGreaterThan(0);
    const region = regionLines(done, 150);
    // It ended with a lane in review and one never started: interrupted, not done.
    expect(done.run).toBe('interrupted');
    expect(region[0]).toMatch(/^crew c \| \d+s \| interrupted$/);
    expect(region.slice(1, 4)).toEqual(['lanes: queued 1, review 1, failed 1', 'attempts: 3 running, 5 queued | - lanes/min | ETA -', 'spend: $0.00 | no cap']);
    expect(region[4]).toMatch(/^marks: [1-9]\d*\/s \| renewal p99 250\.00 ms$/);
    expect(region.slice(5)).toEqual(['failed b LEASE_EXPIRED', 'interrupted a (in review)']);
  });

  it('should take the nearest-rank percentile, and none of nothing', () => {
    expect(percentile([], 0.99)).toBeNull();
    expect(percentile([5, 1, 3], 0.5)).toBe(3);
    expect(percentile(Array.from({ length: 100 }, (_, i) => i + 1), 0.99)).toBe(99);
  });
});

describe('the crew view of a running crew', () => {
  const stats: LiveStats = { running: 1, queued: 0, started: 1, finished: 0, marks: 0, renewalLatencyMs: [] };

  it("should add each lane's reviewer, observer and agent spend, against the crew-wide cap as the crew file gives it", () => {
    const view = new CrewView('c', () => stats, ['a', 'b'], () => [], { capUsd: 5, reserveUsd: 0.5, review: (p) => (p.lane === 'a' ? { spent: 1.25, unknown_n: 1 } : null) });
    view.update({ ...newLane('c', 'a', '/r/a', '2026-12-01T12:00:00.000Z'), stage: 'work', agentUsd: 0.5, observerUsd: 0.125, unpriced: 2 });
    const s = view.snapshot();
    expect(s.lanes.map((l) => [l.id, l.costUsd, l.unpriced ?? 0])).toEqual([
      ['a', 1.875, 3],
      ['b', 0, 0],
    ]);
    // The cap is the crew's, over every lane: 5, never 5 times the lanes.
    expect(s.spend).toEqual({ usd: 1.875, capUsd: 5, unpriced: 3, reserveUsd: 0.5 });
  });

  it("should read a lane's journals (its call codes, its spend) only when its view is read, once per change, never per save", () => {
    const reads = { calls: 0, review: 0 };
    const view = new CrewView('c', () => stats, ['a'], () => [], {
      callCodes: () => (reads.calls++, [{ call: 'a1', kind: 'reviewer', code: 'LEASE_EXPIRED' }]),
      review: () => (reads.review++, null),
    });
    for (let i = 0; i < 50; i++) view.update({ ...newLane('c', 'a', '/r/a', `2026-12-01T12:00:${String(i).padStart(2, '0')}.000Z`), stage: 'review', attempts: i });
    expect(reads).toEqual({ calls: 0, review: 0 });
    const lane = view.snapshot().lanes[0]!;
    expect([lane.attempts, lane.calls]).toEqual([49, [{ call: 'a1', kind: 'reviewer', code: 'LEASE_EXPIRED' }]]);
    expect(reads).toEqual({ calls: 1, review: 1 });
    view.snapshot();
    expect(reads).toEqual({ calls: 1, review: 1 });
  });

  it('should take an admitted mark of a lane child as its sign of life, and keep a finished crew as it was at its end', () => {
    const view = new CrewView('c', () => stats, ['a'], () => [], { startedAt: '2026-12-01T12:00:00.000Z', stuckAfterS: 60 });
    const old = '2026-12-01T12:00:01.000Z';
    view.update({ ...newLane('c', 'a', '/r/a', old), stage: 'review', updatedAt: old, stages: [{ stage: 'queued', at: old }, { stage: 'review', at: old }] });
    expect(view.snapshot().lanes[0]).toMatchObject({ activityAt: old, since: old, startedAt: old });
    let heard = 0;
    view.subscribe(() => heard++);
    view.activity('a');
    view.activity('a'); // within the step: no second change
    expect(heard).toBe(1);
    const live = view.snapshot().lanes[0]!;
    expect(Date.parse(live.activityAt!)).toBeGreaterThan(Date.parse(old));
    view.activity('nobody');
    expect(heard).toBe(1);
    view.finish('CREW_SUMMARY: lanes=1');
    const a = view.snapshot();
    const b = view.snapshot();
    expect(a.now).toBe(b.now);
    expect(a.elapsedS).toBe(b.elapsedS);
    expect(a.done).toBe(true);
  });
});
