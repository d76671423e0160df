import { posix } from 'node:path';

/**
 * How a plan names the files an item changes: a `Files:` line indented under the item
 * (a continuation line or a nested list item), listing repository paths, in backticks or
 * separated by commas or spaces:
 *
 *     - Add subtraction to the calculator.
 *       - Files: `src/calc.ts`, `src/calc.test.ts`
 *
 * An explicit line, not every backticked word of the item: an item names commands,
 * functions and flags in backticks too (`npm test`, `sub()`), and a lane ordered after
 * another on a guess would wait for nothing.
 */
const FILES_LINE = /^\s+(?:(?:[-*+]|\d{1,9}[.)])\s+)?files:\s*(.*)$/i;

/**
 * The paths of one `Files:` line's value, each as the repository names it (normalized,
 * `./` dropped), in the order given. A path that is absolute, leaves the repository
 * (`..` after normalizing), names the repository itself (`.`) or holds a control
 * character is no file of the repository and is left out.
 */
export function filesOfLine(line: string): string[] | null {
  const match = FILES_LINE.exec(line);
  if (match === null) return null;
  const value = match[1]!;
  const ticked = [...value.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
  const raw = ticked.length > 0 ? ticked : value.split(/[,\s]+/);
  const out: string[] = [];
  for (const entry of raw) {
    const path = repoPath(entry.trim());
    if (path !== null && !out.includes(path)) out.push(path);
  }
  return out;
}

/** `entry` as a repository path, or null when it names none inside the repository. */
export function repoPath(entry: string): string | null {
  if (entry === '' || /[\u0000-\u001f\u007f]/.test(entry)) return null;
  // A Windows drive or UNC path is absolute too, wherever the plan was written.
  if (entry.startsWith('/') || entry.startsWith('\\') || /^[A-Za-z]:[\\/]/.test(entry)) return null;
  const normal = posix.normalize(entry).replace(/^(\.\/)+/, '').replace(/\/+$/, '');
  if (normal === '' || normal === '.' || normal === '..' || normal.startsWith('../')) return null;
  return normal;
}
