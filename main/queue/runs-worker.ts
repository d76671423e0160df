import type { Job, Worker } from 'bullmq';
import { EXIT, type ResultCode } from '../../formats/codes/codes.ts';
import type { LanewardError } from '../../formats/codes/error.ts';
import { interruptSignal } from '../interrupt.ts';
import { createPool } from '../pool.ts';
import { bullConnection, checkQueue, type BullConnection, type QueueTarget } from './connection.ts';
import { watchRedis, type RedisWatch } from './redis-watch.ts';
import { codedReason, readReason, RUNS_QUEUE, type RunsAnswer } from './runs-job.ts';
import { runsProcessor, type ProcessorOptions } from './runs-processor.ts';

export interface RunsWorkerOptions extends ProcessorOptions {
  readonly target: QueueTarget;
  /** Jobs in flight at once. */
  readonly concurrency: number;
  /** Validation threads. */
  readonly threads: number;
}

/** What the worker reports, as facts; `artifact worker` (main/cli/worker-lines.ts) prints them. */
export type RunsWorkerEvent =
  | { readonly type: 'ready'; readonly queue: string; readonly root: string | null; readonly concurrency: number; readonly threads: number }
  | { readonly type: 'done'; readonly job: string | undefined; readonly runs: number; readonly invalid: number }
  | { readonly type: 'failed'; readonly job: string | undefined; readonly code: ResultCode; readonly message: string }
  | { readonly type: 'stopped'; readonly signal: string };

/**
 * `artifact worker`: takes `runs` jobs from the queue until SIGTERM or SIGINT and
 * validates them (see {@link runsProcessor}) on a pool, so the event loop stays free to
 * renew the jobs' locks. A signal stops the taking of jobs; the running ones finish and
 * the worker exits 0. A lost Redis ends it with QUEUE_UNAVAILABLE.
 */
export async function serveRunsWorker(options: RunsWorkerOptions, onEvent: (event: RunsWorkerEvent) => void): Promise<number> {
  await checkQueue(options.target);
  const bullmq = await import('bullmq');
  // A refusal is final (never retried, whatever attempts the job asked for), its reason
  // starting with the code the coordinator reads back.
  const refusal = (error: unknown) => new bullmq.UnrecoverableError(codedReason(error));
  let poolError: Error | undefined;
  const pool = await createPool('validate', options.threads, (error) => (poolError ??= error), { concurrentTasksPerWorker: 2 });
  const stop = interruptSignal();
  const signalled = new Promise<string>((resolve) => stop.signal.addEventListener('abort', () => resolve(String(stop.signal.reason)), { once: true }));
  let lost: LanewardError | undefined;
  let onLost: (error: LanewardError) => void = () => undefined;
  const lostRedis = new Promise<LanewardError>((resolve) => (onLost = resolve));
  const bull = bullConnection(options.target);
  let watch: RedisWatch | undefined;
  let worker: Worker | undefined;
  try {
    watch = await watchRedis(options.target, (error) => onLost((lost = error)));
    worker = startWorker(bullmq.Worker, options, bull, runsProcessor(options, pool, refusal, () => poolError), onEvent);
    // Announced once it can take jobs, so whoever starts workers can wait for this line.
    await Promise.race([worker.waitUntilReady(), lostRedis]);
    onEvent({ type: 'ready', queue: options.target.url, root: options.root ?? null, concurrency: options.concurrency, threads: options.threads });
    const first = await Promise.race([signalled, lostRedis]);
    if (typeof first !== 'string') throw first;
    // Stops taking jobs and waits for the running ones, unless Redis is lost meanwhile.
    const closed = await Promise.race([worker.close().then(() => undefined), lostRedis]);
    if (closed !== undefined) throw closed;
    onEvent({ type: 'stopped', signal: first });
    return EXIT.ok;
  } finally {
    stop.release();
    watch?.close();
    if (lost !== undefined) {
      bull.giveUp();
      // Not awaited: a goodbye to a Redis that is gone settles only once its clients give up.
      void worker?.close(true).catch(() => undefined);
    }
    await pool.destroy();
  }
}

/** The BullMQ worker, reporting what becomes of each job it takes. */
function startWorker(Bull: typeof Worker, options: RunsWorkerOptions, bull: BullConnection, processor: (job: Job) => Promise<RunsAnswer>, onEvent: (event: RunsWorkerEvent) => void): Worker {
  const worker = new Bull(RUNS_QUEUE, processor, { connection: bull.connection, concurrency: options.concurrency });
  // Connection errors are the watch's to judge; without a listener they would be thrown.
  worker.on('error', () => undefined);
  worker.on('completed', (job: Job, answer: RunsAnswer) =>
    onEvent({ type: 'done', job: job.id, runs: answer.reports.length, invalid: answer.reports.filter((entry) => !entry.report.valid).length }),
  );
  // A failed job's reason starts with its code (see codedReason).
  worker.on('failed', (job: Job | undefined, error: Error) => onEvent({ type: 'failed', job: job?.id, ...readReason(error.message) }));
  return worker;
}
