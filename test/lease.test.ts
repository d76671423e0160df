import { existsSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { exitStatus } from '../formats/codes/exit-status.ts';
import { supervise } from '../workers/supervise/supervise.ts';
import type { Outcome } from '../workers/supervise/outcome.ts';
import type { SupervisionHooks, SupervisionSpec } from '../workers/supervise/spec.ts';
import { nowMs } from '../workers/supervise/monotonic-timer.ts';
import { ROOT } from './helpers/cli.ts';
import { killQuietly, liveGroupMembers, pidsIn, procStat, settleTagged, until } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';

// The supervision engine in-process (supervise), with real provider processes. Time is
// only bounded generously from above, or from below where the provider's own schedule
// makes the bound a certainty.

const root = tempRoot('lease');

/** The engine with hooks first, as these tests read best. */
const superviseLease = (spec: SupervisionSpec, hooks: SupervisionHooks = {}, signal?: AbortSignal) => supervise(spec, signal, hooks);
const NODE = process.execPath;
const PROVIDER = join(ROOT, 'fixtures/providers/provider.mjs');

// Every provider inherits this variable (spec.env extends process.env), so a leak is
// found by identity, never by a guessed pid.
const TAG_VALUE = `${process.pid}-${Date.now()}`;
const TAG = `LANEWARD_LEASE_TEST=${TAG_VALUE}`;

let counter = 0;
const file = (name: string) => join(mkdtempSync(join(root, `${counter++}-`)), name);
const provider = (mode: string, ...args: (string | number)[]) => [NODE, PROVIDER, mode, ...args.map(String)];
/** Runs argv through bash, which appends its pid (the provider's, after exec) to `pidfile`. */
const counted = (pidfile: string, argv: string[]) => ['bash', '-c', 'echo $$ >> "$0"; exec "$@"', pidfile, ...argv];

function spec(overrides: Partial<SupervisionSpec> & Pick<SupervisionSpec, 'argv'>): SupervisionSpec {
  return {
    stdio: 'pipe',
    action: null,
    descriptorSha256: null,
    mode: 'admitted_progress_inactivity',
    progress: 'fd',
    timeoutMs: 300,
    cleanupReserveMs: 0,
    postProviderMs: 3_000,
    graceMs: 500,
    teardownMs: 5_000,
    stdoutLimit: 1 << 20,
    stderrLimit: 1 << 20,
    env: { LANEWARD_LEASE_TEST: TAG_VALUE },
    startedAt: nowMs(),
    ...overrides,
  };
}

afterEach(async () => {
  const leaked = await settleTagged(TAG, 3_000);
  for (const pid of leaked) killQuietly(pid);
  expect(leaked, 'processes of this test still running').toEqual([]);
});

describe('superviseLease: renewal', () => {
  test('marks every 100 ms for 3 s keep a 1.5 s lease alive past its length: ok, one attempt', async () => {
    const pidfile = file('renew.pid');
    const renewals: number[] = [];
    const outcome = await superviseLease(spec({ argv: counted(pidfile, provider('marks', 100, 30)), timeoutMs: 1_500 }), { onRenewal: (at) => renewals.push(at) });
    expect(outcome).toMatchObject({ status: 'ok', code: null, childExitCode: 0, attempts: 1, providerStarted: true, marks: 30, cleanupConfirmed: true, leaseExpired: false });
    expect(outcome.durationMs).toBeGreaterThan(1_500);
    expect(outcome.durationMs).toBeLessThan(20_000);
    // One renewal per read of the channel: marks that arrive together (a loaded machine
    // reads two in one chunk) renew once. Every gap between renewals is under the lease.
    expect(renewals.length).toBeGreaterThanOrEqual(2);
    expect(renewals.length).toBeLessThanOrEqual(30);
    expect(renewals.slice(1).map((at, i) => at - renewals[i]!).filter((gap) => gap >= 1_500)).toEqual([]);
    expect(pidsIn(pidfile)).toHaveLength(1);
  });

  test('the same provider under total_deadline is not renewed: DEADLINE_EXPIRED', async () => {
    const renewals: number[] = [];
    const outcome = await superviseLease(spec({ mode: 'total_deadline', progress: null, argv: provider('marks', 100, 15) }), { onRenewal: (at) => renewals.push(at) });
    expect(outcome).toMatchObject({ status: 'timeout', code: 'DEADLINE_EXPIRED', childExitCode: 143, attempts: 1, marks: 0, leaseExpired: false, timedOut: true, cleanupConfirmed: true });
    expect(renewals).toEqual([]);
  });
});

describe('superviseLease: the first mark must come within timeout - cleanup_reserve', () => {
  test('first mark at 250 ms, timeout 300, reserve 100: LEASE_EXPIRED before any mark', async () => {
    const outcome = await superviseLease(spec({ argv: provider('marks', 250, 3), timeoutMs: 300, cleanupReserveMs: 100 }));
    expect(outcome).toMatchObject({ status: 'timeout', code: 'LEASE_EXPIRED', attempts: 1, providerStarted: true, marks: 0, leaseExpired: true, cleanupConfirmed: true });
  });

  test('the reserve, not the timeout, bounds the first mark: the same provider passes without it', async () => {
    // First mark about 600 ms after launch: inside a 2000 ms timeout, past 2000 - 1800.
    const argv = provider('marks', 600, 2);
    const reserved = await superviseLease(spec({ argv, timeoutMs: 2_000, cleanupReserveMs: 1_800 }));
    expect(reserved).toMatchObject({ code: 'LEASE_EXPIRED', marks: 0, attempts: 1 });
    const unreserved = await superviseLease(spec({ argv, timeoutMs: 2_000, cleanupReserveMs: 0 }));
    expect(unreserved).toMatchObject({ status: 'ok', code: null, marks: 2, attempts: 1 });
  });

  test('the reserve comes out of the budget before launch: too little left means no spawn', async () => {
    const marker = file('never.pid');
    const startedAt = nowMs() - 150;
    // 1000 - 900 - 150 already spent: nothing left for the provider.
    const outcome = await superviseLease(spec({ argv: counted(marker, provider('marks', 10, 3)), timeoutMs: 1_000, cleanupReserveMs: 900, startedAt }));
    expect(outcome).toMatchObject({ status: 'timeout', code: 'DEADLINE_EXPIRED', attempts: 0, providerStarted: false, marks: 0 });
    expect(existsSync(marker)).toBe(false);
  });
});

describe('superviseLease: the budget already spent before launch', () => {
  test.each(['admitted_progress_inactivity', 'total_deadline'] as const)('%s, startedAt far in the past: DEADLINE_EXPIRED, no attempt', async (mode) => {
    const marker = file('never.pid');
    const outcome = await superviseLease(
      spec({ mode, progress: mode === 'total_deadline' ? null : 'fd', argv: counted(marker, provider('marks', 10, 3)), timeoutMs: 5_000, startedAt: nowMs() - 60_000 }),
    );
    expect(outcome).toMatchObject({
      status: 'timeout',
      code: 'DEADLINE_EXPIRED',
      childExitCode: null,
      attempts: 0,
      providerStarted: false,
      marks: 0,
      cleanupConfirmed: true,
      timedOut: true,
      leaseExpired: false,
      cancelled: false,
    });
    expect(existsSync(marker)).toBe(false);
  });
});

describe('superviseLease: cancellation through the AbortSignal', () => {
  async function cancelled(reason: unknown[]): Promise<{ outcome: Outcome; pgid: number }> {
    const pidfile = file('cancel.pid');
    const controller = new AbortController();
    let started = false;
    const running = superviseLease(
      spec({ argv: counted(pidfile, provider('marks', 100, 100)), timeoutMs: 5_000 }),
      { onStdout: () => (started = true) },
      controller.signal,
    );
    await until(() => started, 15_000, 'the provider to print');
    const [pgid] = pidsIn(pidfile);
    expect(liveGroupMembers(pgid!).length).toBeGreaterThan(0);
    controller.abort(...reason);
    const outcome = await running;
    expect(liveGroupMembers(pgid!)).toEqual([]);
    return { outcome, pgid: pgid! };
  }

  const common = { status: 'cancelled', code: 'CANCELLED', providerStarted: true, attempts: 1, cleanupConfirmed: true, cancelled: true, timedOut: false, leaseExpired: false };

  test("abort('SIGINT'): CANCELLED, exit 130, the group gone", async () => {
    const { outcome } = await cancelled(['SIGINT']);
    expect(outcome).toMatchObject({ ...common, cancelSignal: 'SIGINT' });
    expect(exitStatus(outcome.code, outcome)).toBe(130);
  });

  test("abort('SIGTERM'): exit 143", async () => {
    const { outcome } = await cancelled(['SIGTERM']);
    expect(outcome).toMatchObject({ ...common, cancelSignal: 'SIGTERM' });
    expect(exitStatus(outcome.code, outcome)).toBe(143);
  });

  test('abort() without a signal name counts as SIGTERM: exit 143', async () => {
    const { outcome } = await cancelled([]);
    expect(outcome).toMatchObject({ ...common, cancelSignal: 'SIGTERM' });
    expect(exitStatus(outcome.code, outcome)).toBe(143);
  });

  test('a signal aborted before the call: CANCELLED, nothing spawned', async () => {
    const marker = file('never.pid');
    const controller = new AbortController();
    controller.abort('SIGINT');
    const outcome = await superviseLease(spec({ argv: counted(marker, provider('marks', 10, 3)) }), {}, controller.signal);
    expect(outcome).toMatchObject({ status: 'cancelled', code: 'CANCELLED', attempts: 0, providerStarted: false, cancelled: true });
    expect(existsSync(marker)).toBe(false);
  });
});

describe('superviseLease: hooks.onRenewal', () => {
  // Once per read of the progress channel: marks a loaded machine delivers in one chunk
  // renew once (seen in a full suite: 7 renewals for 8 marks), never more than the marks.
  test('is called once per read of fd marks, in order, each after the launch', async () => {
    const before = nowMs();
    const renewals: number[] = [];
    const outcome = await superviseLease(spec({ argv: provider('marks', 60, 8), timeoutMs: 2_000 }), { onRenewal: (at) => renewals.push(at) });
    expect(outcome).toMatchObject({ status: 'ok', marks: 8 });
    expect(renewals.length).toBeGreaterThanOrEqual(1);
    expect(renewals.length).toBeLessThanOrEqual(outcome.marks);
    expect(renewals.every((at, i) => at >= before && (i === 0 || at >= renewals[i - 1]!))).toBe(true);
  });

  test.each(['step-lifecycle', 'claude-stream-json', 'codex-json', 'jsonl-counter'] as const)(
    'is called once per tracker mark (%s), never for prose or the terminal event',
    async (kind) => {
      const renewals: number[] = [];
      const outcome = await superviseLease(spec({ progress: kind, argv: provider('events', kind, 60, 5), timeoutMs: 2_000 }), {
        onRenewal: (at) => renewals.push(at),
      });
      expect(outcome).toMatchObject({ status: 'ok', marks: 10 });
      expect(renewals).toHaveLength(10);
    },
  );

  test('is never called when nothing is admitted', async () => {
    const renewals: number[] = [];
    const outcome = await superviseLease(spec({ progress: 'claude-stream-json', argv: provider('chatty', 10_000), timeoutMs: 400 }), {
      onRenewal: (at) => renewals.push(at),
    });
    expect(outcome).toMatchObject({ code: 'LEASE_EXPIRED', marks: 0 });
    expect(renewals).toEqual([]);
  });
});

describe('superviseLease: cancellation wins in every phase', () => {
  test('should cancel when the abort comes while the spawn is pending', async () => {
    const controller = new AbortController();
    // superviseLease spawns synchronously and waits for 'spawn'; the abort lands then.
    const running = superviseLease(spec({ argv: provider('marks', 100, 10), timeoutMs: 2_000 }), {}, controller.signal);
    controller.abort('SIGINT');
    const outcome = await running;
    expect(outcome).toMatchObject({ code: 'CANCELLED', status: 'cancelled', cleanupConfirmed: true });
  });

  test('should cancel when the abort comes while the output drains after the provider exit', async () => {
    const pidfile = file('leader.pid');
    const escapedFile = file('escaped.pid');
    const controller = new AbortController();
    const running = superviseLease(spec({ argv: counted(pidfile, provider('escape', escapedFile)), postProviderMs: 2_000, timeoutMs: 2_000 }), {}, controller.signal);
    try {
      // The provider exits at once; a descendant in its own session keeps stdout open.
      // Reaped (not merely a zombie): this process waited for it, so the supervisor has
      // seen its exit and is draining.
      await until(() => existsSync(escapedFile) && existsSync(pidfile) && procStat(pidsIn(pidfile)[0]!) === undefined, 15_000, 'the provider to be reaped');
      controller.abort('SIGINT');
      const outcome = await running;
      expect(outcome.code).toBe('CANCELLED');
    } finally {
      await running;
      if (existsSync(escapedFile)) killQuietly(pidsIn(escapedFile)[0]!);
    }
  });

  test('should never report a negative goneMs for POST_PROVIDER_TIMEOUT', async () => {
    const escapedFile = file('escaped.pid');
    try {
      const outcome = await superviseLease(spec({ argv: provider('escape', escapedFile), postProviderMs: 300, timeoutMs: 2_000 }));
      expect(outcome.code).toBe('POST_PROVIDER_TIMEOUT');
      expect(outcome.goneMs === null || outcome.goneMs >= 0).toBe(true);
    } finally {
      if (existsSync(escapedFile)) killQuietly(pidsIn(escapedFile)[0]!);
    }
  });
});
