import { type Server, createServer } from 'node:http';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { AnswerResult, ConsoleActions, ControlRequest, ControlResult } from '../formats/console/actions.ts';
import type { LaneStory } from '../formats/console/lane-story.ts';
import type { LaneView } from '../formats/console/snapshot.ts';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { readLaneDiff } from '../main/console/lane-diff.ts';
import { LANE_PAGE } from '../main/console/lane-page-route.ts';
import { type CrewServer, serveCrew } from '../main/console/serve.ts';
import { CHROMIUM_SKIP, launchBrowser, type BrowserUnderTest } from './helpers/browser-page.ts';
import type { HeadlessBrowser } from './helpers/chromium.ts';
import { ensureBuilt, laneward, ROOT } from './helpers/cli.ts';
import { FakeSource, crewSnapshot } from './helpers/crew-source.ts';
import { baseRepo, git } from './helpers/git.ts';
import { canRun, killStrays, until } from './helpers/procs.ts';
import { served } from './helpers/served.ts';
import { tempRoot } from './helpers/tmp.ts';

// The console acting in a real browser: the token taken from the URL once, the buttons of
// the crew page and of a lane page reaching the crew, the refusals, the diff pane, and the
// gate inbox answering lanes of a running crew.

if (CHROMIUM_SKIP !== undefined) process.stderr.write(`console-act-browser.test.ts: skipped: ${CHROMIUM_SKIP}\n`);
const root = tempRoot('console-act-browser');
const shots = process.env['LANEWARD_SCREENSHOT_DIR'] ?? root;
const NOW = '2026-12-01T12:00:00.000Z';

class RecordingActions implements ConsoleActions {
  readonly controls: ControlRequest[] = [];
  control(request: ControlRequest): Promise<ControlResult> {
    this.controls.push(request);
    return Promise.resolve({ status: 'requested', code: null, detail: null, seq: this.controls.length });
  }
  answer(): Promise<readonly AnswerResult[]> {
    return Promise.resolve([]);
  }
}

/** A lane's story with every section present and empty but what is given. */
function story(lane: string, state: string, more: Partial<LaneStory> = {}): LaneStory {
  return {
    crew: 'demo', lane, state, code: null, detail: null, runDir: `/runs/${lane}`, updatedAt: NOW, run: null, qaLane: null, stages: [], attempts: [],
    review: { status: null, phases: [], gate: null, spendUsd: 0 }, qa: { verdicts: [], guidance: null },
    agent: { turnsDispatched: 1, turnsDone: 0, lostTurns: [], session: null, costUsd: null, sessionUsd: null },
    workspace: null, costUsd: 0, files: [], filesLeftOut: { count: 0, exact: true }, fix: null, retry: null, ...more,
  } as LaneStory;
}

/** Opens `url` in the page: a page that rewrites its own address (the token dropped) ends elsewhere than it was opened. */
async function open(browser: HeadlessBrowser, url: string): Promise<void> {
  await browser.evaluate(`window.__left = true`);
  await browser.send('Page.navigate', { url });
  await browser.waitFor(`window.__left !== true && document.readyState === 'complete'`);
}

/** The value of a promise the page's `expression` makes. */
async function settled<T>(browser: HeadlessBrowser, expression: string): Promise<T> {
  const answer = await browser.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true });
  if (answer['exceptionDetails'] !== undefined) throw new Error(`page threw evaluating ${expression}: ${JSON.stringify(answer['exceptionDetails'])}`);
  return (answer['result'] as { value?: T }).value as T;
}

/** Types `name` into the page's name field as a person would (its input event keeps it for the tab). */
const typeName = (browser: HeadlessBrowser, name: string) => browser.evaluate(`(() => { const by = document.getElementById('act-by'); by.value = ${JSON.stringify(name)}; by.dispatchEvent(new Event('input')); })()`);

const texts = (selector: string) => `[...document.querySelectorAll(${JSON.stringify(selector)})].map((e) => e.textContent)`;

describe.skipIf(CHROMIUM_SKIP !== undefined)('the console acts from its pages in headless Chromium (a recording port)', () => {
  const lanes: LaneView[] = [
    { id: 'broke', state: 'failed', attempts: 1, code: 'CHILD_FAILED', detail: 'agent turn 1: exit 7', costUsd: 0, startedAt: NOW, since: NOW, activityAt: NOW },
    { id: 'held', state: 'work', attempts: 1, code: null, detail: null, costUsd: 0, startedAt: NOW, since: NOW, activityAt: '2026-12-01T11:50:00.000Z' },
    { id: 'edits', state: 'work', attempts: 1, code: null, detail: null, costUsd: 0, startedAt: NOW, since: NOW, activityAt: NOW },
  ];
  const source = new FakeSource(crewSnapshot(lanes, { now: NOW, stuckAfterS: 120 }));
  const repo = baseRepo(join(root, 'repo'));
  const actions = new RecordingActions();
  let head = '';
  let server: CrewServer;
  let evil: Server;
  let evilUrl = '';
  let under: BrowserUnderTest;
  let browser: HeadlessBrowser;

  beforeAll(async () => {
    // The lane's branch: an edit, a file whose text is markup, and a large file the pane cuts.
    git(repo.dir, 'checkout', '-qb', 'lane');
    writeFileSync(join(repo.dir, 'a.txt'), 'one\ntwo\n');
    writeFileSync(join(repo.dir, 'page <b>.html'), '<script>alert(1)</script>\n');
    writeFileSync(join(repo.dir, 'big.txt'), `${'x'.repeat(79)}\n`.repeat(100));
    git(repo.dir, 'add', '.');
    git(repo.dir, 'commit', '-qm', 'lane work');
    head = git(repo.dir, 'rev-parse', 'HEAD');
    const stories: Record<string, LaneStory> = {
      broke: story('broke', 'failed', { code: 'CHILD_FAILED' }),
      held: story('held', 'work'),
      edits: story('edits', 'work', { workspace: { branch: 'lane', head, worktree: null, diffStat: null } }),
    };
    (source as FakeSource & { laneStory(id: string): LaneStory | undefined }).laneStory = (id) => stories[id];
    server = await serveCrew(0, source, {
      minIntervalMs: 50,
      lanePage: LANE_PAGE,
      actions,
      reads: { diff: (lane) => Promise.resolve(lane === 'edits' ? readLaneDiff({ repo: repo.dir, base: repo.base, head, bounds: { perFile: 1_000, total: 100_000 } }) : undefined) },
    });
    // Another origin on loopback, its page free of any policy: it posts to the console.
    evil = createServer((_req, res) => res.end('<!doctype html><title>elsewhere</title>'));
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    evilUrl = `http://127.0.0.1:${(evil.address() as { port: number }).port}/`;
    under = await launchBrowser('console-act');
    browser = under.browser;
  });
  afterAll(async () => {
    expect(await under?.close()).toEqual([]);
    await server?.close();
    await new Promise((resolve) => evil?.close(resolve));
  });

  test('should take the token from the URL once, keep it for the tab, and retry a failed lane and stop the crew from the crew page', async () => {
    await open(browser, server.openUrl);
    await browser.waitFor(`document.getElementById('conn').textContent === 'live' && document.querySelector('#lanes button[data-action]') !== null`);
    // Gone from the address bar (and so from history), kept in the tab's session storage.
    expect(await browser.evaluate(`[location.search, sessionStorage.getItem('laneward-console-token')]`)).toEqual(['', server.token]);
    expect(await browser.evaluate(`[...document.querySelectorAll('#lanes tbody tr')].map((tr) => tr.getAttribute('data-lane') + ': ' + [...tr.querySelectorAll('button[data-action]')].map((b) => b.getAttribute('data-action')).join(','))`)).toEqual(['broke: retry', 'held: cancel-call,cancel-lane', 'edits: cancel-call,cancel-lane']);
    // Nothing is sent without a name: every action is a named person's.
    await browser.evaluate(`document.querySelector('#lanes tr[data-lane="broke"] button[data-action="retry"]').click()`);
    expect(await browser.evaluate(`document.getElementById('act-result').textContent`)).toBe('retry broke: give your name first (the request is recorded as yours, human:<name>)');
    await typeName(browser, 'ann');
    await browser.evaluate(`document.querySelector('#lanes tr[data-lane="broke"] button[data-action="retry"]').click()`);
    await browser.waitFor(`document.getElementById('act-result').textContent === 'retry broke: requested (#1)'`);
    // Stopping the crew takes two presses.
    expect(await browser.evaluate(`document.getElementById('crew-stop').hidden`)).toBe(false);
    await browser.evaluate(`document.getElementById('crew-stop').click()`);
    expect(await browser.evaluate(`document.getElementById('crew-stop').textContent`)).toBe('press again to stop the crew');
    expect(actions.controls).toHaveLength(1);
    await browser.evaluate(`document.getElementById('crew-stop').click()`);
    await browser.waitFor(`document.getElementById('act-result').textContent === 'stop: requested (#2)'`);
    expect(actions.controls).toEqual([
      { action: 'retry', lane: 'broke', by: 'human:ann' },
      { action: 'stop', lane: null, by: 'human:ann' },
    ]);
    await browser.screenshot(join(shots, 'console-act-crew.png'));
  });

  test('should cancel a stuck lane\'s call and retry a failed lane from their pages', async () => {
    await browser.navigate(`${server.url}lanes/held`);
    await browser.waitFor(`document.getElementById('lane-actions')?.hidden === false`);
    expect(await browser.evaluate(texts('#lane-actions button'))).toEqual(['cancel its running call', 'cancel this lane']);
    // The name given on the crew page is the tab's: the lane page has it.
    expect(await browser.evaluate(`document.getElementById('act-by').value`)).toBe('ann');
    await browser.evaluate(`document.querySelector('#lane-actions button[data-action="cancel-call"]').click()`);
    await browser.waitFor(`document.getElementById('act-result').textContent === 'cancel-call held: requested (#3)'`);
    await browser.navigate(`${server.url}lanes/broke`);
    await browser.waitFor(`document.getElementById('lane-actions')?.hidden === false`);
    expect(await browser.evaluate(texts('#lane-actions button'))).toEqual(['retry this lane']);
    await browser.evaluate(`document.querySelector('#lane-actions button').click()`);
    await browser.waitFor(`document.getElementById('act-result').textContent === 'retry broke: requested (#4)'`);
    expect(actions.controls.slice(2)).toEqual([
      { action: 'cancel_call', lane: 'held', by: 'human:ann' },
      { action: 'retry', lane: 'broke', by: 'human:ann' },
    ]);
  });

  test('should show a workspace lane\'s diff against the base per file, escaped and cut at its bound, with the file count', async () => {
    await browser.navigate(`${server.url}lanes/edits`);
    await browser.waitFor(`document.getElementById('diff')?.getAttribute('data-state') === 'ok'`);
    expect(await browser.evaluate(`document.getElementById('diff-count').textContent`)).toBe('3 files changed');
    // git's order; big.txt cut at the 1,000 characters a file may show, and said so.
    expect(await browser.evaluate(`[...document.querySelectorAll('#diff-files details')].map((d) => d.getAttribute('data-path') + ' ' + (d.getAttribute('data-truncated') ?? 'whole'))`)).toEqual(['a/a.txt b/a.txt whole', 'a/big.txt b/big.txt true', 'a/page <b>.html b/page <b>.html whole']);
    expect(await browser.evaluate(`document.querySelector('#diff-files details[data-truncated] summary .note').textContent`)).toMatch(/^\(cut: 1000 of \d{4} characters\)$/);
    expect(await browser.evaluate(`document.querySelector('#diff-files pre').textContent`)).toMatch(/^diff --git a\/a\.txt b\/a\.txt\n[^]*\n one\n\+two\n$/);
    // The markup in a path and in a file is text: no element of it, no script but the page's own.
    expect(await browser.evaluate(`[...document.querySelectorAll('#diff-files pre')][2].textContent.includes('+<script>alert(1)</script>')`)).toBe(true);
    expect(await browser.evaluate(`[document.querySelectorAll('#diff-files b, #diff-files script').length, document.querySelectorAll('script').length]`)).toEqual([0, 1]);
    await browser.screenshot(join(shots, 'console-act-diff.png'));
  });

  test('should refuse a wrong token, no token and a post from another origin, and reach the crew with none', async () => {
    const before = actions.controls.length;
    // A wrong token in the URL replaces the kept one: the action is refused by its code.
    await open(browser, `${server.url}?token=not-the-token`);
    await browser.waitFor(`document.querySelector('#lanes button[data-action="retry"]') !== null`);
    await browser.evaluate(`document.querySelector('#lanes button[data-action="retry"]').click()`);
    await browser.waitFor(`document.getElementById('act-result').textContent.startsWith('retry broke: refused CONSOLE_TOKEN_WRONG')`);
    // No token: the page offers no action; a request sent anyway is 401.
    await browser.evaluate(`sessionStorage.clear()`);
    await browser.navigate(server.url);
    await browser.waitFor(`document.getElementById('conn').textContent === 'live'`);
    expect(await browser.evaluate(`[document.querySelectorAll('button[data-action]').length, document.getElementById('crew-stop').hidden]`)).toEqual([0, true]);
    const status = `fetch('/actions/retry', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"lane":"broke"}' }).then(async (r) => r.status + ' ' + (await r.json()).code)`;
    expect(await settled(browser, status)).toBe('401 CONSOLE_TOKEN_MISSING');
    // Another origin, holding the right token even: a simple cross-site POST is refused by its Origin;
    // a JSON one is stopped at its preflight (an OPTIONS the route refuses).
    await browser.navigate(evilUrl);
    const cross = (mode: string, type: string) =>
      `(async () => { try { const r = await fetch(${JSON.stringify(`${server.url}actions/retry`)}, { method: 'POST', mode: '${mode}', headers: { 'Content-Type': '${type}', ...('${mode}' === 'cors' ? { 'X-Laneward-Token': ${JSON.stringify(server.token)} } : {}) }, body: '{"lane":"broke"}' }); return r.type; } catch (e) { return 'failed'; } })()`;
    expect(await settled(browser, cross('no-cors', 'text/plain'))).toBe('opaque');
    expect(await settled(browser, cross('cors', 'application/json'))).toBe('failed');
    expect(actions.controls.length).toBe(before);
  });
});

describe.skipIf(CHROMIUM_SKIP !== undefined)('the gate inbox of a running crew in headless Chromium', () => {
  beforeAll(() => ensureBuilt());

  test('should list the lanes waiting at their gates with their brief, answer two from the inbox by name, cancel and retry the third from its page, and let crew answer --all answer it at its gate again', async () => {
    const dir = join(root, 'owner');
    mkdirSync(dir);
    const file = writeDemoCrew({ dir, crew: 'inbox', lanes: 3, broken: 0, concurrency: 3, fixtures: join(ROOT, 'fixtures') });
    const crew = JSON.parse(readFileSync(file, 'utf8'));
    crew.answer = 'owner';
    writeFileSync(file, JSON.stringify(crew));
    const state = join(dir, 'state');
    const run = served(['crew', 'run', file, '--state', state, '--owner-wait', '2m', '--serve', '0'], dir);
    const under = await launchBrowser('console-inbox');
    const { browser } = under;
    try {
      const url = await run.openUrl;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/);
      await open(browser, url);
      await browser.waitFor(`document.getElementById('inbox')?.getAttribute('data-count') === '3'`, 90_000);
      expect(await browser.evaluate(`[...document.querySelectorAll('#inbox-lanes tr.inbox-lane')].map((tr) => tr.getAttribute('data-lane'))`)).toEqual(['lane-1', 'lane-2', 'lane-3']);
      // A lane's brief, findings and recommendation, read on request.
      await browser.evaluate(`document.querySelector('[data-inbox-brief="lane-3"]').click()`);
      await browser.waitFor(`document.querySelector('tr[data-lane="lane-3"] td.inbox-gate')?.getAttribute('data-loaded') === 'true'`);
      expect(await browser.evaluate(`document.querySelector('tr[data-lane="lane-3"] .inbox-rec code').textContent`)).toMatch(/^([a-z]*[0-9]+[a-z])( [a-z]*[0-9]+[a-z])*$/);
      expect(await browser.evaluate(`document.querySelector('tr[data-lane="lane-3"] pre.inbox-brief').textContent`)).toBe(readFileSync(join(dir, 'runs', 'lane-3', 'brief.md'), 'utf8'));
      // lane-3 cancelled from its page while it waits, and retried from it: it comes back to its gate.
      await open(browser, `${url.replace(/\?token=.*$/, '')}lanes/lane-3`);
      await browser.waitFor(`document.getElementById('lane-actions')?.hidden === false`);
      expect(await browser.evaluate(texts('#lane-actions button'))).toEqual(['cancel this lane']);
      await typeName(browser, 'ann');
      await browser.evaluate(`document.querySelector('#lane-actions button[data-action="cancel-lane"]').click()`);
      await browser.waitFor(`/^cancel-lane lane-3: requested \\(#\\d+\\)$/.test(document.getElementById('act-result').textContent)`);
      await until(() => /^CREW_LANE: lane=lane-3 .*status=failed .*code=LANE_CANCELLED/m.test(run.out()), 60_000, 'lane-3 to be cancelled');
      await open(browser, `${url.replace(/\?token=.*$/, '')}lanes/lane-3`);
      await browser.waitFor(`document.getElementById('lane-actions')?.hidden === false`);
      expect(await browser.evaluate(texts('#lane-actions button'))).toEqual(['retry this lane']);
      await browser.evaluate(`document.querySelector('#lane-actions button[data-action="retry"]').click()`);
      await browser.waitFor(`/^retry lane-3: requested \\(#\\d+\\)$/.test(document.getElementById('act-result').textContent)`);
      await browser.screenshot(join(shots, 'console-lane-retry.png'));
      await open(browser, url.replace(/\?token=.*$/, ''));
      await browser.waitFor(`document.getElementById('inbox')?.getAttribute('data-count') === '3'`, 60_000);
      // Two of them, ticked, answered by name: a reply without a name is not sent.
      await browser.evaluate(`document.getElementById('inbox-reply').value = 'as-is'`);
      for (const lane of ['lane-1', 'lane-2']) await browser.evaluate(`document.querySelector('input.inbox-pick[data-lane="${lane}"]').click()`);
      // The name typed on the lane page is the tab's: the crew page has it.
      expect(await browser.evaluate(`document.getElementById('act-by').value`)).toBe('ann');
      await typeName(browser, '');
      await browser.evaluate(`document.getElementById('inbox-answer').click()`);
      expect(await browser.evaluate(`document.getElementById('inbox-result').textContent`)).toBe('give your name: the answer is recorded as yours (human:<name>)');
      await typeName(browser, 'ann');
      await browser.evaluate(`document.getElementById('inbox-answer').click()`);
      await browser.waitFor(`document.getElementById('inbox-result').getAttribute('data-answered') === 'lane-1 lane-2'`, 30_000);
      await browser.screenshot(join(shots, 'console-inbox.png'));
      // They go on at once: both complete while lane-3 still waits.
      await until(() => ['lane-1', 'lane-2'].every((lane) => new RegExp(`^CREW_LANE: lane=${lane} .*status=complete`, 'm').test(run.out())), 90_000, 'lane-1 and lane-2 to complete');
      expect(run.out()).not.toMatch(/^CREW_LANE: lane=lane-3 .*status=complete/m);
      await browser.waitFor(`document.getElementById('inbox')?.getAttribute('data-count') === '1'`);
      const rest = laneward(['crew', 'answer', file, '--all', '--reply', 'as-is', '--by', 'bob', '--state', state], { cwd: dir });
      expect(rest.stdout).toMatch(/^CREW_ANSWERED: lane=lane-3 status=answered /m);
      expect(await run.exited).toBe(0);
      expect(run.out()).toMatch(/^CREW_SUMMARY: lanes=3 complete=3 failed=0 interrupted=0 /m);
      const answeredBy = (lane: string) => [...new Set(readFileSync(join(dir, 'runs', lane, 'decisions.jsonl'), 'utf8').split('\n').filter((l) => l !== '').map((l) => `${JSON.parse(l).answered_role} ${JSON.parse(l).answered_by}`))];
      expect([answeredBy('lane-1'), answeredBy('lane-2'), answeredBy('lane-3')]).toEqual([['human human:ann'], ['human human:ann'], ['human human:bob']]);
    } finally {
      if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGTERM');
      await run.exited;
      expect(await under.close()).toEqual([]);
      expect(killStrays(root)).toEqual([]);
    }
  }, 240_000);
});

describe.skipIf(CHROMIUM_SKIP !== undefined)('a stuck lane and a failed child on their pages, in headless Chromium', () => {
  beforeAll(() => ensureBuilt());

  test('should cancel a stuck lane\'s running call from its page, its child torn down, retry it there to completion, and show a failed child\'s stderr line on its page and in its CREW_LANE line', async () => {
    const dir = join(root, 'stuck');
    mkdirSync(dir);
    const file = writeDemoCrew({ dir, crew: 'stuck', lanes: 3, broken: 0, concurrency: 3, fixtures: join(ROOT, 'fixtures') });
    const crew = JSON.parse(readFileSync(file, 'utf8'));
    // A two-minute lease: nothing but the operator ends the stalled call within the test.
    crew.limits.timeout_ms = 120_000;
    const agent = (mode: string) => [process.execPath, join(ROOT, 'fixtures', 'agents', 'agent.mjs'), '{prompt}', '{result}', mode, '3'];
    crew.lanes[0].runners = { agent: agent('stall-through-1') };
    crew.lanes[1].runners = { agent: agent('no-key') };
    // lane-3's agent holds its first turn until the test lets it go: the crew runs on while
    // lane-1 is cancelled and retried (a crew whose last lane ends, ends; a retry then waits for its next run).
    const go = join(dir, 'go');
    crew.lanes[2].runners = { agent: ['bash', '-c', 'while [ ! -e "$0" ]; do sleep 0.1; done; exec "$@"', go, ...agent('healthy')] };
    writeFileSync(file, JSON.stringify(crew));
    const state = join(dir, 'state');
    const run = served(['crew', 'run', file, '--state', state, '--serve', '0', '--stuck-after', '1s'], dir);
    const under = await launchBrowser('console-stuck');
    const { browser } = under;
    try {
      const url = await run.openUrl;
      const base = url.replace(/\?token=.*$/, '');
      await open(browser, url);
      // lane-2's agent wrote `fatal: OPENAI_API_KEY is not set` and exited 7: the line says so, and so does its page.
      await until(() => /^CREW_LANE: lane=lane-2 .*status=failed/m.test(run.out()), 120_000, 'lane-2 to fail');
      expect(/^CREW_LANE: lane=lane-2 .*$/m.exec(run.out())?.[0]).toMatch(/ detail=.*fatal: OPENAI_API_KEY is not set$/);
      await open(browser, `${base}lanes/lane-2`);
      expect(await browser.evaluate(`document.getElementById('stderr')?.textContent ?? ''`)).toMatch(/fatal: OPENAI_API_KEY is not set$/);
      expect(await browser.evaluate(`document.getElementById('failed-call')?.textContent ?? ''`)).toMatch(/exit 7/);
      // lane-1's agent is stuck in turn 1: its page names the child, and cancelling its call tears it down.
      const story = async () => (await (await fetch(`${base}lanes/lane-1.json`)).json()) as LaneStory;
      let running = (await story()).running;
      for (const end = Date.now() + 120_000; running?.call !== 'turn:1'; running = (await story()).running) {
        if (Date.now() > end) throw new Error('timed out waiting for lane-1 inside its first turn');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const pid = running.pid;
      expect(canRun(pid)).toBe(true);
      await open(browser, `${base}lanes/lane-1`);
      await browser.waitFor(`document.getElementById('lane-actions')?.hidden === false`);
      expect(await browser.evaluate(`document.getElementById('running')?.textContent ?? ''`)).toMatch(new RegExp(`^turn:1 pid ${pid} since \\S+, admitted_progress_inactivity, deadline none \\(a lease\\), last mark \\S+, lease ends \\S+`));
      expect(await browser.evaluate(texts('#lane-actions button'))).toEqual(['cancel its running call', 'cancel this lane']);
      await typeName(browser, 'ops');
      await browser.evaluate(`document.querySelector('#lane-actions button[data-action="cancel-call"]').click()`);
      await browser.waitFor(`/^cancel-call lane-1: requested \\(#\\d+\\)$/.test(document.getElementById('act-result').textContent)`);
      await until(() => /^CREW_LANE: lane=lane-1 .*status=failed .*code=CALL_CANCELLED/m.test(run.out()), 60_000, 'lane-1 to end CALL_CANCELLED');
      expect(run.out()).toMatch(/^CREW_CONTROL: seq=\d+ action=cancel_call lane=lane-1 by=human:ops status=applied/m);
      await until(() => !canRun(pid), 15_000, 'the stalled agent to be gone');
      // Retried from its page: turn 2 does not stall, and the lane completes in this crew.
      await open(browser, `${base}lanes/lane-1`);
      await browser.waitFor(`document.getElementById('lane-actions')?.hidden === false`);
      expect(await browser.evaluate(texts('#lane-actions button'))).toEqual(['retry this lane']);
      await browser.evaluate(`document.querySelector('#lane-actions button[data-action="retry"]').click()`);
      await browser.waitFor(`/^retry lane-1: requested \\(#\\d+\\)$/.test(document.getElementById('act-result').textContent)`);
      await until(() => /^CREW_CONTROL: seq=\d+ action=retry lane=lane-1 by=human:ops status=applied/m.test(run.out()), 30_000, 'the retry to be applied');
      await until(() => /^CREW_LANE: lane=lane-1 .*status=complete/m.test(run.out()), 120_000, 'lane-1 to complete');
      await open(browser, url.replace(/\?token=.*$/, ''));
      await browser.screenshot(join(shots, 'console-stuck-retry.png'));
      writeFileSync(go, '');
      const code = await run.exited;
      expect(run.out(), run.out()).toMatch(/^CREW_LANE: lane=lane-1 .*status=complete/m);
      expect(code).toBe(1);
      expect(run.out()).toMatch(/^CREW_SUMMARY: lanes=3 complete=2 failed=1 /m);
    } finally {
      if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGTERM');
      await run.exited;
      expect(await under.close()).toEqual([]);
      expect(killStrays(root)).toEqual([]);
    }
  }, 240_000);
});
