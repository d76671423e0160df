import { parseJsonlRow } from '../../../formats/jsonl-row.ts';
import { ClaudeStreamJsonTracker } from './claude-stream-json.ts';
import { CodexJsonTracker } from './codex-json.ts';
import { JsonlCounterTracker } from './jsonl-counter.ts';
import { StepLifecycleTracker } from './step-lifecycle.ts';

/** The structured progress sources a lease descriptor may name. */
export type TrackerKind = 'step-lifecycle' | 'claude-stream-json' | 'codex-json' | 'jsonl-counter';

/** Every {@link TrackerKind}, in the order the contract lists them. */
export const TRACKER_KINDS: readonly TrackerKind[] = Object.freeze([
  'step-lifecycle',
  'claude-stream-json',
  'codex-json',
  'jsonl-counter',
]);

/**
 * What one stdout line means for the lease.
 *
 * - `mark`: the line admitted `count` (>= 1) content-free marks, each of which renews the
 *   lease. `count` exceeds 1 only when one line opens or closes several identities (a
 *   Claude message carrying several tool_use blocks).
 * - `ignore`: prose, a duplicate, a malformed or anonymous event; never renews.
 * - `terminal`: the provider's own end-of-run event; completion evidence, never a mark.
 * - `invalid`: the source broke its own monotonic sequence (PROGRESS_INVALID); the
 *   supervisor fails closed.
 */
export type Verdict =
  | { readonly kind: 'mark'; readonly count: number }
  | { readonly kind: 'ignore' }
  | { readonly kind: 'terminal' }
  | { readonly kind: 'invalid'; readonly reason: string };

/** Turns a child's stdout, one line at a time, into admitted progress marks. */
export interface ProgressTracker {
  /** Feeds one complete stdout line (without its newline). Never throws. */
  feed(line: string): Verdict;
  /** Marks admitted so far (the sum of every `mark` verdict's `count`). */
  readonly marks: number;
}

/** Creates a fresh tracker (empty identity sets, zero marks) of the given kind. */
export function createTracker(kind: TrackerKind): ProgressTracker {
  switch (kind) {
    case 'step-lifecycle':
      return new StepLifecycleTracker();
    case 'claude-stream-json':
      return new ClaudeStreamJsonTracker();
    case 'codex-json':
      return new CodexJsonTracker();
    case 'jsonl-counter':
      return new JsonlCounterTracker();
  }
  // Only reachable from untyped callers; the descriptor is validated before this point.
  throw new TypeError(`Expected a tracker kind (${TRACKER_KINDS.join(', ')}), got ${JSON.stringify(kind)}`);
}

// Internal helpers shared by the trackers. The trackers import them back from this module,
// which imports the trackers: the cycle is safe because everything below is a hoisted
// function declaration, initialised before any module body runs. Keep it that way (no
// const or class read at module top level), or move these into their own module.

/** @internal A `mark` verdict for `count` marks, or `ignore` when `count` is 0. */
export function markOrIgnore(count: number): Verdict {
  return count > 0 ? { kind: 'mark', count } : IGNORE;
}

// Read only inside calls, never while modules evaluate, so the cycle cannot reach it early.
const IGNORE: Verdict = Object.freeze({ kind: 'ignore' });

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
