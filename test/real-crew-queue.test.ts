import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { crewReply } from '../fixtures/model-server/crew-script.ts';
import { startModelServer, type ModelServer } from '../fixtures/model-server/index.ts';
import { ensureBuilt } from './helpers/cli.ts';
import { exitOf, killStrays, until } from './helpers/procs.ts';
import { BUNDLE, CLI_BIN, laneLines, realCrew } from './helpers/real-crew.ts';
import { redisMissing, startRedis, type RedisServer } from './helpers/redis.ts';

// One crew of real CLIs (claude and codex reviewers, a claude observer, claude and codex
// agents) over Redis on two workers, against the loopback model server; Redis loses its
// data while the coordinator does not run (its copy behind the workers' mirrors). The
// model server counts every conversation's opening request: each is sent once.

const SKIP = redisMissing();
let root: string;
let server: ModelServer;
let redis: RedisServer;

beforeAll(async () => {
  if (SKIP !== undefined) return;
  ensureBuilt();
  root = mkdtempSync(join(tmpdir(), 'laneward-real-queue-'));
  server = await startModelServer((request) => crewReply(request, 2));
  redis = await startRedis();
});
afterAll(async () => {
  await server?.close();
  await redis?.close();
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
});

function start(args: readonly string[], cwd: string) {
  const child = spawn(process.execPath, [BUNDLE, ...args], { cwd, env: { ...process.env, NO_COLOR: '1', PATH: `${CLI_BIN}:${process.env['PATH'] ?? ''}` }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
  const exited = exitOf(child).then(({ code }) => code);
  return { child, exited, out: () => out, err: () => err };
}

describe.skipIf(SKIP !== undefined)('real CLIs over a queue', () => {
  test('FLUSHALL while the coordinator is stopped: every lane ends on the two workers (complete, or its call in flight EXECUTION_UNKNOWN), no conversation opened twice at the model server', async () => {
    const dir = join(root, 'crew');
    const crew = realCrew(dir, server.url, { crew: 'realq', lanes: 3, roles: { native: 'claude-code', outside: 'codex', observer: 'claude-code', agent: 'claude-code' }, agentFor: (i) => (i === 1 ? 'codex' : 'claude-code'), limits: { agent_turns: 2, timeout_ms: 60_000 } });
    // The queue's jobs are signed with the key the crew's actions trust: a worker checks both with it.
    const keys = { key: join(dir, 'keys', 'actions.key'), pub: join(dir, 'keys', 'actions.pub') };
    const workers = ['w1', 'w2'].map((name) => start(['crew', 'worker', '--queue', redis.url, '--trust', keys.pub, '--state', join(dir, name), '--lock', '5s'], dir));
    try {
      const from = server.requests.length;
      const run = start(['crew', 'run', crew.file, '--queue', redis.url, '--key', keys.key, '--state', join(dir, 'coord'), '--queue-timeout', '10s'], dir);
      await until(() => server.requests.length - from >= 6, 120_000, 'the lanes to reach the model');
      run.child.kill('SIGSTOP');
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const { default: Redis } = await import('ioredis');
      const admin = new Redis(redis.url);
      await admin.flushall();
      admin.disconnect();
      run.child.kill('SIGCONT');
      expect(await run.exited, run.out() + run.err()).toBeLessThanOrEqual(1);
      expect(run.err()).toMatch(/^CREW_REQUEUED: lane=lane-\d+ records=\d+$/m);
      // Every lane ended: complete, or (resumed on the other worker, whose disk does not hold
      // the stream file of the call in flight) with that call EXECUTION_UNKNOWN, never sent again.
      const lanes = laneLines(run.out());
      expect(lanes.map((l) => l['lane']).sort()).toEqual(['lane-1', 'lane-2', 'lane-3']);
      for (const lane of lanes) expect(lane['code'] === undefined ? lane['status'] : `${lane['status']} ${lane['code']}`, run.out()).toMatch(/^(complete|failed EXECUTION_UNKNOWN)$/);
      expect(lanes.some((l) => l['status'] === 'complete')).toBe(true);
      // A conversation opens with the request of turn 0 and no tool result: one per prompt sent.
      const openings = server.requests.slice(from).flatMap((r) => (r.model !== undefined && r.model.turn === 0 ? [r.model.allUserText] : []));
      expect(openings.length).toBeGreaterThan(0);
      expect(openings.length - new Set(openings).size).toBe(0);
      for (const w of workers) w.child.kill('SIGTERM');
      expect(await Promise.all(workers.map((w) => w.exited))).toEqual([0, 0]);
    } finally {
      for (const w of workers) w.child.kill('SIGKILL');
      expect(killStrays(root)).toEqual([]);
    }
  }, 400_000);
});
