import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { findingSchema } from '../formats/schemas/findings.ts';
import { IdIndex } from '../workers/validate/id-index.ts';
import { checkJsonlFile } from '../workers/validate/jsonl-artifact.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('ids');

describe('IdIndex', () => {
  test('should return the first line of a repeated id and 0 for new ones, across growth', () => {
    const index = new IdIndex();
    for (let i = 1; i <= 50_000; i++) expect(index.add(`run-ceo-native-${i}`, i)).toBe(0);
    expect(index.size).toBe(50_000);
    expect(index.add('run-ceo-native-7', 50_001)).toBe(7);
    expect(index.add('run-ceo-native-50000', 50_002)).toBe(50_000);
  });
});

describe('checkJsonlFile', () => {
  test('should find duplicates exactly among 300,000 rows spanning many chunks', () => {
    const file = join(root, 'findings.jsonl');
    const row = (n: number) =>
      `{"schema_version":1,"run":"r","id":"r-eng-outside-${n}","phase":"eng","voice":"outside","severity":"Low","title":"finding number ${n} ${'x'.repeat(n % 50)}"}\n`;
    const rows: string[] = [];
    for (let n = 1; n <= 300_000; n++) rows.push(row(n));
    rows.push(row(123_456), row(1));
    writeFileSync(file, rows.join(''));
    const result = checkJsonlFile(file, { display: 'findings.jsonl', schema: findingSchema, runId: 'r' });
    expect(result.lines).toBe(300_002);
    expect(result.issues.items).toEqual([
      { code: 'ARTIFACT_DUPLICATE_ID', path: 'findings.jsonl:300001.id', message: 'id r-eng-outside-123456 first used at line 123456' },
      { code: 'ARTIFACT_DUPLICATE_ID', path: 'findings.jsonl:300002.id', message: 'id r-eng-outside-1 first used at line 1' },
    ]);
  });

  test('should call only the last line of a file a malformed tail', () => {
    const file = join(root, 'tail.jsonl');
    writeFileSync(file, '{"a":\n{"schema_version":1,"run":"r","id":"r-x-native-1","phase":"x","voice":"native","severity":"Low","title":"t"}\n{"id":"r-');
    const result = checkJsonlFile(file, { display: 'f.jsonl', schema: findingSchema, runId: 'r' });
    expect(result.issues.items).toEqual([
      { code: 'ARTIFACT_MALFORMED_JSONL', path: 'f.jsonl:1', message: 'line is not valid JSON' },
      { code: 'ARTIFACT_MALFORMED_JSONL', path: 'f.jsonl:3', message: 'malformed tail: line is not valid JSON' },
    ]);
  });
});
