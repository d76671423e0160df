import * as v from 'valibot';
import { positiveInteger, schemaVersion } from './common.ts';

export const GATE_ITEM_ID = /^[a-z]*[0-9]+$/;

export const gateOptionSchema = v.looseObject({
  key: v.pipe(v.string(), v.regex(/^[a-z]$/, 'Expected one lowercase letter')),
  text: v.string(),
});

export const gateItemSchema = v.pipe(
  v.looseObject({
    id: v.pipe(v.string(), v.regex(GATE_ITEM_ID, 'Expected an item id such as d3, uc1 or p1')),
    title: v.string(),
    kind: v.picklist(['auto', 'approval']),
    options: v.pipe(v.array(gateOptionSchema), v.minLength(2, 'Expected at least two options')),
    recommended: v.string(),
    phase: v.optional(v.string()),
    cost: v.optional(v.unknown()),
    why: v.optional(v.string()),
    keep: v.optional(v.string()),
  }),
  v.check((item) => new Set(item.options.map((o) => o.key)).size === item.options.length, 'Expected unique option keys'),
  v.check((item) => item.options.some((o) => o.key === item.recommended), 'Expected recommended to name one of the options'),
  v.check((item) => item.keep === undefined || item.options.some((o) => o.key === item.keep), 'Expected keep to name one of the options'),
);

export const gateSchema = v.pipe(
  v.looseObject({
    schema_version: schemaVersion(1),
    run: v.string(),
    gate_rev: positiveInteger,
    title: v.optional(v.string()),
    items: v.pipe(v.array(gateItemSchema), v.minLength(1, 'Expected at least one item')),
  }),
  v.check((gate) => new Set(gate.items.map((i) => i.id)).size === gate.items.length, 'Expected unique item ids'),
);

export type Gate = v.InferOutput<typeof gateSchema>;
export type GateItem = v.InferOutput<typeof gateItemSchema>;
