import { getEventListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { createInProcessDispatcher, type Dispatcher } from '../main/dispatch/dispatcher.ts';
import { nowMs } from '../workers/supervise/monotonic-timer.ts';
import type { Outcome } from '../workers/supervise/outcome.ts';
import type { SupervisionSpec } from '../workers/supervise/spec.ts';
import { canRun, settleTagged, until } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';

// The dispatcher in-process, over real children. Each child logs its own start and exit
// (with its index and pid) to a file, so concurrency and order are counted from the
// children's side, not from the dispatcher's own bookkeeping.

const root = tempRoot('dispatch');
const TAG = `LANEWARD_DISPATCH_TEST=${process.pid}-${Date.now()}`;
let counter = 0;
const logFile = () => join(root, `log-${counter++}`);

/** A child that logs "start i pid", sends `marks` marks `stepMs` apart, logs "exit i". */
const child = (log: string, index: number, marks: number, stepMs: number): string[] => [
  'bash',
  '-c',
  `echo "start ${index} $$" >> "${log}"; for k in $(seq 1 ${marks}); do sleep ${stepMs / 1000}; printf '\\001' >&3; done; echo "exit ${index}" >> "${log}"`,
];

function spec(argv: string[], overrides: Partial<SupervisionSpec> = {}): SupervisionSpec {
  return {
    argv,
    env: { [TAG.split('=')[0]!]: TAG.split('=')[1]! },
    stdio: 'pipe',
    mode: 'admitted_progress_inactivity',
    progress: 'fd',
    timeoutMs: 10_000,
    cleanupReserveMs: 0,
    postProviderMs: 2_000,
    graceMs: 200,
    teardownMs: 5_000,
    stdoutLimit: 1 << 20,
    stderrLimit: 1 << 20,
    startedAt: nowMs(),
    action: 'test.dispatch',
    descriptorSha256: null,
    ...overrides,
  };
}

const events = (log: string) => readFileSync(log, 'utf8').trim().split('\n').map((line) => line.split(' '));
const starts = (log: string) => {
  try {
    return events(log).filter(([kind]) => kind === 'start');
  } catch {
    return [];
  }
};

/** The most children the log shows running at once. */
function peak(log: string): number {
  let running = 0;
  let most = 0;
  for (const [kind] of events(log)) {
    running += kind === 'start' ? 1 : -1;
    most = Math.max(most, running);
  }
  return most;
}

describe('createInProcessDispatcher', () => {
  test('should hold at most one abort listener on a cancel signal shared by many runs, and none once they end', async () => {
    const dispatcher = createInProcessDispatcher({ limit: 4 });
    const log = logFile();
    const shared = new AbortController();
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => void warnings.push(warning);
    process.on('warning', onWarning);
    // Budgets start when the specs are made, all at once: the last of 40 queued four at a
    // time waited out a 10 s deadline under a loaded full suite. Listeners are the point here.
    const runs = Array.from({ length: 40 }, (_, i) => dispatcher.supervise(spec(child(log, i, 1, 20), { timeoutMs: 120_000 }), { cancel: shared.signal }));
    await until(() => starts(log).length >= 4 && dispatcher.stats().queued > 0, 10_000, 'children running and queued');
    const listening = getEventListeners(shared.signal, 'abort').length;
    const outcomes = await Promise.all(runs);
    process.off('warning', onWarning);
    expect(outcomes.map((o) => o.code)).toEqual(Array(40).fill(null));
    expect(listening).toBe(1);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
    await dispatcher.close();
  });

  test('should never run more than its limit, and start queued runs in arrival order', async () => {
    const dispatcher = createInProcessDispatcher({ limit: 3 });
    const log = logFile();
    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, dispatcher.stats().running)), 5);
    const granted: number[] = [];
    const outcomes = await Promise.all(Array.from({ length: 9 }, (_, i) => dispatcher.supervise(spec(child(log, i, 3, 100)), { onSlot: () => void granted.push(i) })));
    clearInterval(sampler);
    expect(outcomes.map((o) => o.code)).toEqual(Array(9).fill(null));
    expect(peak(log)).toBe(3);
    expect(most).toBeLessThanOrEqual(3);
    // Slots go to the longest waiter; every child started exactly once.
    expect(granted).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(starts(log).map(([, i]) => Number(i)).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    const stats = dispatcher.stats();
    expect({ running: stats.running, queued: stats.queued, started: stats.started, finished: stats.finished, marks: stats.marks }).toEqual({
      running: 0, queued: 0, started: 9, finished: 9, marks: 27,
    });
    expect(stats.renewalLatencyMs.length).toBeGreaterThan(0);
    expect(stats.renewalLatencyMs.every((ms) => ms >= 0 && ms < 1_000)).toBe(true);
    await dispatcher.close();
  });

  test('should start runs strictly one after another in arrival order under limit 1', async () => {
    const dispatcher = createInProcessDispatcher({ limit: 1 });
    const log = logFile();
    await Promise.all(Array.from({ length: 5 }, (_, i) => dispatcher.supervise(spec(child(log, i, 1, 20)))));
    expect(events(log).map(([kind, index]) => `${kind}${index}`)).toEqual(['start0', 'exit0', 'start1', 'exit1', 'start2', 'exit2', 'start3', 'exit3', 'start4', 'exit4']);
    await dispatcher.close();
  });

  test('should cancel a queued run without starting it and a running one by tearing it down', async () => {
    const dispatcher = createInProcessDispatcher({ limit: 1 });
    const log = logFile();
    const first = new AbortController();
    const second = new AbortController();
    const running = dispatcher.supervise(spec(child(log, 0, 100, 100)), { cancel: first.signal });
    const queued = dispatcher.supervise(spec(child(log, 1, 1, 10)), { cancel: second.signal });
    await until(() => starts(log).length === 1 && dispatcher.stats().queued === 1, 10_000, 'the first child to start');
    second.abort('SIGINT');
    const dropped = await queued;
    expect({ status: dropped.status, code: dropped.code, providerStarted: dropped.providerStarted, attempts: dropped.attempts, cancelSignal: dropped.cancelSignal }).toEqual({
      status: 'cancelled', code: 'CANCELLED', providerStarted: false, attempts: 0, cancelSignal: 'SIGINT',
    });
    expect(dispatcher.stats()).toMatchObject({ running: 1, queued: 0, started: 1 });
    first.abort('SIGTERM');
    const ended = await running;
    expect({ code: ended.code, providerStarted: ended.providerStarted, cleanupConfirmed: ended.cleanupConfirmed }).toEqual({ code: 'CANCELLED', providerStarted: true, cleanupConfirmed: true });
    const pid = Number(starts(log)[0]![2]);
    expect(canRun(pid)).toBe(false);
    expect(starts(log).map(([, i]) => i)).toEqual(['0']);
    expect(dispatcher.stats()).toMatchObject({ running: 0, queued: 0, started: 1, finished: 1 });
    await dispatcher.close();
  });

  test('should tear down running and queued runs at close, and refuse runs after it', async () => {
    const dispatcher: Dispatcher = createInProcessDispatcher({ limit: 2 });
    const log = logFile();
    const runs = Array.from({ length: 4 }, (_, i) => dispatcher.supervise(spec(child(log, i, 100, 100))));
    await until(() => starts(log).length === 2, 10_000, 'two children to start');
    expect(dispatcher.stats()).toMatchObject({ running: 2, queued: 2, started: 2, finished: 0 });
    await dispatcher.close();
    const outcomes: Outcome[] = await Promise.all(runs);
    expect(outcomes.map((o) => [o.code, o.providerStarted])).toEqual([['CANCELLED', true], ['CANCELLED', true], ['CANCELLED', false], ['CANCELLED', false]]);
    expect(outcomes.every((o) => o.cleanupConfirmed)).toBe(true);
    expect(await settleTagged(TAG, 5_000)).toEqual([]);
    expect(dispatcher.stats()).toMatchObject({ running: 0, queued: 0, started: 2, finished: 2 });
    let slotted = false;
    const late = await dispatcher.supervise(spec(child(log, 9, 1, 10)), { onSlot: () => void (slotted = true) });
    expect([late.code, late.providerStarted]).toEqual(['CANCELLED', false]);
    // A child is only ever started after its run got a slot (onSlot) and was counted as
    // started: the refused run got neither, so no child of it can turn up later.
    expect(slotted).toBe(false);
    expect(dispatcher.stats()).toMatchObject({ running: 0, queued: 0, started: 2, finished: 2 });
    expect(starts(log)).toHaveLength(2);
  });

  test('should charge queue time to the budget unless the run asks for its budget from the slot', async () => {
    const dispatcher = createInProcessDispatcher({ limit: 1 });
    const log = logFile();
    // A total deadline of 1.5 s, counted from now; the first run holds the slot for ~2.5 s.
    const total = (i: number) => spec(child(log, i, 1, 10), { mode: 'total_deadline', progress: null, timeoutMs: 1_500, startedAt: nowMs() });
    const blocker = dispatcher.supervise(spec(child(log, 0, 5, 500)));
    const charged = dispatcher.supervise(total(1));
    const fromSlot = dispatcher.supervise(total(2), { budgetFromSlot: true });
    const [, a, b] = await Promise.all([blocker, charged, fromSlot]);
    expect([a.code, a.providerStarted]).toEqual(['DEADLINE_EXPIRED', false]);
    expect([b.code, b.providerStarted]).toEqual([null, true]);
    await dispatcher.close();
  });

  test('should call onSlot once the slot is granted, before the child starts', async () => {
    const dispatcher = createInProcessDispatcher({ limit: 1 });
    const log = logFile();
    const seen: number[] = [];
    const blocker = dispatcher.supervise(spec(child(log, 0, 2, 200)));
    const second = dispatcher.supervise(spec(child(log, 1, 1, 10)), { onSlot: () => void seen.push(starts(log).length) });
    await Promise.all([blocker, second]);
    // When the second got its slot, only the first child had started.
    expect(seen).toEqual([1]);
    await dispatcher.close();
  });
});
