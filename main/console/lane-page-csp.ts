import { createHash } from 'node:crypto';
import { LANE_PAGE_STYLE } from '../../formats/console/lane-page.ts';
import { escapeHtml } from '../../formats/console/view.ts';
import { consoleActs } from './acts-client.ts';
import { lanePageClient } from './lane-page-client.ts';

// Kept out of formats/: the page renders anywhere, the hash needs node:crypto.

/** The CSP source admitting exactly one inline text by its sha256. */
export function hashSource(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/** The lane page's one inline script (its actions and its diff pane), from its functions' own source text. */
export const LANE_PAGE_SCRIPT =
  `"use strict";\n${[escapeHtml, consoleActs, lanePageClient].map((f) => f.toString()).join('\n')}\n` +
  `${lanePageClient.name}(window, ${consoleActs.name}(window), ${escapeHtml.name});\n`;

/**
 * The Content-Security-Policy header sent with the lane page: nothing loads but its own
 * JSON (`connect-src 'self'`), only its own inline script and style run (by hash), no form
 * posts anywhere, and no other site may frame it.
 */
export const LANE_PAGE_CSP = [
  "default-src 'none'",
  `script-src ${hashSource(LANE_PAGE_SCRIPT)}`,
  `style-src ${hashSource(LANE_PAGE_STYLE)}`,
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
