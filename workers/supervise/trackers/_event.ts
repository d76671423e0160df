import { parseJsonlRow } from '../../../formats/jsonl/row.ts';
import type { ProgressTracker, Verdict } from './verdict.ts';

// Internal helpers shared by the trackers (the leading underscore marks the module internal).

/** @internal A `mark` verdict for `count` marks, or `ignore` when `count` is 0. */
export function markOrIgnore(count: number): Verdict {
  return count > 0 ? { kind: 'mark', count } : IGNORE;
}

/** @internal The verdicts that carry no data, shared by every tracker. */
export const IGNORE: Verdict = Object.freeze({ kind: 'ignore' });
export const TERMINAL: Verdict = Object.freeze({ kind: 'terminal' });

/** @internal The running total every tracker keeps; subclasses say what a line admits. */
export abstract class CountingTracker implements ProgressTracker {
  private admitted = 0;

  /** Marks admitted so far. */
  get marks(): number {
    return this.admitted;
  }

  /** Feeds one stdout line; see the subclass comment for what admits a mark. Never throws. */
  abstract feed(line: string): Verdict;

  /** Records `count` admitted marks and returns the line's verdict. */
  protected admit(count: number): Verdict {
    this.admitted += count;
    return markOrIgnore(count);
  }
}

/**
 * @internal Parses `line` as one JSON object if it can be an event of a source whose
 * events all contain one of `needles` (a JSON string literal such as `"item.started"`),
 * else returns undefined without parsing.
 *
 * Hint: a chatty provider prints thousands of prose lines a second, so JSON.parse is
 * skipped for lines that cannot be events. Both checks are exact, not heuristics: a JSON
 * object starts with `{` after JSON whitespace, and a string value can only be spelled
 * without its literal characters through a `\u` escape, which sends the line to the parser.
 */
export function eventObject(line: string, needles: readonly string[]): Record<string, unknown> | undefined {
  if (typeof line !== 'string' || !startsObject(line)) return undefined;
  if (!line.includes('\\u') && !needles.some((needle) => line.includes(needle))) return undefined;
  const parsed = parseJsonlRow(line);
  return 'row' in parsed ? parsed.row : undefined;
}

function startsObject(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    // JSON whitespace only (space, tab, LF, CR): JSON.parse rejects any other.
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) continue;
    return c === 0x7b;
  }
  return false;
}

/** @internal A non-empty string, or undefined: anonymous events never name an identity. */
export function identity(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** @internal The object at `value`, or undefined for anything else (arrays included). */
export function objectAt(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * @internal The open/closed state of each identity a tracker has admitted. An identity
 * admits at most two marks, its first sighting and its first close; a close of an
 * identity never seen open admits one only when the source allows it (`closeOpensUnseen`),
 * since some sources emit a short-lived item only when it completes.
 */
export interface Lifecycles {
  /** Records a sighting of an open identity; 1 when it is new, else 0. */
  open(key: string): number;
  /** Records a close; 1 for the first close of an identity (see `closeOpensUnseen`), else 0. */
  close(key: string): number;
}

/** @internal Creates an empty {@link Lifecycles}. Memory: one entry per admitted identity. */
export function createLifecycles(closeOpensUnseen: boolean): Lifecycles {
  // true = closed. Unseen identities that are not admitted are never stored.
  const closed = new Map<string, boolean>();
  return {
    open(key) {
      if (closed.has(key)) return 0;
      closed.set(key, false);
      return 1;
    },
    close(key) {
      const state = closed.get(key);
      if (state === true || (state === undefined && !closeOpensUnseen)) return 0;
      closed.set(key, true);
      return 1;
    },
  };
}
