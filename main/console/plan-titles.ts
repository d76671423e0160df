import { closeSync, openSync, readSync } from 'node:fs';
import { oneLine } from '../../formats/text/one-line.ts';

// A plan's title is in its first lines: reading a bounded head keeps a 2,000-lane crew's
// load to one small read per plan, whatever the plans weigh.
const HEAD_BYTES = 8 * 1024;
/** A title as the console lists it, at most this many characters. */
export const TITLE_CHARS = 120;

/**
 * The plan's title: its first `# ` heading outside a code fence within its first
 * {@link HEAD_BYTES} bytes, as one line (controls escaped) of at most {@link TITLE_CHARS}
 * characters; null when it has none or cannot be read (the crew's load already refused a
 * plan that is not a readable file: the console only goes without a title).
 */
export function planTitle(path: string): string | null {
  let text: string;
  try {
    const fd = openSync(path, 'r');
    try {
      const buffer = Buffer.alloc(HEAD_BYTES);
      const n = readSync(fd, buffer, 0, HEAD_BYTES, 0);
      text = buffer.subarray(0, n).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
  let fenced = false;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (/^\s{0,3}(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^# +(.*?)\s*#*\s*$/.exec(line);
    if (heading === null || heading[1] === '') continue;
    const title = oneLine(heading[1]!);
    return [...title].length <= TITLE_CHARS ? title : `${[...title].slice(0, TITLE_CHARS - 1).join('')}…`;
  }
  return null;
}

/** Each lane's plan title, read once (lanes whose plan has none are absent). */
export function planTitles(lanes: readonly { readonly id: string; readonly plan: string }[]): ReadonlyMap<string, string> {
  const titles = new Map<string, string>();
  const byPlan = new Map<string, string | null>();
  for (const lane of lanes) {
    // A template's lanes often share one plan: each file is read once.
    if (!byPlan.has(lane.plan)) byPlan.set(lane.plan, planTitle(lane.plan));
    const title = byPlan.get(lane.plan);
    if (title != null) titles.set(lane.id, title);
  }
  return titles;
}
