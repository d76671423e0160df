import type { KeyObject } from 'node:crypto';
import type { Queue, QueueEvents } from 'bullmq';
import { EXIT } from '../../formats/codes/codes.ts';
import { isLanewardError, LanewardError, toError } from '../../formats/codes/error.ts';
import type { RunReport } from '../../workers/validate/report.ts';
import type { BatchOutput } from '../batch/batch-output.ts';
import { batchTally, reportUndiscovered, STOPPED, type BatchSummary } from '../batch/batch-report.ts';
import { interruptSignal } from '../interrupt.ts';
import { bullConnection, checkQueue, queueUnavailable, type QueueTarget } from './connection.ts';
import { jobOutcomes, type JobOutcomes } from './job-outcomes.ts';
import { watchRedis, type RedisWatch } from './redis-watch.ts';
import { relocateReport } from './relocate-report.ts';
import { checkRunsAnswer, readReason, RUNS_JOB, RUNS_QUEUE, type RunsAnswer } from './runs-job.ts';
import { planRunsJobs, type PlannedJob, type RunsPlan } from './runs-plan.ts';
import { signJob } from './signed-job.ts';

export interface QueueBatchOptions {
  readonly json: boolean;
  readonly target: QueueTarget;
  /** The Ed25519 key every job is signed with; workers trust its public half. */
  readonly key: KeyObject;
  readonly runsPerJob: number;
}

/** Why a batch stopped before its summary: a signal's name, or the error it fails with. */
type Halt = string | LanewardError;

/**
 * The batch of `artifact validate --queue`: the runs discovered here, validated by
 * whichever `artifact worker`s drain the queue, reported here as their jobs come back,
 * through the same tally as the local batch, so the lines and the summary are the ones
 * a single machine prints for the same archive. The Redis is probed before anything is
 * queued or printed. A batch stops without a summary on a signal (128 + n, its jobs
 * taken off the queue), on a job that failed (its code: JOB_INVALID when a worker
 * refused it) and on a lost Redis (QUEUE_UNAVAILABLE: its jobs stay queued, and the same
 * command run again collects them rather than queueing them twice).
 */
export async function runQueueBatch(inputs: readonly string[], options: QueueBatchOptions, io: BatchOutput): Promise<{ code: number; summary: BatchSummary }> {
  await checkQueue(options.target);
  const plan = planRunsJobs(inputs, options.runsPerJob);
  const tally = batchTally(io, options.json, plan.total);
  reportUndiscovered(tally, plan);
  if (plan.jobs.length > 0) {
    const halt = await collect(plan, options, (path, report) => tally.report(path, report, true));
    tally.bar.finish();
    if (typeof halt === 'string') return { code: STOPPED[halt] ?? EXIT.fail, summary: tally.summary };
    if (halt !== undefined) throw halt;
  }
  tally.end();
  return { code: tally.exit(), summary: tally.summary };
}

/** The coordinator's side of the queue: jobs go in through `queue`, outcomes come back through `outcomes`. */
interface Connected {
  readonly queue: Queue;
  readonly events: QueueEvents;
  readonly outcomes: JobOutcomes;
  /** Stops every client reconnecting to a Redis given up on. */
  giveUp(): void;
}

/**
 * Queues every job and reports each one's runs as it comes back; resolves when all came
 * back (undefined) or with what stopped the batch first.
 */
async function collect(plan: RunsPlan, options: QueueBatchOptions, report: (path: string, result: RunReport) => void): Promise<Halt | undefined> {
  const halt = new AbortController();
  const stopWith = (why: Halt) => void (halt.signal.aborted || halt.abort(why));
  const watch = await watchRedis(options.target, stopWith);
  let connected: Connected;
  try {
    connected = await connect(options.target, watch);
  } catch (error) {
    watch.close();
    throw error;
  }
  const { queue, events, outcomes, giveUp } = connected;
  const stop = interruptSignal();
  stop.signal.addEventListener('abort', () => stopWith(String(stop.signal.reason)));
  const pending = new Set(plan.jobs.map((job) => job.id));
  const collectJob = async (job: PlannedJob) => {
    const answer = await settle(queue, outcomes, job, options);
    if (halt.signal.aborted) return;
    for (const [k, entry] of answer.reports.entries()) {
      const local = job.paths[k]!;
      // Only the JSON objects name paths the worker saw; the lines need nothing moved.
      report(local, options.json ? relocateReport(entry.report, answer.root, entry.path, local) : entry.report);
    }
    pending.delete(job.id);
    // Collected: a job left behind would only be reused by a re-run of this same listing.
    await queue.remove(job.id).catch(() => undefined);
  };
  try {
    const all = Promise.all(plan.jobs.map(collectJob)).catch((error: unknown) => stopWith(isLanewardError(error) ? error : new LanewardError('INTERNAL', toError(error).message)));
    await Promise.race([all, new Promise((resolve) => halt.signal.addEventListener('abort', resolve))]);
  } finally {
    stop.release();
    watch.close();
    const why = halt.signal.aborted ? (halt.signal.reason as Halt) : undefined;
    if (isLanewardError(why) && why.code === 'QUEUE_UNAVAILABLE') giveUp();
    await teardown(queue, events, why, pending, options.target.connection.connectTimeout);
  }
  return halt.signal.aborted ? (halt.signal.reason as Halt) : undefined;
}

/**
 * The queue and its events. The events are read from the newest one there is before any
 * job is queued, not from whenever the first read happens to start (BullMQ's default):
 * a job finished in between would be waited for forever. The block is short: ioredis
 * keeps a timer for a blocking read past a lost connection, and that timer decides when
 * a coordinator whose Redis is gone can exit.
 */
async function connect(target: QueueTarget, watch: RedisWatch): Promise<Connected> {
  const { Queue, QueueEvents } = await import('bullmq');
  const { connection, giveUp } = bullConnection(target);
  const queue = new Queue(RUNS_QUEUE, { connection });
  const lastEventId = await watch.newestEntry(queue.toKey('events'));
  const events = new QueueEvents(RUNS_QUEUE, { connection, blockingTimeout: 1_000, lastEventId });
  // Connection errors are the watch's to judge; without a listener they would be thrown.
  queue.on('error', () => undefined);
  events.on('error', () => undefined);
  return { queue, events, outcomes: jobOutcomes(events), giveUp };
}

/**
 * Queues one job and waits for its answer. A job an earlier run of the same listing
 * left behind is not queued twice: a finished one is collected as it is (a failed one is
 * queued afresh), a waiting or running one is waited for.
 */
async function settle(queue: Queue, outcomes: JobOutcomes, job: PlannedJob, options: QueueBatchOptions): Promise<RunsAnswer> {
  const outcome = outcomes.expect(job.id);
  try {
    if ((await queue.getJobState(job.id)) === 'failed') await queue.remove(job.id);
    await queue.add(RUNS_JOB, signJob(job.body, options.key), { jobId: job.id });
    const state = await queue.getJobState(job.id);
    if (state === 'completed' || state === 'failed') {
      const stored = await queue.getJob(job.id);
      outcomes.settle(job.id, state === 'completed' ? { ok: true, value: stored?.returnvalue } : { ok: false, reason: stored?.failedReason ?? '' });
    }
  } catch (error) {
    throw queueUnavailable(options.target, error);
  }
  const ended = await outcome;
  if (!ended.ok) throw jobFailure(job.id, ended.reason);
  return checkRunsAnswer(ended.value, job.body);
}

/** A failed job as this batch's error, with the code its reason starts with (JOB_INVALID when a worker refused it). */
function jobFailure(id: string, reason: string): LanewardError {
  const { code, message } = readReason(reason);
  return new LanewardError(code, `job ${id} failed: ${message}`);
}

/**
 * Closes the queue's connections. A batch stopped by a signal or a failed job takes its
 * uncollected jobs off the queue (an active one stays locked by its worker, which
 * finishes it for nobody); a lost Redis gets no goodbye, only a disconnect.
 */
async function teardown(queue: Queue, events: QueueEvents, halt: Halt | undefined, pending: ReadonlySet<string>, ms: number): Promise<void> {
  const lost = isLanewardError(halt) && halt.code === 'QUEUE_UNAVAILABLE';
  if (lost) {
    // Not awaited: a goodbye to a Redis that is gone settles only once its clients give up.
    void Promise.allSettled([queue.close(), events.close()]);
    return;
  }
  if (halt !== undefined) await bounded(Promise.allSettled([...pending].map((id) => queue.remove(id))), ms);
  await bounded(Promise.allSettled([queue.close(), events.close()]), ms);
}

/** Waits for `work` at most `ms`; the timer never keeps the process alive. */
async function bounded(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, ms).unref()))]);
  clearTimeout(timer);
}
