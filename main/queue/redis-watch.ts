import type { LanewardError } from '../../formats/codes/error.ts';
import { queueUnavailable, type QueueTarget } from './connection.ts';

/** How often the watch pings. */
const PING_MS = 1_000;

export interface RedisWatch {
  /** The id of the newest entry of a stream, `0-0` when it has none, read on the watch's connection. */
  newestEntry(stream: string): Promise<string>;
  /** Stops pinging and closes the watch's connection; until then it keeps the process alive. */
  close(): void;
}

/**
 * Watches the queue's Redis on a connection of its own and calls `lost` once, with
 * QUEUE_UNAVAILABLE, when nothing has answered a ping for the target's connect timeout
 * while this process ran (its own stalls are not Redis's silence).
 * BullMQ's own connections reconnect forever and park their commands meanwhile, so
 * without this a coordinator or a worker whose Redis is gone would wait forever. A ping
 * rather than the socket's close: a peer that vanished from the network closes nothing.
 */
export async function watchRedis(target: QueueTarget, lost: (error: LanewardError) => void): Promise<RedisWatch> {
  const { default: Redis } = await import('ioredis');
  const graceMs = target.connection.connectTimeout;
  const client = new Redis({
    ...target.connection,
    lazyConnect: true,
    // Commands fail at once while it is down (nothing parks), and it keeps reconnecting.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => PING_MS,
  });
  let lastError: unknown = 'no answer from Redis';
  client.on('error', (error: unknown) => (lastError = error));
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    throw queueUnavailable(target, error);
  }
  let alive = performance.now();
  // A process stopped (SIGSTOP) or starved on a loaded machine hears no answer however
  // well Redis does: after a tick that came more than two periods late, Redis gets its
  // whole grace again from now.
  let tick = alive;
  let done = false;
  // Not unref'd: while BullMQ's connections wait out a reconnect, nothing else may hold
  // the event loop, and a process whose loop empties exits 0 with its batch unfinished.
  const timer = setInterval(() => {
    const now = performance.now();
    if (now - tick > 2 * PING_MS) alive = now;
    tick = now;
    if (now - alive > graceMs) {
      stop();
      lost(queueUnavailable(target, lastError));
      return;
    }
    client.ping().then(
      () => (alive = performance.now()),
      (error: unknown) => (lastError = error),
    );
  }, PING_MS);
  const stop = () => {
    if (done) return;
    done = true;
    clearInterval(timer);
    client.disconnect();
  };
  return {
    newestEntry: async (stream) => {
      try {
        const [newest] = await client.xrevrange(stream, '+', '-', 'COUNT', 1);
        return newest?.[0] ?? '0-0';
      } catch (error) {
        throw queueUnavailable(target, error);
      }
    },
    close: stop,
  };
}
