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
import { checkQueue, queueTarget } from './connection.ts';
import { checkLaneJob, LANE_QUEUE, writeLaneCrew } from './lane-job.ts';
import { packRunDir, type CarriedFile } from './run-dir-transfer.ts';
import { openJob } from './signed-job.ts';
import { LaneMirror, readLaneStream } from './lane-mirror.ts';
import { restoreLane } from './lane-restore.ts';

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
  const redis = new Redis(target.connection);
  redis.on('error', () => undefined);

  const runLane = async (job: { id?: string; data: unknown; updateProgress(p: object): Promise<void> }, token: string): Promise<LaneJobResult> => {
    const body = checkLaneJob(openJob(job.data, trust));
    const dir = join(root, 'queue', crewQaLaneId(body.runAs, body.lane));
    const file = writeLaneCrew(dir, body, trustFile);
    // A signed body whose settings or runners do not make a crew is the job's fault, not a crew file's.
    try {
      loadCrew(file, dir);
    } catch (error) {
      if (isLanewardError(error) && error.code === 'CREW_INVALID') throw new LanewardError('JOB_INVALID', `the lane job does not make a crew: ${error.message}`);
      throw error;
    }
    // A lane another worker started continues here from its mirrored journal; one this
    // state root holds (the same machine, back) continues from its own.
    if (store.crewLanes.get([body.runAs, body.lane]) === undefined) {
      const records = await readLaneStream(redis, body.runAs, body.lane);
      if (records.length > 0) await restoreLane(store, records, { lane: body.lane, dir, root, trust: trustFile });
    }
    const mirror = new LaneMirror(redis, store, { crew: body.runAs, id: body.lane, lockKey: `bull:${LANE_QUEUE}:${job.id}:lock`, token });
    const stop = new AbortController();
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
        io.out(`CREW_WORKER: job=${oneLine(String(job.id))} status=refused code=${code}`);
        throw new Error(`${code}: ${oneLine(toError(error).message)}`);
      }
    },
    { connection: target.connection, concurrency: options.concurrency, lockDuration: options.lockMs, stalledInterval: Math.max(1_000, Math.floor(options.lockMs / 2)), maxStalledCount: 1, name },
  );
  worker.on('error', (error) => io.err(`CREW_WORKER: queue error: ${oneLine(toError(error).message)}`));
  io.err(`CREW_WORKER: queue=${target.url} worker=${name} concurrency=${options.concurrency} state=${oneLine(root)}`);
  await new Promise<void>((done) => {
    if (options.cancel.aborted) done();
    options.cancel.addEventListener('abort', () => done(), { once: true });
  });
  // Takes nothing new; waits for the running lanes to end.
  await worker.close();
  redis.disconnect();
  return 0;
}
