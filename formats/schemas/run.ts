import * as v from 'valibot';
import { integer, namedRecord, plainObject, schemaVersion, sha256Hex, stringArray } from './common.ts';

export const RUN_STATUSES = [
  'complete', 'reviewed', 'gate_pending', 'incomplete', 'interrupted', 'refused', 'awaiting_result', 'running',
] as const;
/** Run statuses a finished run may carry; any other is an interrupted run. */
export const TERMINAL_RUN_STATUSES: ReadonlySet<string> = new Set(['complete', 'reviewed', 'gate_pending', 'incomplete', 'refused']);

export const VOICE_STATUSES = ['completed', 'unavailable', 'disabled', 'skipped', 'failed', 'pending', 'running'] as const;

export const voiceSchema = v.looseObject({
  status: v.picklist(VOICE_STATUSES),
  model: v.optional(v.string()),
  provider: v.optional(v.string()),
  /** The artifacts key of this voice's bound output; defaults to `<phase>-<voice>.md`. */
  output: v.optional(v.string()),
});

export const phaseSchema = plainObject(
  v.looseObject({
    snapshot: v.optional(v.string()),
    native: v.optional(voiceSchema),
    outside: v.optional(voiceSchema),
  }),
);

export const artifactEntrySchema = v.looseObject({
  path: v.string(),
  sha256: sha256Hex,
});

/** A count is a number or null; null is not checked, a number must equal the rows (step 4). */
const countSchema = v.optional(v.nullable(v.number()));

export const runSchema = v.looseObject({
  schema_version: schemaVersion(1),
  run: v.pipe(v.string(), v.minLength(1)),
  status: v.picklist(RUN_STATUSES),
  required_phases: stringArray,
  phases: namedRecord(phaseSchema),
  artifacts: namedRecord(artifactEntrySchema),
  base: v.optional(v.string()),
  host: v.optional(v.string()),
  session_kind: v.optional(v.string()),
  counts: v.optional(
    plainObject(v.looseObject({ decisions: countSchema, decisions_pending: countSchema, findings: countSchema, tasks: countSchema })),
  ),
  gate_rev: v.optional(integer),
  gate: v.optional(plainObject(v.looseObject({}))),
  consumed_by: v.optional(v.array(v.looseObject({ consumer: v.string(), at: v.string() }))),
  deviations: v.optional(stringArray),
});

export type RunManifest = v.InferOutput<typeof runSchema>;
export type Voice = v.InferOutput<typeof voiceSchema>;
