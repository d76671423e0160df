import { join, resolve } from 'node:path';
import type { Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { LanewardError, toError } from '../../formats/codes/error.ts';
import { isTerminalStage, type LaneProgress } from '../../formats/crew/record.ts';
import type { LaneSpec } from '../../formats/crew/file.ts';
import { readPrivateKey } from '../actions/keys.ts';
import { readLaneStory } from '../console/lane-story.ts';
import { reviewLedger } from '../console/review-spend.ts';
import { shellWord } from '../crew/retry-advice.ts';
import { verifyCrewActions } from '../crew/crew-actions.ts';
import { runCrewSession, type CrewOutput, type CrewRunOptions, type CrewRunResult, type LaneRunner } from '../crew/crew-session.ts';
import type { CrewStop } from '../crew/crew-stop.ts';
import type { LoadedCrew } from '../crew/load-crew.ts';
import { laneCost } from '../crew/lane-cost.ts';
import type { Store } from '../store/store.ts';
import type { DispatchStats } from '../dispatch/dispatcher.ts';
import { validateRun } from '../../workers/validate/validate-run.ts';
import { bullConnection, checkQueue, queueTarget, whileOutOfMemory, type BullConnection, type QueueTarget } from './connection.ts';
import { watchRedis, type RedisWatch } from './redis-watch.ts';
import { laneJobBody, laneJobId, LANE_QUEUE, runAsName } from './lane-job.ts';
import { laneStreamKey } from './lane-mirror.ts';
import { laneProgressFrom } from './lane-result.ts';
import { jobOutcomes, type JobOutcome } from './job-outcomes.ts';
import type { LaneJobResult } from './crew-worker.ts';
import { carriedLane } from './carried-lane.ts';
import { watchLostJobs } from './lost-jobs.ts';
import { signJob } from './signed-job.ts';
import { newNonce, writeLedger } from './lane-ledger.ts';
import { MirrorCopy } from './mirror-copy.ts';
import { crewQaLaneId } from '../../formats/crew/qa-id.ts';

/** The longest the coordinator waits for its BullMQ clients to close. */
const CLOSE_MS = 2_000;
/** A coordinator dispatches nothing itself: its lanes' children run on the workers. */
const NO_DISPATCH: DispatchStats = { running: 0, queued: 0, started: 0, finished: 0, marks: 0, renewalLatencyMs: [] };

export interface QueuedCrewOptions extends CrewRunOptions {
  readonly queue: string;
  /** The Ed25519 private key the lanes' jobs are signed with (the workers trust its public half). */
  readonly key: string;
  /** A Redis unreachable for this long ends the coordinator QUEUE_UNAVAILABLE. */
  readonly queueTimeoutMs?: number;
  /** The most bytes a lane's run directory may carry back. */
  readonly maxArtifactBytes?: number;
}

/** The command that runs a queued crew's failed lanes again, runnable as printed. */
function queuedRetry(file: string, target: QueueTarget, key: string, root: string): string {
  return `laneward crew run ${shellWord(file)} --queue ${shellWord(target.url)} --key ${shellWord(key)} --retry-failed --state ${shellWord(root)}`;
}

/**
 * `crew run --queue`: checks the crew as a local run does, enqueues one signed job per lane
 * (a lane already queued, running or done is not added twice), and follows them through
 * BullMQ's events: lanes' progress feeds the same views and the coordinator's store as it
 * changes, each lane's exported run directory is written under the crew's out (temp +
 * rename) and validated again here, and the same CREW_LANE and CREW_SUMMARY lines are
 * printed (the crew session's). Redis unreachable, at the start or for longer than the
 * timeout mid-crew, is QUEUE_UNAVAILABLE; the lanes keep running on their workers, and the
 * same command later picks up their results.
 */
export async function crewRunQueued(options: QueuedCrewOptions, io: CrewOutput): Promise<CrewRunResult> {
  return runCrewSession(options, io, (loaded, root) => {
    if (loaded.workspace !== null) throw new LanewardError('USAGE', `--queue: crew ${loaded.crew.crew} names a workspace; worktrees of a repository on another machine are not supported yet: run it without --queue`);
    verifyCrewActions(loaded);
    return { loaded, runner: queuedLanes(loaded, root, options) };
  });
}

/** Redis's clients of a coordinator, made once its claims are held. */
interface Clients {
  readonly redis: Redis;
  readonly queue: Queue;
  readonly events: QueueEvents;
}

/** The lanes of a crew run on queue workers, followed from here. */
function queuedLanes(loaded: LoadedCrew, root: string, options: QueuedCrewOptions): LaneRunner {
  const crew = loaded.crew.crew;
  const key = readPrivateKey(resolve(options.cwd, options.key));
  const target = queueTarget(options.queue);
  const runAs = runAsName(crew, loaded.file, root);
  const bodyOf = new Map(loaded.lanes.map((lane) => [lane.id, laneJobBody(loaded, lane, runAs, options.retryFailed === true)]));
  const retry = queuedRetry(loaded.file, target, options.key, root);
  const closers: (() => void)[] = [];
  let lost: LanewardError | undefined;
  let bull: BullConnection | undefined;
  let watch: RedisWatch | undefined;
  let clients: Clients | undefined;
  let stopped: Promise<void> = new Promise(() => undefined);
  let ledger: ReturnType<typeof reviewLedger> | undefined;
  /** `promise`, or a rejection once the wait was stopped (parked BullMQ calls never settle while Redis is gone). */
  const guard = <T>(promise: Promise<T>): Promise<T> => Promise.race([promise, stopped.then((): never => { throw lost ?? new LanewardError('CANCELLED', 'the crew was stopped'); })]);
  // Set by start: the lanes to follow, and their outcomes awaited from before their jobs can finish.
  let following: { held: Map<string, LaneProgress>; queued: LaneSpec[]; outcomeOf: Map<string, Promise<JobOutcome>>; enqueue: (lane: string) => Promise<number> } | undefined;
  const lanes = new Map<string, LaneProgress>();
  const nonceOf = new Map<string, string>();
  return {
    retryCommand: retry,
    reportWhere: { queue: target.url },
    async connect(stop: CrewStop) {
      await checkQueue(target);
      // Given up on once the crew stops for a lost Redis: a client that keeps reconnecting keeps the process alive.
      const connection = (bull = bullConnection(target));
      // BullMQ's connections reconnect forever and park their commands: the watch notices a
      // Redis gone for the timeout, and holds the event loop meanwhile (else it empties, exit 0).
      watch = await watchRedis({ ...target, connection: { ...target.connection, connectTimeout: options.queueTimeoutMs ?? 10_000 } }, (error) => {
        lost ??= error;
        connection.giveUp();
        stop.abort();
      });
      const signal = stop.signal;
      stopped = new Promise<void>((done) => (signal.aborted ? done() : signal.addEventListener('abort', () => done(), { once: true })));
    },
    async start(session) {
      const { store } = session;
      ledger = reviewLedger(store);
      // Events are read from the newest one there is before any job is queued, not from
      // whenever the first read starts (BullMQ's default): a lane ended in between would be
      // waited for forever (as artifact validate --queue reads them).
      const lastEventId = await watch!.newestEntry(`bull:${LANE_QUEUE}:events`);
      const { Queue, QueueEvents } = await import('bullmq');
      const { default: Redis } = await import('ioredis');
      const redis = new Redis(target.connection);
      redis.on('error', () => undefined);
      const queue = new Queue(LANE_QUEUE, { connection: bull!.connection });
      const events = new QueueEvents(LANE_QUEUE, { connection: bull!.connection, lastEventId });
      queue.on('error', () => undefined);
      events.on('error', () => undefined);
      clients = { redis, queue, events };
      await guard(events.waitUntilReady());
      // The lanes' mirrors, copied into this coordinator's store as they grow: what a Redis
      // that lost its data no longer holds is put back from here before a lane is queued again.
      const copiedOf = new Map(loaded.lanes.map((lane) => [lane.id, { qa: crewQaLaneId(runAs, lane.id), stream: laneStreamKey(runAs, lane.id) }]));
      const copy = new MirrorCopy(store, [...copiedOf.values()]);
      closers.push(() => copy.close());
      await guard(copy.catchUp(redis));
      copy.follow(bull!.connection);
      const held = heldLanes(store, loaded, options.retryFailed === true);
      // A failed lane runs again only when asked: its job is removed and added anew.
      if (options.retryFailed === true) {
        for (const lane of loaded.lanes) {
          if (held.has(lane.id)) continue;
          const job = await guard(queue.getJob(laneJobId(runAs, lane.id)));
          if (job !== undefined && ((await guard(job.isFailed())) || (job.returnvalue as LaneJobResult | null)?.progress?.stage === 'failed')) await guard(job.remove());
        }
      }
      const queued = loaded.lanes.filter((lane) => !held.has(lane.id));
      // Every lane's outcome is awaited from before its job can finish, on one pair of listeners.
      const outcomes = jobOutcomes(events);
      const arrived = new Set<string>();
      const outcomeOf = new Map(queued.map((lane) => [lane.id, outcomes.expect(laneJobId(runAs, lane.id)).finally(() => arrived.add(lane.id))]));
      const signal = session.stop.signal;
      /** Queues the lane's job anew: its mirror put back first, then its ledger entry, then the job. */
      const enqueue = async (lane: string): Promise<number> => {
        // A Redis at its maxmemory refuses these writes: waited out, the lane is never failed by it.
        const put = await guard(whileOutOfMemory(() => copy.putBack(redis, copiedOf.get(lane)!), signal));
        const nonce = newNonce();
        nonceOf.set(lane, nonce);
        await guard(whileOutOfMemory(() => writeLedger(redis, { runAs, lane, nonce, finished: false }, key), signal));
        await guard(whileOutOfMemory(() => queue.add('lane', signJob({ ...bodyOf.get(lane)!, nonce }, key), { jobId: laneJobId(runAs, lane), attempts: 1, removeOnComplete: false, removeOnFail: false }), signal));
        return put;
      };
      // A job an earlier run of this crew left finished reports no event now: read from Redis.
      // One still queued or running is followed; one Redis does not hold is queued.
      for (const lane of queued) {
        const id = laneJobId(runAs, lane.id);
        const state = await guard(queue.getJobState(id));
        if (state === 'completed' || state === 'failed') {
          const stored = await guard(queue.getJob(id));
          outcomes.settle(id, state === 'completed' ? { ok: true, value: stored?.returnvalue } : { ok: false, reason: stored?.failedReason ?? '' });
        } else if (state === 'unknown') await enqueue(lane.id);
      }
      closers.push(watchLostJobs({ redis, runAs, open: () => queued.filter((lane) => !arrived.has(lane.id)), signal, enqueue, everyMs: Math.max(100, Math.min(1_000, Math.floor((options.queueTimeoutMs ?? 10_000) / 4))), io: session.io }));
      following = { held, queued, outcomeOf, enqueue };
      return {
        stats: () => NO_DISPATCH,
        // What a lane's page can show here: its progress and the run directory carried back (its journal stays on its worker).
        laneStory: (id) => readLaneStory(store, { crew, lane: id, retryCommand: retry, runDir: join(loaded.out, id) }),
      };
    },
    async runLanes(session) {
      const { held, queued, outcomeOf } = following!;
      const { store, stop } = session;
      const { events, redis } = clients!;
      const idOf = new Map(loaded.lanes.map((lane) => [laneJobId(runAs, lane.id), lane.id]));
      events.on('progress', ({ jobId, data }) => {
        const lane = idOf.get(jobId);
        const progress = lane === undefined || lanes.has(lane) ? null : laneProgressFrom(data, crew, lane, join(loaded.out, lane));
        if (progress === null) return;
        session.laneChanged(progress);
        // Recorded as it changes, as a local crew's lanes are: crew status and the console of
        // another process read the lanes working. Its end is recorded once its result is taken.
        if (!isTerminalStage(progress.stage)) void store.crewLanes.put([crew, progress.lane], progress).catch(() => undefined);
      });
      const ended = (progress: LaneProgress) => {
        lanes.set(progress.lane, progress);
        session.laneChanged(progress);
        session.laneEnded(progress);
      };
      for (const progress of held.values()) ended(progress);
      const settle = async (lane: string, result: LaneJobResult | null, failure: string | null) => {
        if (lanes.has(lane)) return;
        const progress = carriedLane({ crew, lane, dir: join(loaded.out, lane), result, failure, ...(options.maxArtifactBytes === undefined ? {} : { maxArtifactBytes: options.maxArtifactBytes }) });
        lanes.set(lane, progress);
        await store.crewLanes.put([crew, lane], progress);
        // Its result is taken: no job of the lane runs any more, a copy of one included.
        await whileOutOfMemory(() => writeLedger(redis, { runAs, lane, nonce: nonceOf.get(lane) ?? '', finished: true }, key), stop.signal).catch(() => undefined);
        // A complete lane needs its mirror no more (a failed one keeps it: a retry continues
        // it); this coordinator's copy stays.
        if (progress.stage === 'complete') await redis.del(laneStreamKey(runAs, lane)).catch(() => undefined);
        ended(progress);
      };
      await Promise.race([
        Promise.all(
          queued.map(async (lane) => {
            let result: LaneJobResult | null = null;
            let failure: string | null = null;
            try {
              const outcome = await guard(outcomeOf.get(lane.id)!);
              if (outcome.ok) result = outcome.value as LaneJobResult;
              else failure = outcome.reason;
            } catch (error) {
              failure = toError(error).message;
            }
            // Stopped (a cancel, the deadline, Redis lost): the lane is not settled here; it runs on.
            if (!stop.signal.aborted) await settle(lane.id, result, failure);
          }),
        ),
        stopped,
      ]);
      if (lost !== undefined) throw lost;
      return [...lanes.values()];
    },
    // Its review ledger is on the worker's store: here the cost is what the mirrored records hold.
    laneFacts: (progress) => ({ cost: laneCost(progress, ledger!(progress)) }),
    attempts: (ended) => ended.reduce((sum, lane) => sum + lane.attempts, 0),
    stats: () => NO_DISPATCH,
    providers: () => [],
    async close() {
      for (const close of closers) close();
      watch?.close();
      if (clients === undefined) return;
      clients.redis.disconnect();
      // Closing a client whose Redis is gone may never settle, and holds nothing that keeps the
      // process alive: the timer does, for as long as a close may take.
      await Promise.race([Promise.allSettled([clients.events.close(), clients.queue.close()]), new Promise((resolve) => setTimeout(resolve, CLOSE_MS))]);
    },
  };
}

/**
 * Lanes this coordinator already took a result of, not queued again (a job may be gone
 * from Redis, removed or cleaned): a complete one whose run directory is here and valid,
 * or a failed one when no retry is asked for.
 */
function heldLanes(store: Store, loaded: LoadedCrew, retryFailed: boolean): Map<string, LaneProgress> {
  const held = new Map<string, LaneProgress>();
  for (const lane of loaded.lanes) {
    const dir = join(loaded.out, lane.id);
    const progress = store.crewLanes.get([loaded.crew.crew, lane.id]);
    if (progress === undefined || progress.runDir !== dir) continue;
    if (progress.stage === 'failed' && !retryFailed) held.set(lane.id, progress);
    else if (progress.stage === 'complete') {
      try {
        if (validateRun(dir).valid) held.set(lane.id, progress);
      } catch {
        // Not a run directory here: the lane is asked of the queue again.
      }
    }
  }
  return held;
}
