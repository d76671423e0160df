import * as v from 'valibot';
import { describe, expect, test } from 'vitest';
import { random } from '../fixtures/generate-run.ts';
import { compileCheck } from '../formats/schemas/compile.ts';
import { hasFastCheck } from '../formats/schemas/check.ts';
import { SCHEMAS, type SchemaName } from '../formats/schemas/index.ts';

const SAMPLES: Record<string, Record<string, unknown>> = {
  findings: { schema_version: 1, run: 'r', id: 'r-ceo-native-1', phase: 'ceo', voice: 'native', severity: 'High', title: 't', line: 3, disposition: 'open', plan_items: ['a'], native_counterpart: null, urgent: true, changes: 'scope' },
  decisions: { schema_version: 1, run: 'r', id: 'r-d1', title: 't', options: ['a', 'b'], recommended: null, kind: 'auto', status: 'pending', gate_rev: 1, chosen: null, owner_named: false },
  tasks: { schema_version: 2, run: 'r', id: 'r-t1', title: 't', status: 'ready', depends_on: [], findings: ['r-ceo-native-1'], blocked_by: [], acceptance: 'a', tier: 2, files: ['x'] },
  timing: { schema_version: 1, run: 'r', phases: [{ phase: 'ceo', wall_s: 1.5 }], total_wall_s: 3 },
  run: {
    schema_version: 1, run: 'r', status: 'complete', required_phases: ['ceo'],
    phases: { ceo: { snapshot: 's', native: { status: 'completed' }, outside: { status: 'skipped' } } },
    artifacts: { 'plan.md': { path: 'plan.md', sha256: 'a'.repeat(64) } }, counts: { findings: 1, decisions: null }, gate_rev: 1,
  },
  pregate: { schema_version: 1, tree: 'abc', checks: [{ id: 'unit', status: 'pass', ms: 3 }] },
  'ship-receipt': { schema_version: 1, head: 'h', base: 'b', pr: 4, spend_usd: '1.20', artifacts_consumed: '3/4' },
};

const ODD_VALUES: unknown[] = [undefined, null, 0, 1, 1.5, -1, 2, '', 'x', 'High', 'a'.repeat(64), true, [], ['a'], [1], {}, { status: 'completed' }, Number.MAX_SAFE_INTEGER];

/** Every path to a value inside `value`, so a mutation can reach nested fields too. */
function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (value === null || typeof value !== 'object') return [prefix];
  const keys = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
  return [prefix, ...keys.flatMap((key) => paths((value as Record<string | number, unknown>)[key], [...prefix, key]))];
}

function mutate(sample: unknown, path: (string | number)[], replacement: unknown): unknown {
  const copy = structuredClone(sample) as Record<string | number, unknown>;
  if (path.length === 0) return replacement;
  let at = copy;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  if (replacement === undefined) delete at[path.at(-1)!];
  else at[path.at(-1)!] = replacement;
  return copy;
}

describe('compileCheck', () => {
  // The row schemas are the hot path; run and gate carry custom checks (no arrays, no
  // reserved keys, unique ids) that only valibot evaluates, once per document.
  const COMPILED = Object.keys(SAMPLES).filter((name) => name !== 'run');

  test.each(COMPILED)('should compile the %s schema', (name) => {
    expect(hasFastCheck(SCHEMAS[name as SchemaName].schema)).toBe(true);
  });

  test.each(['gate', 'run'])('should decline the %s schema, whose custom checks only valibot runs', (name) => {
    expect(compileCheck(SCHEMAS[name as SchemaName].schema)).toBeUndefined();
  });

  test.each(COMPILED)('should agree with valibot on every single-field mutation of a %s value', (name) => {
    const schema = SCHEMAS[name as SchemaName].schema;
    const fast = compileCheck(schema)!;
    const sample = SAMPLES[name]!;
    expect(v.safeParse(schema, sample).success).toBe(true);
    let disagreements = 0;
    let rejected = 0;
    for (const path of paths(sample)) {
      for (const odd of ODD_VALUES) {
        const candidate = mutate(sample, path, odd);
        const expected = v.safeParse(schema, candidate).success;
        if (!expected) rejected++;
        if (fast(candidate) !== expected) disagreements++;
      }
    }
    expect(disagreements).toBe(0);
    expect(rejected).toBeGreaterThan(10);
  });

  test('should agree with valibot on random two-field mutations of findings rows', () => {
    const schema = SCHEMAS.findings.schema;
    const fast = compileCheck(schema)!;
    const next = random(7);
    const all = paths(SAMPLES['findings']);
    let disagreements = 0;
    for (let i = 0; i < 3000; i++) {
      let candidate: unknown = SAMPLES['findings'];
      for (let k = 0; k < 2; k++) {
        const path = all[Math.floor(next() * all.length)]!;
        if (typeof candidate !== 'object' || candidate === null) break;
        try {
          candidate = mutate(candidate, path, ODD_VALUES[Math.floor(next() * ODD_VALUES.length)]);
        } catch {
          // The first mutation removed the parent of the second path.
        }
      }
      if (fast(candidate) !== v.safeParse(schema, candidate).success) disagreements++;
    }
    expect(disagreements).toBe(0);
  });
});
