import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import type { CrewSnapshot, SnapshotSource } from '../formats/console/snapshot.ts';
import { startTerminalView, type TerminalOutput } from '../main/console/terminal-view.ts';

function source(): SnapshotSource & { elapsedS: number } {
  const s = {
    elapsedS: 0,
    snapshot: (): CrewSnapshot => ({
      crew: 'a-crew-with-a-long-name',
      now: '2025-03-01T12:00:00.000Z',
      startedAt: null,
      elapsedS: s.elapsedS,
      done: false,
      run: 'running',
      source: 'live',
      byState: { queued: 1 },
      lanesPerMinute: null,
      etaS: null,
      spend: { usd: 0, capUsd: null },
      stuckAfterS: 120,
      attempts: { running: 0, queued: 0, started: 0, finished: 0 },
      marksPerSecond: 0,
      renewalP99Ms: null,
      histogram: { boundsMs: [], counts: [0] },
      providers: [],
      summary: null,
      retryCommand: null,
      resumeCommand: null,
      lanes: [],
    }),
    subscribe: () => () => undefined,
  };
  return s;
}

function terminal(columns: number) {
  const size = { columns, rows: 24 };
  const raw: string[] = [];
  const resized = new Set<() => void>();
  const out: TerminalOutput = {
    errRaw: (data) => void raw.push(data),
    stderrSize: () => size,
    onStderrResize: (listener) => {
      resized.add(listener);
      return () => resized.delete(listener);
    },
  };
  return { out, raw, size, resized };
}

describe('startTerminalView', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  test('should draw at once, again on its cadence and when the terminal is resized, at the new width', () => {
    const t = terminal(80);
    const s = source();
    const view = startTerminalView(t.out, s, 250);
    expect(t.raw).toHaveLength(1);
    expect(t.raw[0]).toMatch(/^\r\x1b\[2Kcrew a-crew-with-a-long-name \| 0s\n/);
    s.elapsedS = 1;
    vi.advanceTimersByTime(250);
    expect(t.raw).toHaveLength(2);
    t.size.columns = 20;
    for (const listener of t.resized) listener();
    expect(t.raw).toHaveLength(3);
    // The five lines drawn at 80 columns (33, 15, 51, 21 and 26 long) take 10 rows of 20.
    expect(t.raw[2]!.split('\n')[0]).toBe(`\r\x1b[2K${'\x1b[1A\x1b[2K'.repeat(10)}crew a-crew-with-a…`);
    view.close(true);
    expect(t.resized.size).toBe(0);
    vi.advanceTimersByTime(1_000);
    expect(t.raw).toHaveLength(3);
  });

  test('should clear the region when closed for good, and draw nothing more', () => {
    const t = terminal(80);
    const view = startTerminalView(t.out, source(), 250);
    view.stop();
    vi.advanceTimersByTime(1_000);
    view.close(false);
    expect(t.raw).toEqual([expect.stringMatching(/^\r\x1b\[2K/), `\r\x1b[2K${'\x1b[1A\x1b[2K'.repeat(5)}`]);
  });
});
