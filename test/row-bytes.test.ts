import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { RowBytesCheck } from '../formats/jsonl/row-bytes.ts';
import { rowShapeOf } from '../formats/jsonl/row-shape.ts';
import { checkSchema } from '../formats/schemas/check.ts';
import { decisionSchema } from '../formats/schemas/decisions.ts';
import { findingSchema } from '../formats/schemas/findings.ts';
import type { AnySchema } from '../formats/schemas/index.ts';
import { runSchema } from '../formats/schemas/run.ts';
import { taskSchema } from '../formats/schemas/tasks.ts';
import { checkJsonlFile } from '../workers/validate/jsonl-artifact.ts';
import { prng } from './helpers/prng.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('row-bytes');

const FINDING = {
  schema_version: 1,
  run: 'run1',
  id: 'run1-eng-native-1',
  phase: 'eng',
  voice: 'native',
  model: 'model-n1',
  severity: 'Low',
  title: 'lease retry shard',
  file: 'src/deadline.ts',
  line: 398,
  disposition: 'partially_accepted',
  resolution: 'retry probe',
  plan_items: ['step 2'],
  native_counterpart: null,
  source: 'review',
  urgent: false,
  extra: { nested: [1, 2.5e3, -0, true, null, 'x'] },
};
const TASK = { schema_version: 2, run: 'run1', id: 'run1-t1', title: 't', status: 'done', depends_on: [], findings: ['run1-a'], blocked_by: [], acceptance: 'a', pr: 'pr-1', tier: 2, priority: { any: [1] } };
const DECISION = { schema_version: 1, run: 'run1', id: 'run1-d1', title: 'd', options: ['a', 'b'], recommended: null, kind: 'auto', status: 'approved', gate_rev: 1, cost: [1, { x: 'y' }] };

/** What the ordinary path concludes about one line: valid and bound, with its id, or not. */
function ordinary(schema: AnySchema, line: string, runId: string): string | undefined {
  let row: unknown;
  try {
    row = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof row !== 'object' || row === null || Array.isArray(row)) return undefined;
  if (checkSchema(schema, row, 'x') !== undefined) return undefined;
  const { id, run } = row as { id?: unknown; run?: unknown };
  if (typeof id !== 'string' || run !== runId || !id.startsWith(`${runId}-`)) return undefined;
  return id;
}

function accepts(check: RowBytesCheck, line: string): string | undefined {
  const bytes = Buffer.from(`${line}\n`, 'utf8');
  return check.accept(bytes, 0, bytes.length - 1) ? bytes.toString('latin1', check.idStart, check.idEnd) : undefined;
}

// Mutations that keep a line close to JSON, where a byte-level scanner is most likely wrong.
const PIECES = ['"', '\\', '\\"', '\\u0041', '\\u00', '\\x', ',', ':', '{', '}', '[', ']', ' ', '\t', '\r', '1', '1.0', '1e0', '-0', '01', '-', '.', 'e', 'true', 'fals', 'null', 'é', '\u0001', '\u007f', '"id":"run1-x"', '"run":"run2"', '"line":1.5', '"schema_version":2', '"voice":"Native"', '"id":1', '\ufeff'];

function mutate(line: string, next: () => number): string {
  let out = line;
  const edits = 1 + Math.floor(next() * 3);
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(next() * (out.length + 1));
    const kind = next();
    const piece = PIECES[Math.floor(next() * PIECES.length)]!;
    if (kind < 0.4) out = out.slice(0, at) + piece + out.slice(at);
    else if (kind < 0.7) out = out.slice(0, at) + out.slice(at + 1 + Math.floor(next() * 3));
    else out = out.slice(0, at) + piece + out.slice(at + piece.length);
  }
  return out;
}

describe('RowBytesCheck', () => {
  const cases: [string, AnySchema, object][] = [
    ['findings', findingSchema, FINDING],
    ['tasks', taskSchema, TASK],
    ['decisions', decisionSchema, DECISION],
  ];

  test.each(cases)('should accept a plain valid %s row and hand on its id', (_name, schema, row) => {
    const check = new RowBytesCheck(rowShapeOf(schema)!, 'run1');
    expect(accepts(check, JSON.stringify(row))).toBe((row as { id: string }).id);
    expect(accepts(check, ` ${JSON.stringify(row, null, 1).replaceAll('\n', '\r')}\t`)).toBe((row as { id: string }).id);
  });

  test('should leave a schema it cannot judge on bytes to the ordinary path', () => {
    expect(rowShapeOf(runSchema)).toBeNull();
  });

  test('should decline what the ordinary path would not find valid and bound', () => {
    const check = new RowBytesCheck(rowShapeOf(findingSchema)!, 'run1');
    const declined = [
      '',
      '   ',
      '[]',
      '{"schema_version":1,"run":"run1","id":"run1-a","phase":"p","voice":"native","severity":"Low","title":"t","title":"u"}', // repeated key
      '{"schema_version":1.0,"run":"run1","id":"run1-a","phase":"p","voice":"native","severity":"Low","title":"t"}', // valid, left to JSON.parse
      '{"schema_version":1,"run":"run1","id":"run1\\u002da","phase":"p","voice":"native","severity":"Low","title":"t"}', // escaped id
      '{"schema_version":1,"run":"run1","id":"run1-a","phase":"p","voice":"native","severity":"Low","title":"t"} x',
      '{"schema_version":1,"run":"run1","id":"run1-a","phase":"p","voice":"native","severity":"Low","title":"é"}', // not ASCII
      '{"schema_version":1,"run":"run1","id":"run1-a","phase":"p","voice":"native","severity":"Low","title":"t","line":9007199254740993}',
      '{"schema_version":1,"run":"run1","id":"run2-a","phase":"p","voice":"native","severity":"Low","title":"t"}',
      '{"schema_version":1,"run":"run1","id":"run1","phase":"p","voice":"native","severity":"Low","title":"t"}',
      '{"schema_version":1,"run":"run1","id":"run1-a","phase":"p","voice":"native","severity":"Low"}',
      `{"schema_version":1,"run":"run1","id":"run1-a","phase":"p","voice":"native","severity":"Low","title":"t","x":${'['.repeat(100)}${']'.repeat(100)}}`,
    ];
    for (const line of declined) expect(accepts(check, line), line).toBeUndefined();
    // Keys are tried in the order the last row had them first: a key that only begins like
    // the expected one, or that the expected one begins like, is not taken for it.
    const row = '{"schema_version":1,"run":"run1","id":"run1-a","phase":"p","voice":"native","severity":"Low","title":"t"}';
    expect(accepts(check, row)).toBe('run1-a');
    expect(accepts(check, row.replace('"title"', '"titles"'))).toBeUndefined();
    expect(accepts(check, row.replace('"title"', '"titl"'))).toBeUndefined();
    expect(accepts(check, row.replace('"severity"', '"severit\\u0079"'))).toBeUndefined();
    expect(accepts(check, '{"title":"t","severity":"Low","voice":"native","phase":"p","id":"run1-b","run":"run1","schema_version":1}')).toBe('run1-b');
    expect(accepts(check, row)).toBe('run1-a');
    // A line is judged only up to its newline: bytes after the end are never read as part of it.
    const bytes = Buffer.from(`${JSON.stringify(FINDING)}\n`);
    expect(check.accept(bytes, 0, bytes.length - 3)).toBe(false);
  });

  test.each(cases)('should accept a mutated %s line only when JSON.parse and valibot find it valid and bound, with the same id', (_name, schema, row) => {
    const check = new RowBytesCheck(rowShapeOf(schema)!, 'run1');
    const base = [JSON.stringify(row), JSON.stringify(row, null, 2).replaceAll('\n', ' ')];
    const next = prng(20261201);
    let accepted = 0;
    for (let n = 0; n < 20_000; n++) {
      const line = mutate(base[n % base.length]!, next).replaceAll('\n', ' ');
      const fast = accepts(check, line);
      if (fast === undefined) continue;
      accepted++;
      expect(ordinary(schema, line, 'run1'), line).toBe(fast);
    }
    // The mutations keep many lines valid: the property is not vacuous.
    expect(accepted).toBeGreaterThan(500);
  });
});

describe('checkJsonlFile on bytes', () => {
  test('should report exactly what the parsing path reports, line for line', () => {
    const next = prng(7);
    const lines: string[] = [];
    for (let n = 0; n < 3_000; n++) {
      const row = { ...FINDING, id: `run1-eng-native-${n % 2_900}` };
      const text = JSON.stringify(row);
      lines.push(next() < 0.3 ? mutate(text, next) : text);
    }
    const file = join(root, 'mixed.jsonl');
    writeFileSync(file, `${lines.join('\n')}\ntail without newline`);
    const ids: [string, number][] = [];
    const onBytes = checkJsonlFile(file, { display: 'findings.jsonl', schema: findingSchema, runId: 'run1', onValidId: (id, line) => ids.push([id, line]), onRow: (row, line) => ids.push([row['id'] as string, line]) });
    const parsed: [string, number][] = [];
    const onText = checkJsonlFile(file, { display: 'findings.jsonl', schema: findingSchema, runId: 'run1', onRow: (row, line) => parsed.push([row['id'] as string, line]) });
    expect(onBytes.issues.items.length).toBeGreaterThan(100);
    expect(onBytes).toEqual(onText);
    // Every valid row's id is handed on, by one hook or the other, at its line.
    const validIds = new Set(ids.map(([id, line]) => `${line}:${id}`));
    for (const [id, line] of parsed) if (typeof id === 'string' && ordinary(findingSchema, lines[line - 1]!, 'run1') !== undefined) expect(validIds.has(`${line}:${id}`)).toBe(true);
  });
});
