import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { crewQaLaneId } from '../formats/crew/qa-id.ts';
import { asksKey, copiedKey, laneStreamKey } from '../main/queue/lane-stream.ts';
import { MirrorCopy } from '../main/queue/mirror-copy.ts';
import { askCoordinator } from '../main/queue/stream-ask.ts';
import { openStore } from '../main/store/store.ts';
import { redisMissing, startRedis, type RedisServer } from './helpers/redis.ts';
import { tempRoot } from './helpers/tmp.ts';
import { until } from './helpers/procs.ts';

// The coordinator's copy of a lane's stream against a real redis-server: what it says it
// committed, and what it puts back, when a worker asks, into a stream shorter than the copy
// (a Redis back from an older snapshot).

const SKIP = redisMissing();
const root = tempRoot('stream-ask');

describe.skipIf(SKIP !== undefined)(`the coordinator's copy and a worker's ask${SKIP === undefined ? '' : ` (skipped: ${SKIP})`}`, () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.close();
  });

  /** A coordinator's copy of one lane's stream, with a client for the test; `open`: whether the lane is still to end. */
  const copying = async (runAs: string, open: boolean) => {
    const { default: Redis } = await import('ioredis');
    const client = new Redis(redis.url);
    const [lane, qa, stream] = ['lane-1', crewQaLaneId(runAs, 'lane-1'), laneStreamKey(runAs, 'lane-1')];
    const copy = new MirrorCopy(openStore(join(root, runAs.replace('.', '-')), { batched: true }), [{ qa, stream }], { asks: asksKey(runAs), open: () => open });
    /** Until the copy says in Redis that it holds `id`. */
    const copied = async (id: string) => {
      for (let tries = 0; (await client.get(copiedKey(qa))) !== id; tries++) {
        if (tries > 200) throw new Error(`the copy never said it holds ${id}`);
        await new Promise((resolve) => setTimeout(resolve, 50)); // polls Redis; nothing is inferred from the pause
      }
    };
    return { client, lane, qa, stream, copy, copied, close: () => (copy.close(), client.disconnect()) };
  };

  test('a stream cut back to an older snapshot is whole again, under its old ids, once the worker\'s ask is answered; nothing puts it back before', async () => {
    const runAs = 'crew-a.0123456789abcdef';
    const { client, lane, qa, stream, copy, copied, close } = await copying(runAs, true);
    try {
      // A worker's five records, as it mirrors them.
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await client.xadd(stream, '*', 'db', 'journal', 'key', `k${i}`, 'value', `v${i}`))!);
      copy.follow({ host: '127.0.0.1', port: redis.port });
      // Said once committed: the newest id the copy holds.
      await copied(ids[4]!);
      // The snapshot: the stream as it was after two of them (its ids kept, as a save keeps them).
      await client.del(stream);
      for (const id of ids.slice(0, 2)) await client.xadd(stream, id, 'db', 'journal', 'key', `k${ids.indexOf(id)}`, 'value', `v${ids.indexOf(id)}`);
      // Nothing is put back unasked: the stream stays short while nobody asks.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect((await client.xrange(stream, '-', '+')).map(([id]) => id)).toEqual(ids.slice(0, 2));
      await askCoordinator(client, { runAs, lane, qa });
      const entries = await client.xrange(stream, '-', '+');
      expect(entries.map(([id]) => id)).toEqual(ids);
      expect(entries.map(([, fields]) => fields)).toEqual(ids.map((_, i) => ['db', 'journal', 'key', `k${i}`, 'value', `v${i}`]));
      // Asked again with nothing missing: answered, nothing added twice.
      await askCoordinator(client, { runAs, lane, qa });
      expect(await client.xlen(stream)).toBe(5);
    } finally {
      close();
    }
  }, 60_000);

  test('an ask about a lane the run holds ended is answered and puts nothing back (its stream was removed with its end)', async () => {
    const runAs = 'crew-c.0123456789abcdef';
    const { client, lane, qa, stream, copy, copied, close } = await copying(runAs, false);
    try {
      const id = (await client.xadd(stream, '*', 'db', 'journal', 'key', 'k', 'value', 'v'))!;
      copy.follow({ host: '127.0.0.1', port: redis.port });
      await copied(id);
      await client.del(stream, copiedKey(qa));
      await askCoordinator(client, { runAs, lane, qa });
      expect(await client.exists(stream)).toBe(0);
      // The answer was taken as it was read: no key of the ask is left but the asks stream.
      expect((await client.keys('laneward:answer:*')).filter((key) => key.includes(qa))).toEqual([]);
    } finally {
      close();
    }
  }, 60_000);

  test('a coordinator started again says at once how far its store holds each lane, though nothing new comes (the last one ended before it could)', async () => {
    const runAs = 'crew-d.0123456789abcdef';
    const first = await copying(runAs, true);
    const ids: string[] = [];
    try {
      for (let i = 0; i < 3; i++) ids.push((await first.client.xadd(first.stream, '*', 'db', 'journal', 'key', `k${i}`, 'value', `v${i}`))!);
      first.copy.follow({ host: '127.0.0.1', port: redis.port });
      await first.copied(ids[2]!);
    } finally {
      first.close();
    }
    // What the first said is gone, as when Redis went away before its write.
    const again = await copying(runAs, true);
    try {
      await again.client.del(copiedKey(again.qa));
      again.copy.follow({ host: '127.0.0.1', port: redis.port });
      await again.copied(ids[2]!);
    } finally {
      again.close();
    }
  }, 60_000);

  test('an ask while no coordinator follows is waited on, said once after 5 s, and given up 5 s after the worker begins to stop: COORDINATOR_SILENT', async () => {
    const { default: Redis } = await import('ioredis');
    const client = new Redis(redis.url);
    const stopping = new AbortController();
    let said = 0;
    try {
      const asked = askCoordinator(client, { runAs: 'crew-b.0123456789abcdef', lane: 'lane-1', qa: crewQaLaneId('crew-b.0123456789abcdef', 'lane-1'), stopping: stopping.signal, onWaiting: () => (said += 1) });
      const outcome = asked.then(
        () => 'answered',
        (error: { code?: string }) => error.code,
      );
      await until(() => said === 1, 15_000, 'the wait to be said');
      stopping.abort();
      expect(await outcome).toBe('COORDINATOR_SILENT');
      expect(said).toBe(1);
    } finally {
      client.disconnect();
    }
  }, 60_000);
});
