import { createHash } from 'node:crypto';
import type { CrewSnapshot } from '../../formats/console/snapshot.ts';
import { escapeHtml, renderCrewView, renderHistogramSvg } from '../../formats/console/view.ts';
import { crewClient } from './client.ts';

// The one page the web view serves: self-contained (inline style and script, no other
// request but /events), with a content security policy that admits exactly this script
// and style by hash, so even a value that escaped escaping could not run as script.

/**
 * The functions the page's script defines from their own source text, in order. Each is
 * declared by its own `function name(...)` text, so the names they call each other by are
 * the names the running code has (a bundler may rename them; both sides agree).
 */
export const PAGE_FUNCTIONS = [escapeHtml, renderHistogramSvg, renderCrewView, crewClient] as const;

/** The page's inline script. */
export const PAGE_SCRIPT = `"use strict";\n${PAGE_FUNCTIONS.map((f) => f.toString()).join('\n')}\n${crewClient.name}(window, ${renderCrewView.name});\n`;

const PAGE_STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1d1d1f; background: #fafafa; }
h1 { font-size: 1.3rem; margin: 0 } h2 { font-size: 1rem; margin: 1.2rem 0 .4rem } h3 { font-size: .9rem; margin: .8rem 0 .3rem }
#conn { float: right; font-size: .8rem; color: #666 }
table { border-collapse: collapse } th, td { padding: 2px 10px 2px 0; text-align: left } td.n, dd { font-variant-numeric: tabular-nums }
#lanes td.id { font-family: ui-monospace, monospace; max-width: 40ch; overflow-wrap: anywhere }
dl { display: flex; gap: 1.5rem; margin: 0 } dt { font-size: .8rem; color: #666 } dd { margin: 0; font-size: 1.2rem }
#summary { background: #eef6ee; padding: .5rem; white-space: pre-wrap; overflow-wrap: anywhere }
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

/** The whole page for a snapshot: rendered now, then kept current by the script. */
export function renderCrewPage(snapshot: CrewSnapshot): string {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>crew ${escapeHtml(snapshot.crew)}${snapshot.done ? ' (done)' : ''}</title><style>${PAGE_STYLE}</style></head>` +
    `<body><p id="conn">connecting</p><main id="view" data-seq="0">${renderCrewView(snapshot)}</main>` +
    `<script>${PAGE_SCRIPT}</script></body></html>\n`
  );
}
