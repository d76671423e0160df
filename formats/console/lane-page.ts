import type { AttemptStory, LaneStory, RunFile } from './lane-story.ts';
import { escapeHtml } from './view.ts';
import { oneLine, visibleText } from '../text/one-line.ts';

// The lane page (`/lanes/<id>`): one lane's whole story as one static HTML document,
// rendered on the server. One inline style and, where the server gives one, one inline
// script (the actions and the diff pane), each admitted by its hash
// (main/console/lane-page-csp.ts). Every value comes from a store or a run directory that
// supervised children wrote, so every value is escaped, and shown as the text it is.

/** The page's one inline style; its sha256 is the only style the page's CSP admits. */
export const LANE_PAGE_STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1d1d1f; background: #fafafa; }
h1 { font-size: 1.3rem; margin: 0 } h2 { font-size: 1rem; margin: 1.4rem 0 .4rem } h3 { font-size: .9rem; margin: .8rem 0 .3rem }
nav { font-size: .85rem; margin-bottom: .8rem } nav a { margin-right: 1rem }
table { border-collapse: collapse } th, td { padding: 2px 10px 2px 0; text-align: left; vertical-align: top } td.n { font-variant-numeric: tabular-nums }
dd, summary { overflow-wrap: anywhere } code, pre { font-family: ui-monospace, monospace } td { max-width: 40ch; overflow-wrap: break-word }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 1rem; margin: 0 } dt { color: #666 } dd { margin: 0 }
#todo { background: #fdecea; border: 1px solid #e0a19a; padding: .5rem .8rem; margin: 1rem 0 }
pre { background: #f0f0f0; padding: .5rem; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 40rem; overflow: auto }
.note { color: #666; font-size: .85rem } .failed { color: #b3261e } .complete { color: #1e7b34 }
#lane-actions { margin: .6rem 0 } #lane-actions button { margin-right: .4rem } #act-result { font-size: .85rem; color: #444 }
#work { display: flex; flex-wrap: wrap; gap: 0 2rem; align-items: flex-start } #work > section { flex: 1 1 28rem; min-width: 0 }
details.diff-file summary { font-family: ui-monospace, monospace; cursor: pointer }
`;

const esc = escapeHtml;
const NONE = '–';

/** A one-line value as text: escaped, with line breaks and bidi controls shown, not obeyed. */
function line(value: unknown): string {
  return value === null || value === undefined || value === '' ? NONE : esc(oneLine(String(value)));
}

/** A value inside a double-quoted attribute: escaped, on one line. */
function attr(value: string): string {
  return esc(oneLine(value));
}

/** A file's text as shown: line breaks and tabs kept, every other control character written out. */
function visible(text: string): string {
  return esc(visibleText(text));
}

function num(value: number | null | undefined): string {
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : NONE;
}

function ms(value: number | null | undefined): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) return NONE;
  if (value < 1_000) return `${Math.round(value)} ms`;
  if (value < 60_000) return `${(value / 1_000).toFixed(1)} s`;
  return `${Math.floor(value / 60_000)} m ${Math.round((value % 60_000) / 1_000)} s`;
}

function dollars(value: number | null | undefined): string {
  return typeof value === 'number' && Number.isFinite(value) ? `$${value.toFixed(4)}` : NONE;
}

function yesNo(value: boolean | null | undefined): string {
  return value === true ? 'confirmed' : value === false ? 'unproven' : NONE;
}

function table(id: string, heads: readonly string[], rows: readonly string[], empty: string): string {
  if (rows.length === 0) return `<p class="note" id="${id}-none">${empty}</p>`;
  return `<table id="${id}"><thead><tr>${heads.map((h) => `<th>${h}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function pairs(id: string, entries: readonly (readonly [string, string])[]): string {
  return `<dl id="${id}">${entries.map(([dt, dd]) => `<dt>${dt}</dt><dd>${dd}</dd>`).join('')}</dl>`;
}

function header(s: LaneStory): string {
  const tone = s.state === 'failed' ? ' class="failed"' : s.state === 'complete' ? ' class="complete"' : '';
  return (
    `<header><h1>lane <span id="lane">${line(s.lane)}</span> <span id="state"${tone}>${line(s.state)}</span></h1>` +
    (typeof s.title === 'string' ? `<p id="title">${line(s.title)}</p>` : '') +
    pairs('head', [
      ['crew', line(s.crew)],
      ['code', s.code === null ? NONE : `<code id="code">${line(s.code)}</code>`],
      ['detail', `<span id="detail">${line(s.detail)}</span>`],
      ['run', line(s.run)],
      ['run directory', `<code>${line(s.runDir)}</code>`],
      ['cost', `<span id="cost">${dollars(s.costUsd)}</span>`],
      ['updated', line(s.updatedAt)],
      // A call in flight: its child as journaled at its spawn (a stuck lane's pid and deadline).
      ...(s.running == null ? [] : [['running', `<span id="running">${line(`${s.running.call} pid ${s.running.pid} since ${s.running.since}, ${s.running.mode}, deadline ${s.running.deadlineAt ?? 'none (a lease)'}, last mark ${s.running.lastMarkAt ?? 'none seen'}, lease ends ${s.running.leaseDeadlineAt ?? '-'}`)}</span>`] as const]),
    ]) +
    '</header>'
  );
}

/** What to do about a failed lane: its code's fix clause, and the exact command that retries it. */
function todo(s: LaneStory): string {
  const resume = s.resume == null ? '' : `<p>Its crew stopped before it ended. Continue it with:</p><pre><code id="resume">${visible(s.resume)}</code></pre>`;
  const owner = ownerWait(s);
  const evidence = failedCall(s);
  if (s.fix === null && s.retry === null && resume === '' && owner === '' && evidence === '') return '';
  const fix = s.fix === null ? '' : `<p id="fix">${line(s.fix)}</p>`;
  const retry = s.retry === null ? '' : `<p>Retry it with:</p><pre><code id="retry">${visible(s.retry)}</code></pre>`;
  return `<section id="todo"><h2>What to do</h2>${owner}${evidence}${fix}${retry}${resume}</section>`;
}

/** A lane parked at its gate: it waits for the owner, whose brief and answer command are named. */
function ownerWait(s: LaneStory): string {
  const owner = s.owner ?? null;
  if (owner === null) return '';
  const answer = owner.answer === null ? '' : `<p>Answer it with:</p><pre><code id="answer">${visible(owner.answer)}</code></pre>`;
  return `<p id="owner">waiting for the owner; brief: <code id="brief">${line(owner.brief)}</code></p>${answer}`;
}

/** The call the lane failed on: how it ended and the last lines of its stderr (kept escaped). */
function failedCall(s: LaneStory): string {
  const call = s.failedCall ?? null;
  if (call === null) return '';
  const how = call.signal !== null ? `signal ${call.signal}` : call.exitCode !== null ? `exit ${call.exitCode}` : 'no exit status';
  const stderr = call.stderr.length === 0 ? '<p class="note">it wrote nothing to stderr</p>' : `<pre id="stderr">${visible(call.stderr.join('\n'))}</pre>`;
  return `<p id="failed-call"><code>${line(call.call)}</code> ended ${line(how)} (${line(call.code)}); the end of its stderr:</p>${stderr}`;
}

function stages(s: LaneStory): string {
  const rows = s.stages.map((span) => `<tr><td>${line(span.stage)}</td><td>${line(span.startedAt)}</td><td>${span.endedAt === null ? 'now' : line(span.endedAt)}</td><td class="n">${ms(span.durationMs)}</td></tr>`);
  return `<section><h2>Stages</h2>${table('stages', ['stage', 'start', 'end', 'duration'], rows, 'no stage history recorded')}</section>`;
}

function attemptRow(a: AttemptStory): string {
  const cells = [line(a.id), line(a.kind), line(a.voice), line(a.phase), line(a.model), line(a.outcome), line(a.code), line(a.startedAt), ms(a.durationMs), num(a.marks), yesNo(a.cleanupConfirmed), dollars(a.costUsd), line(a.session), line(a.detail)];
  return `<tr data-attempt="${attr(a.id)}">${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`;
}

function attempts(s: LaneStory): string {
  const heads = ['id', 'kind', 'voice', 'phase', 'model', 'outcome', 'code', 'start', 'duration', 'marks', 'cleanup', 'cost', 'session', 'detail'];
  return `<section><h2>Attempts (${s.attempts.length})</h2>${table('attempts', heads, s.attempts.map(attemptRow), 'no supervised call yet')}</section>`;
}

function review(s: LaneStory): string {
  const r = s.review;
  const rows = r.phases.map((p) => {
    const c = p.consensus;
    const consensus = c === null ? NONE : `${line(c.coverage)}: ${num(c.confirmed)} confirmed, ${num(c.unverified)} unverified, ${num(c.disagree)} disagree, ${num(c.new)} new, ${num(c.nativeOnly)} native only`;
    return `<tr data-phase="${attr(p.phase)}"><td>${line(p.phase)}</td><td>${line(p.state)}</td><td>${line(p.native)}</td><td>${line(p.outside)}</td><td class="n">${num(p.findings)}</td><td>${consensus}</td></tr>`;
  });
  const g = r.gate;
  const gate =
    g === null
      ? '<p class="note" id="gate-none">no gate written</p>'
      : pairs('gate', [
          ['revision', num(g.rev)],
          ['state', line(g.state)],
          ['decisions', `${num(g.decisions)} of ${num(g.items)}`],
          ['answer', g.answer === null ? NONE : `<code id="answer">${line(g.answer)}</code>`],
          ['by', line(g.by)],
          ['at', line(g.at)],
          ['choices', g.choices.map((c) => `${line(c.item)}: ${line(c.chosen)} (${line(c.status)})`).join(', ') || NONE],
        ]);
  return (
    `<section><h2>Review</h2>${pairs('review', [['status', line(r.status)], ['spend', dollars(r.spendUsd)]])}` +
    `<h3>Phases</h3>${table('phases', ['phase', 'state', 'native', 'outside', 'findings', 'consensus'], rows, 'no review run yet')}<h3>Gate</h3>${gate}</section>`
  );
}

function qa(s: LaneStory): string {
  const rows = s.qa.verdicts.map((v) => `<tr data-call="${num(v.call)}"><td class="n">${num(v.call)}</td><td>${line(v.mode)}</td><td>${line(v.verdict)}</td><td>${line(v.code)}</td><td>${line(v.at)}</td><td>${line(v.guidance)}</td></tr>`);
  return (
    `<section><h2>QA</h2>${table('verdicts', ['call', 'mode', 'verdict', 'code', 'at', 'guidance'], rows, 'no observer call yet')}` +
    `<p>Guidance carried into the next turn: <span id="guidance">${line(s.qa.guidance)}</span></p></section>`
  );
}

function agent(s: LaneStory): string {
  const a = s.agent;
  return (
    `<section><h2>Agent</h2>` +
    pairs('agent', [
      ['turns', `${num(a.turnsDone)} done of ${num(a.turnsDispatched)} dispatched`],
      ['lost turns', a.lostTurns.length === 0 ? NONE : a.lostTurns.map(num).join(', ')],
      ['session', line(a.session)],
      ['cost', dollars(a.costUsd)],
      ['session total', dollars(a.sessionUsd)],
    ]) +
    '</section>'
  );
}

/** The actions a lane offers (shown by the page's script only when it holds the console's token). */
function actionsBar(s: LaneStory): string {
  const button = (action: string, label: string) => `<button type="button" data-action="${action}" data-lane="${attr(s.lane)}">${label}</button>`;
  const waiting = s.owner != null;
  const buttons =
    s.state === 'failed' || (s.state === 'interrupted' && !waiting)
      ? [button('retry', 'retry this lane')]
      : s.state === 'complete'
        ? []
        : s.state === 'queued' || waiting
          ? [button('cancel-lane', 'cancel this lane')]
          : [button('cancel-call', 'cancel its running call'), button('cancel-lane', 'cancel this lane')];
  return buttons.length === 0 ? '' : `<p id="lane-actions" hidden><label>your name <input id="act-by" size="14" autocomplete="name"></label> ${buttons.join('')} <span id="act-result" role="status"></span></p>`;
}

/** A workspace lane's diff against the crew's base, read by the page's script on request. */
function diffPane(s: LaneStory): string {
  if (s.workspace === null) return '';
  return `<section id="diff" data-state="idle"><h2>Diff against the base <button type="button" id="diff-reload">read again</button></h2><p id="diff-status" class="note">read when the page opens (needs its script)</p><div id="diff-files"></div></section>`;
}

function workspace(s: LaneStory): string {
  const w = s.workspace;
  if (w === null) return '';
  return `<section><h2>Workspace</h2>${pairs('workspace', [['branch', line(w.branch)], ['head', line(w.head)], ['worktree', line(w.worktree)], ['diff', line(w.diffStat)]])}</section>`;
}

const SKIPPED: Readonly<Record<string, string>> = {
  symlink: 'a symlink: listed, never followed',
  special: 'not a regular file: never opened',
  linked: 'has more than one link (it may be a file outside the run directory): not read',
  binary: 'binary: not shown',
  unreadable: 'could not be read',
  outside: 'resolves outside the run directory: not read',
  budget: 'not shown: the page\'s text budget went to the files before it',
};

function file(f: RunFile): string {
  const summary = `<summary>${line(f.path)} (${num(f.bytes)} bytes)</summary>`;
  if (f.text === null) return `<details data-skipped="${attr(f.skipped ?? '')}">${summary}<p class="note">${esc(SKIPPED[f.skipped ?? ''] ?? 'not shown')}</p></details>`;
  const cut = f.truncated ? `<p class="note">truncated: the first ${num(utf8Length(f.text))} bytes of ${num(f.bytes)} shown</p>` : '';
  return `<details${f.truncated ? ' data-truncated="true"' : ''}>${summary}${cut}<pre>${visible(f.text)}</pre></details>`;
}

/** A text's length in UTF-8 bytes (formats/ stays free of node: Buffer). */
function utf8Length(text: string): number {
  let bytes = 0;
  for (const char of text) {
    const code = char.codePointAt(0)!;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}

function files(s: LaneStory): string {
  const left = s.filesLeftOut;
  const more = left.count === 0 && left.exact ? '' : `<p class="note" id="files-more">${left.exact ? '' : 'at least '}${num(left.count)} more files not listed</p>`;
  const list = s.files.length === 0 ? '<p class="note" id="files-none">no files</p>' : `<div id="files">${s.files.map(file).join('')}</div>`;
  return `<section><h2>Files (${s.files.length})</h2>${list}${more}</section>`;
}

/** The whole lane page; `script`, when given, is its one inline script (the policy must admit it by hash). */
export function renderLanePage(story: LaneStory, script?: string): string {
  const json = `/lanes/${encodeURIComponent(story.lane)}.json`;
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>lane ${line(story.lane)} (${line(story.state)}) · crew ${line(story.crew)}</title><style>${LANE_PAGE_STYLE}</style></head>` +
    `<body><nav><a id="back" href="/">crew ${line(story.crew)}</a><a id="json" href="${attr(json)}">this lane as JSON</a></nav>` +
    header(story) +
    (script === undefined ? '' : actionsBar(story)) +
    todo(story) +
    `<div id="work">${agent(story)}${script === undefined ? '' : diffPane(story)}</div>` +
    stages(story) +
    attempts(story) +
    review(story) +
    qa(story) +
    workspace(story) +
    files(story) +
    (script === undefined ? '' : `<script>${script}</script>`) +
    '</body></html>\n'
  );
}
