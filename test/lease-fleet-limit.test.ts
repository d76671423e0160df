import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { signedActions, type SignedActions } from './helpers/actions.ts';
import { BUNDLE, ensureBuilt, laneward } from './helpers/cli.ts';
import { canRun, exitOf, until } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';

// The pool dispatcher, through `lease fleet --limit`: the children log their own start
// and exit, so the limit and the order are counted from their side.

const root = tempRoot('fleet-limit');
let descriptor: SignedActions;

beforeAll(() => {
  ensureBuilt();
  descriptor = signedActions(root, {
    'review.repository': { timeout_mode: 'admitted_progress_inactivity', progress: 'fd', cleanup_reserve_ms: 0, post_provider_ms: 2000 },
  });
});

const fleet = (count: number, limit: number, timeoutMs: number, script: string) => [
  'lease', 'fleet', '--count', String(count), '--jobs', '2', '--limit', String(limit), '--json',
  '--actions', descriptor.file, '--trust', descriptor.trust, '--action', 'review.repository', '--timeout-ms', String(timeoutMs),
  '--', 'bash', '-c', script,
];

const events = (log: string) => readFileSync(log, 'utf8').trim().split('\n').map((line) => line.split(' '));

describe('laneward lease fleet --limit (the pool dispatcher)', () => {
  test('should run at most --limit children at once, in index order, with stats that add up', () => {
    const log = join(root, 'limit.log');
    // Each child: 3 marks 300 ms apart under a 2 s lease; 12 of them through 3 slots.
    const result = laneward(fleet(12, 3, 2000, `echo "start $LANEWARD_FLEET_INDEX $$" >> ${log}; for i in 1 2 3; do sleep 0.3; printf "\\001" >&3; done; echo "exit $LANEWARD_FLEET_INDEX" >> ${log}`));
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n').map((line) => JSON.parse(line));
    let running = 0;
    let most = 0;
    for (const [kind] of events(log)) {
      running += kind === 'start' ? 1 : -1;
      most = Math.max(most, running);
    }
    expect(most).toBe(3);
    const startOrder = events(log).filter(([kind]) => kind === 'start').map(([, i]) => Number(i));
    expect([...startOrder].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    // FIFO: no child starts before one queued ahead of it by more than the limit.
    expect(startOrder.every((index, at) => Math.abs(index - at) < 3)).toBe(true);
    expect(lines.find((line) => line.dispatch !== undefined)).toEqual({ dispatch: { started: 12, finished: 12, marks: 36, running: 0, queued: 0, renewals: expect.any(Number) } });
    expect(lines.find((line) => line.dispatch !== undefined).dispatch.renewals).toBeGreaterThan(0);
    expect(lines.at(-1)).toEqual({ summary: { children: 12, ok: 12, timeout: 0, failed: 0, cancelled: 0, cleanupUnproven: 0, codes: {} } });
  });

  test('should cancel running children and start none of the queued ones on SIGTERM', async () => {
    const log = join(root, 'cancel.log');
    const child = spawn(process.execPath, [BUNDLE, ...fleet(6, 2, 60_000, `echo "start $LANEWARD_FLEET_INDEX $$" >> ${log}; trap "" TERM; sleep 30 & echo "grandchild $LANEWARD_FLEET_INDEX $!" >> ${log}; wait`)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    const exited = exitOf(child);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await until(() => {
      try {
        return events(log).filter(([kind]) => kind === 'grandchild').length === 2;
      } catch {
        return false;
      }
    }, 20_000, 'two children and their grandchildren');
    child.kill('SIGTERM');
    const { code } = await exited;
    expect(code).toBe(143);
    const lines = stdout.trim().split('\n').map((line) => JSON.parse(line));
    const outcomes = lines.filter((line) => line.index !== undefined);
    expect(outcomes.filter((o) => o.providerStarted).map((o) => o.code)).toEqual(['CANCELLED', 'CANCELLED']);
    expect(outcomes.filter((o) => !o.providerStarted).map((o) => o.code)).toEqual(['CANCELLED', 'CANCELLED', 'CANCELLED', 'CANCELLED']);
    expect(lines.at(-1).summary).toMatchObject({ children: 6, cancelled: 6, cleanupUnproven: 0 });
    expect(events(log).filter(([kind]) => kind === 'start')).toHaveLength(2);
    const pids = events(log).map(([, , pid]) => Number(pid));
    expect(pids.filter(canRun)).toEqual([]);
  });
});
