import * as v from 'valibot';
import { positiveInteger, schemaVersion, stringArray } from './common.ts';

export const decisionSchema = v.looseObject({
  schema_version: schemaVersion(1),
  run: v.string(),
  id: v.string(),
  title: v.string(),
  options: stringArray,
  recommended: v.nullable(v.string()),
  kind: v.picklist(['auto', 'approval', 'user_challenge']),
  status: v.picklist(['pending', 'approved', 'overridden', 'rejected', 'auto_kept']),
  gate_rev: positiveInteger,
  label: v.optional(v.string()),
  default_if_unanswered: v.optional(v.nullable(v.string())),
  phase: v.optional(v.string()),
  chosen: v.optional(v.nullable(v.string())),
  answered_at: v.optional(v.string()),
  reply: v.optional(v.string()),
  source: v.optional(v.string()),
  cost: v.optional(v.unknown()),
  owner_mode: v.optional(v.string()),
  owner_named: v.optional(v.boolean()),
  rec_hash: v.optional(v.string()),
  answered_role: v.optional(v.string()),
  answered_by: v.optional(v.string()),
});

export type DecisionRow = v.InferOutput<typeof decisionSchema>;
