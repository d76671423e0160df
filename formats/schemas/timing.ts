import * as v from 'valibot';
import { schemaVersion } from './common.ts';

export const timingSchema = v.looseObject({
  schema_version: schemaVersion(1),
  run: v.string(),
  phases: v.array(
    v.looseObject({
      phase: v.string(),
      started_at: v.optional(v.string()),
      ended_at: v.optional(v.string()),
      wall_s: v.optional(v.number()),
      outside_s: v.optional(v.number()),
      native_s: v.optional(v.number()),
      amend_s: v.optional(v.number()),
      note: v.optional(v.string()),
    }),
  ),
  started_at: v.optional(v.string()),
  total_wall_s: v.optional(v.number()),
  session_kind: v.optional(v.string()),
  estimate: v.optional(v.unknown()),
});

export type TimingDocument = v.InferOutput<typeof timingSchema>;
