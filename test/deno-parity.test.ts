import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import { CATALOGUE } from '../fixtures/catalogue.ts';
import { generateRun } from '../fixtures/generate-run.ts';
import { signedActions, type SignedActions } from './helpers/actions.ts';
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

describe('supervision under deno', () => {
  const provider = fileURLToPath(new URL('../fixtures/providers/provider.mjs', import.meta.url));
  let descriptor: SignedActions;

  beforeAll(() => {
    descriptor = signedActions(root, { review: { timeout_mode: 'admitted_progress_inactivity', progress: 'fd', cleanup_reserve_ms: 0, post_provider_ms: 1000 } });
  });

  // The lease is what each case tests: the prose-only provider must outlive a short one, while
  // the others get one that a loaded machine's slow node start (seen above 500 ms under a full
  // suite) cannot run out before the provider's first write.
  test.each([
    [['marks', '100', '8'], '5000', 0, 'ok', null],
    [['chatty', '3000'], '500', 124, 'timeout', 'LEASE_EXPIRED'],
    [['bad-mark'], '5000', 1, 'failed', 'PROGRESS_INVALID'],
  ])('should supervise provider %j with the outcome node gives', (mode, lease, exit, status, code) => {
    const args = ['lease', 'run', '--json', '--actions', descriptor.file, '--trust', descriptor.trust, '--action', 'review', '--timeout-ms', lease, '--', process.execPath, provider, ...mode];
    for (const runtime of ['node', 'deno'] as const) {
      const result = laneward(args, { runtime });
      expect(result.code).toBe(exit);
      expect(JSON.parse(result.stdout)).toMatchObject({ status, code, attempts: 1, cleanupConfirmed: true });
    }
  });

  test('should run the deadline guard to expiry as node does', () => {
    for (const runtime of ['node', 'deno'] as const) {
      const receipt = join(root, `deadline-${runtime}.json`);
      // Seconds of budget: a runtime that starts slowly under load must still spawn the probe
      // before the receipt runs out (an exhausted receipt is 124 with nothing started).
      expect(laneward(['deadline', 'start', receipt, '3'], { runtime }).code).toBe(0);
      const result = laneward(['deadline', 'run', receipt, '--', 'bash', '-c', 'sleep 30'], { runtime });
      expect(result.code).toBe(124);
      const events = result.stderr.split('\n').filter((line) => line.startsWith('QA_DEADLINE ')).map((line) => JSON.parse(line.slice(12)).event);
      expect(events).toEqual(['started', 'expired']);
    }
  });
});

describe('qa under deno', () => {
  test('should drive a lane as node does, a tool-policy violation included', () => {
    const descriptor = signedActions(join(root, 'qa'), { observe: { timeout_mode: 'admitted_progress_inactivity', progress: 'claude-stream-json', cleanup_reserve_ms: 0, post_provider_ms: 2000 } });
    const observers = fileURLToPath(new URL('../fixtures/observers', import.meta.url));
    const drive = (runtime: 'node' | 'deno') => {
      const state = ['--state', join(root, 'qa', `state-${runtime}`)];
      const start = (lane: string, observer: string) =>
        ['qa', 'start', '--lane', lane, '--observer', `node ${observers}/${observer}.mjs {prompt} {result}`, '--actions', descriptor.file, '--trust', descriptor.trust, '--action', 'observe', ...state];
      const steps = [
        start('p1', 'pass'),
        ...[0, 1, 2].map((i) => ['qa', 'turn', '--lane', 'p1', '--role', 'user', '--text', `t${i}`, ...(i === 1 ? ['--diff'] : []), ...state]),
        ['qa', 'finish', '--lane', 'p1', ...state],
        ['qa', 'status', '--lane', 'p1', '--json', ...state],
        start('v1', 'violator'),
      ];
      return steps.map((args) => laneward(args, { runtime }));
    };
    const node = drive('node');
    expect(node.map((r) => r.code)).toEqual([0, 0, 0, 0, 0, 0, 1]);
    expect(drive('deno')).toEqual(node);
  });
});
