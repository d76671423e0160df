import { join } from 'node:path';
import type { Redis } from 'ioredis';
import type { SupervisePool } from '../dispatch/dispatcher.ts';
import type { QaThread } from '../crew/qa-client.ts';
import { isLanewardError, LanewardError } from '../../formats/codes/error.ts';
import type { CrewOutput, CrewWords } from '../crew/crew-output.ts';
import { crewRun } from '../crew/crew-run.ts';
import { loadCrew } from '../crew/load-crew.ts';
import type { Store } from '../store/store.ts';
import { LANE_QUEUE, writeLaneCrew, type LaneJobBody } from './lane-job.ts';
import { isCoordinatorSilent } from './coordinator-wait.ts';
import { LaneMirror } from './lane-mirror.ts';
import { readLaneStream } from './lane-stream.ts';
import { askCoordinator } from './stream-ask.ts';
import type { CopiedSignal } from './copied-signal.ts';
import { crewQaLaneId } from '../../formats/crew/qa-id.ts';
import { readPosition, writePosition } from './lane-position.ts';
import { releaseOwnDispatches, restoreLane } from './lane-restore.ts';
import { packRunDir } from './run-dir-transfer.ts';
import type { CrewWorkerOptions, LaneJobResult } from './worker-types.ts';

/** What a worker's lanes share: its options, state root, store and Redis, and who it is. */
export interface WorkerLaneContext {
  readonly options: CrewWorkerOptions;
  readonly root: string;
  readonly store: Store;
  readonly redis: Redis;
  readonly trustFile: string;
  /** `pid@host`, named in each lane's result. */
  readonly name: string;
  /** Whether a lock holder is this worker (BullMQ's id, known once the worker exists). */
  readonly ours: (holder: string) => boolean;
  /** Each running lane's stop: a worker stopping while Redis does not answer stops them. */
  readonly stops: Set<AbortController>;
  /** The words a lane's progress keeps (a stopped review's detail), made at the edge. */
  readonly words: CrewWords;
  /** The worker's supervise threads: each lane's dispatcher runs on them, none starts its own. */
  readonly pool: SupervisePool;
  /** The worker's QA thread, of its state root: each lane's crew is a tenant of it. */
  readonly qa: QaThread;
  /** The coordinators' word that they copied more or answered: what a wait for one listens to. */
  readonly copied: CopiedSignal;
  /** A lane has waited a while for its coordinator (to copy its records, or to answer its ask): said once per wait. */
  readonly onCoordinatorWait: (job: string, lane: string) => void;
}

/** A lane job as the processor is handed it. */
export interface LaneJob {
  id?: string;
  data: unknown;
  updateProgress(p: object): Promise<void>;
}

/**
 * One lane job this worker holds, run as a one-lane crew on its own state root: the lane
 * restored from its mirror where another worker ran it (or ran it since this one did),
 * every record mirrored under the job's lock before a child starts, and its run directory
 * packed as the job's result.
 */
export async function runOwnedLane(ctx: WorkerLaneContext, job: LaneJob, token: () => string, body: LaneJobBody, dir: string, onMirror: (mirror: LaneMirror) => void, onVacant: () => void): Promise<LaneJobResult> {
  const { options, root, store, redis } = ctx;
  const file = writeLaneCrew(dir, body, ctx.trustFile);
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
  // Made whole by its coordinator first: a Redis back from an older snapshot holds less of
  // the stream than the coordinator copied.
  await askCoordinator(redis, { runAs: body.runAs, lane: body.lane, qa: crewQaLaneId(body.runAs, body.lane), stopping: options.cancel, onWaiting: () => ctx.onCoordinatorWait(String(job.id), body.lane), next: (ms) => ctx.copied.next(body.runAs, ms) });
  const { records, top } = await readLaneStream(redis, body.runAs, body.lane);
  const here = store.crewLanes.get([body.runAs, body.lane]) !== undefined;
  if (records.length > 0 && (!here || readPosition(dir) !== top)) await restoreLane(store, records, { lane: body.lane, dir, root, trust: ctx.trustFile, replace: here });
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
    ours: ctx.ours,
    onVacant,
    onAppended: (at) => writePosition(dir, at),
    onBehind: () => stop.abort('SIGTERM'),
    stopping: options.cancel,
    onCoordinatorWait: () => ctx.onCoordinatorWait(String(job.id), body.lane),
    nextCopied: (ms) => ctx.copied.next(body.runAs, ms),
  });
  onMirror(mirror);
  ctx.stops.add(stop);
  let taken: unknown;
  let gaveUp: unknown;
  // Durable before a child starts and before the result goes back: the coordinator's copy
  // then holds every dispatch that ran, and every outcome its result reports.
  const flush = async (durable = false) => {
    try {
      await mirror.flush(durable);
    } catch (error) {
      // The worker stops and the coordinator never copied: the child waiting for it sees the
      // lane's stop and never starts (a cancel before its start, which the stream then
      // gets), the lane winds down as a cancelled crew's does, and its job is let go.
      if (isCoordinatorSilent(error)) {
        gaveUp ??= error;
        stop.abort('SIGTERM');
        return;
      }
      // Taken over, or Redis unreachable: nothing more starts on this lane here.
      taken ??= error;
      stop.abort('SIGTERM');
      throw error;
    }
  };
  // The lane's own lines go nowhere: the worker prints one line per job.
  const silent: CrewOutput = { event: () => undefined, words: ctx.words, errRaw: () => undefined, stderrIsTTY: false };
  const result = await crewRun(
    {
      file,
      cwd: dir,
      env: options.env,
      state: root,
      threads: options.threads,
      pool: ctx.pool,
      qa: ctx.qa,
      deadlineMs: undefined,
      serve: undefined,
      report: undefined,
      retryFailed: body.retry === true,
      cancel: stop.signal,
      onLane: (progress) => {
        void flush().then(() => job.updateProgress(progress), () => undefined).catch(() => undefined);
      },
      beforeChild: () => flush(true),
    },
    silent,
  );
  ctx.stops.delete(stop);
  if (taken !== undefined) throw taken;
  await flush(gaveUp === undefined);
  if (gaveUp !== undefined) throw gaveUp;
  const progress = result.lanes.find((lane) => lane.lane === body.lane);
  if (progress === undefined) throw new LanewardError('INTERNAL', `lane ${body.lane} ended with no progress`);
  try {
    return { progress, files: packRunDir(join(dir, 'runs', body.lane), options.maxArtifactBytes), worker: ctx.name };
  } catch (error) {
    if (!isLanewardError(error) || error.code !== 'RUN_DIR_TOO_LARGE') throw error;
    return { progress: { ...progress, stage: 'failed', code: error.code, detail: error.message }, files: null, worker: ctx.name };
  }
}
