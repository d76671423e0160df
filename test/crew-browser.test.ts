import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { BUNDLE, ensureBuilt, ROOT } from './helpers/cli.ts';
import { tempRoot } from './helpers/tmp.ts';
import { type CrewServer, serveCrew } from '../main/console/serve.ts';
import { HeadlessBrowser, findChromium } from './helpers/chromium.ts';
import { FakeSource, crewSnapshot, lanesIn } from './helpers/crew-source.ts';
import { exitOf, settleTagged, taggedPids } from './helpers/procs.ts';

// The live web view in a real browser: the page renders the snapshot, follows the event
// stream without a reload, draws the histogram, and shows a hostile lane id as text.

const FOUND = findChromium();
const CHROMIUM = 'binary' in FOUND ? FOUND.binary : undefined;
const SKIP = 'missing' in FOUND ? FOUND.missing : undefined;
if (SKIP !== undefined) process.stderr.write(`crew-browser.test.ts: skipped: ${SKIP}\n`);

const TAG = `LANEWARD_TEST_BROWSER=crew-${process.pid}`;
const HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">&amp;"\'';
const text = (selector: string) => `(document.querySelector(${JSON.stringify(selector)})?.textContent ?? null)`;

describe.skipIf(SKIP !== undefined)(`crew web view in headless Chromium${SKIP === undefined ? '' : ` (skipped: ${SKIP})`}`, () => {
  const source = new FakeSource(
    crewSnapshot([...lanesIn('running', 3), ...lanesIn('queued', 2, 3), { id: HOSTILE, state: 'failed', attempts: 2, code: 'SUPERVISE_TIMEOUT' }], {
      histogram: { boundsMs: [0.25, 0.5, 1, 2], counts: [5, 9, 3, 1, 0] },
    }),
  );
  // Created with the describe, so its afterAll removes it (one made inside a test is not).
  const shots = tempRoot('crew-browser-shots');
  let server: CrewServer;
  let browser: HeadlessBrowser;

  beforeAll(async () => {
    server = await serveCrew(0, source);
    const [name, value] = TAG.split('=') as [string, string];
    browser = await HeadlessBrowser.launch(CHROMIUM!, { [name]: value });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  test('should show the initial lane counts once the event stream is live', async () => {
    await browser.navigate(server.url);
    await browser.waitFor(`${text('#conn')} === 'live'`);
    expect(await browser.evaluate(text('[data-state="running"] b'))).toBe('3');
    expect(await browser.evaluate(text('[data-state="queued"] b'))).toBe('2');
    expect(await browser.evaluate(text('[data-state="failed"] b'))).toBe('1');
    expect(await browser.evaluate(text('#attempts-running'))).toBe('2');
    expect(await browser.evaluate(text('#attempts-queued'))).toBe('1');
    expect(await browser.evaluate(text('#marks-per-second'))).toBe('12.5');
    expect(await browser.evaluate(text('#renewal-p99'))).toBe('0.75 ms');
    expect(await browser.evaluate(`document.querySelectorAll('#lanes tbody tr').length`)).toBe(6);
  });

  test('should draw one SVG bar per histogram bucket', async () => {
    expect(await browser.evaluate(`document.querySelectorAll('svg.histogram rect.bar').length`)).toBe(5);
    expect(await browser.evaluate(`[...document.querySelectorAll('svg.histogram rect.bar')].map((r) => r.getAttribute('data-count')).join(',')`)).toBe(
      '5,9,3,1,0',
    );
  });

  test('should show a hostile lane id as text, running none of it', async () => {
    expect(await browser.evaluate(`[...document.querySelectorAll('#lanes td.id')].some((td) => td.textContent === ${JSON.stringify(HOSTILE)})`)).toBe(true);
    expect(await browser.evaluate(`document.querySelectorAll('#view script, #view img').length`)).toBe(0);
    expect(await browser.evaluate(`window.__pwned ?? null`)).toBe(null);
  });

  test('should update the DOM from a pushed snapshot without a reload', async () => {
    await browser.evaluate(`window.__sameDocument = true`);
    const seq = await browser.evaluate<string>(`document.getElementById('view').getAttribute('data-seq')`);
    source.set(
      crewSnapshot([...lanesIn('running', 1), ...lanesIn('complete', 4, 1), { id: HOSTILE, state: 'failed', attempts: 2, code: 'SUPERVISE_TIMEOUT' }], {
        attempts: { running: 1, queued: 0, started: 7, finished: 6 },
        histogram: { boundsMs: [0.1, 0.25, 0.5, 1, 2, 5], counts: [1, 4, 9, 3, 1, 0, 2] },
      }),
    );
    await browser.waitFor(`${text('[data-state="complete"] b')} === '4'`);
    expect(await browser.evaluate(`window.__sameDocument`)).toBe(true);
    expect(Number(await browser.evaluate<string>(`document.getElementById('view').getAttribute('data-seq')`))).toBeGreaterThan(Number(seq));
    expect(await browser.evaluate(text('[data-state="running"] b'))).toBe('1');
    // The head is replaced whole: this one counts no queued lane (the fake names only states it has).
    expect(await browser.evaluate(`document.querySelector('#states [data-state="queued"]')`)).toBe(null);
    expect(await browser.evaluate(text('#attempts-finished'))).toBe('6');
    expect(await browser.evaluate(`document.querySelectorAll('svg.histogram rect.bar').length`)).toBe(7);
    expect(await browser.evaluate(`window.__pwned ?? null`)).toBe(null);
  });

  test('should show a stopped crew stopped, with the command that continues it and no lane stuck; typed call ends and format characters as text', async () => {
    const quiet = new Date(Date.parse('2026-12-01T12:00:00.000Z') - 600_000).toISOString();
    const hidden = 'zero\u200bwidth\u202eid';
    source.set(
      crewSnapshot(
        [
          { id: 'in-flight', state: 'review', attempts: 2, code: null, activityAt: quiet },
          { id: 'lingered', state: 'complete', attempts: 3, code: null, calls: [{ call: 'turn:1', kind: 'agent', code: 'PROVIDER_NO_EXIT' }] },
          { id: hidden, state: 'work', attempts: 1, code: null, activityAt: quiet },
        ],
        { run: 'stopped', source: 'store', resumeCommand: 'laneward crew run crew.json --state s' },
      ),
    );
    await browser.waitFor(`${text('#status')}?.startsWith('stopped') === true`);
    expect(await browser.evaluate(text('#resume'))).toBe('laneward crew run crew.json --state s');
    // The page keeps the lanes earlier messages brought (lanes are never removed): the failed
    // one and the running one, now interrupted too, with these two in flight.
    expect(await browser.evaluate(text('#attention h2'))).toBe('Needs you: 1 failed, 0 stuck, 3 interrupted');
    expect(await browser.evaluate(`document.querySelectorAll('.cell.stuck').length`)).toBe(0);
    expect(await browser.evaluate(text('#lanes tr[data-lane="lingered"] .call-code'))).toBe('turn:1 PROVIDER_NO_EXIT');
    // The zero width space and the override are shown as what they are, not obeyed.
    expect(await browser.evaluate(`[...document.querySelectorAll('#lanes td.id')].map((td) => td.textContent)`)).toContain('zero\\u200bwidth\\u202eid');
    await browser.screenshot(join(process.env['LANEWARD_SCREENSHOT_DIR'] ?? shots, 'crew-stopped.png'));
  });

  test('should show done and the summary line, and stop listening', async () => {
    const summary = 'CREW_SUMMARY: lanes=6 complete=5 failed=1 interrupted=0 attempts=7 duration_s=12.4';
    source.set(crewSnapshot([...lanesIn('complete', 5), { id: HOSTILE, state: 'failed', attempts: 2, code: 'SUPERVISE_TIMEOUT' }], { done: true, summary }));
    await browser.waitFor(`${text('#conn')} === 'finished'`);
    expect(await browser.evaluate(text('#summary'))).toBe(summary);
    expect(await browser.evaluate(`document.getElementById('status').getAttribute('data-done')`)).toBe('true');
    expect(await browser.evaluate(`document.title`)).toBe('crew demo (done)');
    expect(await browser.evaluate(`window.__sameDocument`)).toBe(true);
  });

  test('should leave no browser process running once closed', async () => {
    // The tag is in every browser process's environment (browser, zygotes, renderers).
    expect(taggedPids(TAG).length).toBeGreaterThan(1);
    await browser.close();
    expect(await settleTagged(TAG, 5_000)).toEqual([]);
  });
});

describe.skipIf(SKIP !== undefined)(`a running crew's web view in headless Chromium${SKIP === undefined ? '' : ` (skipped: ${SKIP})`}`, () => {
  const root = tempRoot('crew-browser');
  const tag = `LANEWARD_TEST_BROWSER=crew-run-${process.pid}`;
  let browser: HeadlessBrowser | undefined;
  afterAll(async () => {
    await browser?.close();
  });

  test('should follow a real crew run --serve from its first lanes to its summary', async () => {
    ensureBuilt();
    const dir = join(root, 'crew');
    const file = writeDemoCrew({ dir, crew: 'browser', lanes: 3, broken: 0, concurrency: 4, fixtures: join(ROOT, 'fixtures') });
    // Slow agents: the crew runs long enough for the page to watch it.
    const env = { ...process.env, LANEWARD_FIXTURE_DELAY_MS: '150' };
    const crew = spawn(process.execPath, [BUNDLE, 'crew', 'run', file, '--state', join(dir, 'state'), '--serve', '0'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = exitOf(crew).then(({ code }) => code);
    let stderr = '';
    const url = await new Promise<string>((resolve, reject) => {
      crew.stderr.on('data', (chunk) => {
        stderr += chunk;
        const found = /^CREW_VIEW: (\S+?)(?:\?token=\S+)?$/m.exec(stderr);
        if (found !== null) resolve(found[1]!);
      });
      void exited.then(() => reject(new Error(`crew exited before CREW_VIEW: ${stderr}`)));
    });
    const [name, value] = tag.split('=') as [string, string];
    browser = await HeadlessBrowser.launch(CHROMIUM!, { [name]: value });
    await browser.navigate(url);
    await browser.waitFor(`document.querySelectorAll('#lanes tbody tr').length === 3`);
    expect(await browser.evaluate(text('#crew'))).toBe('browser');
    await browser.waitFor(`${text('#summary')}?.startsWith('CREW_SUMMARY: lanes=3 complete=3 ') === true`, 60_000);
    expect(await browser.evaluate(`document.getElementById('status').getAttribute('data-done')`)).toBe('true');
    expect(await exited).toBe(0);
    await browser.close();
    expect(await settleTagged(tag, 5_000)).toEqual([]);
  });
});
