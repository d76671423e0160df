import { sha256 } from '../text/sha256.ts';
import { filesOfLine } from './plan-files.ts';

export const IMPLEMENTATION_HEADING = '## Implementation plan';
export const RECORD_HEADING = '## Review record';

/** A plan file split into the parts a review run reads. */
export interface PlanDoc {
  /** The `## Implementation plan` section, heading included, as reviewed. */
  readonly implementation: string;
  /** sha256 of {@link implementation}: the phase snapshot. */
  readonly snapshot: string;
  /** The section's top-level list items, one line each: the build's tasks. */
  readonly items: readonly string[];
}

export type PlanParse = { readonly ok: true; readonly plan: PlanDoc } | { readonly ok: false; readonly missing: readonly string[] };

const FENCE = /^ {0,3}(```|~~~)/;
const LEVEL_TWO = /^## /;
const ITEM = /^(?:[-*+]|\d{1,9}[.)])\s+(.*)$/;

/**
 * Finds the two sections a plan must have (level-two headings, outside code fences) and
 * takes the implementation section up to the next level-two heading.
 */
export function parsePlan(text: string): PlanParse {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  let inFence = false;
  let start = -1;
  let end = lines.length;
  let hasRecord = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (FENCE.test(line)) inFence = !inFence;
    if (inFence || !LEVEL_TWO.test(line)) continue;
    const heading = line.trimEnd().toLowerCase();
    if (start >= 0 && end === lines.length && i > start) end = i;
    if (heading === IMPLEMENTATION_HEADING.toLowerCase() && start < 0) start = i;
    else if (heading === RECORD_HEADING.toLowerCase()) hasRecord = true;
  }
  const missing = [...(start < 0 ? [IMPLEMENTATION_HEADING] : []), ...(hasRecord ? [] : [RECORD_HEADING])];
  if (missing.length > 0) return { ok: false, missing };
  const section = lines.slice(start, end);
  while (section.length > 1 && section[section.length - 1]!.trim() === '') section.pop();
  const implementation = `${section.join('\n')}\n`;
  return {
    ok: true,
    plan: { implementation, snapshot: sha256(implementation), items: sectionItems(implementation).items },
  };
}

/**
 * The top-level items of an implementation section (its heading line first, as a run
 * record keeps it) and the files each names on its `Files:` lines. A `Files:` line before
 * the first item belongs to no item and is not read.
 */
export function sectionItems(implementation: string): { items: string[]; files: string[][] } {
  const items: string[] = [];
  const files: string[][] = [];
  let inFence = false;
  for (const line of implementation.split(/\r?\n/).slice(1)) {
    if (FENCE.test(line)) inFence = !inFence;
    if (inFence) continue;
    const match = ITEM.exec(line);
    if (match !== null && match[1]!.trim() !== '') {
      items.push(match[1]!.trim());
      files.push([]);
      continue;
    }
    const named = files.length === 0 ? null : filesOfLine(line);
    if (named !== null) for (const path of named) if (!files.at(-1)!.includes(path)) files.at(-1)!.push(path);
  }
  return { items, files };
}
