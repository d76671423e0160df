import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LaneView } from '../formats/console/snapshot.ts';
import { type CrewServer, serveCrew } from '../main/console/serve.ts';
import { CHROMIUM_SKIP as SKIP, launchBrowser, type BrowserUnderTest } from './helpers/browser-page.ts';
import type { HeadlessBrowser } from './helpers/chromium.ts';
import { FakeSource, crewSnapshot } from './helpers/crew-source.ts';
import { tempRoot } from './helpers/tmp.ts';

// The needs-you box as the page's own script draws it from the event stream: grouped
// failures, the stuck and waiting lanes, and lanes with their plan's title.

const screenshots = process.env['LANEWARD_SCREENSHOT_DIR'];
const RETRY = 'laneward crew run crew.json --retry-failed --state s';
const ANSWER = 'laneward crew answer crew.json --all --reply REPLY --by NAME --state s';

function crew(now: string): LaneView[] {
  const ago = (s: number) => new Date(Date.parse(now) - s * 1000).toISOString();
  const lane = (id: string, state: string, more: Partial<LaneView> = {}): LaneView => ({ id, state, attempts: 1, code: null, detail: null, costUsd: 0, startedAt: ago(600), since: ago(60), activityAt: ago(5), title: `Plan of ${id}`, ...more });
  return [
    ...Array.from({ length: 8 }, (_, i) => lane(`child-${i}`, 'failed', { code: 'CHILD_FAILED', detail: 'agent turn 1: fatal: OPENAI_API_KEY is not set (exit 7)' })),
    ...['LEASE_EXPIRED', 'QA_CROSS_CHECK_FAILED', 'PROVIDER_NO_EXIT', 'SPEND_CAP'].map((code, i) => lane(`other-${i}`, 'failed', { code })),
    lane('held', 'work', { activityAt: ago(400), title: 'Rename the <queue> flag' }),
    lane('asks', 'interrupted', { code: 'CREW_OWNER_PENDING' }),
    lane('moving', 'review'),
  ];
}

describe.skipIf(SKIP !== undefined)(`the needs-you box in headless Chromium${SKIP === undefined ? '' : ` (skipped: ${SKIP})`}`, () => {
  const root = tempRoot('needs-you-browser');
  const NOW = '2026-12-01T12:00:00.000Z';
  const source = new FakeSource(crewSnapshot(crew(NOW).slice(0, 2), { now: NOW, stuckAfterS: 120, run: 'running', retryCommand: RETRY, answerCommand: ANSWER }));
  let server: CrewServer;
  let under: BrowserUnderTest;
  let browser: HeadlessBrowser;

  beforeAll(async () => {
    server = await serveCrew(0, source, { minIntervalMs: 50 });
    under = await launchBrowser('needs-you');
    browser = under.browser;
  });
  afterAll(async () => {
    const left = await under?.close();
    await server?.close();
    expect(left).toEqual([]);
  });

  test('should group 12 failures by code and keep the stuck and waiting lanes in the box as the stream brings them', async () => {
    await browser.navigate(server.url);
    await browser.waitFor(`document.getElementById('conn').textContent === 'live'`);
    // The page drew the first two lanes; the rest arrive as a delta the page's script renders.
    source.set(crewSnapshot(crew(NOW), { now: NOW, stuckAfterS: 120, run: 'running', retryCommand: RETRY, answerCommand: ANSWER }));
    await browser.waitFor(`document.getElementById('attention')?.getAttribute('data-count') === '14'`);
    expect(await browser.evaluate(`document.querySelector('#attention h2').textContent`)).toBe('Needs you: 12 failed, 1 stuck, 1 waiting for you');
    expect(await browser.evaluate<string[]>(`[...document.querySelectorAll('#failure-groups tr')].map((tr) => tr.getAttribute('data-code') + ' ' + tr.getAttribute('data-count'))`)).toEqual([
      'CHILD_FAILED 8',
      'LEASE_EXPIRED 1',
      'QA_CROSS_CHECK_FAILED 1',
      'PROVIDER_NO_EXIT 1',
      'SPEND_CAP 1',
    ]);
    expect(await browser.evaluate<string[]>(`[...document.querySelectorAll('#failure-groups .group-retry')].map((c) => c.textContent)`)).toEqual(new Array(5).fill(RETRY));
    expect(await browser.evaluate<string[]>(`[...document.querySelectorAll('#attention-lanes tr')].map((tr) => tr.getAttribute('data-lane'))`)).toEqual(['held', 'asks']);
    expect(await browser.evaluate(`document.getElementById('answer').textContent`)).toBe(ANSWER);
    expect(await browser.evaluate(`document.querySelector('#lanes tr[data-lane="held"] .title').textContent`)).toBe('Rename the <queue> flag');
    await browser.screenshot(join(screenshots ?? root, 'needs-you.png'));
  });
});
