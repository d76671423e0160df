import type { CrewSnapshot } from './snapshot.ts';

// The crew web view's HTML, rendered on the server for the first paint and again in the
// browser for every snapshot the event stream brings. The page's script is built from
// these functions' own source text (Function.prototype.toString), so each must be
// self-contained: no reference to anything but its parameters, the other functions of
// this file by name, and language globals (String, Number, Math). Keep them in this one
// file: a test bundler rewrites references to imported names, which would break the page.

/** Escapes a value for HTML text and quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) =>
    c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&#39;',
  );
}

/**
 * The renewal latency histogram as an inline SVG: one `rect.bar` per count (zero counts
 * too, with height 0), each with a tooltip naming its bucket; an empty histogram draws
 * no bar and says so.
 */
export function renderHistogramSvg(histogram: CrewSnapshot['histogram']): string {
  const width = 480;
  const height = 160;
  const top = 8;
  const bottom = 28;
  const side = 8;
  const num = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) ? n : 0);
  const ms = (n: number) => String(Math.round(n * 100) / 100);
  const counts = (Array.isArray(histogram?.counts) ? histogram.counts : []).map((c) => Math.max(0, num(c)));
  const bounds = (Array.isArray(histogram?.boundsMs) ? histogram.boundsMs : []).map(num);
  const open = `<svg xmlns="http://www.w3.org/2000/svg" class="histogram" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img"`;
  if (counts.length === 0) {
    return `${open} aria-label="renewal latency: no samples"><text x="${width / 2}" y="${height / 2}" text-anchor="middle" class="axis">no samples</text></svg>`;
  }
  const label = (i: number) =>
    i < bounds.length ? `≤ ${ms(bounds[i]!)} ms` : bounds.length > 0 ? `> ${ms(bounds[bounds.length - 1]!)} ms` : 'all';
  const max = counts.reduce((a, b) => Math.max(a, b), 1);
  const slot = (width - 2 * side) / counts.length;
  const barWidth = Math.max(1, Math.floor(slot * 0.8));
  const plot = height - top - bottom;
  // Axis labels under at most about eight bars, evenly spread, so they never overlap.
  const every = Math.max(1, Math.ceil(counts.length / 8));
  let total = 0;
  let body = '';
  counts.forEach((count, i) => {
    total += count;
    const h = Math.round((count / max) * plot);
    const x = Math.round(side + i * slot + (slot - barWidth) / 2);
    body += `<rect class="bar" x="${x}" y="${height - bottom - h}" width="${barWidth}" height="${h}" data-count="${count}"><title>${label(i)}: ${count}</title></rect>`;
    if (i % every === 0 || i === counts.length - 1) {
      body += `<text class="axis" x="${Math.round(x + barWidth / 2)}" y="${height - bottom + 14}" text-anchor="middle">${label(i)}</text>`;
    }
  });
  return `${open} aria-label="renewal latency: ${total} samples in ${counts.length} buckets">${body}</svg>`;
}

/**
 * The body of the page for one snapshot: status, lanes by state, attempts, marks per
 * second, renewal p99, the histogram, the summary line once done, and the lane table
 * (the first 500 lanes; the rest are counted). Every value from the snapshot is escaped.
 */
export function renderCrewView(snapshot: CrewSnapshot): string {
  const maxRows = 500;
  const esc = escapeHtml;
  const num = (n: unknown, digits: number) =>
    typeof n === 'number' && Number.isFinite(n) ? (digits === 0 ? String(Math.round(n)) : n.toFixed(digits)) : '–';
  const s = snapshot;
  const byState = s.byState ?? {};
  const attempts = s.attempts ?? { running: 0, queued: 0, started: 0, finished: 0 };
  const lanes = Array.isArray(s.lanes) ? s.lanes : [];
  const states = Object.keys(byState)
    .map((state) => `<tr data-state="${esc(state)}"><th>${esc(state)}</th><td class="n">${num(byState[state], 0)}</td></tr>`)
    .join('');
  const counter = (key: 'running' | 'queued' | 'started' | 'finished') =>
    `<div><dt>${key}</dt><dd id="attempts-${key}">${num(attempts[key], 0)}</dd></div>`;
  const rows = lanes
    .slice(0, maxRows)
    .map(
      (lane) =>
        `<tr data-lane="${esc(lane.id)}"><td class="id">${esc(lane.id)}</td><td>${esc(lane.state)}</td><td class="n">${num(lane.attempts, 0)}</td><td>${lane.code === null || lane.code === undefined ? '' : esc(lane.code)}</td></tr>`,
    )
    .join('');
  const more = lanes.length > maxRows ? `<p id="lanes-more">and ${lanes.length - maxRows} more lanes</p>` : '';
  const summary = s.done && typeof s.summary === 'string' ? `<pre id="summary">${esc(s.summary)}</pre>` : '';
  return (
    `<header><h1>crew <span id="crew">${esc(s.crew)}</span></h1>` +
    `<p id="status" data-done="${s.done ? 'true' : 'false'}">${s.done ? 'done' : 'running'} · ${num(s.elapsedS, 1)} s</p></header>` +
    summary +
    `<section><h2>Lanes by state</h2><table id="states"><tbody>${states}</tbody></table></section>` +
    `<section><h2>Attempts</h2><dl id="attempts">${counter('running')}${counter('queued')}${counter('started')}${counter('finished')}</dl></section>` +
    `<section><h2>Leases</h2><dl><div><dt>marks/s</dt><dd id="marks-per-second">${num(s.marksPerSecond, 1)}</dd></div>` +
    `<div><dt>renewal p99</dt><dd id="renewal-p99">${s.renewalP99Ms === null ? '–' : `${num(s.renewalP99Ms, 2)} ms`}</dd></div></dl>` +
    `<h3>Renewal latency</h3>${renderHistogramSvg(s.histogram)}</section>` +
    `<section><h2>Lanes (${lanes.length})</h2><table id="lanes"><thead><tr><th>lane</th><th>state</th><th>attempts</th><th>code</th></tr></thead><tbody>${rows}</tbody></table>${more}</section>`
  );
}
