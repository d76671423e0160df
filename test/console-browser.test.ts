import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LaneStory } from '../formats/console/lane-story.ts';
import type { CrewSnapshot, LaneView } from '../formats/console/snapshot.ts';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { ensureBuilt, ROOT } from './helpers/cli.ts';
import { served } from './helpers/served.ts';
import { httpRequest } from './helpers/sse.ts';
import { DEFAULT_UI, renderCrewView } from '../formats/console/view.ts';
import { type CrewServer, serveCrew } from '../main/console/serve.ts';
import { CHROMIUM_SKIP as SKIP, launchBrowser, type BrowserUnderTest } from './helpers/browser-page.ts';
import type { HeadlessBrowser } from './helpers/chromium.ts';
import { FakeSource, crewSnapshot, lanesIn } from './helpers/crew-source.ts';
import { sleep } from './helpers/procs.ts';
import { prng } from './helpers/prng.ts';
import { tempRoot } from './helpers/tmp.ts';

// The console of a 5,000-lane crew in a real browser: every lane reachable, failures first,
// and a page that applied a stream of deltas shows exactly what a fresh snapshot shows.

if (SKIP !== undefined) process.stderr.write(`console-browser.test.ts: skipped: ${SKIP}\n`);

const NOW = '2026-12-01T12:00:00.000Z';
const screenshots = process.env['LANEWARD_SCREENSHOT_DIR'];

/** 5,000 lanes in file order; ten of the last hundred failed. */
function bigCrew(): LaneView[] {
  const lanes = [...lanesIn('complete', 3_000), ...lanesIn('work', 1_000, 3_000), ...lanesIn('queued', 1_000, 4_000)];
  for (const i of [4_905, 4_917, 4_930, 4_941, 4_950, 4_963, 4_972, 4_981, 4_990, 4_999]) {
    lanes[i] = { ...lanes[i]!, state: 'failed', code: 'LEASE_EXPIRED', detail: `lane ${i} outside voice failed` };
  }
  return lanes;
}

describe.skipIf(SKIP !== undefined)(`a 5,000-lane crew in headless Chromium${SKIP === undefined ? '' : ` (skipped: ${SKIP})`}`, () => {
  const root = tempRoot('console-browser');
  const source = new FakeSource(crewSnapshot(bigCrew(), { now: NOW, retryCommand: 'laneward crew run crew.json --retry-failed --state s' }));
  let server: CrewServer;
  let under: BrowserUnderTest;
  let browser: HeadlessBrowser;

  beforeAll(async () => {
    server = await serveCrew(0, source, { minIntervalMs: 50 });
    under = await launchBrowser('console');
    browser = under.browser;
  });
  afterAll(async () => {
    const left = await under?.close();
    await server?.close();
    expect(left).toEqual([]);
  });

  const rows = `[...document.querySelectorAll('#lanes tbody tr')].map((tr) => tr.getAttribute('data-lane'))`;

  test('should render every lane and list the failed ones of the last hundred on the first screen', async () => {
    await browser.navigate(server.url);
    await browser.waitFor(`document.getElementById('conn').textContent === 'live'`);
    expect(await browser.evaluate(`document.querySelectorAll('#grid a.cell').length`)).toBe(5_000);
    const failed = source.current.lanes.filter((lane) => lane.state === 'failed').map((lane) => lane.id);
    expect(failed).toHaveLength(10);
    expect(await browser.evaluate(`document.getElementById('attention').getAttribute('data-count')`)).toBe('10');
    // The ten failed by one code are one row with its count, five of them named.
    expect(await browser.evaluate<string[]>(`[...document.querySelectorAll('#attention tr')].map((tr) => tr.getAttribute('data-code') + ' ' + tr.getAttribute('data-count'))`)).toEqual(['LEASE_EXPIRED 10']);
    expect(await browser.evaluate<string[]>(`[...document.querySelectorAll('#attention tr a[data-lane]')].map((a) => a.getAttribute('data-lane'))`)).toEqual(failed.slice(0, 5));
    expect((await browser.evaluate<string[]>(rows)).slice(0, 10)).toEqual(failed);
    expect(await browser.evaluate(`document.getElementById('retry').textContent`)).toBe('laneward crew run crew.json --retry-failed --state s');
    // The first screen holds them: the needs-you list starts above the fold of a laptop screen.
    expect(await browser.evaluate<number>(`document.getElementById('attention').getBoundingClientRect().top`)).toBeLessThan(600);
    await browser.screenshot(join(screenshots ?? root, 'crew-5000.png'));
  });

  test('should reach any lane through the table pages in file order, and through the filter', async () => {
    await browser.navigate(`${server.url}#sort=id&page=49`);
    await browser.waitFor(`document.getElementById('pager')?.getAttribute('data-page') === '49'`);
    expect(await browser.evaluate<string[]>(rows)).toEqual(source.current.lanes.slice(4_900).map((lane) => lane.id));
    expect(await browser.evaluate(`document.querySelector('#lanes a[href="/lanes/lane-4950"]') !== null`)).toBe(true);
    // The form sets the filter; the view follows it without a reload.
    await browser.evaluate(`window.__same = true`);
    await browser.evaluate(`(() => { const f = document.getElementById('f-code'); f.value = 'lease'; f.dispatchEvent(new Event('input')); })()`);
    await browser.waitFor(`document.querySelectorAll('#lanes tbody tr').length === 10`);
    expect(await browser.evaluate('location.hash')).toBe('#code=lease&sort=id');
    expect(await browser.evaluate('window.__same')).toBe(true);
    // Paging by the buttons.
    await browser.navigate(`${server.url}#state=complete`);
    await browser.waitFor(`document.getElementById('pager')?.getAttribute('data-pages') === '30'`);
    await browser.evaluate(`document.querySelector('[data-page-to="1"]').click()`);
    await browser.waitFor(`document.getElementById('pager')?.getAttribute('data-page') === '1'`);
    expect((await browser.evaluate<string[]>(rows))[0]).toBe('lane-100');
  });

  test('should show, after a stream of deltas, exactly what a fresh snapshot shows', async () => {
    await browser.navigate(server.url);
    await browser.waitFor(`document.getElementById('conn').textContent === 'live'`);
    const random = prng(17);
    const states = ['bootstrap', 'review', 'work', 'cross-check', 'export', 'complete', 'failed'];
    let lanes = [...source.current.lanes];
    for (let step = 0; step < 40; step++) {
      lanes = lanes.map((lane) => {
        if (random() > 0.01) return lane;
        const state = states[Math.floor(random() * states.length)]!;
        return { ...lane, state, attempts: lane.attempts + 1, code: state === 'failed' ? 'CHILD_FAILED' : null };
      });
      source.set(crewSnapshot(lanes, { now: new Date(Date.parse(NOW) + step * 1000).toISOString(), elapsedS: step, retryCommand: 'r' }));
      await sleep(10 + Math.floor(random() * 40));
    }
    const fresh: CrewSnapshot = source.current;
    const expected = renderCrewView(fresh, DEFAULT_UI);
    // Both through the browser's own serialisation: what the page built from deltas, and the fresh render.
    await browser.waitFor(
      `(() => { const d = document.createElement('div'); d.innerHTML = ${JSON.stringify(expected)}; return d.innerHTML === document.getElementById('view').innerHTML; })()`,
      20_000,
    );
    const seq = Number(await browser.evaluate<string>(`document.getElementById('view').getAttribute('data-seq')`));
    expect(seq).toBeGreaterThan(2);
  });
});

describe.skipIf(SKIP !== undefined)(`a running 50-lane crew with broken lanes, and the same crew after the fact${SKIP === undefined ? '' : ` (skipped: ${SKIP})`}`, () => {
  const root = tempRoot('console-crew');
  const children: ChildProcess[] = [];
  let under: BrowserUnderTest | undefined;
  afterAll(async () => {
    const left = await under?.close();
    for (const child of children) child.kill('SIGKILL');
    expect(left ?? []).toEqual([]);
  });

  const serve = (args: string[], cwd: string) => {
    const started = served(args, cwd);
    children.push(started.child);
    return started;
  };

  const sections = `['attention', 'states', 'grid', 'lanes', 'pace', 'summary'].map((id) => document.getElementById(id)?.outerHTML ?? null)`;

  test('the crew page names the broken lanes, each lane page tells its story, and crew view shows the end the run showed', async () => {
    ensureBuilt();
    const dir = join(root, 'crew');
    const file = writeDemoCrew({ dir, crew: 'fifty', lanes: 50, broken: 3, concurrency: 6, fixtures: join(ROOT, 'fixtures'), instant: true });
    const state = join(dir, 'state');
    const run = serve(['crew', 'run', file, '--state', state, '--serve', '0'], dir);
    const url = await run.url;
    under = await launchBrowser('console-crew');
    const { browser } = under;
    await browser.navigate(url);
    await browser.waitFor(`Number(document.getElementById('attention')?.getAttribute('data-count')) >= 1`, 60_000);
    await browser.screenshot(join(screenshots ?? root, 'crew-50-running.png'));
    const failedLane = await browser.evaluate<string>(`document.querySelector('#attention [data-lane]').getAttribute('data-lane')`);
    const href = await browser.evaluate<string>(`document.querySelector('#attention tr a').getAttribute('href')`);
    expect(href).toBe(`/lanes/${failedLane}`);
    await browser.navigate(new URL(href, url).href);
    // The lane page: its code, what to do, the exact retry command, its attempts and stages.
    const page = await browser.evaluate<string>('document.body.innerText');
    expect(page).toContain(failedLane);
    expect(page).toContain(`laneward crew run ${file} --retry-failed --state ${state}`);
    // Its one script is its own (actions and the diff pane, admitted by hash); nothing from the story runs.
    expect(await browser.evaluate<number>(`document.querySelectorAll('script').length`)).toBe(1);
    const story = JSON.parse((await httpRequest(new URL(`${href}.json`, url).href)).body) as LaneStory;
    expect(story.state).toBe('failed');
    expect(page).toContain(story.code!);
    expect(page).toContain(story.fix!);
    expect(story.stages.map((s) => s.stage)).toContain('bootstrap');
    expect(story.attempts.some((a) => a.code === story.code)).toBe(true);
    await browser.screenshot(join(screenshots ?? root, 'lane-failed.png'));
    // Back to the crew page until the crew ends.
    await browser.navigate(url);
    await browser.waitFor(`document.getElementById('conn').textContent === 'finished'`, 120_000);
    await browser.waitFor(`document.getElementById('summary') !== null`);
    const live = await browser.evaluate<(string | null)[]>(sections);
    expect(await run.exited).toBe(1);
    expect(live[0]).toContain('data-count="3"');

    const view = serve(['crew', 'view', file, '--state', state, '--serve', '0'], dir);
    await browser.navigate(await view.url);
    await browser.waitFor(`document.getElementById('conn').textContent === 'finished'`);
    await browser.waitFor(`document.getElementById('summary') !== null`);
    expect(await browser.evaluate<(string | null)[]>(sections)).toEqual(live);
    await browser.screenshot(join(screenshots ?? root, 'crew-50-after.png'));
    view.child.kill('SIGTERM');
    expect(await view.exited).toBe(0);
  });
});
