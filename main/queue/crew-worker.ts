import { join, resolve } from 'node:path';
import { isLanewardError, LanewardError, toError } from '../../formats/codes/error.ts';
import { crewQaLaneId } from '../../formats/crew/qa-id.ts';
import { oneLine } from '../../formats/text/one-line.ts';
import { readPublicKey } from '../actions/keys.ts';
import { configuredStateRoot, defaultStateRoot } from '../plan/index.ts';
import { openStore } from '../store/store.ts';
import { createSupervisePool } from '../dispatch/dispatcher.ts';
import { lastingQaThread, startQaThread } from '../crew/qa-client.ts';
import { bullConnection, checkQueue, queueTarget } from './connection.ts';
import { checkLaneJob, LANE_QUEUE } from './lane-job.ts';
import { checkCurrent, readLedger } from './lane-ledger.ts';
import { openJob } from './signed-job.ts';
import { isCoordinatorSilent } from './coordinator-wait.ts';
import { isBehind, type LaneMirror } from './lane-mirror.ts';
import { runOwnedLane, type LaneJob, type WorkerLaneContext } from './worker-lane.ts';
import { stopWorker } from './worker-stop.ts';
import { CopiedSignal } from './copied-signal.ts';
import type { CrewWorkerOptions, CrewWorkerOutput, LaneJobResult } from './worker-types.ts';

export type { CrewWorkerEvent, CrewWorkerOptions, CrewWorkerOutput, LaneJobResult } from './worker-types.ts';

/**
 * How often a lane's job may lose its holder before BullMQ fails it. A lost holder is
 * never the lane's fault (its state is fenced and resumed from its mirror), and a job now
 * also loses it while a paused worker, a Redis restart or a Redis out of memory is waited
 * out: one stall failed such lanes INTERNAL ("job stalled more than allowable limit").
 * Every mirror append under the lock sets the count back to 0 (see LaneMirror), so only
 * stalls with no progress between them add up: a lane that brings down every worker that
 * takes it, before it writes anything, still ends.
 */
const MAX_STALLS = 5;

/**
 * How long the worker waits before it asks Redis again after a refused call (BullMQ's
 * default is 15 s). A Redis out of memory refuses the worker's fetch of its next job too;
 * a lane whose job lost its holder meanwhile waits two lock periods for the job to come
 * back, and would give up long before a 15 s pause ended.
 */
const RUN_RETRY_MS = 1_000;

/** The errors a processor ends with when it lets its job go while its lane waits for the job to come back. */
const RELEASED = new WeakSet<Error>();

/**
 * `crew worker`: takes lanes from the queue up to `concurrency` at once and runs each as a
 * one-lane crew on this machine's own state root, dispatcher and QA service, exactly as a
 * local crew runs it, forwarding every saved change of the lane as the job's progress and
 * returning its exported run directory. A job that a trusted key did not sign, or that is
 * malformed, is refused (JOB_INVALID) before anything is written or run. Every record the
 * lane commits is mirrored to its Redis stream, fenced by the job's lock, before any of
 * its children starts; a lane a lost worker had started is restored here from that
 * stream and resumed as a crew started again resumes it (what the lost machine started and
 * never saw end is EXECUTION_UNKNOWN, never replayed). A worker whose lock was taken writes
 * nothing more and stops the lane (LANE_TAKEN). On cancel it takes nothing new and returns
 * once the running lanes ended.
 */
export async function crewWorker(options: CrewWorkerOptions, output: CrewWorkerOutput): Promise<number> {
  const target = queueTarget(options.queue);
  const trustFile = resolve(options.cwd, options.trust);
  const trust = readPublicKey(trustFile);
  const root = configuredStateRoot(options.state, options.env, options.cwd)?.path ?? defaultStateRoot(options.cwd);
  const store = openStore(root, { batched: true });
  await checkQueue(target);
  const name = `${process.pid}@${(await import('node:os')).hostname()}`;
  const { Worker } = await import('bullmq');

  const { default: Redis } = await import('ioredis');
  // Given up on when a stopping worker's Redis does not answer: a client that keeps
  // reconnecting keeps the process alive, and its parked commands (a lane's mirror
  // flush, which a child waits for) fail only once it stops trying.
  const bull = bullConnection(target);
  const redis = new Redis(bull.connection);
  redis.on('error', () => undefined);
  // One pool for the worker's life: a lane job is a crew of its own, and each starting its
  // own threads cost a lane about 80 ms of CPU here before its first child.
  const pool = await createSupervisePool({ threads: options.threads, onError: (error) => output.event({ type: 'queue_error', message: toError(error).message }) });
  // And one QA thread: each lane's crew is a tenant of it, where every lane started one of
  // its own (a thread's start is tens of milliseconds of CPU here: a supervise thread's 39).
  const qa = lastingQaThread(
    await startQaThread(root).catch(async (error: unknown) => {
      await pool.close();
      throw error;
    }),
  );

  // The lanes running in this process, by QA id. A job of a lane this worker still runs
  // (its lock lapsed while the process was paused or Redis lost it, and the job came back
  // here) is the same lane: the running one goes on under the new lock and the new job
  // gets its result, rather than a second run finding the first one's attempts in flight.
  // Unless another worker ran the lane meanwhile (its stream moved on past this run's
  // history): this run is behind, so it is stopped and waited for (its children gone), and
  // the lane starts here again from its stream, as any worker takes up a lane.
  // A run whose job has no holder releases its job's slot (see LaneMirror's vacancy), so
  // the job can come back here at all.
  interface RunningLane {
    readonly result: Promise<LaneJobResult>;
    /** Settled once the run ended here (its children gone) and left `running`. */
    readonly ended: Promise<void>;
    /** Hands the run the job's new lock; false when the run was lost (taken, or behind its stream: it stops). */
    retoken(token: string): Promise<boolean>;
    /** The token the run writes under now. */
    token(): string;
    /** Ends the wait of the processor that holds the lane now (its job lost its holder). */
    release(): void;
  }
  const running = new Map<string, RunningLane>();
  const copied = new CopiedSignal(bull.connection);
  // A lock holder is this worker when it bears BullMQ's id for it (read once jobs run, so the worker exists).
  const lanes: WorkerLaneContext = {
    options,
    root,
    store,
    redis,
    trustFile,
    name,
    ours: (holder) => holder.startsWith(`${worker.id}:`),
    stops: new Set(),
    words: output.words,
    pool,
    qa,
    onCoordinatorWait: (job, lane) => output.event({ type: 'coordinator_wait', job, lane }),
    copied,
  };

  const startLane = (job: LaneJob, token: string, body: ReturnType<typeof checkLaneJob>, dir: string, qaId: string): RunningLane => {
    // The newest token, for a mirror made after the job came back here while the lane was being restored.
    let current = token;
    let mirrorOf: LaneMirror | undefined;
    const result = runOwnedLane(lanes, job, () => current, body, dir, (mirror) => (mirrorOf = mirror), () => running.get(qaId)?.release());
    const entry: RunningLane = {
      result,
      ended: result.then(
        () => undefined,
        () => undefined,
      ).then(() => {
        if (running.get(qaId) === entry) running.delete(qaId);
      }),
      retoken: async (t) => {
        current = t;
        return mirrorOf === undefined ? true : mirrorOf.retoken(t);
      },
      token: () => current,
      release: () => undefined,
    };
    running.set(qaId, entry);
    return entry;
  };

  const runLane = async (job: LaneJob, token: string): Promise<LaneJobResult> => {
    const body = checkLaneJob(openJob(job.data, trust), String(job.id));
    checkCurrent(await readLedger(redis, body.runAs, body.lane, trust), body);
    const qaId = crewQaLaneId(body.runAs, body.lane);
    const dir = join(root, 'queue', qaId);
    for (;;) {
      // A job of a lane this worker ran to its end (its result never reached Redis, or the
      // coordinator lost it) runs the lane as a crew run again does: it starts nothing and
      // answers the same result.
      let lane = running.get(qaId);
      if (lane !== undefined && !(await lane.retoken(token))) {
        await lane.ended;
        continue;
      }
      if (lane === undefined) lane = startLane(job, token, body, dir, qaId);
      const held = lane;
      const released = new Promise<never>((_, reject) => {
        held.release = () => {
          const error = new LanewardError('LANE_TAKEN', `lane ${body.lane}: its job has no holder now (its lock lapsed, or Redis lost it); the lane waits here, starting nothing, for it to come back`);
          RELEASED.add(error);
          reject(error);
        };
      });
      released.catch(() => undefined);
      try {
        return await Promise.race([held.result, released]);
      } catch (error) {
        // Found behind its stream while this job held it: started again here, from the stream.
        if (isBehind(error) && held.token() === token) {
          await held.ended;
          continue;
        }
        throw error;
      }
    }
  };

  const worker = new Worker(
    LANE_QUEUE,
    async (job, token) => {
      try {
        const result = await runLane(job, token ?? '');
        output.event({ type: 'lane_ended', job: String(job.id), lane: result.progress.lane, stage: result.progress.stage, code: result.progress.code });
        return result;
      } catch (error) {
        // The coordinator reads the code from the reason's first word.
        const code = isLanewardError(error) ? error.code : 'INTERNAL';
        // Stopped waiting for its coordinator: the job is left as it is too, for its lock to
        // lapse and a worker to take it up from its stream.
        if (RELEASED.has(error as Error) || isCoordinatorSilent(error)) {
          // Named as BullMQ's own "the processor moved the job itself": its slot is freed
          // and the job is left as it is (no holder's result was written: it has none).
          output.event({ type: 'released', job: String(job.id), code });
          const release = new Error(`${code}: ${oneLine(toError(error).message)}`);
          release.name = 'WaitingError';
          throw release;
        }
        output.event({ type: 'refused', job: String(job.id), code });
        throw new Error(`${code}: ${oneLine(toError(error).message)}`);
      }
    },
    { connection: bull.connection, concurrency: options.concurrency, lockDuration: options.lockMs, stalledInterval: Math.max(1_000, Math.floor(options.lockMs / 2)), maxStalledCount: MAX_STALLS, runRetryDelay: RUN_RETRY_MS, name },
  );
  worker.on('error', (error) => output.event({ type: 'queue_error', message: toError(error).message }));
  output.event({ type: 'ready', queue: target.url, worker: name, concurrency: options.concurrency, root });
  await new Promise<void>((done) => {
    if (options.cancel.aborted) done();
    options.cancel.addEventListener('abort', () => done(), { once: true });
  });
  try {
    await stopWorker({ worker, redis, bull, target, stops: lanes.stops, running });
  } finally {
    copied.close();
    // Every lane ended (or was stopped and waited for): no task is left on the threads.
    await qa.close();
    await pool.close();
  }
  return 0;
}
