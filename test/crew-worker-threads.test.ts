import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { BUNDLE, ensureBuilt, ROOT } from './helpers/cli.ts';
import { exitOf, killStrays } from './helpers/procs.ts';
import { redisMissing, startRedis, type RedisServer } from './helpers/redis.ts';
import { tempRoot } from './helpers/tmp.ts';

// A crew worker runs each lane job as a crew of its own, over the threads it keeps for its
// life: its supervise pool and its QA thread. Seen from /proc: the threads a worker has
// once its first lane ended are the threads it runs every later lane on.

const SKIP = redisMissing();
const root = tempRoot('crew-worker-threads');

/** The thread ids of `pid` now (none once it is gone). */
function threads(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).map(Number);
  } catch {
    return [];
  }
}

describe.skipIf(SKIP !== undefined)('crew worker threads', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    ensureBuilt();
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.close();
    expect(killStrays(root)).toEqual([]);
  });

  test('six lanes one after another start no thread after the first lane: every lane runs on the worker pool and QA thread', async () => {
    const dir = join(root, 'crew');
    const file = writeDemoCrew({ dir, crew: 'threads', lanes: 6, broken: 0, concurrency: 2, fixtures: join(ROOT, 'fixtures'), instant: true });
    const worker = spawn(process.execPath, [BUNDLE, 'crew', 'worker', '--queue', redis.url, '--trust', join(dir, 'keys', 'actions.pub'), '--state', join(dir, 'w1'), '--lock', '3s', '--concurrency', '1'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    worker.stdout.on('data', (chunk) => (out += chunk));
    const exited = exitOf(worker).then(({ code }) => code);
    // Every thread seen, and those first seen after the first lane ended.
    const seen = new Set<number>();
    const later = new Set<number>();
    const poll = setInterval(() => {
      const firstEnded = /status=complete/.test(out);
      for (const tid of threads(worker.pid!)) {
        if (!seen.has(tid) && firstEnded) later.add(tid);
        seen.add(tid);
      }
    }, 10);
    try {
      // Spawned, not spawnSync: the poll must go on while the crew runs.
      const coordinator = spawn(process.execPath, [BUNDLE, 'crew', 'run', file, '--queue', redis.url, '--key', join(dir, 'keys', 'actions.key'), '--state', join(dir, 'coord')], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
      let summary = '';
      coordinator.stdout.on('data', (chunk) => (summary += chunk));
      const coordinatorExit = exitOf(coordinator);
      expect((await coordinatorExit).code).toBe(0);
      expect(summary.trim().split('\n').at(-1)).toMatch(/^CREW_SUMMARY: lanes=6 complete=6 failed=0 /);
      expect(out.split('\n').filter((l) => / status=complete$/.test(l))).toHaveLength(6);
    } finally {
      clearInterval(poll);
      worker.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    // A crew of its own per lane used to start three threads a lane (two supervise threads
    // and a QA thread), 15 for the five later lanes. What may still appear late is a
    // runtime's own helper started on first use (libuv's file-system threads).
    expect(later.size, `threads first seen after the first lane: ${[...later].join(' ')}`).toBeLessThanOrEqual(3);
  }, 180_000);
});
