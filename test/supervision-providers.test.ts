import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { nowMs } from '../workers/supervise/monotonic-timer.ts';
import { finishedWork } from '../workers/supervise/outcome.ts';
import type { SupervisionSpec } from '../workers/supervise/spec.ts';
import { supervise } from '../workers/supervise/supervise.ts';
import { ROOT } from './helpers/cli.ts';
import { canRun, killQuietly, settleTagged } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';

// The supervisor's provider-preset fields, driven by a claude-like fixture CLI.

const NODE = process.execPath;
const CLI = join(ROOT, 'fixtures/providers/claude-like.mjs');
const TAG_VALUE = `${process.pid}-${Date.now()}`;
const TAG = `LANEWARD_PROVIDERS_TEST=${TAG_VALUE}`;
const root = tempRoot('supervision-providers');

function spec(args: string[], over: Partial<SupervisionSpec> = {}): SupervisionSpec {
  return {
    argv: [NODE, CLI, ...args],
    stdio: 'pipe',
    action: null,
    descriptorSha256: null,
    mode: 'total_deadline',
    progress: null,
    timeoutMs: 30_000,
    cleanupReserveMs: 0,
    postProviderMs: 10_000,
    graceMs: 500,
    teardownMs: 5_000,
    stdoutLimit: 1 << 20,
    stderrLimit: 1 << 20,
    env: { LANEWARD_PROVIDERS_TEST: TAG_VALUE },
    startedAt: nowMs(),
    ...over,
  };
}

afterEach(async () => {
  const leaked = await settleTagged(TAG, 3_000);
  for (const pid of leaked) killQuietly(pid);
  expect(leaked, 'processes of this test still running').toEqual([]);
});

describe('supervise: stdinFile', () => {
  test('should give the CLI the prompt file on its stdin', async () => {
    const prompt = join(root, 'prompt.md');
    writeFileSync(prompt, 'review this');
    const outcome = await supervise(spec(['echo-stdin'], { stdinFile: prompt, provider: 'claude-code' }));
    expect(outcome).toMatchObject({ status: 'ok', code: null, childExitCode: 0, cleanupConfirmed: true });
    expect(outcome.provider).toEqual({
      sessionId: 'sess-fixture',
      finalText: 'got: review this',
      finalTextCut: false,
      usage: { input: 12, output: 5, cachedInput: 2 },
      costUsd: 0.25,
      rateLimit: null,
      apiError: null,
      finished: true,
    });
  });

  test('should fail a missing prompt file with SPAWN_FAILED (ENOENT), nothing spawned', async () => {
    let spawned = false;
    const outcome = await supervise(spec(['echo-stdin'], { stdinFile: join(root, 'missing.md') }), undefined, { onSpawn: () => (spawned = true) });
    expect(outcome).toMatchObject({ status: 'failed', code: 'SPAWN_FAILED', spawnError: 'ENOENT', providerStarted: false, attempts: 0, childExitCode: null });
    expect(spawned).toBe(false);
  });
});

describe('supervise: firstEventMs', () => {
  test('should end a CLI that prints no JSON object in time: PROVIDER_NO_START, torn down', async () => {
    let pid = 0;
    const outcome = await supervise(spec(['silent', '30000', 'prose'], { firstEventMs: 1_500 }), undefined, { onSpawn: (p) => (pid = p) });
    expect(outcome).toMatchObject({ status: 'timeout', code: 'PROVIDER_NO_START', timedOut: true, leaseExpired: false, providerStarted: true, cleanupConfirmed: true });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(1_500);
    expect(outcome.durationMs).toBeLessThan(20_000);
    expect(pid).toBeGreaterThan(0);
    expect(canRun(pid)).toBe(false);
  });

  test('should clear the start timer at the first JSON object line', async () => {
    const outcome = await supervise(spec(['late-start', '1500'], { firstEventMs: 8_000, provider: 'claude-code' }));
    expect(outcome).toMatchObject({ status: 'ok', code: null, childExitCode: 0 });
    expect(outcome.provider?.finalText).toBe('late');
  });

  test('should not take a JSON array, a number or prose for a first event', async () => {
    const outcome = await supervise(spec(['silent', '30000', 'prose'], { firstEventMs: 1_000, argv: [NODE, '-e', 'console.log("[1]"); console.log("42"); console.log("{not"); setTimeout(() => {}, 30000)'] }));
    expect(outcome).toMatchObject({ status: 'timeout', code: 'PROVIDER_NO_START', cleanupConfirmed: true });
  });
});

describe('supervise: exitAfterTerminalMs', () => {
  test('should end a CLI that lingers after its result: PROVIDER_NO_EXIT, its work finished, even with a shorter lease', async () => {
    let pid = 0;
    const outcome = await supervise(
      spec(['linger', '60000'], { mode: 'admitted_progress_inactivity', progress: 'claude-stream-json', timeoutMs: 2_000, exitAfterTerminalMs: 5_000, provider: 'claude-code' }),
      undefined,
      { onSpawn: (p) => (pid = p) },
    );
    expect(outcome).toMatchObject({ status: 'failed', code: 'PROVIDER_NO_EXIT', leaseExpired: false, timedOut: false, cleanupConfirmed: true, providerStarted: true });
    expect(finishedWork(outcome)).toBe(true);
    expect(outcome.provider).toMatchObject({ finalText: 'final answer', sessionId: 'sess-fixture', finished: true, costUsd: 0.25 });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(5_000);
    expect(canRun(pid)).toBe(false);
  });

  test('should end a lingering CLI in a total-deadline call by its exit window, with no tracker', async () => {
    const outcome = await supervise(spec(['linger', '60000'], { exitAfterTerminalMs: 1_000, provider: 'claude-code' }));
    expect(outcome).toMatchObject({ status: 'failed', code: 'PROVIDER_NO_EXIT', cleanupConfirmed: true });
    expect(finishedWork(outcome)).toBe(true);
    expect(outcome.provider?.finalText).toBe('final answer');
  });

  test('should let a CLI that exits within the window end ok', async () => {
    const outcome = await supervise(spec(['linger', '200'], { exitAfterTerminalMs: 10_000, provider: 'claude-code' }));
    expect(outcome).toMatchObject({ status: 'ok', code: null, childExitCode: 0 });
    expect(finishedWork(outcome)).toBe(true);
  });
});

describe('supervise: a CLI that starts a hook in a session of its own as it exits', () => {
  test('should end the hook with the tree, found by the tag the tree carries: its parent link was gone before any census saw it', async () => {
    const pidfile = join(root, 'hook.pid');
    const outcome = await supervise(spec(['hook-on-term', pidfile], { provider: 'claude-code', timeoutMs: 1_500 }));
    expect(outcome).toMatchObject({ status: 'timeout', code: 'DEADLINE_EXPIRED', cleanupConfirmed: true });
    // Nothing of the tree runs once the teardown is confirmed: not the hook (it carries this
    // test's variable too), nor anything that was starting it. (A teardown may also end the
    // chain before the hook starts; then it wrote no pid.)
    expect(await settleTagged(TAG, 0), 'processes of the tree left running').toEqual([]);
    const hook = existsSync(pidfile) ? Number(readFileSync(pidfile, 'utf8')) : undefined;
    if (hook !== undefined) expect(canRun(hook)).toBe(false);
  });

  test('should leave a command that is not a preset CLI untagged: its environment is what the spec gives', async () => {
    const envFile = join(root, 'env.txt');
    const outcome = await supervise({ ...spec([]), argv: [NODE, '-e', `require('fs').writeFileSync(${JSON.stringify(envFile)}, Object.keys(process.env).filter((k) => k.startsWith('LANEWARD_')).sort().join(' '))`] });
    expect(outcome).toMatchObject({ status: 'ok', cleanupConfirmed: true });
    expect(readFileSync(envFile, 'utf8')).toBe('LANEWARD_PROVIDERS_TEST');
  });
});

describe('supervise: provider claude-code', () => {
  test('should type a non-zero exit after a 429 error result as PROVIDER_RATE_LIMITED with its retry-after', async () => {
    const outcome = await supervise(spec(['rate-limited'], { provider: 'claude-code' }));
    expect(outcome).toMatchObject({ status: 'failed', code: 'PROVIDER_RATE_LIMITED', childExitCode: 1, cleanupConfirmed: true });
    expect(outcome.provider).toMatchObject({ sessionId: 'sess-fixture', finished: true, apiError: null, rateLimit: { status: 429, retryAfterS: 42 } });
    expect(finishedWork(outcome)).toBe(false);
  });

  test('should keep CHILD_FAILED for a non-zero exit without a provider reader', async () => {
    const outcome = await supervise(spec(['rate-limited']));
    expect(outcome).toMatchObject({ status: 'failed', code: 'CHILD_FAILED', childExitCode: 1, provider: null });
  });
});

describe('supervise: claude message framing renews a lease', () => {
  const lease = (kind: 'frames' | 'deltas') =>
    spec(['framed', '1000', '6', kind], { mode: 'admitted_progress_inactivity', progress: 'claude-stream-json', timeoutMs: 2_500, provider: 'claude-code' });

  test('should not expire a 6 s stream whose block frames come every second', async () => {
    const outcome = await supervise(lease('frames'));
    expect(outcome).toMatchObject({ status: 'ok', code: null, childExitCode: 0, cleanupConfirmed: true });
    // message_start, three block starts, three block stops, message_stop.
    expect(outcome.marks).toBe(8);
    expect(outcome.provider?.finalText).toBe('framed done');
  }, 30_000);

  test('should expire the same stream when only text deltas come: LEASE_EXPIRED', async () => {
    const outcome = await supervise(lease('deltas'));
    expect(outcome).toMatchObject({ status: 'timeout', code: 'LEASE_EXPIRED', leaseExpired: true, marks: 0, cleanupConfirmed: true });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(2_500);
    expect(outcome.durationMs).toBeLessThan(6_000);
  }, 30_000);
});
