import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { CATALOGUE } from '../fixtures/catalogue.ts';
import { generateRun } from '../fixtures/generate-run.ts';
import { hostileVariants } from '../fixtures/hostile.ts';
import { ensureBuilt, laneward } from './helpers/cli.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('hostile');
const archive = join(root, 'archive');
const HOSTILE = hostileVariants();
const corpus: { name: string; dir: string }[] = [];

beforeAll(() => {
  ensureBuilt();
  const add = (name: string, apply: (dir: string) => void) => {
    const dir = join(archive, name);
    generateRun(dir);
    apply(dir);
    corpus.push({ name, dir });
  };
  add('valid', () => {});
  // Without its run.json a run directory is, to a search, a directory like any other: a
  // batch reports it only when it is an input (README), so it is left out of the archive.
  for (const variant of CATALOGUE.filter((v) => v.name !== 'run-json-absent')) add(`catalogue-${variant.name}`, variant.apply);
  for (const variant of HOSTILE) add(`hostile-${variant.name}`, variant.apply);
});

/** The verdict fields a run's report must agree on, wherever it was validated. */
const verdict = (report: Record<string, unknown>) => {
  const { valid, run, status, run_dir, errors, errors_omitted } = report;
  return { valid, run, status, run_dir, errors, errors_omitted: errors_omitted ?? 0 };
};

describe('hostile runs, one at a time', () => {
  test.each(HOSTILE.map((variant) => [variant.name, variant] as const))('should judge %s with its codes and exact count', (name, variant) => {
    const result = laneward(['artifact', 'validate', join(archive, `hostile-${name}`), '--json']);
    const report = JSON.parse(result.stdout);
    expect(result.stderr).toBe('');
    expect(report.valid).toBe(variant.codes.length === 0);
    expect([...new Set(report.errors.map((found: { code: string }) => found.code))].sort()).toEqual([...variant.codes].sort());
    if (variant.errors !== undefined) expect(report.errors.length + (report.errors_omitted ?? 0)).toBe(variant.errors);
    expect(report.errors.length).toBeLessThanOrEqual(1000);
  });
});

describe('single and batch parity over the hostile corpus', () => {
  test('should give every run the same verdict, errors and count in one run and in a batch', () => {
    const batch = spawnSync(process.execPath, [join(import.meta.dirname, '..', 'dist', 'laneward.cjs'), 'artifact', 'validate', archive, '--json', '--jobs', '2'], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
    const lines = batch.stdout.trim().split('\n').map((line) => JSON.parse(line));
    const summary = lines.pop();
    const byDir = new Map(lines.map((report) => [report.run_dir, report]));
    expect(summary.summary.runs).toBe(corpus.length);
    expect(byDir.size).toBe(corpus.length);
    let codes = 0;
    for (const { name, dir } of corpus) {
      const single = JSON.parse(laneward(['artifact', 'validate', dir, '--json']).stdout);
      const inBatch = byDir.get(dir);
      expect({ name, ...verdict(inBatch) }).toEqual({ name, ...verdict(single) });
      codes += single.errors.length + (single.errors_omitted ?? 0);
    }
    const total = Object.values(summary.summary.codes as Record<string, number>).reduce((a, b) => a + b, 0);
    expect(total).toBe(codes);
    expect(batch.status).toBe(1);
  }, 180_000);
});
