import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { codesOf, ensureBuilt } from './helpers/cli.ts';
import { PLAN, PlanDriver } from './helpers/plan-driver.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('plan-files');
let n = 0;
const driver = () => {
  const d = new PlanDriver(root, `r${++n}`);
  d.writePlan();
  // A hang is the failure these tests look for: the child is killed after this long.
  d.timeoutMs = 20_000;
  return d;
};

/** What is planted at a name laneward keeps in the run directory. */
const PLANTS: [string, (path: string) => void][] = [
  ['a FIFO', (path) => execFileSync('mkfifo', [path])],
  ['a symlink to /dev/zero', (path) => symlinkSync('/dev/zero', path)],
  ['a symlink to a regular file elsewhere', (path) => {
    writeFileSync(`${path}.elsewhere`, 'not ours\n');
    symlinkSync(`${path}.elsewhere`, path);
  }],
  ['a directory', (path) => mkdirSync(path)],
];

function plant(path: string, how: (path: string) => void): void {
  rmSync(path, { force: true });
  how(path);
}

beforeAll(() => ensureBuilt());

describe('plan run-directory files', () => {
  test.each(PLANTS)('should refuse %s at a prompt path with IO_ERROR, never hang plan next', (_, how) => {
    const d = driver();
    const first = d.plan('next', '--plan', join(d.dir, 'plan.md'));
    expect(first.code).toBe(0);
    plant(first.attempts[0]!.prompt, how);
    const again = d.plan('next');
    expect(again.timedOut).toBeUndefined();
    expect(again.code).toBe(1);
    expect(codesOf(again.stderr)).toEqual(['IO_ERROR']);
    expect(again.lines.at(-1)).toBe('GSTACK_RESULT: skill=autoplan status=interrupted run=' + d.out);
  });

  test.each([
    ['ceo-consensus.md'],
    ['ceo-consensus.json'],
  ])('should refuse a /dev/zero symlink at %s in the submit that closes the phase', (name) => {
    const d = driver();
    const first = d.plan('next', '--plan', join(d.dir, 'plan.md'));
    const [native, outside] = first.attempts;
    d.writeResult(native!, first.snapshot!, []);
    expect(d.submit(native!, 'claude-opus-4').code).toBe(0);
    symlinkSync('/dev/zero', join(d.out, name));
    d.writeResult(outside!, first.snapshot!, []);
    const closing = d.submit(outside!, 'gpt-5');
    expect(closing.timedOut).toBeUndefined();
    expect(closing.code).toBe(1);
    expect(codesOf(closing.stderr)).toEqual(['IO_ERROR']);
    // The bind committed before the files were written: status shows the phase closed.
    expect(d.plan('status').lines).toContain('PHASE_STATUS: ceo state=closed native=completed outside=completed');
  });

  test.each(PLANTS.slice(0, 2))('should refuse %s at an archived prompt in plan revise, never hang', (_, how) => {
    const d = driver();
    const gate = d.driveToGate();
    expect(gate.status).toBe('gate_pending');
    plant(join(d.out, 'ceo-native-prompt.md'), how);
    d.writePlan(PLAN.replace('batches of 500', 'batches of 100'));
    const revised = d.plan('revise', '--plan', join(d.dir, 'plan.md'));
    expect(revised.timedOut).toBeUndefined();
    expect(revised.code).toBe(1);
    expect(codesOf(revised.stderr)).toEqual(['IO_ERROR']);
  });

  test('should refuse a FIFO planted at a seal in plan resume (it compares every file)', () => {
    const d = driver();
    const first = d.plan('next', '--plan', join(d.dir, 'plan.md'));
    const native = first.attempts[0]!;
    d.writeResult(native, first.snapshot!, []);
    expect(d.submit(native, 'claude-opus-4').code).toBe(0);
    plant(join(d.out, `ceo-native.${native.id}.bound.md`), PLANTS[0]![1]);
    const resumed = d.plan('resume');
    expect(resumed.timedOut).toBeUndefined();
    expect(resumed.code).toBe(1);
    expect(codesOf(resumed.stderr)).toEqual(['IO_ERROR']);
  });

  test('should replace a regular file of other bytes, whatever its size', () => {
    const d = driver();
    const first = d.plan('next', '--plan', join(d.dir, 'plan.md'));
    const prompt = first.attempts[0]!.prompt;
    const want = readFileSync(prompt);
    writeFileSync(prompt, Buffer.alloc(want.length * 3, 'x'));
    expect(d.plan('resume').code).toBe(0);
    expect(readFileSync(prompt).equals(want)).toBe(true);
  });
});

describe('plan submit: another attempt\'s result', () => {
  /** How the outside attempt's result is named when it is submitted for the native attempt. */
  const NAMES: [string, (d: PlanDriver, theirs: string) => { out: string; result: string }][] = [
    ['--out a symlink to the run directory', (d, theirs) => {
      symlinkSync(d.out, join(d.dir, 'link'));
      return { out: join(d.dir, 'link'), result: theirs };
    }],
    ['--out a symlink, --result under it', (d, theirs) => {
      symlinkSync(d.out, join(d.dir, 'link'));
      return { out: join(d.dir, 'link'), result: join(d.dir, 'link', theirs.slice(d.out.length + 1)) };
    }],
    ['--result a symlink to it', (d, theirs) => {
      symlinkSync(theirs, join(d.dir, 'mine.md'));
      return { out: d.out, result: join(d.dir, 'mine.md') };
    }],
    ['--result a hard link to it', (d, theirs) => {
      linkSync(theirs, join(d.dir, 'mine.md'));
      return { out: d.out, result: join(d.dir, 'mine.md') };
    }],
    ['--result through a symlinked directory', (d, theirs) => {
      symlinkSync(d.out, join(d.dir, 'link'));
      return { out: d.out, result: join(d.dir, 'link', theirs.slice(d.out.length + 1)) };
    }],
  ];

  test.each(NAMES)('should refuse it with ATTEMPT_MISMATCH when named by %s', (_, name) => {
    const d = driver();
    const context = d.plan('next', '--plan', join(d.dir, 'plan.md'));
    const [native, outside] = context.attempts;
    d.writeResult(outside!, context.snapshot!, []);
    const { out, result } = name(d, outside!.result);
    const crossed = d.raw(['plan', 'submit', '--out', out, '--state', d.state, '--phase', 'ceo', '--voice', 'native', '--attempt', native!.id, '--result', result, '--model', 'claude-x']);
    expect(codesOf(crossed.stderr)).toEqual(['ATTEMPT_MISMATCH']);
    expect(crossed.code).toBe(3);
  });
});
