import { existsSync } from 'node:fs';
import { LanewardError } from '../../formats/codes/error.ts';
import { claimOut } from '../crew/out-claim.ts';
import type { LoadedCrew } from '../crew/load-crew.ts';
import { configuredStateRoot, defaultStateRoot } from '../plan/index.ts';
import { checkQueue, queueTarget } from './connection.ts';
import { laneJobId, LANE_QUEUE, runAsName } from './lane-job.ts';
import { ledgerKey } from './lane-ledger.ts';
import { crewQaLaneId } from '../../formats/crew/qa-id.ts';
import { answerKey, asksKey, copiedKey, laneStreamKey } from './lane-stream.ts';

/** What `crew clean --queue` did with one lane's job. */
export interface CleanedJob {
  readonly lane: string;
  readonly job: string;
  /** removed: its job, mirror, ledger entry and copied mark are gone; absent: Redis held none of them; kept: its job is still queued or running. */
  readonly status: 'removed' | 'absent' | 'kept';
  /** BullMQ's state of the job when it was looked at (`unknown`: there was none). */
  readonly state: string;
}

/**
 * `crew clean --queue URL`: removes from Redis what a queued crew's lanes left there (each
 * lane's finished job, its mirror stream and its ledger entry), for the crew as the
 * coordinator on `state` runs it. A job still waiting or running is kept: its lane has not
 * ended. The out is claimed first, so no coordinator of the crew runs meanwhile
 * (CREW_BUSY). The coordinator's own store keeps the lanes' results and its copy of their
 * mirrors, so running the crew again starts nothing complete.
 */
export async function cleanQueue(loaded: LoadedCrew, options: { readonly queue: string; readonly state: string | undefined; readonly env: NodeJS.ProcessEnv; readonly cwd: string }): Promise<CleanedJob[]> {
  if (loaded.workspace !== null) throw new LanewardError('USAGE', `--queue: crew ${loaded.crew.crew} names a workspace, and such a crew never runs over a queue`);
  const target = queueTarget(options.queue);
  const root = configuredStateRoot(options.state, options.env, options.cwd)?.path ?? defaultStateRoot(options.cwd);
  const runAs = runAsName(loaded.crew.crew, loaded.file, root);
  await checkQueue(target);
  const release = existsSync(loaded.out) ? claimOut(loaded.out, loaded.crew.crew, loaded.file) : () => {};
  const { Queue } = await import('bullmq');
  const { default: Redis } = await import('ioredis');
  // Commands fail rather than wait for a Redis that went away mid-clean.
  const connection = { ...target.connection, maxRetriesPerRequest: 1 };
  const queue = new Queue(LANE_QUEUE, { connection });
  const redis = new Redis(connection);
  queue.on('error', () => undefined);
  redis.on('error', () => undefined);
  try {
    const done: CleanedJob[] = [];
    for (const lane of [...loaded.lanes].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
      const job = laneJobId(runAs, lane.id);
      const state = await queue.getJobState(job);
      if (state !== 'completed' && state !== 'failed' && state !== 'unknown') {
        done.push({ lane: lane.id, job, status: 'kept', state });
        continue;
      }
      if (state !== 'unknown') await queue.remove(job);
      const qa = crewQaLaneId(runAs, lane.id);
      // Answers to its workers' asks are taken as they are read; one whose worker went away first is left.
      const answers: string[] = [];
      for (let cursor = '0'; ; ) {
        const [next, found] = await redis.scan(cursor, 'MATCH', answerKey(qa, '*'), 'COUNT', 1_000);
        answers.push(...found);
        if ((cursor = next) === '0') break;
      }
      const keys = await redis.del(laneStreamKey(runAs, lane.id), ledgerKey(runAs, lane.id), copiedKey(qa), ...answers);
      done.push({ lane: lane.id, job, status: state === 'unknown' && keys === 0 ? 'absent' : 'removed', state });
    }
    // The workers' asks to the crew run's coordinator, once none of its lanes runs.
    if (done.every((lane) => lane.status !== 'kept')) await redis.del(asksKey(runAs));
    return done;
  } catch (error) {
    if (error instanceof LanewardError) throw error;
    const { queueUnavailable } = await import('./connection.ts');
    throw queueUnavailable(target, error);
  } finally {
    redis.disconnect();
    await queue.close().catch(() => undefined);
    release();
  }
}
