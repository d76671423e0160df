import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as v from 'valibot';
import { describe, expect, test } from 'vitest';
import { rowShapeOf } from '../formats/jsonl/row-shape.ts';
import { compileCheck } from '../formats/schemas/compile.ts';
import { SCHEMAS, type AnySchema } from '../formats/schemas/index.ts';
import { walkSchema } from '../formats/schemas/walk.ts';

const ROOT = join(import.meta.dirname, '..');

/** Every .ts file under formats/, workers/ and main/, repo-relative. */
function sources(): string[] {
  return ['formats', 'workers', 'main'].flatMap((top) =>
    (readdirSync(join(ROOT, top), { recursive: true }) as string[]).filter((file) => file.endsWith('.ts')).map((file) => join(top, file)),
  );
}

describe('walkSchema', () => {
  test('should be the one reader of valibot schema trees: no other module declares its own Unsupported', () => {
    const declaring = sources().filter((file) => /class Unsupported\b/.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(declaring).toEqual(['formats/schemas/walk.ts']);
  });

  test('should be what both compiled checks are built from', () => {
    const importers = sources().filter((file) => /from '[./]*(schemas\/)?walk\.ts'/.test(readFileSync(join(ROOT, file), 'utf8'))).sort();
    expect(importers).toEqual(['formats/jsonl/row-shape.ts', 'formats/schemas/compile.ts']);
  });

  // run and gate carry custom checks that only valibot evaluates.
  test.each(Object.keys(SCHEMAS).map((name) => [name, name !== 'run' && name !== 'gate'] as const))('should read the %s schema: %s', (name, read) => {
    expect(walkSchema(SCHEMAS[name as keyof typeof SCHEMAS].schema) !== undefined).toBe(read);
  });

  const beyond: [string, AnySchema][] = [
    ['a custom check', v.pipe(v.string(), v.check((s) => s.length > 1))],
    ['a default', v.looseObject({ a: v.optional(v.string(), 'x') })],
    ['a nullable default', v.looseObject({ a: v.nullable(v.string(), 'x') })],
    ['a transform', v.pipe(v.string(), v.transform((s) => s.length))],
    ['a strict object', v.object({ a: v.string() })],
    ['a record keyed by a pattern', v.record(v.pipe(v.string(), v.regex(/^a/)), v.string())],
    ['a nested unknown type', v.looseObject({ a: v.array(v.date()) })],
  ];

  test.each(beyond)('should decline %s, and neither compiled check exists', (_, schema) => {
    expect(walkSchema(schema)).toBeUndefined();
    expect(compileCheck(schema)).toBeUndefined();
    expect(rowShapeOf(schema)).toBeNull();
  });

  test('should keep a pipe in order and an optional key as optional', () => {
    const tree = walkSchema(v.looseObject({ n: v.pipe(v.number(), v.integer(), v.minValue(1)), s: v.optional(v.nullable(v.string())) }));
    expect(tree).toEqual({
      type: 'loose_object',
      actions: [],
      entries: [
        { key: 'n', value: { type: 'number', actions: [{ type: 'integer' }, { type: 'min_value', requirement: 1 }] } },
        { key: 's', value: { type: 'optional', actions: [], wrapped: { type: 'nullable', actions: [], wrapped: { type: 'string', actions: [] } } } },
      ],
    });
  });

  test('should leave the byte check narrower than the predicate: a regex, a union, a record have a predicate and no byte shape', () => {
    for (const schema of [
      v.looseObject({ id: v.pipe(v.string(), v.regex(/^x/)) }),
      v.looseObject({ id: v.union([v.string(), v.number()]) }),
      v.looseObject({ id: v.record(v.string(), v.string()) }),
    ]) {
      expect(compileCheck(schema)).toBeTypeOf('function');
      expect(rowShapeOf(schema)).toBeNull();
    }
  });
});
