import type { MessagePort } from 'node:worker_threads';
import { constants } from 'node:os';
import { workerData } from 'node:worker_threads';
import { BUILD_ID } from '../../formats/build-id.ts';
import type { Outcome } from './outcome.ts';
import { ProcSnapshots } from './proc-snapshot.ts';
import type { SpawnedChild, SupervisionSpec } from './spec.ts';
import { supervise } from './supervise.ts';

const expected = (workerData as { buildId?: unknown } | undefined)?.buildId;
if (expected !== BUILD_ID) {
  throw new Error(`supervise worker is build ${BUILD_ID}, coordinator expects ${String(expected)}`);
}

/**
 * The supervisions of this worker read /proc through one snapshot source: one scan per
 * event-loop turn serves them all. Snapshots are immutable; nothing else is shared.
 */
const snapshots = new ProcSnapshots();

/** What the coordinator hands a worker for one supervision. */
export interface SuperviseTask {
  readonly spec: SupervisionSpec;
  /** Carries a cancel request for this supervision while it runs. */
  readonly port: MessagePort;
  /** Shared by every task of one fleet: non-zero (a signal number) once it is cancelled. */
  readonly cancelled: Int32Array;
}

function signalName(number: number): NodeJS.Signals {
  const found = Object.entries(constants.signals).find(([, n]) => n === number);
  return (found?.[0] ?? 'SIGTERM') as NodeJS.Signals;
}

/** A cancel request from the coordinator, by message: never a thread termination. */
export interface CancelMessage {
  readonly type: 'cancel';
  readonly signal: NodeJS.Signals;
}

/**
 * Renewals reported to the coordinator: batched over the task's port while it runs (at
 * most one message per {@link REPORT_EVERY_MS}), never one message per mark; what is left
 * at the end travels with the outcome, so nobody waits for the port behind it.
 */
export interface RenewalReport {
  readonly type: 'renewals';
  /** Renewals since the last report. */
  readonly count: number;
  /** Each renewal's latency (ms): from the read of the chunk that carried it to the re-arm. */
  readonly latenciesMs: readonly number[];
}

/**
 * The provider was spawned: sent at once, so the coordinator can journal the child before
 * it could outlive it; the outcome carries it again (two ports keep no order between them).
 */
export interface SpawnReport {
  readonly type: 'spawned';
  readonly child: SpawnedChild;
}

/** How often a running supervision reports its renewals. */
const REPORT_EVERY_MS = 100;
/** Latencies one report carries at most; a flood of marks is sampled, not copied whole. */
const MAX_LATENCIES = 256;

/**
 * Piscina task: supervise one provider. Many run at once in one worker (they wait on
 * I/O and timers). Cancellation arrives on `port`, and this worker tears its own
 * children down: terminating the thread instead would orphan them.
 */
/** A task's answer: the outcome, and the renewals not yet reported over the port. */
export interface TaskResult {
  readonly outcome: Outcome;
  readonly last: RenewalReport | null;
  /** The child it spawned, if it spawned one. */
  readonly spawned: SpawnedChild | null;
}

export default async function superviseTask({ spec, port, cancelled }: SuperviseTask): Promise<TaskResult> {
  const cancel = new AbortController();
  port.on('message', (message: CancelMessage) => {
    if (message?.type === 'cancel') cancel.abort(message.signal);
  });
  // A task that reaches its worker after the fleet was cancelled starts nothing: the flag
  // is shared memory, so it is seen before any message could be.
  const signal = Atomics.load(cancelled, 0);
  if (signal !== 0) cancel.abort(signalName(signal));
  let count = 0;
  let latencies: number[] = [];
  let timer: NodeJS.Timeout | undefined;
  const take = (): RenewalReport | null => {
    if (count === 0) return null;
    const report: RenewalReport = { type: 'renewals', count, latenciesMs: latencies };
    count = 0;
    latencies = [];
    return report;
  };
  const flush = () => {
    timer = undefined;
    const report = take();
    if (report !== null) port.postMessage(report);
  };
  const onRenewal = (_at: number, latencyMs: number) => {
    count += 1;
    if (latencies.length < MAX_LATENCIES) latencies.push(latencyMs);
    timer ??= setTimeout(flush, REPORT_EVERY_MS);
  };
  let spawned: SpawnedChild | null = null;
  const onSpawn = (_pid: number, child: SpawnedChild) => {
    spawned = child;
    port.postMessage({ type: 'spawned', child } satisfies SpawnReport);
  };
  try {
    const outcome = await supervise(spec, cancel.signal, { snapshots, onRenewal, onSpawn });
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    return { outcome, last: take(), spawned };
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    port.close();
  }
}
