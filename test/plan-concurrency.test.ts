import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../formats/review/run-record.ts';
import { BUNDLE, ensureBuilt, ROOT } from './helpers/cli.ts';
import {
  attemptLines,
  boundLines,
  driveToExport,
  findingsFor,
  lanewardSync,
  planSpawn,
  planSync,
  resultText,
  snapshotOf,
  statusOf,
  submitArgs,
  writePlan,
  type PlanCtx,
} from './helpers/plan-driver.ts';
import { committed, refusalCode, runProblems, storeAt, type Expect } from './helpers/plan-invariants.ts';
import { tempRoot } from './helpers/tmp.ts';

// One state root, many writers: 20 parents drive 20 runs at once, and two submits of one
// attempt race. The store serialises them; no run is ever corrupted.

const PARENTS = 20;
const RACES_PER_RUN = 4;
const RACE_RUNS = 5;

/** What the driver submitted for each attempt of a run it drove (its results are deterministic). */
function driverSubmissions(record: RunRecord): Map<string, string> {
  const out = new Map<string, string>();
  for (const a of Object.values(record.attempts)) {
    out.set(a.id, resultText(a.phase, record.phases[a.phase]!.snapshot ?? record.snapshot, findingsFor(a.id, 2)));
  }
  return out;
}

function bindingOf(runDir: string): string {
  return readFileSync(join(runDir, '.laneward-run'), 'utf8').split(' ')[0]!;
}

describe('one state root driven concurrently', () => {
  const root = tempRoot('plan-concurrency');
  const state = join(root, 'state');
  const drive = join(root, 'drive.mjs');
  const ctx: PlanCtx = { bundle: BUNDLE, state, cwd: root };

  beforeAll(async () => {
    ensureBuilt();
    await build({ entryPoints: [join(ROOT, 'test/helpers/plan-driver-main.ts')], outfile: drive, bundle: true, platform: 'node', format: 'esm', logLevel: 'warning' });
  });

  it(`drives ${PARENTS} runs from ${PARENTS} processes at once to validated exports`, { timeout: 600_000 }, async () => {
    const parents = Array.from({ length: PARENTS }, (_, i) => {
      const runDir = join(root, `parallel-${i}`);
      const plan = join(root, `parallel-${i}.md`);
      writePlan(plan);
      return new Promise<{ runDir: string; code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [drive, BUNDLE, state, runDir, plan], { stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
        child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
        child.once('error', reject);
        child.once('close', (code) => resolve({ runDir, code, stdout, stderr }));
      });
    });
    const done = await Promise.all(parents);
    const store = storeAt(state);
    const runIds = new Set<string>();
    for (const parent of done) {
      expect(parent.stderr, parent.runDir).toBe('');
      expect(parent.code, parent.runDir).toBe(0);
      expect(parent.stdout, parent.runDir).toMatch(/^ARTIFACT_VALID/m);
      const runId = bindingOf(parent.runDir);
      runIds.add(runId);
      const status = planSync(ctx, ['status', '--out', parent.runDir, '--json']);
      expect(status.code, parent.runDir).toBe(0);
      expect((JSON.parse(status.stdout) as { status: string }).status).toBe('complete');
      const record = committed(store, runId).record!;
      expect(record.export?.state).toBe('done');
      const expect_: Expect = { printed: new Map(), bound: new Map(), submitted: driverSubmissions(record), usage: undefined, estimate: 0 };
      expect(runProblems(store, runId, parent.runDir, expect_), parent.runDir).toEqual([]);
    }
    expect(runIds.size).toBe(PARENTS);
  });

  it(`races two submits of one attempt ${RACE_RUNS * RACES_PER_RUN} times: same bytes bind once, other bytes are refused`, { timeout: 600_000 }, async () => {
    const store = storeAt(state);
    let same = 0;
    let different = 0;
    for (let r = 0; r < RACE_RUNS; r++) {
      const runDir = join(root, `race-${r}`);
      const plan = join(root, `race-${r}.md`);
      writePlan(plan);
      const submitted = new Map<string, string>();
      let next = planSync(ctx, ['next', '--out', runDir, '--plan', plan]);
      let raced = 0;
      while (statusOf(next.stdout) === 'awaiting_result') {
        const snapshot = snapshotOf(next.stdout)!.snapshot;
        for (const attempt of attemptLines(next.stdout)) {
          const sameBytes = raced++ % 2 === 0;
          const mine = resultText(attempt.phase, snapshot, findingsFor(attempt.id, 2));
          const theirs = sameBytes ? mine : resultText(attempt.phase, snapshot, findingsFor(attempt.id, 3));
          const other = join(runDir, `other-${attempt.id}.md`);
          writeFileSync(attempt.result, mine);
          writeFileSync(other, theirs);
          const a = planSpawn(ctx, submitArgs(runDir, attempt, {}));
          const b = planSpawn(ctx, submitArgs(runDir, { ...attempt, result: other }, {}));
          const [ra, rb] = await Promise.all([a.done, b.done]);
          const journal = committed(store, bindingOf(runDir)).journal;
          const binds = journal.filter((e) => e.type === 'result_bound' && (e as unknown as { attempt: string }).attempt === attempt.id);
          expect(binds.length, `${attempt.id}: result_bound events`).toBe(1);
          if (sameBytes) {
            same += 1;
            expect([ra.code, rb.code], `${attempt.id}: ${ra.stderr} ${rb.stderr}`).toEqual([0, 0]);
            expect(boundLines(ra.stdout)).toHaveLength(1);
            expect(boundLines(rb.stdout)).toEqual(boundLines(ra.stdout));
            submitted.set(attempt.id, mine);
          } else {
            different += 1;
            const winners = [ra, rb].filter((x) => x.code === 0);
            const losers = [ra, rb].filter((x) => x.code !== 0);
            expect(winners, `${attempt.id}: ${ra.stderr} ${rb.stderr}`).toHaveLength(1);
            expect(boundLines(winners[0]!.stdout)).toHaveLength(1);
            expect(losers[0]!.code).toBe(3);
            expect(refusalCode(losers[0]!)).toBe('ATTEMPT_MISMATCH');
            expect(losers[0]!.stdout).toMatch(/^GSTACK_RESULT: skill=autoplan status=refused /m);
            submitted.set(attempt.id, winners[0] === ra ? mine : theirs);
          }
        }
        next = planSync(ctx, ['next', '--out', runDir]);
        expect(next.code, next.stderr).toBe(0);
      }
      expect(raced).toBe(RACES_PER_RUN);
      const { validated } = driveToExport(ctx, runDir, plan);
      expect(validated).toMatch(/^ARTIFACT_VALID/m);
      const runId = bindingOf(runDir);
      const expect_: Expect = { printed: new Map(), bound: new Map(), submitted, usage: undefined, estimate: 0 };
      expect(runProblems(store, runId, runDir, expect_), runDir).toEqual([]);
      expect(lanewardSync(ctx, ['artifact', 'validate', runDir]).code).toBe(0);
    }
    expect([same, different]).toEqual([10, 10]);
  });
});
