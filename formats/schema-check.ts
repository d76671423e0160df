import * as v from 'valibot';
import { issue, type Issue } from './issue.ts';
import type { AnySchema } from './schemas/index.ts';

const CONFIG = { abortEarly: false, abortPipeEarly: true } as const;

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

/**
 * Checks one parsed value. Returns no array at all for a valid value (the common case on
 * the hot path allocates nothing).
 */
export function checkSchema(schema: AnySchema, value: unknown, prefix: string): Issue[] | undefined {
  const result = v.safeParse(schema, value, CONFIG);
  if (result.success) return undefined;
  return result.issues.map((found) => toIssue(prefix, found));
}
