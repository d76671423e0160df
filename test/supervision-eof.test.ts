import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { nowMs } from '../workers/supervise/monotonic-timer.ts';
import { supervise } from '../workers/supervise/supervise.ts';
import type { SupervisionSpec } from '../workers/supervise/spec.ts';
import { ROOT } from './helpers/cli.ts';
import { killQuietly, settleTagged } from './helpers/procs.ts';

// EOF on the progress channel is not a verdict: a provider closes fd 3 as it exits, and on
// a loaded machine its exit is read well after that EOF. Only the lease decides.

const NODE = process.execPath;
const PROVIDER = join(ROOT, 'fixtures/providers/provider.mjs');
const TAG_VALUE = `${process.pid}-${Date.now()}`;
const TAG = `LANEWARD_EOF_TEST=${TAG_VALUE}`;

function spec(argv: string[], timeoutMs: number): SupervisionSpec {
  return {
    argv,
    stdio: 'pipe',
    action: null,
    descriptorSha256: null,
    mode: 'admitted_progress_inactivity',
    progress: 'fd',
    timeoutMs,
    cleanupReserveMs: 0,
    postProviderMs: 10_000,
    graceMs: 500,
    teardownMs: 5_000,
    stdoutLimit: 1 << 20,
    stderrLimit: 1 << 20,
    env: { LANEWARD_EOF_TEST: TAG_VALUE },
    startedAt: nowMs(),
  };
}

/** Holds this thread's event loop for `ms`, as a loaded machine does to a supervisor. */
function hold(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // busy
  }
}

let burner: ChildProcess | undefined;

afterEach(async () => {
  burner?.kill('SIGKILL');
  burner = undefined;
  const leaked = await settleTagged(TAG, 3_000);
  for (const pid of leaked) killQuietly(pid);
  expect(leaked, 'processes of this test still running').toEqual([]);
});

describe('supervise: EOF on the progress channel', () => {
  test('should never fail providers that close fd 3 and exit 20 ms later, on a loaded machine and a held event loop', async () => {
    // Another process spins on a core; and right after it reads a provider's EOF this loop
    // is held past the old settle time while the provider exits, as load does.
    burner = spawn(NODE, ['-e', 'for (;;) {}'], { stdio: 'ignore', env: { ...process.env, LANEWARD_EOF_TEST: TAG_VALUE } });
    const onStdout = (chunk: Buffer) => {
      if (chunk.includes('closed fd 3')) hold(300);
    };
    const codes: (string | null)[] = [];
    // Four at a time, four after each other.
    const chain = async () => {
      for (let i = 0; i < 4; i++) {
        const outcome = await supervise(spec([NODE, PROVIDER, 'close-fd-exit', '20'], 60_000), undefined, { onStdout });
        expect(outcome).toMatchObject({ childExitCode: 0, marks: 1, cleanupConfirmed: true });
        codes.push(outcome.code);
      }
    };
    await Promise.all([chain(), chain(), chain(), chain()]);
    expect(codes).toEqual(new Array(16).fill(null));
  }, 60_000);

  test('should fail a provider that closes fd 3 and runs on past its lease: PROGRESS_CHANNEL_LOST, torn down', async () => {
    const outcome = await supervise(spec([NODE, PROVIDER, 'close-fd', '30000'], 1_000));
    expect(outcome).toMatchObject({ status: 'failed', code: 'PROGRESS_CHANNEL_LOST', childExitCode: 143, marks: 1, leaseExpired: false, timedOut: false, cleanupConfirmed: true });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(1_000);
    expect(outcome.durationMs).toBeLessThan(20_000);
  });

  test('should still end a provider that never marks and never closes fd 3 LEASE_EXPIRED', async () => {
    const outcome = await supervise(spec([NODE, PROVIDER, 'marks', '30000', '1'], 500));
    expect(outcome).toMatchObject({ status: 'timeout', code: 'LEASE_EXPIRED', leaseExpired: true, marks: 0, cleanupConfirmed: true });
  });
});
