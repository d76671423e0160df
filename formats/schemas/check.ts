import * as v from 'valibot';
import { issue, type Issue } from '../codes/issue.ts';
import { compileCheck, type FastCheck } from './compile.ts';
import type { AnySchema } from './index.ts';

const CONFIG = { abortEarly: false, abortPipeEarly: true } as const;
const compiled = new WeakMap<AnySchema, FastCheck | null>();

/** `prefix` + valibot path: keys as `.key`, array indexes as `[n]`. */
export function joinPath(prefix: string, path: readonly { key: unknown }[] | undefined): string {
  let out = prefix;
  if (path === undefined) return out;
  for (const item of path) {
    out += typeof item.key === 'number' ? `[${item.key}]` : `.${String(item.key)}`;
  }
  return out;
}

function toIssue(prefix: string, found: v.BaseIssue<unknown>): Issue {
  const first = found.path?.[0];
  // A schema_version that is present but not the expected value is a version problem,
  // reported apart from shape errors so a parent can tell "newer writer" from "broken".
  const versionMismatch =
    found.path?.length === 1 && first?.key === 'schema_version' && found.input !== undefined;
  return issue(versionMismatch ? 'ARTIFACT_UNSUPPORTED_VERSION' : 'ARTIFACT_SCHEMA', joinPath(prefix, found.path), found.message);
}

const uses = new WeakMap<AnySchema, number>();
/** Values a schema checks before it is compiled: a one-run command checks a handful of rows per schema, and compiling costs more than valibot does for those. */
const COMPILE_AFTER = 16;

function fastCheckOf(schema: AnySchema, now = false): FastCheck | null {
  let check = compiled.get(schema);
  if (check === undefined) {
    if (!now) {
      const n = (uses.get(schema) ?? 0) + 1;
      uses.set(schema, n);
      if (n < COMPILE_AFTER) return null;
    }
    check = compileCheck(schema) ?? null;
    compiled.set(schema, check);
  }
  return check;
}

/**
 * Checks one parsed value. Returns no array at all for a valid value (the common case on
 * the hot path allocates nothing). The compiled predicate answers for valid values; valibot
 * itself words every issue, so messages never depend on the fast path.
 */
export function checkSchema(schema: AnySchema, value: unknown, prefix: string | (() => string)): Issue[] | undefined {
  // Hint: valibot copies every row into a new output object; the compiled check does not.
  // The prefix may be a function so a valid row never builds its error path.
  if (fastCheckOf(schema)?.(value) === true) return undefined;
  if (typeof prefix === 'function') prefix = prefix();
  const result = v.safeParse(schema, value, CONFIG);
  if (result.success) return undefined;
  const at = prefix;
  return result.issues.map((found) => toIssue(at, found));
}

/** The compiled predicate of a schema, or null when it has none (then use checkSchema). */
export function fastCheckFor(schema: AnySchema): FastCheck | null {
  return fastCheckOf(schema, true);
}

/** Whether the schema has a compiled fast path (for tests and the bench). */
export function hasFastCheck(schema: AnySchema): boolean {
  return fastCheckOf(schema, true) !== null;
}
