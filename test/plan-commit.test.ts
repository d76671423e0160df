import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { isLanewardError } from '../formats/codes/error.ts';
import { readPlanEnv, planNext, planSubmit } from '../main/plan/index.ts';
import { outcomeCommand } from '../main/plan/voice-outcome.ts';
import { openStore, readJournal } from '../main/store/store.ts';
import { PLAN } from './helpers/plan-driver.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('plan-commit');
const FACTS = { status: 'ok', code: null, child_exit: 0, provider_started: true, marks: 2, duration_ms: 5, cleanup_confirmed: true };

test('should journal a supervision\'s outcome with the result it binds in one transaction, and neither when the result is refused', async () => {
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'plan.md'), PLAN);
  const planEnv = readPlanEnv({}, root, join(root, 'state'));
  const out = join(root, 'run');
  const first = await planNext({ out, plan: join(root, 'plan.md') }, planEnv);
  const attempt = first.attempts[0]!;
  const journal = () => readJournal(openStore(join(root, 'state')), first.run!).map((e) => e.type);
  const before = journal();
  writeFileSync(attempt.result, 'no fence here\n');
  const refused = await planSubmit({ out, phase: attempt.phase, voice: attempt.voice, attempt: attempt.id, result: attempt.result, model: 'claude-test' }, planEnv, [outcomeCommand(attempt.id, FACTS)]).catch((error: unknown) => error);
  expect(isLanewardError(refused) && refused.code).toMatch(/^RESULT_/);
  expect(journal()).toEqual(before);
  writeFileSync(attempt.result, `INPUT: ${attempt.phase} ${first.phase!.snapshot}\n\n\`\`\`gstack-findings\n\`\`\`\n`);
  const bound = await planSubmit({ out, phase: attempt.phase, voice: attempt.voice, attempt: attempt.id, result: attempt.result, model: 'claude-test' }, planEnv, [outcomeCommand(attempt.id, FACTS)]);
  expect(bound.bound.map((b) => b.attempt)).toEqual([attempt.id]);
  expect(journal()).toEqual([...before, 'attempt_outcome', 'result_bound']);
  expect(readFileSync(join(out, '.laneward-run'), 'utf8')).toContain(first.run!);
});
