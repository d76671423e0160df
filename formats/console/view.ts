import type { CallCode, CrewHead, CrewSnapshot, LaneView } from './snapshot.ts';

// The crew web view's HTML, rendered on the server for the first paint and again in the
// browser for every snapshot the event stream brings. The page's script is built from
// these functions' own source text (Function.prototype.toString), so each must be
// self-contained: no reference to anything but its parameters, the other functions of
// this file by name, and language globals (String, Number, Math). Keep them in this one
// file: a test bundler rewrites references to imported names, which would break the page.

/**
 * Escapes a value for HTML text and quoted attribute values. Every control, format or
 * separator character (Unicode Cc, Cf, Zl, Zp) and any lone surrogate but a line feed or
 * a tab is written out as `\uXXXX` (formats/text/one-line.ts's class, restated here: the
 * page's functions name nothing outside themselves): a bidi override must not reorder a
 * lane id, nor a zero-width space hide in one.
 */
export function escapeHtml(value: unknown): string {
  return String(value)
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu, (c) => {
      if (c === '\n' || c === '\t') return c;
      let out = '';
      for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`;
      return out;
    })
    .replace(/[&<>"']/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&#39;'));
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

/** Seconds since the lane's last sign of life, at the snapshot's time; null when unknown. */
export function quietSeconds(lane: LaneView, head: Pick<CrewHead, 'now'>): number | null {
  if (lane.activityAt === undefined) return null;
  const span = Date.parse(head.now) - Date.parse(lane.activityAt);
  return Number.isFinite(span) ? Math.max(0, span / 1000) : null;
}

/**
 * Whether a lane needs the operator: failed; waiting at its gate for its owner's answer;
 * interrupted (its crew stopped it, or its
 * crew's process is gone while it was in flight: it waits for the crew to be started
 * again, it is not stuck); or, while its crew runs, started and quiet for longer than the
 * crew's threshold.
 */
export function laneAttention(lane: LaneView, head: Pick<CrewHead, 'now' | 'stuckAfterS'> & Partial<Pick<CrewHead, 'run'>>): 'failed' | 'stuck' | 'waiting' | 'interrupted' | null {
  if (lane.state === 'failed') return 'failed';
  // Stopped at its gate for the owner's answer (formats/crew/record.ts's OWNER_PENDING, restated: the page's functions name nothing outside themselves).
  if (lane.state === 'interrupted' && lane.code === 'CREW_OWNER_PENDING') return 'waiting';
  if (lane.state === 'interrupted') return 'interrupted';
  if (lane.state === 'queued' || lane.state === 'complete') return null;
  // A crew that no process runs moves no lane: quiet is all it can be.
  if (head.run === 'stopped' || head.run === 'interrupted') return 'interrupted';
  const quiet = quietSeconds(lane, head);
  return quiet !== null && quiet > head.stuckAfterS ? 'stuck' : null;
}

/** A span of seconds as an operator reads it: 45s, 4m, 1h 5m, 2d 3h. */
export function formatSpan(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return '–';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

/** What the crew page shows of its lanes: a filter, an order and a page. */
export interface ViewUi {
  /** '' every lane; 'attention' failed, stuck and interrupted ones; else one state. */
  readonly state: string;
  /** A code the lane's code, or a code one of its calls ended with, contains ('' any). */
  readonly code: string;
  /** Text the lane's id, code or detail contains ('' any). */
  readonly text: string;
  /** 'attention' (failed, stuck, interrupted, then running, queued, done), 'age', 'cost', 'attempts' or 'id'. */
  readonly sort: string;
  readonly page: number;
  /** The page can act (it holds the console's token and the crew runs): rows carry their action buttons. */
  readonly acting?: boolean;
}

/** Lanes a table page holds (renderCrewView's own constant: the page's functions name nothing outside themselves). */
export const PAGE_ROWS = 100;

/** The crew page's filter before the operator sets one. */
export const DEFAULT_UI: ViewUi = { state: '', code: '', text: '', sort: 'attention', page: 0 };

/** The lanes the filter keeps, in the order asked for. */
export function selectLanes(snapshot: CrewSnapshot, ui: ViewUi): LaneView[] {
  const lanes = Array.isArray(snapshot.lanes) ? snapshot.lanes : [];
  const code = String(ui.code ?? '').toLowerCase();
  const text = String(ui.text ?? '').toLowerCase();
  const attention = (lane: LaneView) => laneAttention(lane, snapshot);
  const kept = lanes.filter(
    (lane) =>
      (ui.state === '' || (ui.state === 'attention' ? attention(lane) !== null : lane.state === ui.state)) &&
      (code === '' || [lane.code, ...(Array.isArray(lane.calls) ? (lane.calls as readonly CallCode[]).map((c) => c.code) : [])].some((c) => String(c ?? '').toLowerCase().includes(code))) &&
      (text === '' || `${lane.id} ${lane.title ?? ''} ${lane.code ?? ''} ${lane.detail ?? ''} ${lane.branch ?? ''}`.toLowerCase().includes(text)),
  );
  const rank = (lane: LaneView) => {
    const need = attention(lane);
    if (need === 'failed') return 0;
    if (need === 'stuck') return 1;
    if (need === 'waiting') return 2;
    if (need === 'interrupted') return 3;
    if (lane.state === 'queued') return 5;
    if (lane.state === 'complete') return 6;
    return 4;
  };
  const started = (lane: LaneView) => (typeof lane.startedAt === 'string' ? Date.parse(lane.startedAt) : Infinity);
  const by: Record<string, (a: LaneView, b: LaneView) => number> = {
    attention: (a, b) => rank(a) - rank(b) || (quietSeconds(b, snapshot) ?? 0) - (quietSeconds(a, snapshot) ?? 0),
    age: (a, b) => started(a) - started(b),
    cost: (a, b) => (b.costUsd ?? 0) - (a.costUsd ?? 0),
    attempts: (a, b) => b.attempts - a.attempts,
    id: () => 0,
  };
  const order = by[ui.sort] ?? by['attention']!;
  // A stable sort on the file order: equal lanes keep the crew file's order.
  return kept.map((lane, i) => ({ lane, i })).sort((a, b) => order(a.lane, b.lane) || a.i - b.i).map((x) => x.lane);
}

/**
 * The page body for one snapshot and the operator's filter: the crew's pace, spend and
 * providers; the lanes that need the operator with what to type; lanes by state; every
 * lane as a cell of a grid coloured by state; one page of the lane table; supervision
 * figures. Every value from the snapshot is escaped.
 */
export function renderCrewView(snapshot: CrewSnapshot, ui: ViewUi): string {
  const esc = escapeHtml;
  const s = snapshot;
  const num = (n: unknown, digits: number) => (typeof n === 'number' && Number.isFinite(n) ? (digits === 0 ? String(Math.round(n)) : n.toFixed(digits)) : '–');
  const usd = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) ? `$${n.toFixed(n >= 100 ? 0 : 2)}` : '–');
  // A trailing ".json" would ask for the lane's JSON: the page link writes that dot escaped.
  const laneHref = (id: string) => `/lanes/${encodeURIComponent(id).replace(/\.json$/, '%2Ejson')}`;
  const lanes = Array.isArray(s.lanes) ? s.lanes : [];
  const byState = s.byState ?? {};
  const attempts = s.attempts ?? { running: 0, queued: 0, started: 0, finished: 0 };
  const providers = Array.isArray(s.providers) ? s.providers : [];
  const spend = s.spend ?? { usd: 0, capUsd: null };
  // Calls of unknown cost, said so beside the spend: how many, and what each counts against the cap.
  // Inside this function: the page script is built from its source text.
  const unpricedNote = (sp: { readonly capUsd: number | null; readonly unpriced?: number; readonly reserveUsd?: number }): string => {
    const n = typeof sp.unpriced === 'number' && Number.isFinite(sp.unpriced) ? sp.unpriced : 0;
    if (n <= 0) return '';
    const each = sp.capUsd !== null && typeof sp.reserveUsd === 'number' && Number.isFinite(sp.reserveUsd) ? ` counted at $${sp.reserveUsd.toFixed(2)} each` : '';
    return ` <span id="unpriced">(${Math.round(n)} unpriced call${n === 1 ? '' : 's'}${each})</span>`;
  };

  const paused = providers.filter((p) => p.pausedUntil !== null);
  // A snapshot of an older crew process names no run state: it is done or running.
  const run = typeof s.run === 'string' ? s.run : s.done ? 'done' : 'running';
  const runWord = run === 'running' && s.source === 'store' ? 'running (read from the store)' : run;
  const head =
    `<header><h1>crew <span id="crew">${esc(s.crew)}</span></h1>` +
    `<p id="status" data-done="${s.done ? 'true' : 'false'}" data-run="${esc(run)}" data-source="${esc(s.source)}">${esc(runWord)} · ${formatSpan(s.elapsedS)}</p>` +
    `<dl id="pace"><div><dt>lanes/min</dt><dd id="lanes-per-minute">${num(s.lanesPerMinute, 1)}</dd></div>` +
    `<div><dt>ETA</dt><dd id="eta">${s.etaS === 0 ? 'done' : formatSpan(s.etaS)}</dd></div>` +
    `<div><dt>spend</dt><dd id="spend">${usd(spend.usd)}${spend.capUsd === null ? '' : ` of ${usd(spend.capUsd)}`}${unpricedNote(spend)}</dd></div>` +
    `<div><dt>running</dt><dd id="attempts-running">${num(attempts.running, 0)}</dd></div>` +
    `<div><dt>queued</dt><dd id="attempts-queued">${num(attempts.queued, 0)}</dd></div></dl>` +
    (paused.length === 0
      ? ''
      : `<p id="providers" class="warn">rate limited: ${paused.map((p) => `<span data-provider="${esc(p.provider)}">${esc(p.provider)} paused until ${esc(p.pausedUntil)} (${num(p.rateLimits, 0)} limits)</span>`).join(', ')}</p>`) +
    `</header>`;
  const summary = s.done && typeof s.summary === 'string' ? `<pre id="summary">${esc(s.summary)}</pre>` : '';

  // What a lane's row offers an operator who can act: a failed or interrupted lane a retry,
  // a running one a cancel of its call and of the lane, a queued or waiting one a cancel.
  const acting = ui.acting === true;
  const buttons = (lane: LaneView): string => {
    if (!acting) return '';
    const button = (action: string, label: string) => `<button type="button" class="act" data-action="${action}" data-lane="${esc(lane.id)}">${label}</button>`;
    const waitingLane = lane.state === 'interrupted' && lane.code === 'CREW_OWNER_PENDING';
    if (lane.state === 'failed' || (lane.state === 'interrupted' && !waitingLane)) return button('retry', 'retry');
    if (lane.state === 'complete') return '';
    if (lane.state === 'queued' || waitingLane) return button('cancel-lane', 'cancel lane');
    return `${button('cancel-call', 'cancel call')} ${button('cancel-lane', 'cancel lane')}`;
  };
  const needing = selectLanes(s, { state: 'attention', code: '', text: '', sort: 'attention', page: 0 });
  const failedLanes = needing.filter((lane) => lane.state === 'failed');
  const failed = failedLanes.length;
  const stopped = needing.filter((lane) => laneAttention(lane, s) === 'interrupted').length;
  const waiting = needing.filter((lane) => laneAttention(lane, s) === 'waiting').length;
  const retryCode = typeof s.retryCommand === 'string' ? `<code class="group-retry">${esc(s.retryCommand)}</code>` : '';
  // Failures by code, the largest group first: one row and one command per code, however
  // many lanes failed, so the stuck and waiting lanes below never drop out of the box.
  const groups: { code: string; lanes: LaneView[] }[] = [];
  for (const lane of failedLanes) {
    const code = String(lane.code ?? '-');
    const group = groups.find((g) => g.code === code);
    if (group === undefined) groups.push({ code, lanes: [lane] });
    else group.lanes.push(lane);
  }
  groups.sort((a, b) => b.lanes.length - a.lanes.length);
  const groupRows = groups
    .map((g) => {
      const named = g.lanes.slice(0, 5).map((lane) => `<a href="${esc(laneHref(lane.id))}" data-lane="${esc(lane.id)}">${esc(lane.id)}</a>`).join(', ');
      const more = g.lanes.length > 5 ? ` <a href="#state=failed&amp;code=${esc(encodeURIComponent(g.code))}" data-filter-code="${esc(g.code)}">and ${g.lanes.length - 5} more</a>` : '';
      return `<tr class="s-failed" data-code="${esc(g.code)}" data-count="${g.lanes.length}"><td>failed</td><td>${esc(g.code)}</td><td class="n">${g.lanes.length}</td><td class="lanes">${named}${more}</td><td class="detail">${esc(g.lanes[0]!.detail ?? '')}</td><td>${retryCode}</td></tr>`;
    })
    .join('');
  const failures = groups.length === 0 ? '' : `<table id="failure-groups"><tbody>${groupRows}</tbody></table>`;
  // Stuck, waiting and interrupted lanes one per row, each kind with its own bound.
  const others = (['stuck', 'waiting', 'interrupted'] as const).flatMap((kind) => needing.filter((lane) => laneAttention(lane, s) === kind).slice(0, 10));
  const othersAll = needing.length - failed;
  const attentionRows = others
    .map((lane) => {
      const need = laneAttention(lane, s);
      const why =
        need === 'stuck' ? `quiet for ${formatSpan(quietSeconds(lane, s))}` : need === 'interrupted' && lane.state !== 'interrupted' ? `stopped in ${esc(lane.state)}` : need === 'waiting' ? 'at its gate' : esc(lane.code ?? '');
      return `<tr data-lane="${esc(lane.id)}" class="s-${esc(lane.state)}"><td class="id"><a href="${esc(laneHref(lane.id))}">${esc(lane.id)}</a></td><td>${esc(need)}</td><td>${why}</td><td class="detail">${esc(lane.detail ?? '')}</td>${acting ? `<td class="acts">${buttons(lane)}</td>` : ''}</tr>`;
    })
    .join('');
  const retry = failed > 0 && typeof s.retryCommand === 'string' ? `<p>Run the failed lanes again: <code id="retry">${esc(s.retryCommand)}</code></p>` : '';
  const answer = waiting > 0 && typeof s.answerCommand === 'string' ? `<p>Answer the lanes waiting for you: <code id="answer">${esc(s.answerCommand)}</code></p>` : '';
  // An interrupted or stopped crew, whatever its lanes: the command that continues it.
  const unfinished = run === 'interrupted' || run === 'stopped';
  const resume =
    unfinished && typeof s.resumeCommand === 'string'
      ? `<p id="resume-line">${run === 'stopped' ? 'The crew\'s process is gone; nothing runs.' : 'The crew was interrupted.'} Continue its unfinished lanes: <code id="resume">${esc(s.resumeCommand)}</code></p>`
      : '';
  const attention =
    `<section id="attention" data-count="${needing.length}"><h2>Needs you: ${failed} failed, ${needing.length - failed - stopped - waiting} stuck${waiting > 0 ? `, ${waiting} waiting for you` : ''}${stopped > 0 ? `, ${stopped} interrupted` : ''}</h2>` +
    (needing.length === 0
      ? (unfinished ? '' : '<p>Nothing: no lane failed, none is quiet for longer than ' + formatSpan(s.stuckAfterS) + '.</p>') + resume
      : `${failures}${attentionRows === '' ? '' : `<table id="attention-lanes"><tbody>${attentionRows}</tbody></table>`}${othersAll > others.length ? `<p><a href="#state=attention" data-filter-state="attention">all ${needing.length}</a></p>` : ''}${retry}${answer}${resume}`) +
    `</section>`;

  const chips = Object.keys(byState)
    .map((state) => `<a href="#state=${esc(encodeURIComponent(state))}" class="chip s-${esc(state)}${byState[state] === 0 ? ' zero' : ''}" data-state="${esc(state)}" data-filter-state="${esc(state)}">${esc(state)} <b>${num(byState[state], 0)}</b></a>`)
    .join('');
  const states = `<section id="states"><h2>Lanes (${lanes.length})</h2><p>${chips}</p></section>`;

  const ordered = selectLanes(s, ui);
  const cells = selectLanes(s, { state: '', code: '', text: '', sort: 'attention', page: 0 })
    .map((lane) => `<a class="cell s-${esc(lane.state)}${laneAttention(lane, s) === 'stuck' ? ' stuck' : ''}" href="${esc(laneHref(lane.id))}" title="${esc(lane.id)}: ${esc(lane.state)}"></a>`)
    .join('');
  const grid = `<section><div id="grid" data-cells="${lanes.length}">${cells}</div></section>`;

  // The calls that ended typed, even where the lane did not fail by them (PROVIDER_NO_EXIT: a result that stood).
  const calls = (lane: LaneView) =>
    (Array.isArray(lane.calls) ? (lane.calls as readonly CallCode[]) : [])
      .map((c) => ` <span class="call-code" data-call="${esc(c.call)}" data-code="${esc(c.code)}">${esc(c.call)} ${esc(c.code)}</span>`)
      .join('');
  // Why an ordered lane waits (`"overlap": "order"`): the earlier lanes whose plans name its files.
  const orderNote = (lane: LaneView) => {
    const order = lane.order;
    if (order === undefined || order === null || !Array.isArray(order.after) || order.after.length === 0) return '';
    const files = Array.isArray(order.files) ? order.files.map(String) : [];
    return ` <span class="order" data-after="${esc(order.after.join(','))}">${lane.state === 'queued' ? 'waits for' : 'ran after'} ${esc(order.after.join(', '))} (${esc(files.join(', '))})</span>`;
  };
  // The last merge train's word on a lane (crew land): landed at its commit, or why not.
  const landNote = (lane: LaneView) => {
    const land = lane.land;
    if (land === undefined || land === null || typeof land.status !== 'string') return '';
    const what = land.status === 'landed' ? `landed${typeof land.to === 'string' ? ` at ${land.to.slice(0, 12)}` : ''}` : `land: ${land.status}${typeof land.code === 'string' ? ` ${land.code}` : ''}`;
    return ` <span class="land" data-land="${esc(land.status)}">${esc(what)}</span>`;
  };
  const pageRows = 100;
  const pages = Math.max(1, Math.ceil(ordered.length / pageRows));
  const page = Math.min(Math.max(0, Math.floor(Number(ui.page) || 0)), pages - 1);
  const rows = ordered
    .slice(page * pageRows, (page + 1) * pageRows)
    .map((lane) => {
      const quiet = lane.state === 'queued' || lane.state === 'complete' || laneAttention(lane, s) === 'interrupted' ? '' : formatSpan(quietSeconds(lane, s));
      return (
        `<tr data-lane="${esc(lane.id)}" class="s-${esc(lane.state)}"><td class="id"><a href="${esc(laneHref(lane.id))}">${esc(lane.id)}</a>${typeof lane.title === 'string' ? ` <span class="title">${esc(lane.title)}</span>` : ''}</td>` +
        // A lane parked at its gate is stored interrupted (the next crew run continues it); the operator reads that it waits.
        `<td class="state">${laneAttention(lane, s) === 'waiting' ? 'waiting' : esc(lane.state)}</td><td class="n">${quiet}</td><td class="n">${num(lane.attempts, 0)}</td><td class="n">${usd(lane.costUsd ?? 0)}</td>` +
        `<td>${lane.code === null || lane.code === undefined ? '' : esc(lane.code)}${calls(lane)}</td><td class="detail">${esc(lane.detail ?? '')}${orderNote(lane)}${landNote(lane)}</td>${acting ? `<td class="acts">${buttons(lane)}</td>` : ''}</tr>`
      );
    })
    .join('');
  const from = ordered.length === 0 ? 0 : page * pageRows + 1;
  const to = Math.min(ordered.length, (page + 1) * pageRows);
  const pager =
    `<p id="pager" data-page="${page}" data-pages="${pages}">lanes ${from}–${to} of ${ordered.length}${ordered.length === lanes.length ? '' : ` (of ${lanes.length})`} ` +
    `<button type="button" data-page-to="${page - 1}"${page === 0 ? ' disabled' : ''}>previous</button> ` +
    `<button type="button" data-page-to="${page + 1}"${page + 1 >= pages ? ' disabled' : ''}>next</button></p>`;
  const table =
    `<section><table id="lanes"><thead><tr><th>lane</th><th>state</th><th>quiet</th><th>attempts</th><th>cost</th><th>code</th><th>detail</th>${acting ? '<th>act</th>' : ''}</tr></thead><tbody>${rows}</tbody></table>${pager}</section>`;

  const counter = (key: 'started' | 'finished') => `<div><dt>${key}</dt><dd id="attempts-${key}">${num(attempts[key], 0)}</dd></div>`;
  const supervision =
    `<section id="supervision"><h2>Supervision</h2><dl>${counter('started')}${counter('finished')}` +
    `<div><dt>marks/s</dt><dd id="marks-per-second">${num(s.marksPerSecond, 1)}</dd></div>` +
    `<div><dt>renewal p99</dt><dd id="renewal-p99">${s.renewalP99Ms === null ? '–' : `${num(s.renewalP99Ms, 2)} ms`}</dd></div></dl>` +
    `<h3>Renewal latency</h3>${renderHistogramSvg(s.histogram)}</section>`;
  return head + summary + attention + states + grid + table + supervision;
}

