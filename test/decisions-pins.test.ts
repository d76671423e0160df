// Small tests that pin decisions of docs/decisions.md no other test pinned.
import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { describe, expect, test } from 'vitest';
import { isLanewardError } from '../formats/codes/error.ts';
import { SCHEMAS } from '../formats/schemas/index.ts';
import { generateRun } from '../fixtures/generate-run.ts';
import { validateRun } from '../workers/validate/validate-run.ts';
import { loadCrew } from '../main/crew/load-crew.ts';
import { discoverRuns } from '../main/batch/discover.ts';
import { readReceipt } from '../main/deadline/receipt-file.ts';
import { tempRoot } from './helpers/tmp.ts';

const iso = (ms: number) => new Date(ms).toISOString();
// Every directory of this file's tests is under one root, removed when they end.
const root = tempRoot('pins');

describe('receipt changes', () => {
  const dir = mkdtempSync(join(root, 'receipt-'));
  const craft = (name: string, startedAt: number) => {
    const file = join(dir, name);
    writeFileSync(file, `${JSON.stringify({ version: 1, startedAt: iso(startedAt), deadlineAt: iso(startedAt + 3_600_000), budgetMs: 3_600_000 })}\n`);
    chmodSync(file, 0o400);
    return file;
  };

  test('should refuse a receipt whose inode changed more than 5 s after its startedAt', () => {
    const file = craft('late.json', Date.now() - 60_000);
    let caught: unknown;
    try {
      readReceipt(file);
    } catch (error) {
      caught = error;
    }
    expect(isLanewardError(caught) && caught.code).toBe('RECEIPT_INVALID');
    expect((caught as Error).message).toMatch(/changed \d+ ms after its startedAt/);
  });

  test('should accept a receipt whose inode changed within the 5 s slack', () => {
    const file = craft('slack.json', Date.now() - 2_000);
    expect(readReceipt(file).receipt.budgetMs).toBe(3_600_000);
  });
});

describe('the gate schema and its JSON Schema', () => {
  const option = (key: string) => ({ key, text: `option ${key}` });
  const item = (id: string, extra: Record<string, unknown> = {}) => ({ id, title: 't', kind: 'auto', options: [option('a'), option('b')], recommended: 'a', ...extra });
  const gate = (items: unknown[]) => ({ schema_version: 1, run: 'r', gate_rev: 1, items });
  const refused = (value: unknown) => !v.safeParse(SCHEMAS.gate.schema, value).success;

  test('should leave item ids, option keys and recommended to the validator, which refuses each', () => {
    expect(refused(gate([item('d1'), item('d2')]))).toBe(false);
    expect(refused(gate([item('d1'), item('d1')]))).toBe(true);
    expect(refused(gate([item('d1', { options: [option('a'), option('a')] })]))).toBe(true);
    expect(refused(gate([item('d1', { recommended: 'z' })]))).toBe(true);
    const json = JSON.stringify(toJsonSchema(SCHEMAS.gate.schema, { target: 'draft-2020-12', errorMode: 'ignore' }));
    expect(json).not.toMatch(/uniqueItems|"contains"/);
  });
});

describe('one run or a batch', () => {
  test('should not follow symlinked directories, not search below a run, and report an input holding no run', () => {
    const base = mkdtempSync(join(root, 'discover-'));
    const archive = join(base, 'archive');
    const elsewhere = join(base, 'elsewhere');
    for (const dir of [join(archive, 'a', 'nested'), join(archive, 'empty'), join(elsewhere, 'b'), join(base, 'none', 'sub')]) mkdirSync(dir, { recursive: true });
    writeFileSync(join(archive, 'a', 'run.json'), '{}');
    writeFileSync(join(archive, 'a', 'nested', 'run.json'), '{}');
    writeFileSync(join(elsewhere, 'b', 'run.json'), '{}');
    symlinkSync(join(elsewhere, 'b'), join(archive, 'linked'));
    const found = discoverRuns([archive, join(base, 'none')]);
    expect(found.runs).toEqual([join(archive, 'a', 'run.json')]);
    expect(found.empty).toEqual([join(base, 'none')]);
    expect(found.unreachable).toEqual([]);
  });
});

describe('a stale file is still read', () => {
  test('should report the row errors of a JSONL file whose hash no longer matches', () => {
    const dir = join(mkdtempSync(join(root, 'stale-')), 'run');
    generateRun(dir);
    appendFileSync(join(dir, 'findings.jsonl'), 'not json\n');
    const codes = new Set(validateRun(dir).errors.map((found) => found.code));
    expect(codes.has('ARTIFACT_STALE')).toBe(true);
    expect(codes.has('ARTIFACT_MALFORMED_JSONL')).toBe(true);
  });
});

describe('crew gate answers', () => {
  test('should answer as-is when the crew file names no answer', () => {
    const dir = mkdtempSync(join(root, 'crew-answer-'));
    writeFileSync(join(dir, 'plan.md'), '# plan\n');
    const runners = { native: ['node', 'r.mjs'], outside: ['node', 'r.mjs'], observer: ['node', 'o.mjs'], agent: ['node', 'a.mjs'] };
    const crew = {
      schema_version: 1, crew: 'c', models: { native: 'claude-x', outside: 'gpt-y' }, runners, lanes: [{ id: 'l1', plan: 'plan.md' }],
      actions: { file: 'actions.json', trust: 'actions.pub', reviewer: 'review', observer: 'observe', agent: 'agent' },
    };
    writeFileSync(join(dir, 'crew.json'), JSON.stringify(crew));
    expect(loadCrew(join(dir, 'crew.json'), dir).crew.answer).toBe('as-is');
  });
});
