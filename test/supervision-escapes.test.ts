import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { signedActions, type SignedActions } from './helpers/actions.ts';
import { BUNDLE, ensureBuilt, laneward } from './helpers/cli.ts';
import { canRun, exitOf, killQuietly, pidsIn, sleep, until } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('escapes');
let actions: SignedActions;

beforeAll(() => {
  ensureBuilt();
  actions = signedActions(root, {
    total: { timeout_mode: 'total_deadline', cleanup_reserve_ms: 0, post_provider_ms: 1000 },
    fd: { timeout_mode: 'admitted_progress_inactivity', progress: 'fd', cleanup_reserve_ms: 0, post_provider_ms: 1000 },
  });
});

const lease = (action: string, timeoutMs: number, argv: string[]) => [
  'lease', 'run', '--json', '--actions', actions.file, '--trust', actions.trust, '--action', action, '--timeout-ms', String(timeoutMs), '--', ...argv,
];

/** Waits until every pid in `file` can no longer run; kills leftovers so the test stays clean. */
async function allGone(file: string): Promise<boolean> {
  const pids = pidsIn(file);
  const deadline = Date.now() + 3_000;
  while (Date.now() < deadline && pids.some(canRun)) await sleep(50);
  const left = pids.filter(canRun);
  for (const pid of left) killQuietly(pid);
  return left.length === 0 && pids.length > 0;
}

describe('descendants that leave the process group but not the session', () => {
  test('should be torn down by a lease and counted in its proof', async () => {
    const pidfile = join(root, 'lease-stray.pid');
    const result = laneward(lease('total', 800, ['bash', '-c', `set -m; sleep 43 & echo $! > ${pidfile}; sleep 5`]));
    expect(result.code).toBe(124);
    expect(JSON.parse(result.stdout)).toMatchObject({ code: 'DEADLINE_EXPIRED', cleanupConfirmed: true });
    expect(await allGone(pidfile)).toBe(true);
  });

  test('should be killed by the deadline guard at the deadline', async () => {
    const receipt = join(root, 'guard.json');
    const pidfile = join(root, 'guard-stray.pid');
    expect(laneward(['deadline', 'start', receipt, '3']).code).toBe(0);
    const result = laneward(['deadline', 'run', receipt, '--', 'bash', '-c', `set -m; sleep 44 & echo $! > ${pidfile}; sleep 5`]);
    expect(result.code).toBe(124);
    expect(await allGone(pidfile)).toBe(true);
  });
});

describe('laneward stopped other than by SIGKILL', () => {
  test.each([
    ['SIGQUIT', 131],
    ['SIGUSR2', 140],
  ] as const)('should tear the provider down on %s and exit %i', async (signal, exit) => {
    const pidfile = join(root, `${signal}.pid`);
    const child = spawn(process.execPath, [BUNDLE, ...lease('fd', 60_000, ['bash', '-c', `echo $$ > ${pidfile}; exec sleep 45`])], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await until(() => existsSync(pidfile) && readFileSync(pidfile, 'utf8').trim() !== '', 10_000, 'the provider to start');
    child.kill(signal);
    const code = await exitOf(child).then(({ code }) => code);
    expect(code).toBe(exit);
    expect(JSON.parse(stdout)).toMatchObject({ status: 'cancelled', code: 'CANCELLED', cleanupConfirmed: true });
    expect(await allGone(pidfile)).toBe(true);
  });

  test('should tear the provider down when its stdout reader goes away (EPIPE)', async () => {
    const pidfile = join(root, 'epipe.pid');
    // The provider floods stdout; laneward passes it on to a pipe that is closed early.
    const child = spawn(process.execPath, [BUNDLE, 'lease', 'run', '--actions', actions.file, '--trust', actions.trust, '--action', 'total', '--timeout-ms', '60000', '--', 'bash', '-c', `echo $$ > ${pidfile}; yes | head -c 300000; exec sleep 46`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await exitOf(child).then(({ code }) => code);
    expect(code).toBe(141);
    expect(await allGone(pidfile)).toBe(true);
  });
});

describe('an empty command name', () => {
  test('should be a command not found, for the guard and for a lease', () => {
    const receipt = join(root, 'empty.json');
    expect(laneward(['deadline', 'start', receipt, '30']).code).toBe(0);
    const guard = laneward(['deadline', 'run', receipt, '--', '']);
    expect(guard.code).toBe(127);
    expect(guard.stderr).toContain('"code":"COMMAND_NOT_FOUND"');
    const leased = laneward(lease('fd', 1000, ['']));
    expect(leased.code).toBe(127);
    expect(JSON.parse(leased.stdout)).toMatchObject({ code: 'COMMAND_NOT_FOUND', attempts: 0 });
  });
});

describe('a cancelled fleet', () => {
  test('should start nothing more once cancelled, queued supervisions included', async () => {
    const starts = join(root, 'fleet-starts');
    const child = spawn(
      process.execPath,
      [BUNDLE, 'lease', 'fleet', '--count', '600', '--jobs', '1', '--json', '--actions', actions.file, '--trust', actions.trust, '--action', 'total', '--timeout-ms', '60000', '--', 'bash', '-c', `echo $$ >> ${starts}; exec sleep 31`],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await until(() => existsSync(starts) && pidsIn(starts).length >= 20, 20_000, 'the fleet to start');
    child.kill('SIGTERM');
    const code = await exitOf(child).then(({ code }) => code);
    expect(code).toBe(143);
    const summary = JSON.parse(stdout.trim().split('\n').at(-1)!).summary;
    const started = pidsIn(starts).length;
    // Every provider that ran was cancelled and proven gone; none started after.
    expect(summary).toMatchObject({ children: 600, cancelled: 600, cleanupUnproven: 0 });
    const outcomes = stdout.trim().split('\n').slice(0, -1).map((line) => JSON.parse(line));
    // A provider spawned when the cancel came may be torn down before its shell wrote its
    // pid: at most one such (--jobs 1), never one started after.
    const spawned = outcomes.filter((o) => o.attempts === 1).length;
    expect(spawned - started).toBeGreaterThanOrEqual(0);
    expect(spawned - started).toBeLessThanOrEqual(1);
    expect(await allGone(starts)).toBe(true);
  });
});
