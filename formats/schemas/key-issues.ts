import type * as v from 'valibot';
import { nearestWord } from '../text/nearest-word.ts';

type Step = { readonly key: unknown };
type AnyIssue = v.BaseIssue<unknown>;
type Walkable = { readonly type?: string; readonly entries?: Record<string, unknown>; readonly wrapped?: unknown; readonly item?: unknown; readonly options?: readonly unknown[] };

/** `lanes.2.id` (as valibot's getDotPath writes it); `(top level)` for none. */
export function dotPath(path: readonly Step[] | undefined): string {
  const out = (path ?? []).map((context) => String(context.key)).join('.');
  return out === '' ? '(top level)' : out;
}

/** The keys a (strict) object schema at `path` inside `schema` knows; null where no object schema is found. */
export function knownKeysAt(schema: unknown, path: readonly Step[]): string[] | null {
  let at = unwrap(schema);
  for (const context of path) {
    if (at?.entries !== undefined && typeof context.key === 'string' && Object.hasOwn(at.entries, context.key)) at = unwrap(at.entries[context.key]);
    else if (at?.item !== undefined && typeof context.key === 'number') at = unwrap(at.item);
    else return null;
  }
  return at?.entries === undefined ? null : Object.keys(at.entries);
}

function unwrap(schema: unknown): Walkable | undefined {
  let at = schema as Walkable | undefined;
  for (;;) {
    // optional(), nullable(), exactOptional() wrap the schema they make optional; of a
    // union (an argv or a preset object) the object is the one that has keys.
    if (at?.wrapped !== undefined) at = at.wrapped as Walkable;
    else if (at?.options !== undefined) at = at.options.map((o) => unwrap(o)).find((o) => o?.entries !== undefined);
    else return at;
  }
}

/**
 * The issue itself and those nested in it (a union's branches), depth first, each with
 * its whole path: a branch's issues carry their path from the union's value only.
 */
function* allIssues(issues: readonly AnyIssue[], prefix: readonly Step[] = []): Generator<{ found: AnyIssue; path: readonly Step[] }> {
  for (const found of issues) {
    const own = found.path ?? [];
    const path = prefix.length > 0 && own[0] === prefix[0] ? own : [...prefix, ...own];
    yield { found, path };
    if (found.issues !== undefined) yield* allIssues(found.issues, path);
  }
}

/** A key the object does not know: valibot words it `Expected never but received "key"`. */
function isUnknownKey(found: AnyIssue): boolean {
  return found.type === 'strict_object' && found.expected === 'never';
}

/** A key the object requires and the input lacks. */
function isMissingKey(found: AnyIssue): boolean {
  return found.kind === 'schema' && found.input === undefined && found.path !== undefined && found.received === 'undefined';
}

/**
 * The one problem to print of a file's schema issues, as `<path>: <what>`. A key the
 * schema does not know comes first, named with the nearest key it knows (a typo'd
 * required key is also reported missing, and the typo is what the user must fix).
 */
export function describeKeyIssues(schema: unknown, issues: readonly [AnyIssue, ...AnyIssue[]]): string {
  // A union's branches each report their own issues: the object branch's unknown key is the typo.
  const unknown = [...allIssues(issues)].find((entry) => isUnknownKey(entry.found));
  if (unknown !== undefined) {
    const path = unknown.path;
    const key = String(path.at(-1)?.key);
    const known = knownKeysAt(schema, path.slice(0, -1)) ?? [];
    const near = nearestWord(key, known);
    const hint = near !== null ? `did you mean "${near}"?` : known.length > 0 ? `the keys there are ${known.map((k) => `"${k}"`).join(', ')}` : 'no key is allowed there';
    return `${dotPath(path)}: unknown key "${key}"; ${hint}`;
  }
  const first = issues[0];
  if (isMissingKey(first)) return `${dotPath(first.path)}: a required key is missing`;
  return `${dotPath(first.path)}: ${first.message}`;
}
