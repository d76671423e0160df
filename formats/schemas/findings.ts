import * as v from 'valibot';
import { integer, schemaVersion, stringArray } from './common.ts';

export const SEVERITIES = ['Critical', 'High', 'Medium', 'Low', 'Informational'] as const;

export const findingSchema = v.looseObject({
  schema_version: schemaVersion(1),
  run: v.string(),
  id: v.string(),
  phase: v.string(),
  voice: v.picklist(['native', 'outside']),
  severity: v.picklist(SEVERITIES),
  title: v.string(),
  model: v.optional(v.string()),
  file: v.optional(v.string()),
  line: v.optional(integer),
  disposition: v.optional(v.picklist(['open', 'accepted', 'partially_accepted', 'rejected', 'deferred', 'fixed'])),
  resolution: v.optional(v.string()),
  plan_items: v.optional(stringArray),
  native_counterpart: v.optional(v.nullable(v.string())),
  source: v.optional(v.string()),
  user_challenge: v.optional(v.boolean()),
  changes: v.optional(v.picklist(['scope', 'cost', 'direction'])),
  urgent: v.optional(v.boolean()),
  suggested_owner: v.optional(v.string()),
});

export type FindingRow = v.InferOutput<typeof findingSchema>;
