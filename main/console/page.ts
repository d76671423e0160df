import { createHash } from 'node:crypto';
import type { CrewSnapshot } from '../../formats/console/snapshot.ts';
import { LANE_STAGES } from '../../formats/crew/record.ts';
import { DEFAULT_UI, escapeHtml, formatSpan, laneAttention, quietSeconds, renderCrewView, renderHistogramSvg, selectLanes } from '../../formats/console/view.ts';
import { crewClient } from './client.ts';
import { consoleActs, inboxClient } from './acts-client.ts';
import { GATE_REPLY_LINE } from '../../formats/gate/render.ts';

// The one page the web view serves: self-contained (inline style and script, no other
// request but /events), with a content security policy that admits exactly this script
// and style by hash, so even a value that escaped escaping could not run as script.

/**
 * The functions the page's script defines from their own source text, in order. Each is
 * declared by its own `function name(...)` text, so the names they call each other by are
 * the names the running code has (a bundler may rename them; both sides agree).
 */
export const PAGE_FUNCTIONS = [escapeHtml, renderHistogramSvg, quietSeconds, laneAttention, formatSpan, selectLanes, renderCrewView, crewClient, consoleActs, inboxClient] as const;

/** The page's inline script. */
export const PAGE_SCRIPT =
  `"use strict";\n${PAGE_FUNCTIONS.map((f) => f.toString()).join('\n')}\n` +
  `{ const acts = ${consoleActs.name}(window); ${crewClient.name}(window, ${renderCrewView.name}, acts, ${inboxClient.name}(window, acts, ${escapeHtml.name})); }\n`;

const PAGE_STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1d1d1f; background: #fafafa; }
h1 { font-size: 1.3rem; margin: 0 } h2 { font-size: 1rem; margin: 1.2rem 0 .4rem } h3 { font-size: .9rem; margin: .8rem 0 .3rem }
#conn { float: right; font-size: .8rem; color: #666 }
table { border-collapse: collapse } th, td { padding: 2px 10px 2px 0; text-align: left; vertical-align: top } td.n, dd { font-variant-numeric: tabular-nums }
td.id { font-family: ui-monospace, monospace; max-width: 40ch; overflow-wrap: anywhere } td.detail { max-width: 70ch; overflow-wrap: anywhere; color: #444 }
.call-code { display: inline-block; font-size: .8rem; color: #7a4b00; background: #fff3db; border-radius: 3px; padding: 0 4px; margin: 1px 0 }
dl { display: flex; flex-wrap: wrap; gap: 1.5rem; margin: .4rem 0 } dt { font-size: .8rem; color: #666 } dd { margin: 0; font-size: 1.2rem }
#summary { background: #eef6ee; padding: .5rem; white-space: pre-wrap; overflow-wrap: anywhere }
#attention { background: #fff4f2; border-left: 4px solid #c0392b; padding: .3rem .8rem } #attention[data-count="0"] { background: #f2f8f2; border-color: #2e8b57 }
code { font-family: ui-monospace, monospace; background: #eee; padding: 1px 4px; overflow-wrap: anywhere }
.warn { color: #9a5b00 } form { margin: .6rem 0 } form label { margin-right: 1rem; font-size: .85rem }
.chip { display: inline-block; margin: 0 .4rem .3rem 0; padding: 1px 8px; border-radius: 10px; color: #fff; text-decoration: none; font-size: .85rem } .chip.zero { opacity: .35 }
#grid { display: flex; flex-wrap: wrap; gap: 2px; max-height: 12rem; overflow-y: auto } .cell { width: 9px; height: 9px; display: block }
.cell.stuck { outline: 2px solid #e67e22 }
#lanes tr { border-left: 4px solid transparent } #lanes td:first-child { padding-left: 6px }
.s-queued { background: #b0b7bf } .s-bootstrap, .s-review, .s-answer, .s-work, .s-cross-check, .s-export { background: #4a78b0 }
.s-complete { background: #2e8b57 } .s-failed { background: #c0392b } .s-interrupted { background: #8e6c8a }
tr.s-queued, tr.s-bootstrap, tr.s-review, tr.s-answer, tr.s-work, tr.s-cross-check, tr.s-export, tr.s-complete, tr.s-failed, tr.s-interrupted { background: none }
tr.s-failed { border-left-color: #c0392b } tr.s-complete { border-left-color: #2e8b57 } tr.s-queued { border-left-color: #b0b7bf }
button.act { font-size: .75rem; margin-right: .3rem } #crew-actions { margin: .4rem 0 } #act-result { font-size: .85rem; color: #444 }
#inbox { background: #f3f0fb; border-left: 4px solid #6a4fb3; padding: .3rem .8rem; margin: .6rem 0 } #inbox table { width: 100% } #inbox td.inbox-gate { max-width: 90ch }
#inbox pre { background: #fff; padding: .4rem; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 24rem; overflow: auto } #inbox .note { color: #666; font-size: .85rem } #inbox h4 { margin: .5rem 0 .2rem; font-size: .85rem }
svg.histogram .bar { fill: #4a78b0 } svg.histogram .axis { font-size: 10px; fill: #555 }
`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** The Content-Security-Policy header sent with the page. */
export const PAGE_CSP = [
  "default-src 'none'",
  `script-src ${sha256(PAGE_SCRIPT)}`,
  `style-src ${sha256(PAGE_STYLE)}`,
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The form that sets the lane filter (outside the view, so a redraw never takes its focus). */
function controlsForm(): string {
  const option = (value: string, label: string) => `<option value="${escapeHtml(value)}">${escapeHtml(label)}</option>`;
  const states = [option('', 'every lane'), option('attention', 'needs me (failed, stuck, interrupted)'), ...LANE_STAGES.map((stage) => option(stage, stage))].join('');
  const sorts = [option('attention', 'failed, stuck and interrupted first'), option('age', 'oldest first'), option('cost', 'cost'), option('attempts', 'attempts'), option('id', 'crew file order')].join('');
  return (
    '<form id="controls"><label>state <select id="f-state">' + states + '</select></label>' +
    '<label>code <input id="f-code" size="16" autocomplete="off"></label>' +
    '<label>text <input id="f-text" size="20" autocomplete="off"></label>' +
    '<label>sort <select id="f-sort">' + sorts + '</select></label></form>'
  );
}

/**
 * The crew's actions and the gate inbox, outside the view (a redraw never takes a ticked
 * box, a typed name or an open brief). Hidden until the script finds the page can act or a
 * lane waits; both are filled by the script.
 */
function actingParts(): string {
  return (
    '<p id="crew-actions" hidden><label>your name <input id="act-by" size="14" autocomplete="name"></label> ' +
    '<button type="button" id="crew-stop" hidden>stop the crew</button> <span id="act-result" role="status"></span></p>' +
    '<section id="inbox" data-count="0" hidden><h2>Gate inbox: <span id="inbox-count">0</span> waiting for you</h2>' +
    `<p class="note">${escapeHtml(GATE_REPLY_LINE)}</p>` +
    '<form id="inbox-form"><label>reply <input id="inbox-reply" size="28" value="rec" autocomplete="off"></label>' +
    '<label><input type="checkbox" id="inbox-all"> every lane below</label> <button type="submit" id="inbox-answer">answer the ticked lanes</button></form>' +
    '<table id="inbox-table"><tbody id="inbox-lanes"></tbody></table><p id="inbox-result" role="status"></p></section>'
  );
}

/** The whole page for a snapshot: rendered now, then kept current by the script. */
export function renderCrewPage(snapshot: CrewSnapshot): string {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>crew ${escapeHtml(snapshot.crew)}${snapshot.done ? ' (done)' : ''}</title><style>${PAGE_STYLE}</style></head>` +
    `<body><p id="conn">connecting</p>${actingParts()}${controlsForm()}<main id="view" data-seq="-1">${renderCrewView(snapshot, DEFAULT_UI)}</main>` +
    `<script>${PAGE_SCRIPT}</script></body></html>\n`
  );
}
