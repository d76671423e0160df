import { createHash } from 'node:crypto';
import { LANE_PAGE_STYLE } from '../../formats/console/lane-page.ts';

// Kept out of formats/: the page renders anywhere, the hash needs node:crypto.

/** The CSP source admitting exactly one inline text by its sha256. */
export function hashSource(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/**
 * The Content-Security-Policy header sent with the lane page: nothing loads, no script
 * runs, only the page's own inline style applies, and no other site may frame it.
 */
export const LANE_PAGE_CSP = [
  "default-src 'none'",
  `style-src ${hashSource(LANE_PAGE_STYLE)}`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
