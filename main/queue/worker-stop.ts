import type { Redis } from 'ioredis';
import type { LanewardError } from '../../formats/codes/error.ts';
import { queueUnavailable, type BullConnection, type QueueTarget } from './connection.ts';

/** How long a stopping worker waits for a Redis that does not answer. */
const CLOSE_GRACE_MS = 5_000;
/** How often a stopping worker asks Redis whether it is there. */
const PROBE_MS = 500;
/** The longest a worker that gave Redis up waits for its BullMQ clients to close. */
const CLOSE_MS = 2_000;

/** What a stopping worker closes: its BullMQ worker, its Redis clients, its running lanes. */
export interface StoppingWorker {
  readonly worker: { close(force?: boolean): Promise<void>; disconnect(): Promise<void> };
  readonly redis: Redis;
  readonly bull: BullConnection;
  readonly target: QueueTarget;
  /** Each running lane's stop. */
  readonly stops: ReadonlySet<AbortController>;
  /** The lanes running now, whose results the worker waits for. */
  readonly running: ReadonlyMap<string, { readonly result: Promise<unknown> }>;
}

/**
 * Takes nothing new; waits for the running lanes to end. BullMQ's close also waits for
 * Redis (to take the lanes' results), and a lane waits for it before each child starts
 * (its mirror): while Redis does not answer, neither ever ends. So a stopping worker
 * watches Redis: silent for CLOSE_GRACE_MS, the lanes are stopped as a cancelled crew
 * stops them and the worker ends QUEUE_UNAVAILABLE (their jobs are taken up again, from
 * their mirrors, once their locks lapse).
 */
export async function stopWorker(w: StoppingWorker): Promise<void> {
  const { worker, redis, target } = w;
  let silentRedis: LanewardError | undefined;
  const closed = worker.close();
  let closing = true;
  void closed.finally(() => (closing = false));
  const gone = (async () => {
    const { default: Redis } = await import('ioredis');
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
    w.bull.giveUp();
    // Its parked commands fail once it next tries to reconnect and is told not to (a
    // disconnect while it waits to reconnect would leave them parked for ever).
    await new Promise<void>((resolve) => {
      if (redis.status === 'end') return resolve();
      const timer = setTimeout(resolve, CLOSE_MS);
      redis.once('end', () => (clearTimeout(timer), resolve()));
    });
    redis.disconnect();
    for (const stop of w.stops) stop.abort('SIGTERM');
    while (w.running.size > 0) await Promise.allSettled([...w.running.values()].map((r) => r.result));
    await Promise.race([worker.close(true).catch(() => undefined), new Promise((resolve) => setTimeout(resolve, CLOSE_MS))]);
    void worker.disconnect().catch(() => undefined);
    throw silentRedis;
  }
  redis.disconnect();
}
