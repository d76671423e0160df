import * as v from 'valibot';
import { schemaVersion } from './common.ts';

export const pregateSchema = v.looseObject({
  schema_version: schemaVersion(1),
  tree: v.string(),
  checks: v.array(
    v.looseObject({
      id: v.string(),
      status: v.picklist(['pass', 'fail', 'warn', 'incomplete', 'requires-remote', 'not_installed']),
      ms: v.optional(v.number()),
      detail: v.optional(v.string()),
    }),
  ),
  run: v.optional(v.string()),
  stage1_ms: v.optional(v.number()),
  stage2_ms: v.optional(v.number()),
});
