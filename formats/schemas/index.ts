import type * as v from 'valibot';
import { decisionSchema } from './decisions.ts';
import { findingSchema } from './findings.ts';
import { gateSchema } from './gate.ts';
import { pregateSchema } from './pregate.ts';
import { runSchema } from './run.ts';
import { shipReceiptSchema } from './ship-receipt.ts';
import { taskSchema } from './tasks.ts';
import { timingSchema } from './timing.ts';

export type AnySchema = v.GenericSchema<unknown, unknown>;

export interface SchemaEntry {
  readonly schema: AnySchema;
  readonly version: number;
  /** JSONL schemas describe one row; the others one JSON document. */
  readonly jsonl: boolean;
}

/** Every schema `artifact schema` prints and `validate --as` checks, by its contract name. */
export const SCHEMAS = {
  findings: { schema: findingSchema, version: 1, jsonl: true },
  decisions: { schema: decisionSchema, version: 1, jsonl: true },
  tasks: { schema: taskSchema, version: 2, jsonl: true },
  timing: { schema: timingSchema, version: 1, jsonl: false },
  run: { schema: runSchema, version: 1, jsonl: false },
  pregate: { schema: pregateSchema, version: 1, jsonl: false },
  'ship-receipt': { schema: shipReceiptSchema, version: 1, jsonl: false },
  gate: { schema: gateSchema, version: 1, jsonl: false },
} as const satisfies Record<string, SchemaEntry>;

export type SchemaName = keyof typeof SCHEMAS;

export function isSchemaName(name: string): name is SchemaName {
  return Object.hasOwn(SCHEMAS, name);
}
