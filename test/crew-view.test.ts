import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createContext, runInContext } from 'node:vm';
import { build } from 'esbuild';
import { describe, expect, test } from 'vitest';
import type { CrewSnapshot } from '../formats/console/snapshot.ts';
import { escapeHtml, renderCrewView, renderHistogramSvg } from '../formats/console/view.ts';
import { PAGE_SCRIPT } from '../main/console/page.ts';
import { crewSnapshot, lanesIn } from './helpers/crew-source.ts';
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

describe('renderCrewView', () => {
  test('should escape lane ids, states and codes in text and attributes', () => {
    const html = renderCrewView(crewSnapshot([{ id: HOSTILE, state: HOSTILE, attempts: 1, code: HOSTILE }]));
    const escaped = '&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;';
    expect(html).not.toContain('<img');
    expect(html).toContain(`<tr data-lane="${escaped}"><td class="id">${escaped}</td><td>${escaped}</td><td class="n">1</td><td>${escaped}</td></tr>`);
    expect(html).toContain(`<tr data-state="${escaped}"><th>${escaped}</th><td class="n">1</td></tr>`);
  });

  test('should show the summary line only once done', () => {
    const summary = 'CREW_SUMMARY: lanes=1 complete=1 failed=0 interrupted=0 attempts=1 duration_s=1.0';
    expect(renderCrewView(crewSnapshot(lanesIn('complete', 1), { summary }))).not.toContain('id="summary"');
    expect(renderCrewView(crewSnapshot(lanesIn('complete', 1), { summary, done: true }))).toContain(`<pre id="summary">${summary}</pre>`);
    expect(renderCrewView(crewSnapshot(lanesIn('complete', 1), { done: true }))).toContain('<p id="status" data-done="true">done · 1.5 s</p>');
  });

  test('should show p99 as a dash before any renewal', () => {
    expect(renderCrewView(crewSnapshot([], { renewalP99Ms: null }))).toContain('<dd id="renewal-p99">–</dd>');
    expect(renderCrewView(crewSnapshot([], { renewalP99Ms: 1.234 }))).toContain('<dd id="renewal-p99">1.23 ms</dd>');
  });

  test('should list the first 500 lanes and count the rest', () => {
    const html = renderCrewView(crewSnapshot(lanesIn('running', 730)));
    expect(html.match(/<tr data-lane=/g)).toHaveLength(500);
    expect(html).toContain('<p id="lanes-more">and 230 more lanes</p>');
    expect(html).toContain('<h2>Lanes (730)</h2>');
  });
});

/** Runs a page script in a bare context with a fake window; returns what the page would show. */
function runPage(script: string) {
  const view = { innerHTML: '', attributes: {} as Record<string, string>, setAttribute(name: string, value: string) { this.attributes[name] = value; }, textContent: null };
  const conn = { innerHTML: '', textContent: 'connecting' as string | null, setAttribute() {} };
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
  const document = { title: '', getElementById: (id: string) => (id === 'view' ? view : id === 'conn' ? conn : null) };
  // Only language globals: anything else the script names is a ReferenceError.
  runInContext(script, createContext({ window: { document, EventSource: FakeEventSource } }));
  return { view, conn, document, sources };
}

describe('the page script', () => {
  const snapshots: CrewSnapshot[] = [
    crewSnapshot([...lanesIn('running', 2), { id: HOSTILE, state: 'failed', attempts: 3, code: 'X' }]),
    crewSnapshot(lanesIn('complete', 3), { done: true, summary: 'CREW_SUMMARY: lanes=3 complete=3 failed=0 interrupted=0 attempts=3 duration_s=2.0' }),
  ];

  function expectRendersLikeTheServer(script: string) {
    const page = runPage(script);
    expect(page.sources.map((s) => s.url)).toEqual(['/events']);
    const events = page.sources[0]!;
    events.onmessage!({ data: JSON.stringify(snapshots[0]) });
    expect(page.view.innerHTML).toBe(renderCrewView(snapshots[0]!));
    expect(page.view.attributes['data-seq']).toBe('1');
    expect(page.conn.textContent).toBe('live');
    events.onmessage!({ data: 'not json' });
    expect(page.view.attributes['data-seq']).toBe('1');
    events.onerror!();
    expect(page.conn.textContent).toBe('reconnecting');
    events.onmessage!({ data: JSON.stringify(snapshots[1]) });
    expect(page.view.innerHTML).toBe(renderCrewView(snapshots[1]!));
    expect(page.document.title).toBe('crew demo (done)');
    expect(events.closed).toBe(true);
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
