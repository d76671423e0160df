import { LanewardError } from '../../formats/codes/error.ts';

/** Where a --queue points: what ioredis needs to connect, and the URL as given (without its password). */
export interface QueueTarget {
  readonly url: string;
  readonly connection: {
    readonly host: string;
    readonly port: number;
    readonly db: number;
    readonly username?: string;
    readonly password?: string;
    /** BullMQ's workers block on Redis: a command is never given up after a number of retries. */
    readonly maxRetriesPerRequest: null;
    readonly connectTimeout: number;
  };
}

/**
 * `redis://[[user]:password@]HOST:PORT[/DB]` (PORT defaults to 6379), checked before
 * anything connects: anything else is USAGE naming the option. The password never
 * appears in a line laneward prints.
 */
export function queueTarget(raw: string, option = '--queue'): QueueTarget {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // Not a URL at all, but it may still hold a password after the scheme.
    throw new LanewardError('USAGE', `${option} ${JSON.stringify(raw.replace(/^([^/]*\/\/[^/@:]*:)[^/]*@/, '$1***@'))} is not a redis://HOST:PORT URL`);
  }
  if (url.protocol !== 'redis:' || url.hostname === '' || url.search !== '' || url.hash !== '') {
    // Named as given; rebuilt (lossy for a URL without an authority) only to hide a password.
    throw new LanewardError('USAGE', `${option} ${JSON.stringify(url.password === '' ? raw : redact(url))} is not a redis://HOST:PORT[/DB] URL`);
  }
  const port = url.port === '' ? 6379 : Number(url.port);
  const path = url.pathname.replace(/^\//, '');
  const db = path === '' ? 0 : Number(path);
  if (!Number.isInteger(db) || db < 0 || db > 15 || !/^\d*$/.test(path)) throw new LanewardError('USAGE', `${option}: the database ${JSON.stringify(path)} is not a number from 0 to 15`);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return {
    url: redact(url),
    connection: {
      host,
      port,
      db,
      ...(url.username === '' ? {} : { username: decodeURIComponent(url.username) }),
      ...(url.password === '' ? {} : { password: decodeURIComponent(url.password) }),
      maxRetriesPerRequest: null,
      connectTimeout: 5_000,
    },
  };
}

/** The URL as given, its scheme included, with any password replaced by `***`. */
function redact(url: URL): string {
  return `${url.protocol}//${url.username === '' && url.password === '' ? '' : `${url.username}${url.password === '' ? '' : ':***'}@`}${url.host}${url.pathname === '/' ? '' : url.pathname}${url.search}${url.hash}`;
}

/** The error for a Redis that cannot be reached or was lost: the lanes' own state is untouched. */
export function queueUnavailable(target: QueueTarget, cause: unknown): LanewardError {
  const why = cause instanceof Error ? cause.message : String(cause);
  return new LanewardError('QUEUE_UNAVAILABLE', `${target.url}: ${why.split('\n')[0]}`, { cause });
}

/**
 * Connects once and pings, within `ms`: a --queue that cannot be reached fails at once,
 * QUEUE_UNAVAILABLE, rather than when the first job would be queued.
 */
export async function checkQueue(target: QueueTarget, ms = 5_000): Promise<void> {
  const { default: Redis } = await import('ioredis');
  const client = new Redis({ ...target.connection, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: ms });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    throw queueUnavailable(target, error);
  } finally {
    client.disconnect();
  }
}

/** The connection options BullMQ's clients are made from, and the switch that ends their reconnecting. */
export interface BullConnection {
  readonly connection: QueueTarget['connection'] & { readonly retryStrategy: (times: number) => number | null };
  /** From now on a client that loses its connection, or fails to make one, stops trying. */
  giveUp(): void;
}

/**
 * The connection options BullMQ's clients get. Reconnects are tried at least once a
 * second (BullMQ's default backs off to 20 s), so a short outage heals at once. Once a
 * lost Redis is given up on, no client tries again: BullMQ reconnects some of its own
 * (an event reader whose blocking read outlived its deadline) even while it is being
 * closed, and a client that keeps reconnecting keeps the process alive.
 */
export function bullConnection(target: QueueTarget): BullConnection {
  let given = false;
  return {
    connection: { ...target.connection, retryStrategy: (times) => (given ? null : Math.min(times * 100, 1_000)) },
    giveUp: () => void (given = true),
  };
}

/** Whether Redis refused a write for being at its maxmemory (it answers, and will take it once it has room). */
export function isOutOfMemory(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('OOM ');
}

/** How often a write Redis refused for want of memory is tried again. */
const OOM_RETRY_MS = 500;

/**
 * `write()`, tried again for as long as Redis refuses it for want of memory: a Redis at its
 * maxmemory is waited out (nothing is failed by it), until `cancel` aborts.
 */
export async function whileOutOfMemory<T>(write: () => Promise<T>, cancel?: AbortSignal, onRefused?: () => void): Promise<T> {
  for (;;) {
    try {
      return await write();
    } catch (error) {
      if (!isOutOfMemory(error) || cancel?.aborted === true) throw error;
      onRefused?.();
      await new Promise((resolve) => setTimeout(resolve, OOM_RETRY_MS));
    }
  }
}
