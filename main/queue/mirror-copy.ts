import type Redis from 'ioredis';
import type { RedisOptions } from 'ioredis';
import type { Store } from '../store/store.ts';
import { answerKey, copiedKey } from './lane-stream.ts';

/** One lane whose stream a coordinator copies. */
export interface CopiedLane {
  /** The lane's QA id: the key of its copy in the store. */
  readonly qa: string;
  /** Its Redis stream. */
  readonly stream: string;
}

/** Entries read per stream and call. */
const COUNT = 1_000;
/** How long one blocking read waits before it is issued again (and a close is noticed). */
const BLOCK_MS = 1_000;
/** How long an answer to a worker's ask is kept (it reads it within milliseconds, or asks again). */
const ANSWER_TTL_S = 600;

/**
 * A coordinator's copy of its lanes' mirrored records, in its own store: every entry of
 * each lane's Redis stream, with its id there, as it appears (one blocking read follows
 * all the lanes; the entries of one read share one commit). What a Redis that lost its
 * data (FLUSHALL, a restart without persistence, keys removed by hand) no longer holds is
 * put back from it, under the same ids, before the lane's job is queued again: the worker
 * that takes it resumes the lane from there, as it resumes one a lost worker left, and
 * starts nothing twice.
 *
 * What it committed it says in Redis, per lane (the newest id copied, at `copiedKey`): a
 * worker starts no child before the copy holds the dispatch it mirrored (LaneMirror's
 * durable flush), so no child runs whose dispatch a lost Redis would take with it.
 *
 * And it answers the workers' asks (the `asks` stream, read with the lanes'): before a
 * lane starts on a worker, what the copy holds past the lane's stream is put back, so a
 * Redis back from an older snapshot never has a lane resumed from less than the copy.
 */
export class MirrorCopy {
  private readonly last = new Map<string, string>();
  private readonly count = new Map<string, number>();
  private client: Redis | undefined;
  private closed = false;
  /** The commit of the last read's entries: what is put back waits for it. */
  private committing: Promise<unknown> = Promise.resolve();
  /** Lanes whose copied id is not said in Redis yet (a write it refused, its maxmemory, is tried again before the next read). */
  private readonly unsaid = new Map<string, string>();
  /** Put-backs one after another: two at once would add the same ids. */
  private putting: Promise<unknown> = Promise.resolve();
  private readonly byStream: ReadonlyMap<string, CopiedLane>;
  private readonly byQa: ReadonlyMap<string, CopiedLane>;

  constructor(
    private readonly store: Store,
    private readonly lanes: readonly CopiedLane[],
    private readonly asked: {
      /** The stream the crew run's workers ask on before a lane starts (see askCoordinator). */
      readonly asks: string;
      /** Whether an ask about the lane puts back what its stream lacks (the lane is still to end in this run). */
      readonly open: (qa: string) => boolean;
      /** Published on each time more is said copied or asks were answered (see CopiedSignal): the waiting workers ask again then. */
      readonly channel?: string;
    } = { asks: '', open: () => false },
  ) {
    this.byStream = new Map(lanes.map((lane) => [lane.stream, lane]));
    this.byQa = new Map(lanes.map((lane) => [lane.qa, lane]));
    for (const lane of lanes) {
      let n = 0;
      let id = '0-0';
      for (const { key, value } of store.queueMirror.getRange({ start: [lane.qa, Number.MAX_SAFE_INTEGER], end: [lane.qa, -1], reverse: true, limit: 1 })) {
        n = (key as [string, number])[1] + 1;
        id = value.id;
      }
      this.count.set(lane.qa, n);
      this.last.set(lane.stream, id);
      // Said again at the first read: a coordinator that ended before it said what it had
      // committed (Redis gone at that moment) would leave the lane's worker waiting for ever.
      if (id !== '0-0') this.unsaid.set(lane.qa, id);
    }
  }

  /** Copies what the streams hold past the copy now (one pass, not blocking). */
  async catchUp(redis: Redis): Promise<void> {
    for (;;) {
      const read = await this.read(redis, null);
      if (read === 0) return;
    }
  }

  /** Follows the streams on a connection of its own until closed; a failed read is tried again. */
  follow(connection: RedisOptions, onError: (error: unknown) => void = () => undefined): void {
    void (async () => {
      const { default: RedisClient } = await import('ioredis');
      if (this.closed) return;
      const client = new RedisClient(connection);
      client.on('error', () => undefined);
      this.client = client;
      while (!this.closed) {
        try {
          await this.read(client, BLOCK_MS);
        } catch (error) {
          if (this.closed) return;
          onError(error);
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      }
    })();
  }

  close(): void {
    this.closed = true;
    this.client?.disconnect();
  }

  /** How many records of the lane the copy holds. */
  size(qa: string): number {
    return this.count.get(qa) ?? 0;
  }

  /**
   * Puts back into the lane's stream what the copy holds past the stream's newest entry,
   * under the ids they had (so the copy and the stream agree on what is new); answers how
   * many entries were put back.
   */
  putBack(redis: Redis, lane: CopiedLane): Promise<number> {
    const next = this.putting.then(() => this.putBackNow(redis, lane));
    this.putting = next.catch(() => undefined);
    return next;
  }

  private async putBackNow(redis: Redis, lane: CopiedLane): Promise<number> {
    await this.committing;
    const [newest] = await redis.xrevrange(lane.stream, '+', '-', 'COUNT', 1);
    const top = newest?.[0] ?? '0-0';
    const missing = [...this.store.queueMirror.getRange({ start: [lane.qa, 0], end: [lane.qa, Number.MAX_SAFE_INTEGER] })]
      .map(({ value }) => value)
      .filter((entry) => compareIds(entry.id, top) > 0);
    const BATCH = 500;
    for (let i = 0; i < missing.length; i += BATCH) {
      const pipeline = redis.pipeline();
      for (const entry of missing.slice(i, i + BATCH)) pipeline.xadd(lane.stream, entry.id, 'db', entry.db, 'key', Buffer.from(entry.key), 'value', Buffer.from(entry.value));
      const replies = (await pipeline.exec()) ?? [];
      const failed = replies.find(([error]) => error !== null);
      if (failed !== undefined) throw failed[0];
    }
    // What is put back is what the copy holds: said so, for a worker whose records are all in it.
    const last = this.last.get(lane.stream) ?? '0-0';
    if (last !== '0-0') await redis.set(copiedKey(lane.qa), last);
    return missing.length;
  }

  /** One read of every lane's stream past the copy; the entries are put in the store in one turn. */
  private async read(redis: Redis, blockMs: number | null): Promise<number> {
    await this.say(redis);
    const streams = this.lanes.map((lane) => lane.stream);
    const asks = this.asked.asks;
    if (asks !== '') streams.push(asks);
    const ids = streams.map((stream) => this.last.get(stream) ?? '0-0');
    const args = blockMs === null ? ['COUNT', COUNT, 'STREAMS', ...streams, ...ids] : ['COUNT', COUNT, 'BLOCK', blockMs, 'STREAMS', ...streams, ...ids];
    const reply = (await (redis.xreadBuffer as (...a: unknown[]) => Promise<[Buffer, [Buffer, Buffer[]][]][] | null>)(...args)) ?? [];
    let n = 0;
    const puts: Promise<unknown>[] = [];
    const asked: { readonly id: string; readonly qa: string; readonly nonce: string }[] = [];
    let lastAsk: string | undefined;
    for (const [streamBytes, entries] of reply) {
      const stream = streamBytes.toString('utf8');
      if (stream === asks) {
        for (const [idBytes, fields] of entries) {
          const field = new Map<string, string>();
          for (let i = 0; i + 1 < fields.length; i += 2) field.set(fields[i]!.toString('utf8'), fields[i + 1]!.toString('utf8'));
          const qa = field.get('qa');
          const nonce = field.get('nonce');
          lastAsk = idBytes.toString('utf8');
          if (qa !== undefined && nonce !== undefined && /^[0-9a-f]{1,64}$/.test(nonce)) asked.push({ id: lastAsk, qa, nonce });
          n++;
        }
        continue;
      }
      const lane = this.byStream.get(stream);
      if (lane === undefined) continue;
      let count = this.count.get(lane.qa) ?? 0;
      for (const [idBytes, fields] of entries) {
        const field = new Map<string, Buffer>();
        for (let i = 0; i + 1 < fields.length; i += 2) field.set(fields[i]!.toString('utf8'), fields[i + 1]!);
        const id = idBytes.toString('utf8');
        // Issued in this turn with the rest: one commit (the store is batched).
        puts.push(this.store.queueMirror.put([lane.qa, count++], { id, db: field.get('db')?.toString('utf8') ?? '', key: field.get('key') ?? Buffer.alloc(0), value: field.get('value') ?? Buffer.alloc(0) }));
        this.last.set(stream, id);
        this.unsaid.set(lane.qa, id);
        n++;
      }
      this.count.set(lane.qa, count);
    }
    this.committing = Promise.all(puts);
    await this.committing;
    await this.say(redis);
    // Answered only once done: a failure reads the asks again, and answering twice is harmless.
    // An ask answered leaves the stream, so a coordinator started later answers only the
    // asks made while none ran (an answer nobody waits for would stay in Redis).
    for (const { id, qa, nonce } of asked) {
      const lane = this.byQa.get(qa);
      if (lane !== undefined) {
        if (this.asked.open(qa)) await this.putBack(redis, lane);
        await redis.set(answerKey(qa, nonce), '1', 'EX', ANSWER_TTL_S);
      }
      await redis.xdel(asks, id);
    }
    if (asked.length > 0 && this.asked.channel !== undefined) await redis.publish(this.asked.channel, '');
    if (lastAsk !== undefined) this.last.set(asks, lastAsk);
    return n;
  }

  /** Says in Redis how far each lane's copy is committed: one write for all the lanes that moved. */
  private async say(redis: Redis): Promise<void> {
    if (this.unsaid.size === 0) return;
    const said = [...this.unsaid];
    const pipeline = redis.pipeline().mset(...said.flatMap(([qa, id]) => [copiedKey(qa), id]));
    if (this.asked.channel !== undefined) pipeline.publish(this.asked.channel, '');
    const failed = ((await pipeline.exec()) ?? []).find(([error]) => error !== null);
    if (failed !== undefined) throw failed[0];
    for (const [qa, id] of said) if (this.unsaid.get(qa) === id) this.unsaid.delete(qa);
  }
}

/** Orders two stream ids (`ms-seq`). */
export function compareIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(BigInt) as [bigint, bigint];
  const [bm, bs] = b.split('-').map(BigInt) as [bigint, bigint];
  return am === bm ? (as === bs ? 0 : as < bs ? -1 : 1) : am < bm ? -1 : 1;
}
