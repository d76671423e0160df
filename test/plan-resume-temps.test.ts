import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUNDLE, ensureBuilt } from './helpers/cli.ts';
import { planSync, statusOf, writePlan } from './helpers/plan-driver.ts';
import { tempRoot } from './helpers/tmp.ts';

// A command killed while writing a run file leaves its temp file beside the target
// (`.<name>.<pid>.<ms>.<n>.tmp`). resume removes those of writers that are gone, and
// never one whose writer still runs.

describe('plan resume and temp files of killed writers', () => {
  const root = tempRoot('plan-resume-temps');
  const ctx = { bundle: BUNDLE, state: join(root, 'state'), cwd: root };
  beforeAll(() => ensureBuilt());

  it('removes a dead writer\'s temp file and keeps a live one\'s', () => {
    const runDir = join(root, 'run');
    writePlan(join(root, 'plan.md'));
    expect(planSync(ctx, ['next', '--out', runDir, '--plan', join(root, 'plan.md')]).code).toBe(0);
    // pid 2^22 + 1 is above Linux's pid_max ceiling, so no process has it.
    const dead = join(runDir, `.gate.json.${2 ** 22 + 1}.1764556000000.0.tmp`);
    const live = join(runDir, `.plan.md.${process.pid}.1764556000000.0.tmp`);
    // The binding's own temp name has no sequence number.
    const deadBinding = join(runDir, `.laneward-run.${2 ** 22 + 1}.1764556000000.tmp`);
    const other = join(runDir, 'notes.tmp');
    for (const file of [dead, deadBinding, live, other]) writeFileSync(file, '{"half');
    const resume = planSync(ctx, ['resume', '--out', runDir]);
    expect(resume.code).toBe(0);
    expect(statusOf(resume.stdout)).toBe('awaiting_result');
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(deadBinding)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(existsSync(other)).toBe(true);
  });
});
