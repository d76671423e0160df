import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { CATALOGUE } from '../fixtures/catalogue.ts';
import { generateRun } from '../fixtures/generate-run.ts';
import { ensureBuilt, laneward } from './helpers/cli.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('deno');
beforeAll(ensureBuilt);

const cases = [['valid', undefined] as const, ...CATALOGUE.map((variant) => [variant.name, variant.apply] as const)];

describe('the bundle under deno', () => {
  test.each(cases)('should print what node prints for the %s run', (name, apply) => {
    const dir = join(root, name);
    generateRun(dir);
    apply?.(dir);
    for (const args of [['artifact', 'validate', join(dir, 'run.json')], ['artifact', 'validate', dir, '--json']]) {
      const node = laneward(args);
      expect(laneward(args, { runtime: 'deno' })).toEqual(node);
    }
  });

  test('should validate a batch across the pool as node does', () => {
    const args = ['artifact', 'validate', root, '--jobs', '2'];
    const node = laneward(args);
    expect(node.stdout).toMatch(/^ARTIFACT_SUMMARY: runs=\d+ valid=1 invalid=\d+ /m);
    const deno = laneward(args, { runtime: 'deno' });
    const sorted = (text: string) => text.split('\n').sort();
    expect({ ...deno, stdout: sorted(deno.stdout) }).toEqual({ ...node, stdout: sorted(node.stdout) });
  });

  test('should render and answer a gate as node does', () => {
    const gate = join(root, 'valid', 'gate.json');
    for (const args of [['gate', 'render', gate], ['gate', 'parse', gate, '--reply', 'rec except d1b', '--gate-rev', '1'], ['gate', 'parse', gate, '--reply', 'yes', '--gate-rev', '1']]) {
      expect(laneward(args, { runtime: 'deno' })).toEqual(laneward(args));
    }
  });
});
