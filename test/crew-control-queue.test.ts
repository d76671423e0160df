import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { BUNDLE, ensureBuilt, laneward, ROOT } from './helpers/cli.ts';
import { exitOf, killStrays, until } from './helpers/procs.ts';
import { redisMissing, startRedis, type RedisServer } from './helpers/redis.ts';
import { tempRoot } from './helpers/tmp.ts';

// A queued crew takes crew stop through its coordinator's store; lane requests are refused typed.

const SKIP = redisMissing();
if (SKIP !== undefined) process.stderr.write(`crew-control-queue.test.ts: skipped: ${SKIP}\n`);
const root = tempRoot('crew-control-queue');

function start(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): { child: ChildProcess; exited: Promise<number | null>; out: () => string } {
  const child = spawn(process.execPath, [BUNDLE, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.resume();
  const exited = exitOf(child).then(({ code, signal }) => code ?? (signal === null ? null : 128));
  return { child, exited, out: () => stdout };
}

// Skipped without redis-server (the reason is on stderr above).
describe.skipIf(SKIP !== undefined)('crew stop against a queued crew', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    ensureBuilt();
    redis = await startRedis({});
  });
  afterAll(async () => {
    await redis?.close();
    expect(killStrays(root)).toEqual([]);
  });

  test('should refuse a lane request CREW_CONTROL_UNSUPPORTED and stop the coordinator for the operator (exit 143, stopped_by operator:<name>)', async () => {
    const dir = join(root, 'crew');
    const file = writeDemoCrew({ dir, crew: 'qctl', lanes: 2, broken: 0, concurrency: 2, fixtures: join(ROOT, 'fixtures') });
    const log = join(dir, 'starts.log');
    // Slow agents: the crew is still running when the operator acts.
    const env = { LANEWARD_FIXTURE_DELAY_MS: '300', LANEWARD_FIXTURE_STEPS: '10', LANEWARD_FIXTURE_LOG: log };
    const state = join(dir, 'coord');
    const worker = start(['crew', 'worker', '--queue', redis.url, '--trust', join(dir, 'keys', 'actions.pub'), '--state', join(dir, 'w1'), '--lock', '3s'], dir, env);
    const run = start(['crew', 'run', file, '--queue', redis.url, '--key', join(dir, 'keys', 'actions.key'), '--state', state, '--report', join(dir, 'report.json')], dir, env);
    try {
      await until(() => existsSync(log) && readFileSync(log, 'utf8').includes('start '), 120_000, 'an agent turn to start on the worker');
      const ask = (args: string[]) => laneward(['crew', ...args.slice(0, 1), file, ...args.slice(1), '--state', state, '--by', 'carol'], { cwd: dir });
      const cancel = ask(['cancel', '--lane', 'lane-1']);
      expect([cancel.code, cancel.stdout.trim()]).toEqual([3, 'CREW_REQUEST: seq=- action=cancel_lane lane=lane-1 by=human:carol status=refused code=CREW_CONTROL_UNSUPPORTED detail=the crew runs on queue workers, which take only stop']);
      const stop = ask(['stop', '--wait', '60s']);
      expect([stop.code, stop.stdout.trim()]).toEqual([0, 'CREW_REQUEST: seq=1 action=stop lane=- by=human:carol status=applied']);
      expect(await run.exited).toBe(143);
      expect(run.out()).toContain('CREW_CONTROL: seq=1 action=stop lane=- by=human:carol status=applied');
      expect(JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')).stopped_by).toBe('operator:carol');
    } finally {
      if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGTERM');
      await run.exited;
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
  }, 240_000);
});
