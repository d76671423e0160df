import { mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { readPlanEnv, planNext, planResume, planStatus } from '../main/plan/index.ts';
import { PLAN } from './helpers/plan-driver.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('resume-move');

test('should point the run directory at a state root that moved once resume is given its new name, and find the run there afterwards', async () => {
  const dir = join(root, 'case');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'plan.md'), PLAN);
  const out = join(dir, 'run');
  const before = join(dir, 'state-a');
  const after = join(dir, 'state-b');
  const first = await planNext({ out, plan: join(dir, 'plan.md') }, readPlanEnv({}, dir, before));
  expect(readFileSync(join(out, '.laneward-run'), 'utf8')).toBe(`${first.run} ${before}\n`);
  renameSync(before, after);
  await planResume({ out }, readPlanEnv({}, dir, after));
  expect(readFileSync(join(out, '.laneward-run'), 'utf8')).toBe(`${first.run} ${after}\n`);
  // No --state and no LANEWARD_STATE_ROOT: the binding alone names the root now.
  expect(planStatus({ out }, readPlanEnv({}, dir)).status).toBe('awaiting_result');
});

test('should refuse a run binding that is a symlink (RUN_NOT_INITIALIZED), not follow it', async () => {
  const dir = join(root, 'linked');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'plan.md'), PLAN);
  const first = await planNext({ out: join(dir, 'real'), plan: join(dir, 'plan.md') }, readPlanEnv({}, dir, join(dir, 'state')));
  mkdirSync(join(dir, 'fake'));
  symlinkSync(join(dir, 'real', '.laneward-run'), join(dir, 'fake', '.laneward-run'));
  expect(first.run).not.toBeNull();
  expect(() => planStatus({ out: join(dir, 'fake') }, readPlanEnv({}, dir))).toThrowError(expect.objectContaining({ code: 'RUN_NOT_INITIALIZED', message: expect.stringContaining('is a symlink') }));
});
