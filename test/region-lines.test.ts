import { describe, expect, test } from 'vitest';
import type { CrewSnapshot, LaneView } from '../formats/console/snapshot.ts';
import { regionLines } from '../main/console/live-region.ts';
import { fit, printable } from '../main/console/region-lines.ts';

const NOW = '2025-03-01T12:00:00.000Z';
const ago = (s: number) => new Date(Date.parse(NOW) - s * 1000).toISOString();

const lane = (id: string, state: string, more: Partial<LaneView> = {}): LaneView => ({
  id,
  state,
  attempts: 1,
  code: null,
  detail: null,
  costUsd: 0,
  startedAt: ago(600),
  since: ago(60),
  activityAt: ago(5),
  ...more,
});

function snapshot(lanes: readonly LaneView[], more: Partial<CrewSnapshot> = {}): CrewSnapshot {
  const byState: Record<string, number> = { queued: 0, bootstrap: 0, review: 0, answer: 0, work: 0, 'cross-check': 0, export: 0, complete: 0, failed: 0, interrupted: 0 };
  for (const l of lanes) byState[l.state] = (byState[l.state] ?? 0) + 1;
  return {
    crew: 'nightly',
    now: NOW,
    startedAt: ago(754),
    elapsedS: 754.6,
    done: false,
    run: 'running',
    source: 'live',
    byState,
    lanesPerMinute: 3.5,
    etaS: 125,
    spend: { usd: 1.2345, capUsd: 12 },
    stuckAfterS: 120,
    attempts: { running: 4, queued: 2, started: 40, finished: 36 },
    marksPerSecond: 118.4,
    renewalP99Ms: 0.4231,
    histogram: { boundsMs: [1], counts: [0, 0] },
    providers: [
      { provider: 'openai', pausedUntil: '2025-03-01T12:00:12.000Z', allowance: 0, running: 0, rateLimits: 2 },
      { provider: 'anthropic', pausedUntil: null, allowance: null, running: 1, rateLimits: 1 },
    ],
    summary: null,
    retryCommand: null,
    resumeCommand: null,
    lanes,
    ...more,
  };
}

/** A crew of 12: 3 failed, 1 stuck, the rest moving, done or waiting. */
const CREW = snapshot([
  lane('lane-01', 'complete'),
  lane('lane-02', 'failed', { code: 'LEASE_EXPIRED', detail: 'review: the outside reviewer made no progress for 5s' }),
  lane('lane-03', 'review', { activityAt: ago(250) }),
  lane('lane-04', 'work'),
  lane('lane-05', 'failed', { code: 'CHILD_FAILED', detail: null }),
  lane('lane-06', 'complete'),
  lane('lane-07', 'review'),
  lane('lane-08', 'failed', { code: 'QA_CROSS_CHECK_FAILED', detail: 'the observer failed the cross-check' }),
  lane('lane-09', 'complete'),
  lane('lane-10', 'review'),
  lane('lane-11', 'queued', { startedAt: null }),
  lane('lane-12', 'queued', { startedAt: null }),
]);

const width = (line: string) => [...line].length;

describe('regionLines', () => {
  test('should render a crew as these lines at 150 columns, failed lanes first', () => {
    expect(regionLines(CREW, 150)).toEqual([
      'crew nightly | 12m 34s',
      'lanes: queued 2, review 3, work 1, complete 3, failed 3',
      'attempts: 4 running, 2 queued | 3.50 lanes/min | ETA 2m 05s',
      'spend: $1.23 | cap $12.00',
      'rate limited: openai resumes in 12s',
      'marks: 118/s | renewal p99 0.42 ms',
      'failed lane-02 LEASE_EXPIRED: review: the outside reviewer made no progress for 5s',
      'failed lane-05 CHILD_FAILED',
      'failed lane-08 QA_CROSS_CHECK_FAILED: the observer failed the cross-check',
      'stuck lane-03 (review) quiet for 4m',
    ]);
  });

  test('should cut every line to the width less one column, with an ellipsis', () => {
    expect(regionLines(CREW, 40)).toEqual([
      'crew nightly | 12m 34s',
      'lanes: queued 2, review 3, work 1, com…',
      'attempts: 4 running, 2 queued | 3.50 l…',
      'spend: $1.23 | cap $12.00',
      'rate limited: openai resumes in 12s',
      'marks: 118/s | renewal p99 0.42 ms',
      'failed lane-02 LEASE_EXPIRED: review: …',
      'failed lane-05 CHILD_FAILED',
      'failed lane-08 QA_CROSS_CHECK_FAILED: …',
      'stuck lane-03 (review) quiet for 4m',
    ]);
  });

  test.each([40, 80, 150, 2, 1])('should keep every line within %i columns less one', (columns) => {
    const lines = regionLines(CREW, columns);
    expect(lines).toHaveLength(10);
    for (const line of lines) expect(width(line)).toBeLessThanOrEqual(Math.max(0, columns - 1));
  });

  test('should show the pace as unknown, no cap and no pause, and the end, when the crew says so', () => {
    const s = snapshot([lane('a', 'complete')], { lanesPerMinute: null, etaS: null, spend: { usd: 0, capUsd: null }, providers: [], renewalP99Ms: null, done: true, run: 'done', elapsedS: 3 * 3600 + 65 });
    expect(regionLines(s, 80)).toEqual(['crew nightly | 3h 01m | done', 'lanes: complete 1', 'attempts: 4 running, 2 queued | - lanes/min | ETA -', 'spend: $0.00 | no cap', 'marks: 118/s | renewal p99 -']);
    expect(regionLines(snapshot([]), 80)[1]).toBe('lanes: none');
  });

  test('should show an interrupted crew as interrupted, its unfinished lanes named (never stuck), then the command that continues it', () => {
    const lanes = [lane('done', 'complete'), lane('cut', 'interrupted', { code: 'CANCELLED' }), lane('quiet', 'work', { activityAt: ago(3700) })];
    const s = snapshot(lanes, { done: true, run: 'interrupted', resumeCommand: 'laneward crew run crew.json --state s' });
    const lines = regionLines(s, 80);
    expect(lines[0]).toBe('crew nightly | 12m 34s | interrupted');
    expect(lines.slice(6)).toEqual(['interrupted cut CANCELLED', 'interrupted quiet (in work)', 'resume: laneward crew run crew.json --state s']);
  });

  test('should say how many calls are of unknown cost, and under a cap what each counts', () => {
    const spendLine = (spend: CrewSnapshot['spend']) => regionLines(snapshot([lane('a', 'work')], { spend }), 120)[3];
    expect(spendLine({ usd: 0.01, capUsd: 5, unpriced: 2, reserveUsd: 0.5 })).toBe('spend: $0.01 | cap $5.00 | 2 unpriced call(s) counted at $0.50 each');
    expect(spendLine({ usd: 0.01, capUsd: null, unpriced: 2, reserveUsd: 0.5 })).toBe('spend: $0.01 | no cap | 2 unpriced call(s)');
  });

  test('should name at most five lanes that need the operator, then count the rest', () => {
    const lanes = [
      ...Array.from({ length: 4 }, (_, i) => lane(`stuck-${i}`, 'work', { activityAt: ago(3700) })),
      ...Array.from({ length: 6 }, (_, i) => lane(`failed-${i}`, 'failed', { code: 'CHILD_FAILED' })),
    ];
    // Failed lanes of one code are one line: the stuck ones keep theirs.
    expect(regionLines(snapshot(lanes), 80).slice(6)).toEqual([
      'failed CHILD_FAILED x6: failed-0, failed-1, failed-2, failed-3, failed-4, ...',
      'stuck stuck-0 (work) quiet for 1h',
      'stuck stuck-1 (work) quiet for 1h',
      'stuck stuck-2 (work) quiet for 1h',
      'stuck stuck-3 (work) quiet for 1h',
    ]);
    const stuck = lanes.slice(0, 4).concat([lane('s5', 'review', { activityAt: ago(121) }), lane('s6', 'review', { activityAt: ago(121) })]);
    expect(regionLines(snapshot(stuck), 80).slice(6)).toEqual([
      'stuck stuck-0 (work) quiet for 1h',
      'stuck stuck-1 (work) quiet for 1h',
      'stuck stuck-2 (work) quiet for 1h',
      'stuck stuck-3 (work) quiet for 1h',
      'stuck s5 (review) quiet for 2m',
      'and 1 more: 1 stuck',
    ]);
  });

  test('should neutralise escapes, line breaks and wide characters in names, codes and details', () => {
    const hostile = snapshot(
      [
        lane('\x1b[2J\x1b[Hevil\r\nlane', 'failed', { code: 'X\u202eY', detail: '\x1b]0;owned\x07title\u2028next 漢字' }),
        lane('quiet\x1b[1A', 'review', { activityAt: ago(300) }),
      ],
      { crew: 'c\x1b[31mred', providers: [{ provider: 'p\nq', pausedUntil: 'soon\r', allowance: 0, running: 0, rateLimits: 1 }] },
    );
    const lines = regionLines(hostile, 150);
    expect(lines[0]).toBe('crew c?[31mred | 12m 34s');
    expect(lines[4]).toBe('rate limited: p?q until soon?');
    expect(lines.slice(6)).toEqual(['failed ?[2J?[Hevil??lane X?Y: ?]0;owned?title?next ??', 'stuck quiet?[1A (review) quiet for 5m']);
    for (const line of lines) expect(line).toMatch(/^[\x20-\x7e]*$/);
  });
});

describe('fit and printable', () => {
  test.each([
    ['abcdef', 6, 'abcdef'],
    ['abcdef', 5, 'abcd…'],
    ['abcdef', 1, '…'],
    ['abcdef', 0, ''],
    ['abcdef', -1, ''],
  ])('should fit %j in %i code points as %j', (line, max, out) => {
    expect(fit(line, max)).toBe(out);
  });

  test('should count a surrogate pair as one code point and replace it by one ?', () => {
    expect(printable('a😀b\u0000')).toBe('a?b?');
  });
});
