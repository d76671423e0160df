import { join, resolve } from 'node:path';
import { LanewardError, isLanewardError, toError } from '../../formats/codes/error.ts';
import type { LaneProgress } from '../../formats/crew/record.ts';
import { oneLine } from '../../formats/text/one-line.ts';
import { readPrivateKey } from '../actions/keys.ts';
import { crewRunRecord } from '../console/crew-run-record.ts';
import { CrewView, DEFAULT_STUCK_AFTER_S, percentile } from '../console/view-state.ts';
import { startTerminalView, type TerminalView } from '../console/terminal-view.ts';
import { readLaneStory } from '../console/lane-story.ts';
import type { CrewServer } from '../console/serve.ts';
import { summaryLine, tally } from '../crew/coordinator.ts';
import { claimCrew } from '../crew/crew-driver.ts';
import { claimOut } from '../crew/out-claim.ts';
import { shellWord } from '../crew/retry-advice.ts';
import { verifyCrewActions } from '../crew/crew-actions.ts';
import type { CrewOutput, CrewRunOptions, CrewRunResult } from '../crew/crew-run.ts';
import { laneLine, laneObject } from '../crew/lane-line.ts';
import { loadCrew } from '../crew/load-crew.ts';
import { OWNER_ANSWERS } from '../../formats/crew/file.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { configuredStateRoot, defaultStateRoot } from '../plan/index.ts';
import { openStore } from '../store/store.ts';
import { laneCost } from '../crew/lane-cost.ts';
import { reviewLedger } from '../console/review-spend.ts';
import { validateRun } from '../../workers/validate/validate-run.ts';
import { bullConnection, checkQueue, queueTarget, whileOutOfMemory, type QueueTarget } from './connection.ts';
import { watchRedis } from './redis-watch.ts';
import { laneJobBody, laneJobId, LANE_QUEUE, runAsName } from './lane-job.ts';
import { laneStreamKey } from './lane-mirror.ts';
import { laneProgressFrom } from './lane-result.ts';
import { jobOutcomes } from './job-outcomes.ts';
import type { LaneJobResult } from './crew-worker.ts';
import { DEFAULT_MAX_ARTIFACT_BYTES, unpackRunDir } from './run-dir-transfer.ts';
import { signJob } from './signed-job.ts';
import { newNonce, writeLedger } from './lane-ledger.ts';
import { MirrorCopy } from './mirror-copy.ts';
import { crewQaLaneId } from '../../formats/crew/qa-id.ts';

/** The longest the coordinator waits for its BullMQ clients to close. */
const CLOSE_MS = 2_000;

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
 * BullMQ's events: lanes' progress feeds the same views, each lane's exported run
 * directory is written under the crew's out (temp + rename) and validated again here, and
 * the same CREW_LANE and CREW_SUMMARY lines are printed. Redis unreachable, at the start or
 * for longer than the timeout mid-crew, is QUEUE_UNAVAILABLE; the lanes keep running on
 * their workers, and the same command later picks up their results.
 */
export async function crewRunQueued(options: QueuedCrewOptions, io: CrewOutput): Promise<CrewRunResult> {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const loaded = loadCrew(options.file, options.cwd);
  // A queued lane's gate is answered on its worker: the owner's answer has no way there yet.
  if (loaded.crew.answer === OWNER_ANSWERS) throw new LanewardError('CREW_INVALID', `answer: "owner" is not supported with --queue yet: the lanes' gates are answered on the workers; run it without --queue`, { path: loaded.file });
  if (loaded.workspace !== null) throw new LanewardError('USAGE', `--queue: crew ${loaded.crew.crew} names a workspace; worktrees of a repository on another machine are not supported yet: run it without --queue`);
  verifyCrewActions(loaded);
  const keyFile = resolve(options.cwd, options.key);
  const key = readPrivateKey(keyFile);
  const target = queueTarget(options.queue);
  const root = configuredStateRoot(options.state, options.env, options.cwd)?.path ?? defaultStateRoot(options.cwd);
  const store = openStore(root, { batched: true });
  const ledger = reviewLedger(store);
  const runAs = runAsName(loaded.crew.crew, loaded.file, root);
  const bodies = loaded.lanes.map((lane) => laneJobBody(loaded, lane, runAs, options.retryFailed === true));
  await checkQueue(target);
  const retry = queuedRetry(loaded.file, target, options.key, root);
  const runFacts = { crew: loaded.crew.crew, file: loaded.file, startedAt, retryCommand: retry, capUsd: loaded.crew.limits.spend_cap_usd ?? null, reserveUsd: loaded.crew.limits.reserve_usd, stuckAfterS: options.stuckAfterS ?? DEFAULT_STUCK_AFTER_S };
  let live: TerminalView | undefined;
  let server: CrewServer | undefined;
  let stoppedBy: string | null = null;
  const closers: (() => void)[] = [];
  // Cancel, deadline or Redis lost: the wait ends (the lanes run on, on their workers).
  const stop = new AbortController();
  let lost: LanewardError | undefined;
  // Given up on once the crew stops for a lost Redis: a client that keeps reconnecting keeps the process alive.
  const bull = bullConnection(target);
  // BullMQ's connections reconnect forever and park their commands: the watch notices a
  // Redis gone for the timeout, and holds the event loop meanwhile (else it empties, exit 0).
  const watch = await watchRedis({ ...target, connection: { ...target.connection, connectTimeout: options.queueTimeoutMs ?? 10_000 } }, (error) => {
    lost ??= error;
    bull.giveUp();
    stop.abort();
  });
  closers.push(() => watch.close());
  const stopped = new Promise<void>((done) => (stop.signal.aborted ? done() : stop.signal.addEventListener('abort', () => done(), { once: true })));
  /** `promise`, or a rejection once the wait was stopped (parked BullMQ calls never settle while Redis is gone). */
  const guard = <T>(promise: Promise<T>): Promise<T> => Promise.race([promise, stopped.then((): never => { throw lost ?? new LanewardError('CANCELLED', 'the crew was stopped'); })]);
  const onCancel = () => {
    stoppedBy ??= typeof options.cancel.reason === 'string' ? options.cancel.reason : 'SIGTERM';
    stop.abort();
  };
  if (options.cancel.aborted) onCancel();
  options.cancel.addEventListener('abort', onCancel, { once: true });
  const deadline = options.deadlineMs === undefined ? undefined : setTimeout(() => ((stoppedBy ??= 'deadline'), stop.abort()), options.deadlineMs);
  let release: () => Promise<void>;
  let lastEventId: string;
  try {
    const releaseCrew = await claimCrew(store, loaded.crew.crew);
    // The carried run directories land in `out`: another crew writing there (the same crew
    // from another state root, or another crew file keeping the default) would overwrite them.
    let releaseOut: () => void;
    try {
      releaseOut = claimOut(loaded.out, loaded.crew.crew, loaded.file);
    } catch (error) {
      await releaseCrew();
      throw error;
    }
    release = async () => {
      releaseOut();
      await releaseCrew();
    };
    // Events are read from the newest one there is before any job is queued, not from
    // whenever the first read starts (BullMQ's default): a lane ended in between would be
    // waited for forever (as artifact validate --queue reads them).
    try {
      lastEventId = await watch.newestEntry(`bull:${LANE_QUEUE}:events`);
    } catch (error) {
      await release();
      throw error;
    }
  } catch (error) {
    // CREW_BUSY, or Redis lost already: nothing started; the watch and timers go with it.
    watch.close();
    if (deadline !== undefined) clearTimeout(deadline);
    options.cancel.removeEventListener('abort', onCancel);
    throw error;
  }
  const { Queue, QueueEvents } = await import('bullmq');
  const { default: Redis } = await import('ioredis');
  const redis = new Redis(target.connection);
  redis.on('error', () => undefined);
  const queue = new Queue(LANE_QUEUE, { connection: bull.connection });
  const events = new QueueEvents(LANE_QUEUE, { connection: bull.connection, lastEventId });
  queue.on('error', () => undefined);
  events.on('error', () => undefined);
  const lanes = new Map<string, LaneProgress>();
  const idOf = new Map(loaded.lanes.map((lane) => [laneJobId(runAs, lane.id), lane.id]));
  const view = new CrewView(loaded.crew.crew, () => ({ running: 0, queued: 0, started: 0, finished: 0, marks: 0, renewalLatencyMs: [] }), loaded.lanes.map((l) => l.id), () => [], {
    startedAt,
    capUsd: runFacts.capUsd,
    reserveUsd: runFacts.reserveUsd,
    stuckAfterS: runFacts.stuckAfterS,
    retryCommand: retry,
    // What a lane's page can show here: its progress and the run directory carried back (its journal stays on its worker).
    laneStory: (id) => readLaneStory(store, { crew: loaded.crew.crew, lane: id, retryCommand: retry, runDir: join(loaded.out, id) }),
  });
  try {
    await store.crewRuns.put(loaded.crew.crew, crewRunRecord(runFacts, null, null));
    await guard(events.waitUntilReady());
    // The lanes' mirrors, copied into this coordinator's store as they grow: what a Redis
    // that lost its data no longer holds is put back from here before a lane is queued again.
    const copiedOf = new Map(loaded.lanes.map((lane) => [lane.id, { qa: crewQaLaneId(runAs, lane.id), stream: laneStreamKey(runAs, lane.id) }]));
    const copy = new MirrorCopy(store, [...copiedOf.values()]);
    closers.push(() => copy.close());
    await guard(copy.catchUp(redis));
    copy.follow(bull.connection);
    // A lane this coordinator already took a result of is not queued again (its job may be
    // gone from Redis, removed or cleaned): a complete one whose run directory is here and
    // valid, or a failed one when no retry is asked for.
    const held = new Map<string, LaneProgress>();
    for (const lane of loaded.lanes) {
      const dir = join(loaded.out, lane.id);
      const progress = store.crewLanes.get([loaded.crew.crew, lane.id]);
      if (progress === undefined || progress.runDir !== dir) continue;
      if (progress.stage === 'failed' && options.retryFailed !== true) held.set(lane.id, progress);
      else if (progress.stage === 'complete') {
        try {
          if (validateRun(dir).valid) held.set(lane.id, progress);
        } catch {
          // Not a run directory here: the lane is asked of the queue again.
        }
      }
    }
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
    const bodyOf = new Map(loaded.lanes.map((lane, i) => [lane.id, bodies[i]!]));
    const nonceOf = new Map<string, string>();
    /** Queues the lane's job anew: its mirror put back first, then its ledger entry, then the job. */
    const enqueue = async (lane: string): Promise<number> => {
      // A Redis at its maxmemory refuses these writes: waited out, the lane is never failed by it.
      const put = await guard(whileOutOfMemory(() => copy.putBack(redis, copiedOf.get(lane)!), stop.signal));
      const nonce = newNonce();
      nonceOf.set(lane, nonce);
      await guard(whileOutOfMemory(() => writeLedger(redis, { runAs, lane, nonce, finished: false }, key), stop.signal));
      await guard(whileOutOfMemory(() => queue.add('lane', signJob({ ...bodyOf.get(lane)!, nonce }, key), { jobId: laneJobId(runAs, lane), attempts: 1, removeOnComplete: false, removeOnFail: false }), stop.signal));
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
    // Redis losing its data (FLUSHALL, a restart without persistence, jobs removed by hand)
    // loses the jobs and no event says so: a job Redis no longer holds is noticed within a
    // quarter of the queue timeout, and queued again from this coordinator's copy.
    const checkMs = Math.max(100, Math.min(1_000, Math.floor((options.queueTimeoutMs ?? 10_000) / 4)));
    let checking = false;
    const lostCheck = setInterval(() => {
      if (checking || stop.signal.aborted) return;
      const open = queued.filter((lane) => !arrived.has(lane.id));
      if (open.length === 0) return;
      checking = true;
      void (async () => {
        const pipeline = redis.pipeline();
        for (const lane of open) pipeline.exists(`bull:${LANE_QUEUE}:${laneJobId(runAs, lane.id)}`);
        const replies = (await pipeline.exec()) ?? [];
        for (const [i, lane] of open.entries()) {
          if (replies[i]?.[1] !== 0 || arrived.has(lane.id) || stop.signal.aborted) continue;
          const put = await enqueue(lane.id);
          io.err(`CREW_REQUEUED: lane=${lane.id} records=${put}`);
        }
      })()
        .catch(() => undefined)
        .finally(() => (checking = false));
    }, checkMs);
    closers.push(() => clearInterval(lostCheck));
    live = io.stderrIsTTY ? startTerminalView(io, view, 250) : undefined;
    if (options.serve !== undefined) {
      const port = options.serve;
      const { serveCrew } = await import('../console/serve.ts');
      const { LANE_PAGE } = await import('../console/lane-page-route.ts');
      server = await serveCrew(port, view, { lanePage: LANE_PAGE }).catch((error: unknown) => {
        throw new LanewardError('USAGE', `--serve ${port}: ${toError(error).message}`, { path: '--serve' });
      });
      io.err(`CREW_VIEW: ${server.url}`);
    }
    events.on('progress', ({ jobId, data }) => {
      const lane = idOf.get(jobId);
      const progress = lane === undefined || lanes.has(lane) ? null : laneProgressFrom(data, loaded.crew.crew, lane, join(loaded.out, lane));
      if (progress !== null) view.update(progress);
    });
    const print = (line: string) => (live === undefined ? io.out(line) : live.print(() => io.out(line)));
    const failedLane = (lane: string, dir: string, code: string, detail: string): LaneProgress => {
      const now = new Date().toISOString();
      return { crew: loaded.crew.crew, lane, stage: 'failed', runDir: dir, turnsDispatched: 0, turnsDone: 0, lostTurns: [], guidance: null, attempts: 0, stoppedIn: null, code, detail, updatedAt: now, stages: [{ stage: 'failed', at: now }] };
    };
    const report = (progress: LaneProgress) => {
      lanes.set(progress.lane, progress);
      view.update(progress);
      // Its review ledger is on the worker's store: here the cost is what the mirrored records hold.
      const cost = laneCost(progress, ledger(progress));
      print(options.json ? JSON.stringify(laneObject(progress, { cost })) : laneLine(progress, retry, { cost }));
    };
    for (const progress of held.values()) report(progress);
    const settle = async (lane: string, result: LaneJobResult | null, failure: string | null) => {
      if (lanes.has(lane)) return;
      const dir = join(loaded.out, lane);
      let progress: LaneProgress;
      if (result === null || typeof result !== 'object') {
        const code = /^([A-Z][A-Z_]+): /.exec(failure ?? '')?.[1] ?? 'INTERNAL';
        progress = failedLane(lane, dir, code, oneLine(failure ?? 'the lane job ended with no result'));
      } else {
        // Checked whole: a lane's progress, and a run directory that is a list of files, or
        // none (a failed lane's that was too large); a complete lane carries one that is valid here.
        const reported = laneProgressFrom(result.progress, loaded.crew.crew, lane, dir);
        const files: unknown = (result as { files?: unknown }).files;
        if (reported === null) progress = failedLane(lane, dir, 'JOB_INVALID', 'the worker\'s result for this lane is not a lane\'s progress');
        else if (files !== null && !Array.isArray(files)) progress = failedLane(lane, dir, 'JOB_INVALID', 'the worker\'s result for this lane carries a run directory that is not a list of files');
        else if (files === null && reported.stage === 'complete') progress = failedLane(lane, dir, 'JOB_INVALID', 'the worker\'s result says the lane is complete and carries no run directory');
        else progress = reported;
        if (reported !== null && progress === reported && Array.isArray(files)) {
          try {
            unpackRunDir(files as LaneJobResult['files'] & unknown[], dir, options.maxArtifactBytes ?? DEFAULT_MAX_ARTIFACT_BYTES);
            const validation = validateRun(dir);
            if (!validation.valid && progress.stage === 'complete') {
              const code = Object.keys(validation.codes)[0] ?? 'ARTIFACT_SCHEMA';
              progress = { ...progress, stage: 'failed', code, detail: `its run directory, carried back, is not valid here (${Object.entries(validation.codes).map(([c, n]) => `${c}=${n}`).join(' ')})` };
            }
          } catch (error) {
            const code = isLanewardError(error) ? error.code : 'INTERNAL';
            progress = { ...progress, stage: 'failed', code, detail: oneLine(toError(error).message) };
          }
        }
      }
      lanes.set(lane, progress);
      await store.crewLanes.put([loaded.crew.crew, lane], progress);
      // Its result is taken: no job of the lane runs any more, a copy of one included.
      await whileOutOfMemory(() => writeLedger(redis, { runAs, lane, nonce: nonceOf.get(lane) ?? '', finished: true }, key), stop.signal).catch(() => undefined);
      // A complete lane needs its mirror no more (a failed one keeps it: a retry continues
      // it); this coordinator's copy stays.
      if (progress.stage === 'complete') await redis.del(laneStreamKey(runAs, lane)).catch(() => undefined);
      report(progress);
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
  } finally {
    if (deadline !== undefined) clearTimeout(deadline);
    options.cancel.removeEventListener('abort', onCancel);
    for (const close of closers) close();
    redis.disconnect();
    live?.stop();
    // Closing a client whose Redis is gone may never settle, and holds nothing that keeps the
    // process alive: the timer does, for as long as a close may take.
    await Promise.race([Promise.allSettled([events.close(), queue.close()]), new Promise((resolve) => setTimeout(resolve, CLOSE_MS))]);
    if (lanes.size < loaded.lanes.length) await server?.close();
    await release();
  }
  const ended = [...lanes.values()];
  const durationS = (performance.now() - started) / 1000;
  const counts = tally(ended, loaded.lanes.length);
  const summary = summaryLine(counts, ended.reduce((sum, lane) => sum + lane.attempts, 0), durationS);
  view.finish(summary);
  await store.crewRuns.put(loaded.crew.crew, crewRunRecord(runFacts, view.snapshot(), stoppedBy));
  live?.close(true);
  if (options.report !== undefined) {
    const report = {
      schema_version: 1,
      crew: loaded.crew.crew,
      file: loaded.file,
      state_root: root,
      queue: target.url,
      started_at: startedAt,
      ended_at: new Date().toISOString(),
      duration_s: Number(durationS.toFixed(3)),
      stopped_by: stoppedBy,
      summary: { ...counts, attempts: ended.reduce((sum, lane) => sum + lane.attempts, 0) },
      stats: { marks: 0, renewal_p99_ms: percentile([], 0.99) },
      lanes: ended.map((progress) => laneObject(progress, { cost: laneCost(progress, ledger(progress)) })),
      providers: [],
    };
    writeFileAtomic(resolve(options.cwd, options.report), `${JSON.stringify(report, null, 2)}\n`, 0o644, true);
  }
  io.out(options.json ? JSON.stringify({ summary: { ...counts, attempts: ended.reduce((s, l) => s + l.attempts, 0), duration_s: Number(durationS.toFixed(3)), stopped_by: stoppedBy } }) : summary);
  if (server !== undefined && lanes.size === loaded.lanes.length) {
    // The done snapshot reaches open pages before the server closes.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await server.close();
  }
  return { tally: counts, lanes: ended, stoppedBy, summary };
}
