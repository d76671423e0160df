import { join, resolve } from 'node:path';
import type { LaneProgress } from '../../formats/crew/record.ts';
import { isLanewardError, LanewardError, toError } from '../../formats/codes/error.ts';
import { crewQaLaneId } from '../../formats/crew/qa-id.ts';
import { oneLine } from '../../formats/text/one-line.ts';
import { readPublicKey } from '../actions/keys.ts';
import { crewRun, type CrewOutput } from '../crew/crew-run.ts';
import { loadCrew } from '../crew/load-crew.ts';
import { configuredStateRoot, defaultStateRoot } from '../plan/index.ts';
import { openStore } from '../store/store.ts';
import { bullConnection, checkQueue, queueTarget, queueUnavailable } from './connection.ts';
import { checkLaneJob, LANE_QUEUE, writeLaneCrew } from './lane-job.ts';
import { checkCurrent, readLedger } from './lane-ledger.ts';
import { packRunDir, type CarriedFile } from './run-dir-transfer.ts';
import { openJob } from './signed-job.ts';
import { isBehind, LaneMirror, readLaneStream } from './lane-mirror.ts';
import { readPosition, writePosition } from './lane-position.ts';
import { releaseOwnDispatches, restoreLane } from './lane-restore.ts';

export interface CrewWorkerOptions {
  readonly queue: string;
  readonly trust: string;
  readonly state: string | undefined;
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** Lanes at once. */
  readonly concurrency: number;
  /** Supervision threads of each lane's dispatcher. */
  readonly threads: number;
  readonly maxArtifactBytes: number;
  /** How long a lane's lock lasts without renewal: a worker silent this long is taken for lost. */
  readonly lockMs: number;
  /** Stops taking lanes; the running ones finish. */
  readonly cancel: AbortSignal;
}

/** What a lane job returns to its coordinator. */
export interface LaneJobResult {
  readonly progress: LaneProgress;
  readonly files: readonly CarriedFile[] | null;
  /** Which worker ran it. */
  readonly worker: string;
}

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
/** How long a stopping worker waits for a Redis that does not answer. */
const CLOSE_GRACE_MS = 5_000;
/** How often a stopping worker asks Redis whether it is there. */
const PROBE_MS = 500;
/** The longest a worker that gave Redis up waits for its BullMQ clients to close. */
const CLOSE_MS = 2_000;

/** The errors a processor ends with when it lets its job go while its lane waits for the job to come back. */
const RELEASED = new WeakSet<Error>();

const silent: CrewOutput = { out: () => undefined, err: () => undefined, errRaw: () => undefined, stderrIsTTY: false };

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
export async function crewWorker(options: CrewWorkerOptions, io: { out(line: string): void; err(line: string): void }): Promise<number> {
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
  /** Each running lane's stop: a worker stopping while Redis does not answer stops them. */
  const stops = new Set<AbortController>();

  const runLane = async (job: { id?: string; data: unknown; updateProgress(p: object): Promise<void> }, token: string): Promise<LaneJobResult> => {
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

  const startLane = (job: { id?: string; data: unknown; updateProgress(p: object): Promise<void> }, token: string, body: ReturnType<typeof checkLaneJob>, dir: string, qaId: string): RunningLane => {
    // The newest token, for a mirror made after the job came back here while the lane was being restored.
    let current = token;
    let mirrorOf: LaneMirror | undefined;
    const result = runOwned(job, () => current, body, dir, (mirror) => (mirrorOf = mirror), () => running.get(qaId)?.release());
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

  const runOwned = async (job: { id?: string; data: unknown; updateProgress(p: object): Promise<void> }, token: () => string, body: ReturnType<typeof checkLaneJob>, dir: string, onMirror: (mirror: LaneMirror) => void, onVacant: () => void): Promise<LaneJobResult> => {
    const file = writeLaneCrew(dir, body, trustFile);
    // A signed body whose settings or runners do not make a crew is the job's fault, not a crew file's.
    try {
      loadCrew(file, dir);
    } catch (error) {
      if (isLanewardError(error) && error.code === 'CREW_INVALID') throw new LanewardError('JOB_INVALID', `the lane job does not make a crew: ${error.message}`);
      throw error;
    }
    // A lane another worker started continues here from its mirrored journal; one this
    // state root holds (the same machine, back) continues from its own when its stream ends
    // where this state root last left it (what is here is the stream and more), and from
    // the stream otherwise (another worker ran it since: what is here is behind).
    const { records, top } = await readLaneStream(redis, body.runAs, body.lane);
    const here = store.crewLanes.get([body.runAs, body.lane]) !== undefined;
    if (records.length > 0 && (!here || readPosition(dir) !== top)) await restoreLane(store, records, { lane: body.lane, dir, root, trust: trustFile, replace: here });
    else if (here) await releaseOwnDispatches(store, body.runAs, body.lane);
    writePosition(dir, top);
    // A job without a holder is waited for up to two lock periods: time for the stalled
    // check to put it back and a worker to take it.
    const stop = new AbortController();
    const mirror = new LaneMirror(redis, store, {
      crew: body.runAs,
      id: body.lane,
      lockKey: `bull:${LANE_QUEUE}:${job.id}:lock`,
      token: token(),
      after: top,
      vacantMs: 2 * options.lockMs,
      ours: (holder) => holder.startsWith(`${worker.id}:`),
      onVacant,
      onAppended: (at) => writePosition(dir, at),
      onBehind: () => stop.abort('SIGTERM'),
    });
    onMirror(mirror);
    stops.add(stop);
    let taken: unknown;
    const flush = async () => {
      try {
        await mirror.flush();
      } catch (error) {
        // Taken over, or Redis unreachable: nothing more starts on this lane here.
        taken ??= error;
        stop.abort('SIGTERM');
        throw error;
      }
    };
    const result = await crewRun(
      {
        file,
        cwd: dir,
        env: options.env,
        state: root,
        threads: options.threads,
        deadlineMs: undefined,
        serve: undefined,
        report: undefined,
        json: true,
        retryFailed: body.retry === true,
        cancel: stop.signal,
        onLane: (progress) => {
          void flush().then(() => job.updateProgress(progress), () => undefined).catch(() => undefined);
        },
        beforeChild: () => flush(),
      },
      silent,
    );
    stops.delete(stop);
    if (taken !== undefined) throw taken;
    await flush();
    const progress = result.lanes.find((lane) => lane.lane === body.lane);
    if (progress === undefined) throw new LanewardError('INTERNAL', `lane ${body.lane} ended with no progress`);
    try {
      return { progress, files: packRunDir(join(dir, 'runs', body.lane), options.maxArtifactBytes), worker: name };
    } catch (error) {
      if (!isLanewardError(error) || error.code !== 'RUN_DIR_TOO_LARGE') throw error;
      return { progress: { ...progress, stage: 'failed', code: error.code, detail: error.message }, files: null, worker: name };
    }
  };

  const worker = new Worker(
    LANE_QUEUE,
    async (job, token) => {
      try {
        const result = await runLane(job, token ?? '');
        io.out(`CREW_WORKER: job=${oneLine(String(job.id))} lane=${result.progress.lane} status=${result.progress.stage}${result.progress.code === null ? '' : ` code=${result.progress.code}`}`);
        return result;
      } catch (error) {
        // The coordinator reads the code from the reason's first word.
        const code = isLanewardError(error) ? error.code : 'INTERNAL';
        if (RELEASED.has(error as Error)) {
          // Named as BullMQ's own "the processor moved the job itself": its slot is freed
          // and the job is left as it is (no holder's result was written: it has none).
          io.out(`CREW_WORKER: job=${oneLine(String(job.id))} status=released code=${code}`);
          const release = new Error(`${code}: ${oneLine(toError(error).message)}`);
          release.name = 'WaitingError';
          throw release;
        }
        io.out(`CREW_WORKER: job=${oneLine(String(job.id))} status=refused code=${code}`);
        throw new Error(`${code}: ${oneLine(toError(error).message)}`);
      }
    },
    { connection: bull.connection, concurrency: options.concurrency, lockDuration: options.lockMs, stalledInterval: Math.max(1_000, Math.floor(options.lockMs / 2)), maxStalledCount: MAX_STALLS, runRetryDelay: RUN_RETRY_MS, name },
  );
  worker.on('error', (error) => io.err(`CREW_WORKER: queue error: ${oneLine(toError(error).message)}`));
  io.err(`CREW_WORKER: queue=${target.url} worker=${name} concurrency=${options.concurrency} state=${oneLine(root)}`);
  await new Promise<void>((done) => {
    if (options.cancel.aborted) done();
    options.cancel.addEventListener('abort', () => done(), { once: true });
  });
  // Takes nothing new; waits for the running lanes to end. BullMQ's close also waits for
  // Redis (to take the lanes' results), and a lane waits for it before each child starts
  // (its mirror): while Redis does not answer, neither ever ends. So a stopping worker
  // watches Redis: silent for CLOSE_GRACE_MS, the lanes are stopped as a cancelled crew
  // stops them and the worker ends QUEUE_UNAVAILABLE (their jobs are taken up again, from
  // their mirrors, once their locks lapse).
  let silentRedis: LanewardError | undefined;
  const closed = worker.close();
  let closing = true;
  void closed.finally(() => (closing = false));
  const gone = (async () => {
    // Commands fail at once while it is down (nothing parks); it keeps reconnecting.
    const probe = new Redis({ ...target.connection, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => PROBE_MS });
    probe.on('error', () => undefined);
    let answered = performance.now();
    let tick = answered;
    try {
      while (closing) {
        await new Promise((resolve) => setTimeout(resolve, PROBE_MS));
        // Only time this process ran counts against Redis (see redis-watch.ts).
        if (performance.now() - tick > 3 * PROBE_MS) answered = performance.now();
        try {
          // A Redis that takes the ping and never answers is as silent as one that is gone.
          await Promise.race([probe.ping(), new Promise((_, reject) => setTimeout(() => reject(new Error('no answer to a ping')), PROBE_MS))]);
          answered = performance.now();
        } catch (error) {
          if (performance.now() - answered > CLOSE_GRACE_MS) {
            silentRedis = queueUnavailable(target, error);
            return;
          }
        }
        tick = performance.now();
      }
    } finally {
      probe.disconnect();
    }
  })();
  await Promise.race([closed, gone]);
  if (silentRedis !== undefined) {
    bull.giveUp();
    // Its parked commands fail once it next tries to reconnect and is told not to (a
    // disconnect while it waits to reconnect would leave them parked for ever).
    await new Promise<void>((resolve) => {
      if (redis.status === 'end') return resolve();
      const timer = setTimeout(resolve, CLOSE_MS);
      redis.once('end', () => (clearTimeout(timer), resolve()));
    });
    redis.disconnect();
    for (const stop of stops) stop.abort('SIGTERM');
    while (running.size > 0) await Promise.allSettled([...running.values()].map((r) => r.result));
    await Promise.race([worker.close(true).catch(() => undefined), new Promise((resolve) => setTimeout(resolve, CLOSE_MS))]);
    void worker.disconnect().catch(() => undefined);
    throw silentRedis;
  }
  redis.disconnect();
  return 0;
}
