import { constants } from 'node:os';
import { toError } from '../../formats/codes/error.ts';
import { nowMs } from '../../workers/supervise/monotonic-timer.ts';
import { onAbort } from '../../workers/supervise/on-abort.ts';
import type { Outcome } from '../../workers/supervise/outcome.ts';
import type { SpawnedChild, SupervisionSpec } from '../../workers/supervise/spec.ts';
import type { CancelMessage, RenewalReport, SpawnReport, SuperviseTask, TaskResult } from '../../workers/supervise/task.ts';
import { createPool } from '../pool.ts';
import { abortSignalName, cancelledBeforeStart } from './cancelled.ts';
import { Slots } from './slots.ts';
import { DispatchCounters } from './stats.ts';

export interface SuperviseOptions {
  readonly cancel?: AbortSignal;
  /**
   * The budget runs from the slot, not from `spec.startedAt`: the dispatcher sets
   * startedAt when the slot is granted, so time spent queued behind the limit is not
   * charged to the provider. Default false: queueing is pre-launch work and counts.
   */
  readonly budgetFromSlot?: boolean;
  /**
   * Called (and awaited) once the slot is granted, right before the provider starts: a
   * caller records "may have started" here (a plan run marks the attempt dispatched).
   * A cancel that arrives meanwhile still starts nothing.
   */
  readonly onSlot?: () => void | Promise<void>;
  /**
   * Called once the provider was spawned, with its pid and start time: a caller journals
   * the child here, so a driver started after this one died can find it. Awaited before
   * the run resolves. Not called for an adoption (nothing is spawned).
   */
  readonly onSpawn?: (child: SpawnedChild) => void | Promise<void>;
  /** Called as the child's admitted marks are reported (a sign of life for whoever started it). */
  readonly onMarks?: (count: number) => void;
  /**
   * The call's own cost once it ended, when its caller knows better than the stream's
   * figure (an agent turn that resumed a session whose stream reports the session's total).
   * Read by a crew's spend cap; the dispatcher ignores it.
   */
  readonly charge?: (outcome: Outcome) => number | null;
}

/** The one way main runs a supervised child; an Outcome for every case, never a rejection for a provider failure. */
export type SuperviseFn = (spec: SupervisionSpec, options?: SuperviseOptions) => Promise<Outcome>;

export interface DispatchStats {
  /** Children supervised right now. */
  readonly running: number;
  /** Waiting for a slot (backpressure). */
  readonly queued: number;
  /** Total handed to a supervisor since creation. */
  readonly started: number;
  readonly finished: number;
  /** Admitted marks seen in finished and running supervisions. */
  readonly marks: number;
  /** Recent renewal latencies (ms), for p99 and the histogram; a bounded window. */
  readonly renewalLatencyMs: readonly number[];
}

export interface Dispatcher {
  /** Waits for a free slot when `limit` children run. */
  readonly supervise: SuperviseFn;
  stats(): DispatchStats;
  /** Cancels what runs and what waits, waits for teardown, destroys the pool. */
  close(): Promise<void>;
}

/** What a launch reports while it runs. */
interface LaunchReports {
  renewals(count: number, latenciesMs: readonly number[]): void;
  spawned(child: SpawnedChild): void;
}

/** Supervises one spec somewhere; reports renewals and the spawn as they come; aborting `signal` cancels. */
type Launch = (spec: SupervisionSpec, signal: AbortSignal, reports: LaunchReports) => Promise<Outcome>;

/**
 * The dispatcher shared by both kinds: a FIFO of waiting runs in front of `limit` slots,
 * the counters, and close. What runs a supervision (a pool worker or this thread) is `launch`.
 */
function dispatcher(limit: number, launch: Launch, shutdown: () => Promise<void>): Dispatcher {
  const slots = new Slots(limit);
  const counters = new DispatchCounters();
  const live = new Set<{ controller: AbortController; done: Promise<unknown> }>();
  let closed = false;
  let closing: Promise<void> | undefined;

  const supervise: SuperviseFn = (spec, options = {}) => {
    const controller = new AbortController();
    let unlink = () => undefined as void;
    const entry = { controller, done: Promise.resolve() as Promise<unknown> };
    live.add(entry);
    const work = (async (): Promise<Outcome> => {
      try {
        if (closed) return cancelledBeforeStart(spec, 'SIGTERM');
        if (options.cancel?.aborted) return cancelledBeforeStart(spec, abortSignalName(options.cancel));
        // Through the signal's one fan-out listener: every run of a fleet shares this signal.
        if (options.cancel !== undefined) unlink = onAbort(options.cancel, () => controller.abort(options.cancel?.reason));
        if (!(await slots.acquire(controller.signal))) return cancelledBeforeStart(spec, abortSignalName(controller.signal));
        try {
          await options.onSlot?.();
          // From the slot and the caller's step at it (a call may wait out a rate limit there):
          // an adoption's budget was set from its recorded dispatch, and a slot does not renew it.
          const ready = options.budgetFromSlot === true && spec.adopt === undefined ? { ...spec, startedAt: nowMs() } : spec;
          if (controller.signal.aborted) return cancelledBeforeStart(ready, abortSignalName(controller.signal));
          // An adoption starts nothing: it holds a slot, and is not counted as a start.
          if (spec.adopt === undefined) counters.started += 1;
          let reported = 0;
          let outcome: Outcome | undefined;
          let journaled: Promise<void> | undefined;
          try {
            outcome = await launch(ready, controller.signal, {
              renewals: (count, latencies) => {
                reported += count;
                counters.renewals(count, latencies);
                if (count > 0) options.onMarks?.(count);
              },
              // Once per child, whichever report comes first (the port, or the outcome).
              // Handled here as well as awaited below: a journal that fails while the child
              // runs must not be an unhandled rejection, which would end the whole process.
              spawned: (child) => {
                if (journaled !== undefined) return;
                journaled = Promise.resolve().then(() => options.onSpawn?.(child));
                journaled.catch(() => undefined);
              },
            });
            await journaled;
            return outcome;
          } finally {
            // Only starts are counted, so `running` (started - finished) counts no adoption.
            if (spec.adopt === undefined) counters.finish(reported, outcome?.marks ?? 0);
          }
        } finally {
          slots.release();
        }
      } finally {
        unlink();
        live.delete(entry);
      }
    })();
    entry.done = work.catch(() => undefined);
    return work;
  };

  return {
    supervise,
    stats: () => ({
      running: counters.started - counters.finished,
      queued: slots.queued,
      started: counters.started,
      finished: counters.finished,
      marks: counters.marks,
      renewalLatencyMs: counters.latencies(),
    }),
    close: () => {
      closing ??= (async () => {
        closed = true;
        for (const { controller } of live) controller.abort('SIGTERM');
        slots.drop();
        await Promise.all([...live].map((entry) => entry.done));
        await shutdown();
      })();
      return closing;
    },
  };
}

/** Supervisions one worker thread carries at once: they wait on pipes and timers, not CPU. */
const PER_WORKER = 512;

/**
 * A dispatcher over ONE Piscina pool of the supervise worker: at most `limit` children
 * run at once across `threads` threads, the rest wait in arrival order. A cancel reaches
 * a running task as a message on its own port (the worker tears its children down; a
 * thread is never terminated under them); a waiting one is dropped and starts nothing.
 * A pool error (a worker of another build, a crashed thread) rejects the run it hit: it
 * is not a provider failure, so it is not an Outcome. Its close destroys the pool.
 */
export async function createPoolDispatcher(options: { threads: number; limit: number; onError?: (e: Error) => void }): Promise<Dispatcher> {
  const pool = await createSupervisePool(options);
  const over = pool.dispatcher(options.limit);
  return { ...over, close: () => over.close().then(() => pool.close()) };
}

/**
 * One pool of supervise threads under several dispatchers, each with its own limit, queue,
 * counters and close (which cancels and waits for its own runs only); the pool outlives
 * them until its own close. A crew worker runs each lane job as a crew of its own: over one
 * pool, a job starts no threads (each thread's start is about 40 ms of CPU here).
 */
export interface SupervisePool {
  dispatcher(limit: number): Dispatcher;
  close(): Promise<void>;
}

export async function createSupervisePool(options: { threads: number; onError?: (e: Error) => void }): Promise<SupervisePool> {
  // Loaded here, not at start-up: worker_threads costs milliseconds every command would pay.
  const { MessageChannel } = await import('node:worker_threads');
  let poolError: Error | undefined;
  const pool = await createPool('supervise', options.threads, (error) => {
    poolError ??= error;
    options.onError?.(error);
  }, { concurrentTasksPerWorker: PER_WORKER });
  // Shared with every worker: non-zero once the pool closed, so a task that reaches its
  // worker afterwards starts nothing.
  const cancelled = new Int32Array(new SharedArrayBuffer(4));
  const launch: Launch = async (spec, signal, reports) => {
    const { port1, port2 } = new MessageChannel();
    port1.on('message', (message: RenewalReport | SpawnReport) => {
      if (message?.type === 'renewals') reports.renewals(message.count, message.latenciesMs);
      else if (message?.type === 'spawned') reports.spawned(message.child);
    });
    const unlink = onAbort(signal, () => port1.postMessage({ type: 'cancel', signal: abortSignalName(signal) } satisfies CancelMessage));
    try {
      const task: SuperviseTask = { spec, port: port2, cancelled };
      const { outcome, last, spawned } = (await pool.run(task, { transferList: [port2] })) as TaskResult;
      // The last renewals and the spawn ride with the outcome: nothing waits for the port to drain.
      if (last !== null) reports.renewals(last.count, last.latenciesMs);
      if (spawned !== null) reports.spawned(spawned);
      return outcome;
    } catch (error) {
      throw toError(poolError ?? error);
    } finally {
      unlink();
      port1.close();
    }
  };
  let closing: Promise<void> | undefined;
  return {
    // A dispatcher's own close cancels its runs and waits for their teardown; the pool stays.
    dispatcher: (limit) => dispatcher(limit, launch, async () => undefined),
    close: () =>
      (closing ??= (async () => {
        Atomics.store(cancelled, 0, constants.signals.SIGTERM);
        await pool.destroy();
      })()),
  };
}

/**
 * The same dispatcher supervising in this thread: for single CLI commands and tests. The
 * limit, the queue, the stats and close behave as with the pool.
 */
export function createInProcessDispatcher(options: { limit: number }): Dispatcher {
  const launch: Launch = async (spec, signal, reports) => {
    const { supervise } = await import('../../workers/supervise/supervise.ts');
    return supervise(spec, signal, { onRenewal: (_at, latencyMs) => reports.renewals(1, [latencyMs]), onSpawn: (_pid, child) => reports.spawned(child) });
  };
  return dispatcher(options.limit, launch, async () => undefined);
}
