import * as v from 'valibot';
import { integer, schemaVersion } from './common.ts';

export const shipReceiptSchema = v.looseObject({
  schema_version: schemaVersion(1),
  head: v.string(),
  base: v.string(),
  pr: v.optional(integer),
  version: v.optional(v.string()),
  gated_tree: v.optional(v.string()),
  gate: v.optional(v.unknown()),
  ci: v.optional(v.unknown()),
  spend_usd: v.optional(v.union([v.number(), v.string()])),
  predecessor: v.optional(v.unknown()),
  session_kind: v.optional(v.string()),
  artifacts_consumed: v.optional(v.pipe(v.string(), v.regex(/^\d+\/\d+$/, 'Expected "n/m"'))),
  run: v.optional(v.string()),
  /** A receipt carried across a base merge or rebase: the head it was written for, why, and the evidence (range-diff, patch ids). */
  carried_from: v.optional(v.string()),
  carry_reason: v.optional(v.string()),
  carry: v.optional(v.looseObject({})),
});
