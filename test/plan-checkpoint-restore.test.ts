import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { sha256 } from '../formats/text/sha256.ts';
import { readPlanEnv, planNext, planResume, planSubmit } from '../main/plan/index.ts';
import { factLine } from '../main/cli/plan-lines.ts';
import { PLAN } from './helpers/plan-driver.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('checkpoint-restore');

/** A run with two generations: started, then one result bound. */
async function twoGenerations(dir: string, name: string): Promise<{ from: string; run: string }> {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.md`), PLAN);
  const planEnv = readPlanEnv({ LANEWARD_CHECKPOINT_DIR: join(dir, 'ck') }, dir, join(dir, 'state'));
  const out = join(dir, name);
  const first = await planNext({ out, plan: join(dir, `${name}.md`) }, planEnv);
  const attempt = first.attempts[0]!;
  writeFileSync(attempt.result, `INPUT: ${attempt.phase} ${first.phase!.snapshot}\n\n\`\`\`gstack-findings\n\`\`\`\n`);
  await planSubmit({ out, phase: attempt.phase, voice: attempt.voice, attempt: attempt.id, result: attempt.result, model: 'claude-test' }, planEnv);
  return { from: join(dir, 'ck', first.run!), run: first.run! };
}

test('should pass over a generation whose state is another run\'s, though its manifest hashes match, and restore the one before', async () => {
  const dir = join(root, 'forged');
  const a = await twoGenerations(dir, 'alpha');
  const b = await twoGenerations(dir, 'beta');
  const [newest, older] = readdirSync(join(a.from, 'generations')).sort().reverse();
  const target = join(a.from, 'generations', newest!);
  const theirs = join(b.from, 'generations', readdirSync(join(b.from, 'generations')).sort().reverse()[0]!, 'state.cbor');
  chmodSync(target, 0o755);
  for (const file of ['state.cbor', 'manifest.json']) chmodSync(join(target, file), 0o644);
  copyFileSync(theirs, join(target, 'state.cbor'));
  const manifest = JSON.parse(readFileSync(join(target, 'manifest.json'), 'utf8'));
  manifest.files['state.cbor'] = sha256(readFileSync(join(target, 'state.cbor')));
  writeFileSync(join(target, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const report = await planResume({ out: join(dir, 'restored'), from: a.from }, readPlanEnv({}, dir, join(dir, 'state2')));
  expect(report.notes.map(factLine)[0]).toBe(`RESTORED: run=${a.run} generation=${older} from=${a.from}`);
  expect(report.run).toBe(a.run);
});
