import * as v from 'valibot';
import { integer, schemaVersion, stringArray } from './common.ts';

export const taskSchema = v.looseObject({
  schema_version: schemaVersion(2),
  run: v.string(),
  id: v.string(),
  title: v.string(),
  status: v.picklist(['pending', 'ready', 'blocked_on_dependency', 'blocked_on_decision', 'in_progress', 'done']),
  /** Task ids, or a `pr` label some task carries. */
  depends_on: stringArray,
  findings: stringArray,
  blocked_by: stringArray,
  acceptance: v.string(),
  pr: v.optional(v.string()),
  item: v.optional(v.string()),
  tier: v.optional(integer),
  priority: v.optional(v.unknown()),
  component: v.optional(v.string()),
  files: v.optional(stringArray),
});

export type TaskRow = v.InferOutput<typeof taskSchema>;
