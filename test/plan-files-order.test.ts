import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { syncRunFiles } from '../main/plan/files/run-files.ts';
import { readPlanEnv, planNext, planRecommend, planSubmit, type PlanReport } from '../main/plan/index.ts';
import { openStore } from '../main/store/store.ts';
import { PLAN } from './helpers/plan-driver.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('plan-files-order');

test('should write one run\'s derived files in the order its records committed, however the writes interleave', async () => {
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'plan.md'), PLAN);
  const planEnv = readPlanEnv({}, root, join(root, 'state'));
  const out = join(root, 'run');
  let report: PlanReport = await planNext({ out, plan: join(root, 'plan.md') }, planEnv);
  while (report.status === 'awaiting_result' && report.attempts.length > 0) {
    for (const a of report.attempts) {
      writeFileSync(a.result, `INPUT: ${a.phase} ${report.phase!.snapshot}\n\n\`\`\`gstack-findings\n\`\`\`\n`);
      await planSubmit({ out, phase: a.phase, voice: a.voice, attempt: a.id, result: a.result, model: a.voice === 'native' ? 'claude-x' : 'gpt-y' }, planEnv);
    }
    report = await planNext({ out }, planEnv);
  }
  expect(report.status).toBe('gate_pending');
  const store = openStore(join(root, 'state'));
  const older = store.runs.get(report.run!)!;
  await planRecommend({ out, item: 'p1', option: 'b' }, planEnv);
  const newer = store.runs.get(report.run!)!;
  const gate = join(out, 'gate.json');
  await syncRunFiles(store, newer, out);
  const want = readFileSync(gate, 'utf8');
  for (let round = 0; round < 30; round++) {
    // The older record's sync is called first, as its command committed first.
    await Promise.all([syncRunFiles(store, older, out), syncRunFiles(store, newer, out)]);
    expect(readFileSync(gate, 'utf8'), `round ${round}`).toBe(want);
  }
});
