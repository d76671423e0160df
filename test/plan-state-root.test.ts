import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { BUNDLE, codesOf, ensureBuilt } from './helpers/cli.ts';
import { PlanDriver } from './helpers/plan-driver.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('plan-root');
let n = 0;
const driver = () => {
  const d = new PlanDriver(root, `r${++n}`);
  d.writePlan();
  // A spinning mkdir is the failure looked for: the child is killed after this long.
  d.timeoutMs = 20_000;
  return d;
};

/** Whether this machine lets a test mount a directory read-only in its own namespaces. */
const canMountReadOnly = (() => {
  const probe = spawnSync('unshare', ['-rm', 'sh', '-c', 'mount --bind /tmp /tmp && mount -o remount,bind,ro /tmp'], { encoding: 'utf8' });
  return probe.status === 0;
})();

beforeAll(() => ensureBuilt());

describe('plan state root and directories', () => {
  test.each([
    ['a state root', (d: PlanDriver) => ['plan', 'next', '--out', d.out, '--state', '/proc/laneward-none/state', '--plan', 'plan.md'], 'STATE_UNAVAILABLE'],
    ['a run directory', (d: PlanDriver) => ['plan', 'next', '--out', '/proc/laneward-none/run', '--state', d.state, '--plan', 'plan.md'], 'IO_ERROR'],
  ])('should refuse %s under /proc with a typed error, never spin', (_, args, code) => {
    const d = driver();
    const context = d.raw(args(d));
    expect(context.timedOut).toBeUndefined();
    expect(context.code).toBe(1);
    expect(codesOf(context.stderr)).toEqual([code]);
  });

  test('should report a checkpoint directory under /proc as a failed checkpoint, never spin', () => {
    const d = driver();
    d.env = { LANEWARD_CHECKPOINT_DIR: '/proc/laneward-none/checkpoints' };
    const context = d.plan('next', '--plan', join(d.dir, 'plan.md'));
    expect(context.timedOut).toBeUndefined();
    expect(context.code).toBe(0);
    expect(context.lines.filter((l) => l.startsWith('CHECKPOINT: '))).toEqual([expect.stringMatching(/^CHECKPOINT: failed cannot create directory \/proc\/laneward-none /)]);
  });

  test.each([
    ['--state', (d: PlanDriver) => { d.env = {}; return ['--state', join(d.dir, 'a\nb')]; }],
    ['LANEWARD_STATE_ROOT', (d: PlanDriver) => { d.env = { LANEWARD_STATE_ROOT: join(d.dir, 'a\nb') }; return []; }],
  ])('should refuse a state root from %s whose path holds a newline, and bind nothing', (_, given) => {
    const d = driver();
    const extra = given(d);
    const context = d.raw(['plan', 'next', '--out', d.out, ...extra, '--plan', 'plan.md']);
    expect(context.code).toBe(1);
    expect(codesOf(context.stderr)).toEqual(['STATE_UNAVAILABLE']);
    expect(existsSync(join(d.out, '.laneward-run'))).toBe(false);
    expect(readdirSync(d.dir)).toEqual(['plan.md']);
  });

  test.skipIf(!canMountReadOnly)('should serve plan status from a state root on a read-only file system', () => {
    const d = driver();
    expect(d.plan('next', '--plan', join(d.dir, 'plan.md')).code).toBe(0);
    const script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"';
    const ran = spawnSync('unshare', ['-rm', 'sh', '-c', script, 'sh', d.state, process.execPath, BUNDLE, 'plan', 'status', '--out', d.out, '--state', d.state], {
      encoding: 'utf8',
      cwd: d.dir,
      timeout: 20_000,
      killSignal: 'SIGKILL',
    });
    expect(ran.stderr).toBe('');
    expect(ran.status).toBe(0);
    expect(ran.stdout.split('\n')[0]).toMatch(/^RUN: \S+ status=awaiting_result /);
  });

  test.each([['yes'], ['true'], ['2'], [' 1']])('should refuse LANEWARD_EPHEMERAL=%j as USAGE before anything is written', (value) => {
    const d = driver();
    d.env = { LANEWARD_EPHEMERAL: value };
    const context = d.plan('next', '--plan', join(d.dir, 'plan.md'));
    expect(context.code).toBe(2);
    expect(codesOf(context.stderr)).toEqual(['USAGE']);
    expect(context.stderr).toContain('LANEWARD_EPHEMERAL');
    expect(existsSync(d.out)).toBe(false);
  });

  test.each([['1', 'no'], ['0', 'yes'], ['', 'yes']])('should take LANEWARD_EPHEMERAL=%j as durable=%s', (value, durable) => {
    const d = driver();
    d.env = { LANEWARD_EPHEMERAL: value };
    const context = d.plan('next', '--plan', join(d.dir, 'plan.md'));
    expect(context.code).toBe(0);
    expect(context.lines[0]).toBe(`STATE_ROOT: ${d.state} durable=${durable}`);
  });
});
