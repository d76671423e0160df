import { join, resolve } from 'node:path';
import type { Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { LanewardError, toError } from '../../formats/codes/error.ts';
import { isTerminalStage, type LaneProgress } from '../../formats/crew/record.ts';
import type { LaneSpec } from '../../formats/crew/file.ts';
import { readPrivateKey } from '../actions/keys.ts';
import { readLaneStory } from '../console/lane-story.ts';
import { reviewLedger } from '../console/review-spend.ts';
import { commandLine } from '../../formats/text/command-line.ts';
import type { CrewRunOptions, CrewSession, LaneFeed, LaneRunner } from '../crew/crew-session.ts';
import type { CrewStop } from '../crew/crew-stop.ts';
import type { LoadedCrew } from '../crew/load-crew.ts';
import { laneCost } from '../crew/lane-cost.ts';
import type { LaneFacts } from '../crew/lane-line.ts';
import type { Store } from '../store/store.ts';
import type { DispatchStats } from '../dispatch/dispatcher.ts';
import { bullConnection, checkQueue, queueTarget, whileOutOfMemory, type BullConnection, type QueueTarget } from './connection.ts';
import { watchRedis, type RedisWatch } from './redis-watch.ts';
import { laneJobBody, laneJobId, LANE_QUEUE, runAsName } from './lane-job.ts';
import { asksKey, copiedKey, laneStreamKey } from './lane-stream.ts';
import { laneProgressFrom } from './lane-result.ts';
import { jobOutcomes, type JobOutcome } from './job-outcomes.ts';
import type { LaneJobResult } from './crew-worker.ts';
import { carriedLane, heldLanes } from './carried-lane.ts';
import { watchLostJobs } from './lost-jobs.ts';
import { signJob } from './signed-job.ts';
import { newNonce, writeLedger } from './lane-ledger.ts';
import { MirrorCopy } from './mirror-copy.ts';
import { copiedChannel } from './copied-signal.ts';
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

/** The command that runs a queued crew's failed lanes again, as argv. */
function queuedRetry(file: string, target: QueueTarget, key: string, root: string): readonly string[] {
  return ['laneward', 'crew', 'run', file, '--queue', target.url, '--key', key, '--retry-failed', '--state', root];
}

/** Redis's clients of a coordinator, made once its claims are held. */
interface Clients {
  readonly redis: Redis;
  readonly queue: Queue;
  readonly events: QueueEvents;
  /** The lanes' mirrors, copied into this coordinator's store as they grow. */
  readonly copy: MirrorCopy;
}

/** What a lane's mirror is in Redis: its QA lane and its stream. */
type Mirrored = { readonly qa: string; readonly stream: string };

/**
 * The lanes of a crew run on queue workers, followed from here: connect (Redis checked
 * and watched), start (the clients, the mirrors' copy, each lane's job queued or found),
 * runLanes (each job's outcome taken as the lane's end), close.
 */
export class QueuedLanes implements LaneRunner {
  readonly retryArgv: readonly string[];
  readonly reportWhere: Readonly<Record<string, unknown>>;
  private readonly crew: string;
  private readonly key: ReturnType<typeof readPrivateKey>;
  private readonly target: QueueTarget;
  private readonly runAs: string;
  private readonly bodyOf: Map<string, ReturnType<typeof laneJobBody>>;
  private readonly mirrorOf: Map<string, Mirrored>;
  private readonly closers: (() => void)[] = [];
  private readonly lanes = new Map<string, LaneProgress>();
  private readonly nonceOf = new Map<string, string>();
  private lost: LanewardError | undefined;
  private bull: BullConnection | undefined;
  private watch: RedisWatch | undefined;
  private clients: Clients | undefined;
  private stopped: Promise<void> = new Promise(() => undefined);
  private ledger: ReturnType<typeof reviewLedger> | undefined;
  /** Set by start: the lanes held here, those followed, and their outcomes, awaited from before their jobs can finish. */
  private following: { held: Map<string, LaneProgress>; queued: readonly LaneSpec[]; outcomeOf: Map<string, Promise<JobOutcome>> } | undefined;

  constructor(
    private readonly loaded: LoadedCrew,
    root: string,
    private readonly options: QueuedCrewOptions,
  ) {
    this.crew = loaded.crew.crew;
    this.key = readPrivateKey(resolve(options.cwd, options.key));
    this.target = queueTarget(options.queue);
    this.runAs = runAsName(this.crew, loaded.file, root);
    this.bodyOf = new Map(loaded.lanes.map((lane) => [lane.id, laneJobBody(loaded, lane, this.runAs, options.retryFailed === true)]));
    this.mirrorOf = new Map(loaded.lanes.map((lane) => [lane.id, { qa: crewQaLaneId(this.runAs, lane.id), stream: laneStreamKey(this.runAs, lane.id) }]));
    this.retryArgv = queuedRetry(loaded.file, this.target, options.key, root);
    this.reportWhere = { queue: this.target.url };
  }

  /** `promise`, or a rejection once the wait was stopped (parked BullMQ calls never settle while Redis is gone). */
  private guard<T>(promise: Promise<T>): Promise<T> {
    return Promise.race([promise, this.stopped.then((): never => { throw this.lost ?? new LanewardError('CANCELLED', 'the crew was stopped'); })]);
  }

  async connect(stop: CrewStop): Promise<void> {
    await checkQueue(this.target);
    // Given up on once the crew stops for a lost Redis: a client that keeps reconnecting keeps the process alive.
    const bull = (this.bull = bullConnection(this.target));
    // BullMQ's connections reconnect forever and park their commands: the watch notices a
    // Redis gone for the timeout, and holds the event loop meanwhile (else it empties, exit 0).
    this.watch = await watchRedis({ ...this.target, connection: { ...this.target.connection, connectTimeout: this.options.queueTimeoutMs ?? 10_000 } }, (error) => {
      this.lost ??= error;
      bull.giveUp();
      stop.abort();
    });
    const signal = stop.signal;
    this.stopped = new Promise<void>((done) => (signal.aborted ? done() : signal.addEventListener('abort', () => done(), { once: true })));
  }

  async start(session: CrewSession): Promise<LaneFeed> {
    const { store } = session;
    this.ledger = reviewLedger(store);
    const held = heldLanes(store, this.loaded, this.options.retryFailed === true);
    const clients = await this.openClients(store, held);
    if (this.options.retryFailed === true) await this.removeFailedJobs(held);
    const queued = this.loaded.lanes.filter((lane) => !held.has(lane.id));
    // Every lane's outcome is awaited from before its job can finish, on one pair of listeners.
    const outcomes = jobOutcomes(clients.events);
    const arrived = new Set<string>();
    const outcomeOf = new Map(queued.map((lane) => [lane.id, outcomes.expect(laneJobId(this.runAs, lane.id)).finally(() => arrived.add(lane.id))]));
    const signal = session.stop.signal;
    // A job an earlier run of this crew left finished reports no event now: read from Redis.
    // One still queued or running is followed; one Redis does not hold is queued.
    for (const lane of queued) {
      const id = laneJobId(this.runAs, lane.id);
      const state = await this.guard(clients.queue.getJobState(id));
      if (state === 'completed' || state === 'failed') {
        const stored = await this.guard(clients.queue.getJob(id));
        outcomes.settle(id, state === 'completed' ? { ok: true, value: stored?.returnvalue } : { ok: false, reason: stored?.failedReason ?? '' });
      } else if (state === 'unknown') await this.enqueue(lane.id, signal);
    }
    const everyMs = Math.max(100, Math.min(1_000, Math.floor((this.options.queueTimeoutMs ?? 10_000) / 4)));
    this.closers.push(watchLostJobs({ redis: clients.redis, runAs: this.runAs, open: () => queued.filter((lane) => !arrived.has(lane.id)), signal, enqueue: (lane) => this.enqueue(lane, signal), everyMs, io: session.io }));
    this.following = { held, queued, outcomeOf };
    const retry = commandLine(this.retryArgv);
    return {
      stats: () => NO_DISPATCH,
      // What a lane's page can show here: its progress and the run directory carried back (its journal stays on its worker).
      laneStory: (id) => readLaneStory(store, { crew: this.crew, lane: id, retryCommand: retry, runDir: join(this.loaded.out, id) }),
    };
  }

  /** The queue, its events and the mirrors' copy, ready; what a Redis that lost its data no longer holds is put back from the copy. */
  private async openClients(store: Store, held: ReadonlyMap<string, LaneProgress>): Promise<Clients> {
    // Events are read from the newest one there is before any job is queued, not from
    // whenever the first read starts (BullMQ's default): a lane ended in between would be
    // waited for forever (as artifact validate --queue reads them).
    const lastEventId = await this.watch!.newestEntry(`bull:${LANE_QUEUE}:events`);
    const { Queue, QueueEvents } = await import('bullmq');
    const { default: Redis } = await import('ioredis');
    const connection = this.bull!.connection;
    const redis = new Redis(this.target.connection);
    redis.on('error', () => undefined);
    const queue = new Queue(LANE_QUEUE, { connection });
    const events = new QueueEvents(LANE_QUEUE, { connection, lastEventId });
    queue.on('error', () => undefined);
    events.on('error', () => undefined);
    // A worker's ask about a lane this run holds ended, or settled since, puts nothing back:
    // its stream was removed with its end (a complete lane), and its jobs run nothing.
    const laneOfQa = new Map([...this.mirrorOf].map(([lane, { qa }]) => [qa, lane]));
    const open = (qa: string) => {
      const lane = laneOfQa.get(qa);
      return lane !== undefined && !held.has(lane) && !this.lanes.has(lane);
    };
    const copy = new MirrorCopy(store, [...this.mirrorOf.values()], { asks: asksKey(this.runAs), open, channel: copiedChannel(this.runAs) });
    this.clients = { redis, queue, events, copy };
    this.closers.push(() => copy.close());
    await this.guard(events.waitUntilReady());
    await this.guard(copy.catchUp(redis));
    copy.follow(connection);
    return this.clients;
  }

  /** A failed lane runs again only when asked: its job is removed, to be added anew. */
  private async removeFailedJobs(held: ReadonlyMap<string, LaneProgress>): Promise<void> {
    for (const lane of this.loaded.lanes) {
      if (held.has(lane.id)) continue;
      const job = await this.guard(this.clients!.queue.getJob(laneJobId(this.runAs, lane.id)));
      if (job !== undefined && ((await this.guard(job.isFailed())) || (job.returnvalue as LaneJobResult | null)?.progress?.stage === 'failed')) await this.guard(job.remove());
    }
  }

  /** Queues the lane's job anew: its mirror put back first, then its ledger entry, then the job. Returns the records put back. */
  private async enqueue(lane: string, signal: AbortSignal): Promise<number> {
    const { redis, queue, copy } = this.clients!;
    // A Redis at its maxmemory refuses these writes: waited out, the lane is never failed by it.
    const put = await this.guard(whileOutOfMemory(() => copy.putBack(redis, this.mirrorOf.get(lane)!), signal));
    const nonce = newNonce();
    this.nonceOf.set(lane, nonce);
    await this.guard(whileOutOfMemory(() => writeLedger(redis, { runAs: this.runAs, lane, nonce, finished: false }, this.key), signal));
    await this.guard(whileOutOfMemory(() => queue.add('lane', signJob({ ...this.bodyOf.get(lane)!, nonce }, this.key), { jobId: laneJobId(this.runAs, lane), attempts: 1, removeOnComplete: false, removeOnFail: false }), signal));
    return put;
  }

  async runLanes(session: CrewSession): Promise<LaneProgress[]> {
    const { held, queued, outcomeOf } = this.following!;
    const { store, stop } = session;
    const idOf = new Map(this.loaded.lanes.map((lane) => [laneJobId(this.runAs, lane.id), lane.id]));
    this.clients!.events.on('progress', ({ jobId, data }) => {
      const lane = idOf.get(jobId);
      const progress = lane === undefined || this.lanes.has(lane) ? null : laneProgressFrom(data, this.crew, lane, join(this.loaded.out, lane));
      if (progress === null) return;
      session.laneChanged(progress);
      // Recorded as it changes, as a local crew's lanes are: crew status and the console of
      // another process read the lanes working. Its end is recorded once its result is taken.
      if (!isTerminalStage(progress.stage)) void store.crewLanes.put([this.crew, progress.lane], progress).catch(() => undefined);
    });
    for (const progress of held.values()) this.ended(session, progress);
    await Promise.race([
      Promise.all(
        queued.map(async (lane) => {
          let result: LaneJobResult | null = null;
          let failure: string | null = null;
          try {
            const outcome = await this.guard(outcomeOf.get(lane.id)!);
            if (outcome.ok) result = outcome.value as LaneJobResult;
            else failure = outcome.reason;
          } catch (error) {
            failure = toError(error).message;
          }
          // Stopped (a cancel, the deadline, Redis lost): the lane is not settled here; it runs on.
          if (!stop.signal.aborted) await this.settle(session, lane.id, result, failure);
        }),
      ),
      this.stopped,
    ]);
    if (this.lost !== undefined) throw this.lost;
    return [...this.lanes.values()];
  }

  /** The lane's job ended: its result taken (run directory carried back and validated), recorded, its job finished in the ledger. */
  private async settle(session: CrewSession, lane: string, result: LaneJobResult | null, failure: string | null): Promise<void> {
    if (this.lanes.has(lane)) return;
    const { redis } = this.clients!;
    const max = this.options.maxArtifactBytes;
    const progress = carriedLane({ crew: this.crew, lane, dir: join(this.loaded.out, lane), result, failure, ...(max === undefined ? {} : { maxArtifactBytes: max }) });
    this.lanes.set(lane, progress);
    await session.store.crewLanes.put([this.crew, lane], progress);
    // Its result is taken: no job of the lane runs any more, a copy of one included.
    await whileOutOfMemory(() => writeLedger(redis, { runAs: this.runAs, lane, nonce: this.nonceOf.get(lane) ?? '', finished: true }, this.key), session.stop.signal).catch(() => undefined);
    // A complete lane needs its mirror no more (a failed one keeps it: a retry continues
    // it); this coordinator's copy stays.
    if (progress.stage === 'complete') await redis.del(laneStreamKey(this.runAs, lane), copiedKey(crewQaLaneId(this.runAs, lane))).catch(() => undefined);
    this.ended(session, progress);
  }

  private ended(session: CrewSession, progress: LaneProgress): void {
    this.lanes.set(progress.lane, progress);
    session.laneChanged(progress);
    session.laneEnded(progress);
  }

  // Its review ledger is on the worker's store: here the cost is what the mirrored records hold.
  laneFacts(progress: LaneProgress): LaneFacts {
    return { cost: laneCost(progress, this.ledger!(progress)) };
  }

  attempts(ended: readonly LaneProgress[]): number {
    return ended.reduce((sum, lane) => sum + lane.attempts, 0);
  }

  stats(): DispatchStats {
    return NO_DISPATCH;
  }

  providers(): readonly unknown[] {
    return [];
  }

  async close(): Promise<void> {
    for (const close of this.closers) close();
    this.watch?.close();
    if (this.clients === undefined) return;
    this.clients.redis.disconnect();
    // Closing a client whose Redis is gone may never settle, and holds nothing that keeps the
    // process alive: the timer does, for as long as a close may take.
    await Promise.race([Promise.allSettled([this.clients.events.close(), this.clients.queue.close()]), new Promise((resolve) => setTimeout(resolve, CLOSE_MS))]);
  }
}
