import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { LANE_PAGE_STYLE, renderLanePage } from '../formats/console/lane-page.ts';
import type { LaneStory } from '../formats/console/lane-story.ts';
import { LANE_PAGE_CSP, LANE_PAGE_SCRIPT } from '../main/console/lane-page-csp.ts';
import { LANE_PAGE } from '../main/console/lane-page-route.ts';
import { readLaneStory } from '../main/console/lane-story.ts';
import { openStore } from '../main/store/store.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('lane-page');

/** A story with every section filled, every value a plain one. */
const STORY: LaneStory = {
  crew: 'crew-a',
  lane: 'lane-1',
  state: 'failed',
  code: 'CHILD_FAILED',
  detail: 'ceo native voice failed (CHILD_FAILED)',
  runDir: '/runs/lane-1',
  updatedAt: '2026-01-01T00:00:03.000Z',
  run: 'lane-1-20260101-abcdef',
  qaLane: 'crew-a.lane-1',
  stages: [
    { stage: 'review', startedAt: '2026-01-01T00:00:00.000Z', endedAt: '2026-01-01T00:00:03.000Z', durationMs: 3000 },
    { stage: 'failed', startedAt: '2026-01-01T00:00:03.000Z', endedAt: '2026-01-01T00:00:03.000Z', durationMs: 0 },
  ],
  attempts: [
    { id: 'a1', kind: 'reviewer', voice: 'native', phase: 'ceo', model: 'claude-x', outcome: 'failed', code: 'CHILD_FAILED', detail: 'exit 3', startedAt: '2026-01-01T00:00:01.000Z', durationMs: 193, marks: 2, cleanupConfirmed: true, costUsd: 0.5, session: 's-1' },
    { id: 'observer:1', kind: 'observer', voice: 'bootstrap', phase: null, model: null, outcome: 'completed', code: null, detail: 'ok', startedAt: null, durationMs: null, marks: null, cleanupConfirmed: null, costUsd: null, session: null },
  ],
  review: {
    status: 'awaiting_result',
    phases: [{ phase: 'ceo', state: 'closed', native: 'completed', outside: 'completed', findings: 2, consensus: { coverage: 'both', confirmed: 1, unverified: 0, disagree: 0, new: 0, nativeOnly: 0 } }],
    gate: { rev: 1, state: 'answered', items: 1, decisions: 1, answer: 'as-is', by: 'agent:x', at: '2026-01-01T00:00:02.000Z', choices: [{ item: 'p1', chosen: 'a', status: 'approved' }] },
    spendUsd: 0.5,
  },
  qa: { verdicts: [{ call: 1, mode: 'cadence', verdict: 'fail', code: null, at: '2026-01-01T00:00:02.000Z', guidance: 'rerun the tests' }], guidance: 'rerun the tests' },
  agent: { turnsDispatched: 2, turnsDone: 1, lostTurns: [1], session: 'sess', costUsd: 0.25, sessionUsd: 0.25 },
  workspace: { branch: 'laneward/crew-a/lane-1', head: 'abc123', worktree: '/runs/lane-1/worktree', diffStat: '1 file changed' },
  costUsd: 0.75,
  files: [
    { path: 'plan.md', bytes: 5, text: 'plan\n', truncated: false },
    { path: 'big.log', bytes: 100, text: 'x', truncated: true },
    { path: 'link', bytes: 11, text: null, truncated: false, skipped: 'symlink' },
  ],
  filesLeftOut: { count: 3, exact: true },
  fix: 'read the provider output',
  retry: "laneward crew run crew.json --retry-failed --state 'st ate'",
};

const PAYLOAD = `</pre></code></td><script>alert(1)</script><img src=x onerror=alert(2)>"'&\u202e\n`;

/** The story with every string in it (keys kept) replaced by a hostile payload naming where it was. */
function hostile(value: unknown, path = ''): unknown {
  if (typeof value === 'string') return `${path}${PAYLOAD}`;
  if (Array.isArray(value)) return value.map((v, i) => hostile(v, `${path}${i}.`));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, hostile(v, `${path}${k}.`)]));
  return value;
}

/** Every tag the page may hold; anything else came from a value. */
const TAGS = new Set(['html', 'head', 'meta', 'title', 'style', 'body', 'nav', 'a', 'header', 'h1', 'h2', 'h3', 'dl', 'dt', 'dd', 'span', 'code', 'section', 'p', 'pre', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'details', 'summary', 'div']);

/** Every attribute the page may set; a value that broke out of its quotes would add another. */
const ATTRIBUTES = new Set(['lang', 'charset', 'name', 'content', 'id', 'href', 'class', 'data-attempt', 'data-phase', 'data-call', 'data-skipped', 'data-truncated']);

/** The attribute names of every tag, read as a browser would: values are double-quoted. */
const attributesOf = (html: string) =>
  new Set([...html.matchAll(/<[a-zA-Z][a-zA-Z0-9-]*((?:\s+[^\s=>]+(?:="[^"]*")?)*)\s*\/?>/g)].flatMap((m) => [...m[1]!.matchAll(/\s+([^\s=>]+)(?:="[^"]*")?/g)].map((a) => a[1]!.toLowerCase())));
const tagsOf = (html: string) => new Set([...html.matchAll(/<\/?([a-zA-Z][a-zA-Z0-9-]*)/g)].map((m) => m[1]!.toLowerCase()));
const styleOf = (html: string) => /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('base64');

describe('renderLanePage', () => {
  test('should render every section of a story, with the fix and the exact retry command in a code block', () => {
    const html = renderLanePage(STORY);
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).toContain('<a id="back" href="/">');
    expect(html).toContain('<a id="json" href="/lanes/lane-1.json">');
    expect(html).toContain('<code id="code">CHILD_FAILED</code>');
    expect(html).toContain('<p id="fix">read the provider output</p>');
    expect(html).toContain(`<pre><code id="retry">laneward crew run crew.json --retry-failed --state &#39;st ate&#39;</code></pre>`);
    expect(html).toContain('<tr data-attempt="a1"><td>a1</td><td>reviewer</td><td>native</td><td>ceo</td><td>claude-x</td><td>failed</td><td>CHILD_FAILED</td>');
    expect(html).toContain('<td>193 ms</td><td>2</td><td>confirmed</td><td>$0.5000</td><td>s-1</td>');
    expect(html).toContain('<tr data-call="1"><td class="n">1</td><td>cadence</td><td>fail</td>');
    expect(html).toContain('<span id="guidance">rerun the tests</span>');
    expect(html).toContain('<dt>diff</dt><dd>1 file changed</dd>');
    expect(html).toContain('<details><summary>plan.md (5 bytes)</summary><pre>plan\n</pre></details>');
    expect(html).toContain('<details data-truncated="true"><summary>big.log (100 bytes)</summary><p class="note">truncated: the first 1 bytes of 100 shown</p>');
    expect(html).toContain('<details data-skipped="symlink"><summary>link (11 bytes)</summary>');
    expect(html).toContain('<p class="note" id="files-more">3 more files not listed</p>');
    expect([...tagsOf(html)].filter((tag) => !TAGS.has(tag))).toEqual([]);
    expect([...attributesOf(html)].sort()).toEqual([...ATTRIBUTES].sort());
  });

  test('should leave out the what-to-do box for a lane with nothing to fix', () => {
    const html = renderLanePage({ ...STORY, state: 'complete', code: null, detail: null, fix: null, retry: null });
    expect(html).not.toContain('id="todo"');
    expect(html).not.toContain('id="retry"');
  });

  test('should escape every value: no tag, attribute or script comes from the story', () => {
    const evil = hostile(STORY) as LaneStory;
    const html = renderLanePage(evil);
    expect(html.toLowerCase()).not.toContain('<script');
    expect(html.toLowerCase()).not.toContain('<img');
    expect([...attributesOf(html)].filter((name) => !ATTRIBUTES.has(name))).toEqual([]);
    expect([...tagsOf(html)].filter((tag) => !TAGS.has(tag))).toEqual([]);
    // The payload is there, as text, wherever a value is shown (the file text and the retry command in full).
    expect(html).toContain(`files.0.text.&lt;/pre&gt;&lt;/code&gt;&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&quot;&#39;&amp;\\u202e\n</pre>`);
    expect(html).toContain(`<code id="retry">retry.&lt;/pre&gt;&lt;/code&gt;&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&quot;&#39;&amp;\\u202e\n</code>`);
    // One-line values show their line breaks and bidi overrides rather than obeying them.
    expect(html).toContain('<span id="detail">detail.&lt;/pre&gt;');
    expect(html).toContain('\\u202e\\n</span>');
    expect(html).not.toContain('\u202e');
    // The lane id is encoded in the JSON link, then escaped for the attribute.
    expect(html).toContain(`<a id="json" href="/lanes/${encodeURIComponent(evil.lane).replaceAll("'", '&#39;')}.json">`);
  });

  test('should admit its one style and its one script by hash and nothing else, and reach only its own server', () => {
    const html = LANE_PAGE.render(STORY);
    expect(styleOf(html)).toBe(LANE_PAGE_STYLE);
    const scripts = [...html.matchAll(/<script>([^]*?)<\/script>/g)].map((m) => m[1]);
    expect(scripts).toEqual([LANE_PAGE_SCRIPT]);
    expect(LANE_PAGE_CSP).toBe(`default-src 'none'; script-src 'sha256-${sha256(LANE_PAGE_SCRIPT)}'; style-src 'sha256-${sha256(styleOf(html))}'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`);
    // No inline handler anywhere: the script binds its buttons itself.
    expect(html).not.toMatch(/\son[a-z]+=/i);
  });

  test('should keep every value of a hostile story escaped on the served page, whose only script is its own', () => {
    const evil = hostile({ ...STORY, state: 'work' }) as LaneStory;
    const html = LANE_PAGE.render({ ...evil, state: 'work', owner: null });
    expect([...html.matchAll(/<script>([^]*?)<\/script>/g)].map((m) => m[1])).toEqual([LANE_PAGE_SCRIPT]);
    expect(html.toLowerCase()).not.toContain('<img');
    const served = new Set([...ATTRIBUTES, 'type', 'data-action', 'data-lane', 'data-state', 'hidden', 'role', 'size', 'autocomplete']);
    expect([...attributesOf(html.replace(/<script>[^]*?<\/script>/g, ''))].filter((name) => !served.has(name))).toEqual([]);
    expect([...tagsOf(html.replace(/<script>[^]*?<\/script>/g, ''))].filter((tag) => !TAGS.has(tag) && !['button', 'label', 'input'].includes(tag))).toEqual([]);
    // A running lane offers a cancel of its call and of itself, named by its id (escaped), and a diff pane.
    expect(html).toContain(`<button type="button" data-action="cancel-call" data-lane="lane.&lt;/pre&gt;`);
    expect(html).toContain('<section id="diff" data-state="idle">');
  });
});

describe('renderLanePage of a hostile run directory', () => {
  test('should show its files escaped, bounded, links and FIFOs unread', () => {
    const runDir = join(root, 'runs', 'lane-x');
    mkdirSync(runDir, { recursive: true });
    writeFileSync(join(runDir, 'result.md'), 'done <script>alert(1)</script></pre><b>bold</b>\n');
    symlinkSync('/etc/passwd', join(runDir, 'passwd'));
    writeFileSync(join(runDir, 'big.log'), Buffer.alloc(5 * 1024 * 1024, 'y'));
    writeFileSync(join(runDir, 'blob.bin'), Buffer.from([1, 0, 2]));
    expect(spawnSync('mkfifo', [join(runDir, 'pipe')]).status).toBe(0);
    writeFileSync(join(runDir, 'x\n<i>.md'), 'named\n');
    const store = openStore(join(root, 'state'));
    const story = readLaneStory(store, { crew: 'c', lane: 'lane-x', retryCommand: null, runDir })!;
    const html = renderLanePage(story);
    expect(html.toLowerCase()).not.toContain('<script');
    expect([...tagsOf(html)].filter((tag) => !TAGS.has(tag))).toEqual([]);
    expect(html).toContain('<pre>done &lt;script&gt;alert(1)&lt;/script&gt;&lt;/pre&gt;&lt;b&gt;bold&lt;/b&gt;\n</pre>');
    expect(html).toContain('<details data-skipped="symlink"><summary>passwd (');
    expect(html).not.toContain('root:x:0');
    expect(html).toContain(`<summary>big.log (${5 * 1024 * 1024} bytes)</summary><p class="note">truncated: the first 65536 bytes of ${5 * 1024 * 1024} shown</p>`);
    expect(html).toContain('<details data-skipped="binary"><summary>blob.bin (3 bytes)</summary>');
    expect(html).toContain('<details data-skipped="special"><summary>pipe (0 bytes)</summary>');
    expect(html).toContain('<summary>x\\n&lt;i&gt;.md (6 bytes)</summary>');
  });
});
