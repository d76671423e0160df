import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { BUNDLE, codesOf, ensureBuilt, laneward } from './helpers/cli.ts';
import { PLAN, PlanDriver } from './helpers/plan-driver.ts';
import { tempRoot } from './helpers/tmp.ts';
import { prng } from './helpers/prng.ts';

// SIGKILLs `plan revise` and the `next` after it (which publishes a checkpoint
// generation) at seeded random instants, then shows that resume leaves a consistent run:
// the revise took effect whole or not at all, every published generation verifies, and
// the run still reaches a validated export. LANEWARD_CRASH_SEED replays a failure.

const SEED = Number(process.env['LANEWARD_CRASH_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const TRIALS = Number(process.env['LANEWARD_CRASH_REVISE_TRIALS'] ?? 12);


/** Runs the CLI and SIGKILLs it after `delay` ms; resolves with its exit and signal. */
function killAfter(d: PlanDriver, args: readonly string[], delay: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BUNDLE, 'plan', ...args, '--out', d.out, '--state', d.state], { cwd: d.dir, env: { ...process.env, ...d.env }, stdio: 'ignore' });
    const timer = setTimeout(() => child.kill('SIGKILL'), delay);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

const root = tempRoot('plan-crash-revise');
beforeAll(() => ensureBuilt());

describe('plan revise and checkpoint publication killed at random instants', () => {
  test(`should leave the run revised or not, every generation valid, and exportable (seed ${SEED})`, { timeout: 600_000 }, async () => {
    const random = prng(SEED);
    const outcomes = { revise: { killed: 0, finished: 0 }, next: { killed: 0, finished: 0 } };
    for (let t = 0; t < TRIALS; t++) {
      const where = `seed=${SEED} trial=${t}; replay with LANEWARD_CRASH_SEED=${SEED}`;
      const d = new PlanDriver(root, `t${t}`);
      d.writePlan();
      const ck = join(d.dir, 'checkpoints');
      d.env = { LANEWARD_CHECKPOINT_DIR: ck };
      d.driveToGate();
      expect(d.plan('answer', '--gate-rev', '1', '--reply', 'as-is', '--by', 'human').code, where).toBe(0);
      d.writePlan(PLAN.replace('3. Write the rows in batches of 500.', '3. Write the rows in batches of 500.\n4. Log each batch.'));

      const revise = await killAfter(d, ['revise', '--plan', join(d.dir, 'plan.md')], Math.floor(random() * 250));
      outcomes.revise[revise.signal === 'SIGKILL' ? 'killed' : 'finished'] += 1;
      expect(d.plan('resume').code, where).toBe(0);
      const again = d.plan('revise', '--plan', join(d.dir, 'plan.md'));
      // Committed before the kill: the plan is the one under review, so the retry is refused.
      if (again.code !== 0) expect(codesOf(again.stderr), where).toEqual(['PLAN_UNCHANGED']);
      const status = d.plan('status', '--json');
      expect(JSON.parse(status.stdout).status, where).toBe('awaiting_result');

      const next = await killAfter(d, ['next'], Math.floor(random() * 250));
      outcomes.next[next.signal === 'SIGKILL' ? 'killed' : 'finished'] += 1;
      expect(d.plan('resume').code, where).toBe(0);
      const from = join(ck, readFileSync(join(d.out, '.laneward-run'), 'utf8').split(' ')[0]!);
      const listed = laneward(['plan', 'checkpoints', '--from', from]);
      expect(listed.code, where).toBe(0);
      const lines = listed.stdout.trim().split('\n');
      expect(lines.length, where).toBeGreaterThan(0);
      expect(lines.filter((l) => !/ status=ok /.test(l)), where).toEqual([]);
      const current = JSON.parse(readFileSync(join(from, 'current.json'), 'utf8'));
      expect(existsSync(join(from, 'generations', current.generation)), where).toBe(true);
      // A staging directory a killed publisher left is never a generation.
      expect(readdirSync(join(from, 'generations')).filter((n) => !/^\d{12}$/.test(n) && !n.endsWith('.tmp')), where).toEqual([]);

      const gate = d.driveToGate();
      expect(gate.status, where).toBe('complete');
      expect(d.plan('export').code, where).toBe(0);
      const valid = laneward(['artifact', 'validate', d.out]);
      expect(valid.code, `${where}: ${valid.stderr}`).toBe(0);
    }
    process.stdout.write(`plan-crash-revise: seed=${SEED} trials=${TRIALS} revise killed=${outcomes.revise.killed} finished=${outcomes.revise.finished} next killed=${outcomes.next.killed} finished=${outcomes.next.finished}\n`);
    expect(outcomes.revise.killed + outcomes.next.killed, `seed=${SEED}: no kill landed`).toBeGreaterThan(0);
  });
});
