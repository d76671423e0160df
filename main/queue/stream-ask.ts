import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import { whileOutOfMemory } from './connection.ts';
import { COORDINATOR_POLL_MAX_MS, CoordinatorWait, coordinatorSilent, type CoordinatorWord } from './coordinator-wait.ts';
import { answerKey, asksKey } from './lane-stream.ts';

/** How long an ask goes unanswered before it is made again (one Redis lost, with its data or in a restart, is never answered). */
const REASK_MS = 2_000;
/** The asks a crew run's stream keeps, about (older ones were answered long ago). */
const ASKS_KEPT = 1_000;

/**
 * Asks the lane's coordinator to make its stream whole before this worker starts the lane
 * from it, and waits for the answer. A Redis that came back from an older snapshot (a
 * crash of one that saves only now and then, as its default does) holds a stream shorter
 * than what the coordinator copied, with its job there to be taken: a lane restored from
 * it would start again what the snapshot does not show dispatched. The coordinator puts
 * back what its copy holds past the stream's newest entry, then answers this ask's nonce;
 * an answer is to one ask, so none an older snapshot held is taken for it.
 * COORDINATOR_SILENT when the worker stops first (see isCoordinatorSilent).
 */
export async function askCoordinator(redis: Redis, ask: { readonly runAs: string; readonly lane: string; readonly qa: string; readonly stopping?: AbortSignal; readonly onWaiting?: () => void; readonly next?: (ms: number) => CoordinatorWord }): Promise<void> {
  const nonce = randomBytes(12).toString('hex');
  let askedAt = Number.NEGATIVE_INFINITY;
  const wait = new CoordinatorWait({ stopping: ask.stopping, onWaiting: ask.onWaiting, stopClock: {}, silent: () => coordinatorSilent(ask.lane, ask.runAs, 'answered whether the lane\'s stream is whole') });
  for (;;) {
    // Listened for before the ask: an answer made while it is read counts.
    const word = ask.next?.(COORDINATOR_POLL_MAX_MS);
    if (performance.now() - askedAt >= REASK_MS) {
      await whileOutOfMemory(() => redis.xadd(asksKey(ask.runAs), 'MAXLEN', '~', ASKS_KEPT, '*', 'qa', ask.qa, 'nonce', nonce));
      askedAt = performance.now();
    }
    // Taken as it is read: nothing of it is left in Redis.
    if ((await redis.getdel(answerKey(ask.qa, nonce))) !== null) {
      word?.stop();
      return;
    }
    await wait.pause(word);
  }
}
