import { describe, expect, test } from 'vitest';
import type { LaneView } from '../formats/console/snapshot.ts';
import { DEFAULT_UI, renderCrewView } from '../formats/console/view.ts';
import { crewFigures } from '../main/console/lane-view.ts';
import { regionLines } from '../main/console/live-region.ts';
import { statusLines } from '../main/cli/crew-console.ts';
import { crewSnapshot } from './helpers/crew-source.ts';

const NOW = '2026-12-01T12:00:00.000Z';
const ago = (s: number) => new Date(Date.parse(NOW) - s * 1000).toISOString();
const RETRY = 'laneward crew run c.json --retry-failed --state s';
const ANSWER = 'laneward crew answer c.json --all --reply REPLY --by NAME --state s';

const lane = (id: string, state: string, more: Partial<LaneView> = {}): LaneView => ({ id, state, attempts: 1, code: null, detail: null, costUsd: 0, startedAt: ago(600), since: ago(60), activityAt: ago(5), ...more });

/** 12 failed lanes over 7 codes (6 CHILD_FAILED, 1 each of six others), a stuck lane, a lane waiting for its owner, one running. */
function crowded(): LaneView[] {
  return [
    ...Array.from({ length: 6 }, (_, i) => lane(`child-${i}`, 'failed', { code: 'CHILD_FAILED', detail: `agent turn 1: exit ${i}` })),
    ...['LEASE_EXPIRED', 'QA_CROSS_CHECK_FAILED', 'PROVIDER_NO_EXIT', 'SPEND_CAP', 'GATE_REFUSED', 'TURN_LIMIT'].map((code, i) => lane(`other-${i}`, 'failed', { code })),
    lane('held', 'work', { activityAt: ago(400) }),
    lane('asks', 'interrupted', { code: 'CREW_OWNER_PENDING', detail: 'waiting for the owner' }),
    lane('moving', 'review'),
  ];
}

describe('the needs-you box', () => {
  test('should group the terminal region failures by code and still name the stuck and waiting lanes with 12 failed', () => {
    const s = crewSnapshot(crowded(), { now: NOW, stuckAfterS: 120, run: 'running', retryCommand: RETRY, answerCommand: ANSWER });
    expect(regionLines(s, 200).slice(-10)).toEqual([
      'failed CHILD_FAILED x6: child-0, child-1, child-2, child-3, child-4, ...',
      'failed other-0 LEASE_EXPIRED',
      'failed other-1 QA_CROSS_CHECK_FAILED',
      'failed other-2 PROVIDER_NO_EXIT',
      'failed other-3 SPEND_CAP',
      'stuck held (work) quiet for 6m',
      'waiting asks for its owner at its gate',
      'and 2 more: 2 failed',
      `retry: ${RETRY}`,
      `answer: ${ANSWER}`,
    ]);
  });

  test('should list failures on the page as one row per code with its count and the retry command, and every stuck and waiting lane', () => {
    const html = renderCrewView(crewSnapshot(crowded(), { now: NOW, stuckAfterS: 120, run: 'running', retryCommand: RETRY, answerCommand: ANSWER }), DEFAULT_UI);
    const box = html.slice(html.indexOf('id="attention"'), html.indexOf('id="states"'));
    expect(box).toContain('<h2>Needs you: 12 failed, 1 stuck, 1 waiting for you</h2>');
    const groups = [...box.matchAll(/<tr class="s-failed" data-code="([^"]*)" data-count="(\d+)">/g)].map((m) => `${m[1]} ${m[2]}`);
    expect(groups).toEqual(['CHILD_FAILED 6', 'LEASE_EXPIRED 1', 'QA_CROSS_CHECK_FAILED 1', 'PROVIDER_NO_EXIT 1', 'SPEND_CAP 1', 'GATE_REFUSED 1', 'TURN_LIMIT 1']);
    expect([...box.matchAll(/<code class="group-retry">([^<]*)<\/code>/g)].map((m) => m[1])).toEqual(new Array(7).fill(RETRY));
    // The six lanes of the largest group: five named, the sixth behind the filter.
    expect(box).toContain('<a href="/lanes/child-4" data-lane="child-4">child-4</a> <a href="#state=failed&amp;code=CHILD_FAILED" data-filter-code="CHILD_FAILED">and 1 more</a>');
    expect([...box.matchAll(/<tr data-lane="([^"]*)"[^>]*><td class="id"><a[^>]*>[^<]*<\/a><\/td><td>([a-z]+)<\/td>/g)].map((m) => `${m[1]} ${m[2]}`)).toEqual(['held stuck', 'asks waiting']);
    expect(box).toContain(`<code id="answer">${ANSWER}</code>`);
    expect(box).toContain(`<code id="retry">${RETRY}</code>`);
    // The lane table says the same: the lane at its gate waits (it is stored interrupted, to be continued).
    const table = html.slice(html.indexOf('<table id="lanes">'));
    expect(/<tr data-lane="asks"[^>]*>.*?<td class="state">([a-z]+)<\/td>/.exec(table)?.[1]).toBe('waiting');
    expect(/<tr data-lane="child-0"[^>]*>.*?<td class="state">([a-z]+)<\/td>/.exec(table)?.[1]).toBe('failed');
  });
});

describe('the ETA', () => {
  const figures = (lanes: readonly LaneView[], stuckAfterS?: number) => crewFigures(lanes, { startedAt: ago(60), nowMs: Date.parse(NOW), capUsd: null, stuckAfterS });
  const ended = Array.from({ length: 9 }, (_, i) => lane(`done-${i}`, 'complete', { since: ago(10) }));

  test('should be unknown while a stuck lane holds the crew, not a second at the pace of the others', () => {
    // 9 ended in a minute: one lane left would be "7 s" at that pace; it has been quiet 180 s.
    expect(figures([...ended, lane('held', 'work', { activityAt: ago(180) })], 120).etaS).toBeNull();
    expect(figures([...ended, lane('moving', 'work', { activityAt: ago(5) })], 120).etaS).toBe(7);
  });

  test('should count only lanes that still run: a lane waiting for its owner or interrupted is no lane to pace', () => {
    const waiting = lane('asks', 'interrupted', { code: 'CREW_OWNER_PENDING' });
    expect(figures([...ended, lane('moving', 'work'), lane('queued', 'queued', { startedAt: null }), waiting], 120).etaS).toBe(13);
    expect(figures([...ended, waiting], 120).etaS).toBeNull();
    expect(figures(ended, 120).etaS).toBe(0);
  });
});

describe('crew status lines', () => {
  test('should say a lane at its gate waits for its owner, not that it is stuck', () => {
    const s = crewSnapshot([lane('asks', 'interrupted', { code: 'CREW_OWNER_PENDING', activityAt: ago(900) }), lane('held', 'work', { activityAt: ago(400) })], { now: NOW, stuckAfterS: 120, run: 'running' });
    expect(statusLines(s).slice(1)).toEqual(['CREW_NEEDS: lane=held need=stuck state=work quiet_s=400 quiet=6m', 'CREW_NEEDS: lane=asks need=waiting state=interrupted code=CREW_OWNER_PENDING']);
  });
});
