import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { BUNDLE, ensureBuilt, laneward, ROOT } from './helpers/cli.ts';
import { killStrays, until } from './helpers/procs.ts';
import { redisMissing, startRedis, type RedisServer } from './helpers/redis.ts';
import { tempRoot } from './helpers/tmp.ts';

// One crew session for every way a crew runs: the same cases, the same lines, codes and
// exit statuses, for a crew run in this process (local) and one run on queue workers
// through a real redis-server on loopback (queued).

const REDIS = redisMissing();
if (REDIS !== undefined) process.stderr.write(`crew-session.test.ts: queued cases skipped: ${REDIS}\n`);
const root = tempRoot('crew-session');
let serial = 0;

interface Started {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  readonly ended: () => boolean;
  out(): string;
  err(): string;
}

function start(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): Started {
  const child = spawn(process.execPath, [BUNDLE, ...args], { cwd, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let ended = false;
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code, signal) => {
      ended = true;
      resolve(code ?? (signal === null ? null : 128));
    }),
  );
  return { child, exited, ended: () => ended, out: () => stdout, err: () => stderr };
}

function crewOf(lanes: number, broken: number) {
  const dir = join(root, `crew-${++serial}`);
  const name = `s${serial}`;
  const file = writeDemoCrew({ dir, crew: name, lanes, broken, concurrency: 4, fixtures: join(ROOT, 'fixtures') });
  return { dir, file, name, key: join(dir, 'keys', 'actions.key'), pub: join(dir, 'keys', 'actions.pub'), log: join(dir, 'starts.log') };
}
type Crew = ReturnType<typeof crewOf>;

const lines = (text: string, prefix: string) => text.split('\n').filter((l) => l.startsWith(prefix));
const field = (line: string, name: string) => new RegExp(`(?:^| )${name}=(\\S+)`).exec(line)?.[1];
/** Every stage a lane is in while it runs (not waiting its turn, not ended). */
const WORKING = ['bootstrap', 'review', 'answer', 'work', 'cross-check', 'export'];

/** How a crew's lanes run: the coordinator's command line, where its state is, and what runs its lanes besides it. */
interface Way {
  run(crew: Crew, extra?: readonly string[]): string[];
  state(crew: Crew): string;
  /** Starts what runs the lanes elsewhere (queue workers), with `env`; none for a local crew. */
  workers(crew: Crew, env?: NodeJS.ProcessEnv): Started[];
}

let redis: RedisServer | undefined;
const started: Started[] = [];

const WAYS: Record<'local' | 'queued', Way> = {
  local: {
    run: (crew, extra = []) => ['crew', 'run', crew.file, '--state', join(crew.dir, 'state'), ...extra],
    state: (crew) => join(crew.dir, 'state'),
    workers: () => [],
  },
  queued: {
    run: (crew, extra = []) => ['crew', 'run', crew.file, '--queue', redis!.url, '--key', crew.key, '--state', join(crew.dir, 'coord'), ...extra],
    state: (crew) => join(crew.dir, 'coord'),
    workers: (crew, env = {}) =>
      ['w1', 'w2'].map((name) => {
        const w = start(['crew', 'worker', '--queue', redis!.url, '--trust', crew.pub, '--state', join(crew.dir, name), '--lock', '3s'], crew.dir, env);
        started.push(w);
        return w;
      }),
  },
};

const stopAll = async (list: readonly Started[]) => {
  for (const w of list) w.child.kill('SIGTERM');
  return Promise.all(list.map((w) => w.exited));
};

beforeAll(async () => {
  ensureBuilt();
  if (REDIS === undefined) redis = await startRedis();
});

afterAll(async () => {
  for (const w of started) w.child.kill('SIGKILL');
  await redis?.close();
});

afterEach(() => {
  expect(killStrays(root)).toEqual([]);
});

describe.each([['local'], ['queued']] as const)('crew session: %s', (way) => {
  const w = WAYS[way];
  const skip = way === 'queued' && REDIS !== undefined;

  test.skipIf(skip)('should end a mixed crew with each lane typed as the other way types it, and exit 1', async () => {
    const crew = crewOf(10, 5);
    const workers = w.workers(crew);
    const report = join(crew.dir, 'report.json');
    const run = start(w.run(crew, ['--report', report]), crew.dir);
    expect(await run.exited, run.out() + run.err()).toBe(1);
    expect(await stopAll(workers)).toEqual(workers.map(() => 0));
    const ends = lines(run.out(), 'CREW_LANE: ').map((l) => `${field(l, 'lane')} ${field(l, 'status')} ${field(l, 'code') ?? '-'}`);
    expect(ends.sort()).toEqual([
      'lane-01 complete -',
      'lane-02 failed LEASE_EXPIRED',
      'lane-03 complete -',
      'lane-04 failed CHILD_FAILED',
      'lane-05 complete -',
      'lane-06 failed RESULT_FINDINGS_MISSING',
      'lane-07 complete -',
      'lane-08 failed CHILD_FAILED',
      'lane-09 complete -',
      'lane-10 failed QA_CROSS_CHECK_FAILED',
    ]);
    expect(lines(run.out(), 'CREW_SUMMARY: ')).toHaveLength(1);
    expect(lines(run.out(), 'CREW_SUMMARY: ')[0]).toMatch(/^CREW_SUMMARY: lanes=10 complete=5 failed=5 interrupted=0 attempts=\d+ duration_s=\d+\.\d$/);
    const written = JSON.parse(readFileSync(report, 'utf8'));
    expect(written.summary).toMatchObject({ lanes: 10, complete: 5, failed: 5, interrupted: 0 });
    expect(written.lanes).toHaveLength(10);
    // The supervised calls this run started: every lane's, a first run's being all its attempts; a queued coordinator starts none.
    expect(written.stats.calls).toBe(way === 'local' ? written.summary.attempts : 0);
    const status = laneward(['crew', 'status', crew.file, '--state', w.state(crew)], { cwd: crew.dir });
    expect(status.code).toBe(1);
    expect(status.stdout).toMatch(/^CREW_STATUS: crew=s\d+ run=done lanes=10 .* complete=5 failed=5 /);
  }, 300_000);

  test.skipIf(skip)('should refuse --report to a directory or under a missing one (USAGE, exit 2) before anything starts', () => {
    const crew = crewOf(1, 0);
    for (const report of [crew.dir, join(crew.dir, 'no-such-dir', 'r.json')]) {
      // No worker runs: a coordinator that started would wait for its lane until killed.
      const refused = laneward(w.run(crew, ['--report', report]), { cwd: crew.dir, timeoutMs: 60_000 });
      expect(refused.timedOut).toBeUndefined();
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/--report .*\(USAGE\)$/m);
      expect(refused.stdout).toBe('');
    }
    // Neither claim was taken (the out claim makes the out directory) nor the state root opened.
    expect(existsSync(join(crew.dir, 'runs'))).toBe(false);
    expect(existsSync(w.state(crew))).toBe(false);
  }, 150_000);

  test.skipIf(skip)('should show the lanes working to crew status from another process while they run', async () => {
    const crew = crewOf(2, 0);
    const env = { LANEWARD_FIXTURE_DELAY_MS: '300', LANEWARD_FIXTURE_LOG: crew.log };
    const workers = w.workers(crew, env);
    const run = start(w.run(crew), crew.dir, env);
    const seen: string[] = [];
    let working = 0;
    // Asked until a lane shows working or the crew ended: a crew that records its lanes only
    // at their end never shows one working.
    while (!run.ended() && working === 0) {
      const status = laneward(['crew', 'status', crew.file, '--state', w.state(crew), '--json'], { cwd: crew.dir });
      if (status.code === 0 && status.stdout !== '') {
        const snapshot = JSON.parse(status.stdout) as { run: string; byState: Record<string, number> };
        seen.push(`${snapshot.run} ${JSON.stringify(snapshot.byState)}`);
        if (snapshot.run === 'running') working = WORKING.reduce((sum, stage) => sum + (snapshot.byState[stage] ?? 0), 0);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(working, seen.join('\n')).toBeGreaterThanOrEqual(1);
    expect(await run.exited, run.out() + run.err()).toBe(0);
    expect(await stopAll(workers)).toEqual(workers.map(() => 0));
    expect(lines(run.out(), 'CREW_LANE: ').map((l) => field(l, 'status'))).toEqual(['complete', 'complete']);
  }, 300_000);

  test.skipIf(skip)('should refuse a second run of the crew while the first runs (CREW_BUSY, exit 3, nothing printed), and let the first complete', async () => {
    const crew = crewOf(2, 0);
    const env = { LANEWARD_FIXTURE_DELAY_MS: '300', LANEWARD_FIXTURE_LOG: crew.log };
    const workers = w.workers(crew, env);
    const first = start(w.run(crew), crew.dir, env);
    try {
      await until(() => existsSync(crew.log), 120_000, 'the first crew to start a child');
    } catch (error) {
      first.child.kill('SIGKILL');
      throw error;
    }
    const second = laneward(w.run(crew), { cwd: crew.dir, timeoutMs: 60_000 });
    if (second.code !== 3) first.child.kill('SIGKILL');
    expect(second.code, second.stdout + second.stderr).toBe(3);
    expect(second.stderr).toMatch(/crew s\d+ is being run by process \d+ since .*\(CREW_BUSY\)$/m);
    expect(second.stdout).toBe('');
    expect(await first.exited, first.out() + first.err()).toBe(0);
    expect(await stopAll(workers)).toEqual(workers.map(() => 0));
    expect(lines(first.out(), 'CREW_SUMMARY: ')[0]).toMatch(/ complete=2 failed=0 /);
  }, 300_000);
});
