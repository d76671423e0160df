import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createContext, runInContext } from 'node:vm';
import { build } from 'esbuild';
import { describe, expect, test } from 'vitest';
import { DEFAULT_UI, escapeHtml, PAGE_ROWS, renderCrewView, renderHistogramSvg, type ViewUi } from '../formats/console/view.ts';
import { PAGE_SCRIPT } from '../main/console/page.ts';
import { crewSnapshot, lanesIn } from './helpers/crew-source.ts';
import type { CrewSnapshot } from '../formats/console/snapshot.ts';
import { ROOT } from './helpers/cli.ts';

// The view's pure renderers, and the page script built from their source text: it must run
// on its own, from the sources and from a bundle minified like dist/.

const bars = (svg: string) => [...svg.matchAll(/<rect class="bar"[^>]*height="(\d+)" data-count="(\d+)"/g)].map((m) => [Number(m[1]), Number(m[2])]);
const HOSTILE = '<img src=x onerror=alert(1)>"\'&';

describe('escapeHtml', () => {
  test.each([
    ['<script>', '&lt;script&gt;'],
    ['a & b', 'a &amp; b'],
    ['"quoted"', '&quot;quoted&quot;'],
    ["it's", 'it&#39;s'],
    ['&amp;', '&amp;amp;'],
    [42, '42'],
  ])('should escape %j as %j', (input, output) => {
    expect(escapeHtml(input)).toBe(output);
  });
});

describe('renderHistogramSvg', () => {
  test('should draw one bar per count, scaled to the largest, zero counts flat', () => {
    const svg = renderHistogramSvg({ boundsMs: [0.25, 0.5, 1, 2], counts: [5, 10, 0, 1, 2] });
    expect(bars(svg)).toEqual([
      [62, 5],
      [124, 10],
      [0, 0],
      [12, 1],
      [25, 2],
    ]);
    expect(svg).toContain('<title>≤ 0.25 ms: 5</title>');
    expect(svg).toContain('<title>> 2 ms: 2</title>');
    expect(svg).toContain('aria-label="renewal latency: 18 samples in 5 buckets"');
  });

  test('should draw no bar for an empty histogram and say so', () => {
    const svg = renderHistogramSvg({ boundsMs: [], counts: [] });
    expect(bars(svg)).toEqual([]);
    expect(svg).toContain('>no samples</text>');
  });

  test('should draw a negative or non-finite count as zero', () => {
    expect(bars(renderHistogramSvg({ boundsMs: [1, 2, 3], counts: [-4, Number.NaN, Number.POSITIVE_INFINITY, 2] })).map(([, n]) => n)).toEqual([0, 0, 0, 2]);
  });

  test('should label at most about eight buckets on the axis, the last always', () => {
    const counts = Array.from({ length: 40 }, (_, i) => i);
    const bounds = counts.map((i) => i + 1);
    const svg = renderHistogramSvg({ boundsMs: bounds, counts });
    expect(bars(svg)).toHaveLength(40);
    const labels = [...svg.matchAll(/<text class="axis"[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    expect(labels).toEqual(['≤ 1 ms', '≤ 6 ms', '≤ 11 ms', '≤ 16 ms', '≤ 21 ms', '≤ 26 ms', '≤ 31 ms', '≤ 36 ms', '≤ 40 ms']);
  });
});

const UI: ViewUi = DEFAULT_UI;
const NOW = '2026-12-01T12:00:00.000Z';
const ago = (s: number) => new Date(Date.parse(NOW) - s * 1000).toISOString();
const rowIds = (html: string, table = 'lanes') => {
  const body = html.slice(html.indexOf(`<table id="${table}">`));
  return [...body.slice(0, body.indexOf('</table>')).matchAll(/<tr data-lane="([^"]*)"/g)].map((m) => m[1]);
};

describe('renderCrewView', () => {
  test('should escape lane ids, states, codes and details in text and attributes', () => {
    const html = renderCrewView(crewSnapshot([{ id: HOSTILE, state: HOSTILE, attempts: 1, code: HOSTILE, detail: HOSTILE }]), UI);
    const escaped = '&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;';
    expect(html).not.toContain('<img');
    expect(html).toContain(`<tr data-lane="${escaped}" class="s-${escaped}"><td class="id"><a href="/lanes/%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E%22&#39;%26">${escaped}</a></td><td class="state">${escaped}</td>`);
    expect(html).toContain(`<td class="detail">${escaped}</td>`);
    expect(html).toContain(`data-state="${escaped}" data-filter-state="${escaped}">${escaped} <b>1</b></a>`);
  });

  test('should say on a lane\'s row how the last merge train took it: landed at its commit, or its status and code, escaped', () => {
    const at = '2026-12-02T12:00:00.000Z';
    const html = renderCrewView(
      crewSnapshot([
        { id: 'a', state: 'complete', attempts: 1, code: null, detail: null, land: { status: 'landed', code: null, to: '0123456789abcdef0123', at } },
        { id: 'b', state: 'complete', attempts: 1, code: null, detail: null, land: { status: 'conflict', code: 'LAND_CONFLICT', to: null, at } },
        { id: 'c', state: 'complete', attempts: 1, code: null, detail: null, land: { status: HOSTILE, code: HOSTILE, to: null, at } },
        { id: 'd', state: 'complete', attempts: 1, code: null, detail: null },
      ]),
      UI,
    );
    const note = (lane: string) => new RegExp(`<tr data-lane="${lane}"[^>]*>.*?<td class="detail">(.*?)</td>`).exec(html)?.[1];
    expect(note('a')).toBe(' <span class="land" data-land="landed">landed at 0123456789ab</span>');
    expect(note('b')).toBe(' <span class="land" data-land="conflict">land: conflict LAND_CONFLICT</span>');
    expect(note('c')).not.toContain('<img');
    expect(note('d')).toBe('');
  });

  test('should show the summary line only once done', () => {
    const summary = 'CREW_SUMMARY: lanes=1 complete=1 failed=0 interrupted=0 attempts=1 duration_s=1.0';
    expect(renderCrewView(crewSnapshot(lanesIn('complete', 1), { summary }), UI)).not.toContain('id="summary"');
    expect(renderCrewView(crewSnapshot(lanesIn('complete', 1), { summary, done: true, run: 'done' }), UI)).toContain(`<pre id="summary">${summary}</pre>`);
    expect(renderCrewView(crewSnapshot(lanesIn('complete', 1), { done: true, run: 'done' }), UI)).toContain('<p id="status" data-done="true" data-run="done" data-source="live">done · 2s</p>');
  });

  test('should show p99 as a dash before any renewal', () => {
    expect(renderCrewView(crewSnapshot([], { renewalP99Ms: null }), UI)).toContain('<dd id="renewal-p99">–</dd>');
    expect(renderCrewView(crewSnapshot([], { renewalP99Ms: 1.234 }), UI)).toContain('<dd id="renewal-p99">1.23 ms</dd>');
  });

  test('should show pace, ETA, spend against the cap and paused providers', () => {
    const html = renderCrewView(
      crewSnapshot(lanesIn('running', 2), {
        lanesPerMinute: 12.34,
        etaS: 250,
        spend: { usd: 1.5, capUsd: 40 },
        providers: [{ provider: 'codex', pausedUntil: '2026-12-01T12:01:00.000Z', allowance: 1, running: 0, rateLimits: 3 }],
      }),
      UI,
    );
    expect(html).toContain('<dd id="lanes-per-minute">12.3</dd>');
    expect(html).toContain('<dd id="eta">4m</dd>');
    expect(html).toContain('<dd id="spend">$1.50 of $40.00</dd>');
    expect(html).toContain('<span data-provider="codex">codex paused until 2026-12-01T12:01:00.000Z (3 limits)</span>');
  });

  test('should say how many calls are of unknown cost and what each counts against the cap', () => {
    const page = (spend: CrewSnapshot['spend']) => renderCrewView(crewSnapshot(lanesIn('running', 1), { spend }), UI);
    expect(page({ usd: 0.25, capUsd: 5, unpriced: 3, reserveUsd: 0.5 })).toContain('<dd id="spend">$0.25 of $5.00 <span id="unpriced">(3 unpriced calls counted at $0.50 each)</span></dd>');
    expect(page({ usd: 0.25, capUsd: null, unpriced: 1, reserveUsd: 0.5 })).toContain('<dd id="spend">$0.25 <span id="unpriced">(1 unpriced call)</span></dd>');
    expect(page({ usd: 0.25, capUsd: 5, unpriced: 0, reserveUsd: 0.5 })).toContain('<dd id="spend">$0.25 of $5.00</dd>');
  });

  test('should put failed lanes first, then stuck ones (quiet longer than the threshold), with the retry command', () => {
    const lanes = [
      { id: 'ok', state: 'work', attempts: 1, code: null, activityAt: ago(30) },
      { id: 'quiet', state: 'review', attempts: 1, code: null, activityAt: ago(240) },
      { id: 'queued', state: 'queued', attempts: 0, code: null },
      { id: 'broken', state: 'failed', attempts: 2, code: 'LEASE_EXPIRED', detail: 'ceo outside voice failed', activityAt: ago(10) },
      { id: 'done', state: 'complete', attempts: 3, code: null, activityAt: ago(999) },
    ];
    const html = renderCrewView(crewSnapshot(lanes, { now: NOW, stuckAfterS: 120, retryCommand: 'laneward crew run c.json --retry-failed --state s' }), UI);
    expect(html).toContain('<section id="attention" data-count="2"><h2>Needs you: 1 failed, 1 stuck</h2>');
    const attention = html.slice(html.indexOf('id="attention"'), html.indexOf('id="states"'));
    expect([...attention.matchAll(/<tr data-lane="([^"]*)"/g)].map((m) => m[1])).toEqual(['quiet']);
    expect(attention).toContain('<td>stuck</td><td>quiet for 4m</td>');
    expect(attention).toContain(
      '<tr class="s-failed" data-code="LEASE_EXPIRED" data-count="1"><td>failed</td><td>LEASE_EXPIRED</td><td class="n">1</td><td class="lanes"><a href="/lanes/broken" data-lane="broken">broken</a></td><td class="detail">ceo outside voice failed</td><td><code class="group-retry">laneward crew run c.json --retry-failed --state s</code></td></tr>',
    );
    expect(attention).toContain('<code id="retry">laneward crew run c.json --retry-failed --state s</code>');
    expect(rowIds(html)).toEqual(['broken', 'quiet', 'ok', 'queued', 'done']);
  });

  test('should filter by state, needs-me, code and text, and sort by cost, attempts or age', () => {
    const lanes = [
      { id: 'a', state: 'work', attempts: 1, code: null, costUsd: 0.5, startedAt: ago(50) },
      { id: 'b', state: 'failed', attempts: 4, code: 'LEASE_EXPIRED', costUsd: 2, startedAt: ago(70) },
      { id: 'c', state: 'failed', attempts: 2, code: 'CHILD_FAILED', costUsd: 1, detail: 'native crashed', startedAt: ago(90) },
    ];
    const snap = crewSnapshot(lanes, { now: NOW });
    expect(rowIds(renderCrewView(snap, { ...UI, state: 'failed' }))).toEqual(['b', 'c']);
    expect(rowIds(renderCrewView(snap, { ...UI, state: 'attention' }))).toEqual(['b', 'c']);
    expect(rowIds(renderCrewView(snap, { ...UI, code: 'child' }))).toEqual(['c']);
    expect(rowIds(renderCrewView(snap, { ...UI, text: 'crashed' }))).toEqual(['c']);
    expect(rowIds(renderCrewView(snap, { ...UI, sort: 'cost' }))).toEqual(['b', 'c', 'a']);
    expect(rowIds(renderCrewView(snap, { ...UI, sort: 'attempts' }))).toEqual(['b', 'c', 'a']);
    expect(rowIds(renderCrewView(snap, { ...UI, sort: 'age' }))).toEqual(['c', 'b', 'a']);
    expect(rowIds(renderCrewView(snap, { ...UI, sort: 'id' }))).toEqual(['a', 'b', 'c']);
  });

  test('should page the table so every lane is reachable, and draw every lane in the grid', () => {
    const lanes = [...lanesIn('complete', 4_990), ...lanesIn('failed', 10, 4_990)];
    const snap = crewSnapshot(lanes);
    const first = renderCrewView(snap, UI);
    expect(rowIds(first)).toHaveLength(PAGE_ROWS);
    // Failed first: the failures at the end of the file are on the first page.
    expect(rowIds(first).slice(0, 10)).toEqual(lanesIn('failed', 10, 4_990).map((l) => l.id));
    expect(first).toContain('<p id="pager" data-page="0" data-pages="50">lanes 1–100 of 5000 ');
    const byFile = { ...UI, sort: 'id' };
    const last = renderCrewView(snap, { ...byFile, page: 49 });
    expect(rowIds(last)).toEqual(lanes.slice(4_900).map((l) => l.id));
    expect(last).toContain('data-page-to="50" disabled');
    // A page past the end shows the last one.
    expect(rowIds(renderCrewView(snap, { ...byFile, page: 999 }))).toEqual(rowIds(last));
    expect(first.match(/<a class="cell /g)).toHaveLength(5_000);
  });
});

/** Runs a page script in a bare context with a fake window; returns what the page would show. */
function runPage(script: string, hash = '') {
  const element = (id: string) => ({
    id,
    innerHTML: '',
    value: '',
    attributes: {} as Record<string, string>,
    listeners: {} as Record<string, ((event: unknown) => void)[]>,
    textContent: null as string | null,
    setAttribute(name: string, value: string) {
      this.attributes[name] = value;
    },
    addEventListener(type: string, listener: (event: unknown) => void) {
      (this.listeners[type] ??= []).push(listener);
    },
  });
  const elements = Object.fromEntries(['view', 'conn', 'controls', 'f-state', 'f-code', 'f-text', 'f-sort'].map((id) => [id, element(id)]));
  const sources: { url: string; closed: boolean; readyState: number; onmessage: ((e: { data: string }) => void) | null; onerror: (() => void) | null; close(): void }[] = [];
  class FakeEventSource {
    readyState = 1;
    closed = false;
    onmessage: ((e: { data: string }) => void) | null = null;
    onerror: (() => void) | null = null;
    constructor(readonly url: string) {
      sources.push(this);
    }
    close() {
      this.closed = true;
      this.readyState = 2;
    }
  }
  const timers: (() => void)[] = [];
  const hashListeners: (() => void)[] = [];
  const location = { hash };
  const document = { title: '', getElementById: (id: string) => elements[id] ?? null };
  const win = { document, EventSource: FakeEventSource, location, addEventListener: (_t: string, l: () => void) => hashListeners.push(l), setTimeout: (f: () => void) => timers.push(f) };
  // Only language globals: anything else the script names is a ReferenceError.
  runInContext(script, createContext({ window: win }));
  const flush = () => {
    for (const timer of timers.splice(0)) timer();
  };
  const navigate = (next: string) => {
    location.hash = next;
    for (const l of hashListeners) l();
  };
  return { view: elements['view']!, conn: elements['conn']!, elements, document, sources, flush, navigate, location };
}

describe('the page script', () => {
  const start = crewSnapshot([...lanesIn('running', 2), { id: HOSTILE, state: 'failed', attempts: 3, code: 'X' }]);
  const changed = { id: 'lane-001', state: 'complete', attempts: 4, code: null };
  const added = { id: 'lane-new', state: 'failed', attempts: 1, code: 'LEASE_EXPIRED' };
  const { lanes: _, ...head } = start;
  const end = { ...head, done: true, summary: 'CREW_SUMMARY: lanes=4 complete=1 failed=2 interrupted=0 attempts=3 duration_s=2.0' };
  const afterDelta = { ...head, elapsedS: 2, lanes: [start.lanes[0]!, changed, start.lanes[2]!, added] };

  function expectRendersLikeTheServer(script: string) {
    const page = runPage(script);
    expect(page.sources.map((s) => s.url)).toEqual(['/events']);
    const events = page.sources[0]!;
    events.onmessage!({ data: JSON.stringify({ type: 'snapshot', seq: 4, snapshot: start }) });
    page.flush();
    expect(page.view.innerHTML).toBe(renderCrewView(start, UI));
    expect(page.view.attributes['data-seq']).toBe('4');
    expect(page.conn.textContent).toBe('live');
    events.onmessage!({ data: 'not json' });
    page.flush();
    expect(page.view.attributes['data-seq']).toBe('4');
    events.onerror!();
    expect(page.conn.textContent).toBe('reconnecting');
    // A delta: the changed lane replaced in place, the new one appended, the head replaced.
    events.onmessage!({ data: JSON.stringify({ type: 'delta', seq: 5, from: 4, head: { ...head, elapsedS: 2 }, lanes: [changed, added] }) });
    page.flush();
    expect(page.view.innerHTML).toBe(renderCrewView(afterDelta, UI));
    // The filter lives in the fragment.
    page.navigate('state=failed&sort=id');
    expect(page.view.innerHTML).toBe(renderCrewView(afterDelta, { ...UI, state: 'failed', sort: 'id' }));
    expect(page.elements['f-state']!.value).toBe('failed');
    page.navigate('');
    // A delta that does not follow the last one applied: the page starts again from a snapshot.
    events.onmessage!({ data: JSON.stringify({ type: 'delta', seq: 9, from: 7, head: end, lanes: [] }) });
    expect(events.closed).toBe(true);
    expect(page.sources).toHaveLength(2);
    const again = page.sources[1]!;
    again.onmessage!({ data: JSON.stringify({ type: 'snapshot', seq: 9, snapshot: { ...end, lanes: afterDelta.lanes } }) });
    expect(page.view.innerHTML).toBe(renderCrewView({ ...end, lanes: afterDelta.lanes }, UI));
    expect(page.document.title).toBe('crew demo (done)');
    expect(again.closed).toBe(true);
    expect(page.conn.textContent).toBe('finished');
  }

  test('should run on its own and render exactly what the server renders', () => {
    expect(PAGE_SCRIPT).not.toMatch(/<\/script/i);
    expectRendersLikeTheServer(PAGE_SCRIPT);
  });

  test('should do the same from a bundle minified like dist/', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'laneward-page-'));
    try {
      const out = join(dir, 'page.mjs');
      // The options of scripts/build.mjs that change code.
      await build({
        entryPoints: [join(ROOT, 'main/console/page.ts')],
        outfile: out,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        minifyWhitespace: true,
        minifySyntax: true,
        logLevel: 'silent',
      });
      const bundled = (await import(pathToFileURL(out).href)) as { PAGE_SCRIPT: string };
      expect(bundled.PAGE_SCRIPT).not.toBe(PAGE_SCRIPT);
      expectRendersLikeTheServer(bundled.PAGE_SCRIPT);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
