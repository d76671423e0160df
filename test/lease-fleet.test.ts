import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { signedActions, type SignedActions } from './helpers/actions.ts';
import { BUNDLE, ensureBuilt, laneward } from './helpers/cli.ts';
import { canRun, exitOf, pidsIn, sleep } from './helpers/procs.ts';
import { LEASE_HELP } from '../main/cli/lease-help.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('fleet');
let descriptor: SignedActions;

beforeAll(() => {
  ensureBuilt();
  descriptor = signedActions(root, {
    'review.repository': { timeout_mode: 'admitted_progress_inactivity', progress: 'fd', cleanup_reserve_ms: 0, post_provider_ms: 2000 },
  });
});

/** Pids listed in `file` (one per line) that can still run: neither gone nor a zombie. */
const running = (file: string) => pidsIn(file).filter(canRun);

const fleet = (count: number, timeoutMs: number, script: string) => [
  'lease', 'fleet', '--count', String(count), '--jobs', '2', '--json',
  '--actions', descriptor.file, '--trust', descriptor.trust, '--action', 'review.repository', '--timeout-ms', String(timeoutMs),
  '--', 'bash', '-c', script,
];

describe('laneward lease fleet', () => {
  test('should supervise 200 concurrent children from one coordinator, renewing each lease', () => {
    // Twelve marks a second apart outlast the 8 s lease: only renewal keeps them alive. 8 s,
    // not 5: a budget counts from the fleet's start, and under a full suite 111 of 200
    // children, launched late, had no mark yet at 5 s (DEADLINE_EXPIRED, 0 marks).
    const result = laneward(fleet(200, 8000, 'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 1; printf "\\001" >&3; done'));
    const lines = result.stdout.trim().split('\n').map((line) => JSON.parse(line));
    const outcomes = lines.filter((line) => line.index !== undefined);
    expect(outcomes).toHaveLength(200);
    expect(new Set(outcomes.map((o) => o.index)).size).toBe(200);
    const short = outcomes.filter((o) => !(o.status === 'ok' && o.attempts === 1 && o.marks === 12 && o.cleanupConfirmed && o.durationMs > 8000));
    expect(short.map((o) => ({ index: o.index, status: o.status, code: o.code, marks: o.marks, durationMs: o.durationMs }))).toEqual([]);
    expect(lines.at(-1)).toEqual({ summary: { children: 200, ok: 200, timeout: 0, failed: 0, cancelled: 0, cleanupUnproven: 0, codes: {} } });
    expect(result.code).toBe(0);
  });

  test('should expire every silent child and prove each group gone, grandchildren included', () => {
    const pids = join(root, 'expire-pids');
    // 8 s: every child is launched within its budget, on a busy machine too (the budget
    // counts from the fleet's start: at 4 s, one of 200 was once still queued at its end
    // under a full suite and ended DEADLINE_EXPIRED before it started).
    const result = laneward(fleet(200, 8000, `trap "" TERM; sleep 30 & echo $! >> ${pids}; wait`));
    expect(result.code).toBe(1);
    const summary = JSON.parse(result.stdout.trim().split('\n').at(-1)!);
    expect(summary).toEqual({ summary: { children: 200, ok: 0, timeout: 200, failed: 0, cancelled: 0, cleanupUnproven: 0, codes: { LEASE_EXPIRED: 200 } } });
    expect(readFileSync(pids, 'utf8').trim().split('\n')).toHaveLength(200);
    expect(running(pids)).toEqual([]);
  });

  test('should cancel every child by message when the coordinator gets SIGTERM', async () => {
    const pidfile = join(root, 'started');
    const child = spawn(process.execPath, [BUNDLE, ...fleet(50, 60_000, `trap "" TERM; sleep 30 & echo $! >> ${pidfile}; wait`)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    const exited = exitOf(child);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      let started = 0;
      try {
        started = readFileSync(pidfile, 'utf8').trim().split('\n').length;
      } catch {
        // not yet
      }
      if (started === 50) break;
      await sleep(50);
    }
    child.kill('SIGTERM');
    const { code } = await exited;
    expect(code).toBe(143);
    const summary = JSON.parse(stdout.trim().split('\n').at(-1)!);
    expect(summary.summary).toMatchObject({ children: 50, cancelled: 50, cleanupUnproven: 0, codes: { CANCELLED: 50 } });
    expect(running(pidfile)).toEqual([]);
  });

  test('should print nothing on stderr for 50 children at once (no listener warning)', () => {
    const result = laneward(fleet(50, 5000, 'exit 0'));
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout.trim().split('\n').at(-1)!)).toEqual({ summary: { children: 50, ok: 50, timeout: 0, failed: 0, cancelled: 0, cleanupUnproven: 0, codes: {} } });
    expect(result.code).toBe(0);
  });

  test.each([[['lease', '--help']], [['lease', 'run', '-h']], [['lease', 'fleet', '--help']], [['lease', 'fleet', '--count', '2', '-h', '--', 'true']]])(
    'should print the lease help for %j and exit 0, starting nothing',
    (args) => {
      const result = laneward(args);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toBe(`${LEASE_HELP}\n`);
    },
  );

  test.each([
    ['no --count', ['--jobs', '2'], ['true']],
    ['no command after --', ['--count', '2'], []],
  ])('should refuse a fleet with %s as USAGE, exit 2', (_name, options, command) => {
    const own = ['--actions', descriptor.file, '--trust', descriptor.trust, '--action', 'review.repository', '--timeout-ms', '100'];
    const result = laneward(['lease', 'fleet', ...options, ...own, '--', ...command]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^laneward lease fleet: .*\(USAGE\)\n$/);
  });
});
