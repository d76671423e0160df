import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { signJob } from '../main/queue/signed-job.ts';
import { LANE_QUEUE, runAsName } from '../main/queue/lane-job.ts';
import type { MirroredRecord } from '../main/queue/lane-stream.ts';
import { restoreLane } from '../main/queue/lane-restore.ts';
import { openStore } from '../main/store/store.ts';
import { crewQaLaneId } from '../formats/crew/qa-id.ts';
import { Encoder } from 'cbor-x';
import { readPrivateKey, writeKeyPair } from '../main/actions/keys.ts';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { BUNDLE, codesOf, ensureBuilt, laneward, ROOT } from './helpers/cli.ts';
import { exitOf, killStrays, until } from './helpers/procs.ts';
import { redisMissing, startRedis, type RedisServer } from './helpers/redis.ts';
import { tempRoot } from './helpers/tmp.ts';

// One crew across several workers, each on its own state root as if on its own machine,
// through a real redis-server on loopback.

const SKIP = redisMissing();
if (SKIP !== undefined) process.stderr.write(`crew-queue.test.ts: skipped: ${SKIP}\n`);
const root = tempRoot('crew-queue');
let serial = 0;

interface Started {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  out(): string;
  err(): string;
}

function start(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): Started {
  const child = spawn(process.execPath, [BUNDLE, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = exitOf(child).then(({ code, signal }) => code ?? (signal === null ? null : 128));
  return { child, exited, out: () => stdout, err: () => stderr };
}

/** A crew of `lanes` lanes with its keys, and the args of its coordinator and workers. */
function queuedCrew(lanes: number, options: { instant?: boolean; broken?: number; name?: string } = {}) {
  const dir = join(root, `crew-${++serial}`);
  const file = writeDemoCrew({ dir, crew: options.name ?? `q${serial}`, lanes, broken: options.broken ?? 0, concurrency: 2, fixtures: join(ROOT, 'fixtures'), instant: options.instant ?? true });
  return { dir, file, name: options.name ?? `q${serial}`, key: join(dir, 'keys', 'actions.key'), pub: join(dir, 'keys', 'actions.pub') };
}

afterEach(() => {
  expect(killStrays(root)).toEqual([]);
});

describe.skipIf(SKIP !== undefined)(`crew run --queue and crew worker${SKIP === undefined ? '' : ` (skipped: ${SKIP})`}`, () => {
  let redis: RedisServer;
  const workers: Started[] = [];
  beforeAll(async () => {
    ensureBuilt();
    redis = await startRedis({ appendonly: true });
  });
  afterAll(async () => {
    for (const w of workers) w.child.kill('SIGKILL');
    await redis?.close();
  });
  const worker = (crew: { dir: string; pub: string }, name: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}) => {
    const w = start(['crew', 'worker', '--queue', redis.url, '--trust', crew.pub, '--state', join(crew.dir, name), '--lock', '3s', ...extra], crew.dir, env);
    workers.push(w);
    return w;
  };
  /** The coordinator's command line for `crew`, on its own state root. */
  const coordinator = (crew: { dir: string; file: string; key: string }) => ['crew', 'run', crew.file, '--queue', redis.url, '--key', crew.key, '--state', join(crew.dir, 'coord')];
  const stopAll = async (list: Started[]) => {
    for (const w of list) w.child.kill('SIGTERM');
    return Promise.all(list.map((w) => w.exited));
  };

  test('a 20-lane crew on 3 workers completes, and every lane validates in the coordinator out', async () => {
    const crew = queuedCrew(20);
    const three = ['w1', 'w2', 'w3'].map((name) => worker(crew, name));
    const run = laneward(coordinator(crew), { cwd: crew.dir, timeoutMs: 300_000 });
    expect(await stopAll(three)).toEqual([0, 0, 0]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines.filter((l) => l.startsWith('CREW_LANE: ') && / status=complete /.test(l))).toHaveLength(20);
    expect(lines.at(-1)).toMatch(/^CREW_SUMMARY: lanes=20 complete=20 failed=0 interrupted=0 attempts=\d+ duration_s=/);
    // Every worker took lanes: the crew really was spread.
    for (const w of three) expect(w.out()).toMatch(/CREW_WORKER: job=\S+ lane=lane-\d+ status=complete/);
    const validated = laneward(['artifact', 'validate', join(crew.dir, 'runs')]);
    expect(validated.stdout.trim().split('\n').at(-1)).toBe('ARTIFACT_SUMMARY: runs=20 valid=20 invalid=0');
    // The coordinator store holds the lanes: crew status reads them after the fact.
    const status = laneward(['crew', 'status', crew.file, '--state', join(crew.dir, 'coord')], { cwd: crew.dir });
    expect(status.stdout).toMatch(/^CREW_STATUS: crew=q\d+ run=done lanes=20 .* complete=20 failed=0 /);
    // Run again: nothing is enqueued twice, the results are picked up again.
    const again = laneward(coordinator(crew), { cwd: crew.dir, timeoutMs: 60_000 });
    expect(again.code).toBe(0);
    expect(again.stdout.trim().split('\n').filter((l) => l.startsWith('CREW_LANE: '))).toHaveLength(20);
  }, 320_000);

  test('a worker SIGKILLed mid-lane: its lanes end on the others, no prompt starts twice, its in-flight attempts are typed', async () => {
    const crew = queuedCrew(6, { instant: false });
    const log = join(crew.dir, 'starts.log');
    const env = { LANEWARD_FIXTURE_DELAY_MS: '400', LANEWARD_FIXTURE_LOG: log, REVIEWER_LOG: log, REVIEWER_DELAY_MS: '150' };
    const victim = worker(crew, 'w1', [], env);
    const survivor = worker(crew, 'w2', [], env);
    const run = start(coordinator(crew), crew.dir);
    // Killed once it has started children of its own.
    await until(() => existsSync(log) && readFileSync(log, 'utf8').includes(join(crew.dir, 'w1')), 60_000, 'the victim to start a child');
    victim.child.kill('SIGKILL');
    expect(await run.exited, run.out() + run.err()).toBeLessThanOrEqual(1);
    expect(await stopAll([survivor])).toEqual([0]);
    const lines = run.out().trim().split('\n');
    const ends = lines.filter((l) => l.startsWith('CREW_LANE: '));
    expect(ends).toHaveLength(6);
    // Every lane ended, complete or with a typed code.
    for (const line of ends) expect(line).toMatch(/ status=(complete|failed code=[A-Z_]+) /);
    // A prompt is a (lane, attempt or turn) file: started at most once across both machines.
    const starts = readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('start '))
      .map((l) => l.split(' ').slice(2).join(' '));
    const moved = new Set(starts.filter((p) => p.includes(join(crew.dir, 'w1'))).map((p) => /queue\/[^/]+\.(lane-\d+)\//.exec(p)?.[1]));
    expect(moved.size).toBeGreaterThanOrEqual(1);
    const prompts = starts.map((p) => p.replace(/\/w[12]\//, '/w/'));
    expect(prompts.length - new Set(prompts).size, prompts.join('\n')).toBe(0);
    // The lanes the victim had: ended on the survivor.
    for (const lane of moved) expect(survivor.out()).toMatch(new RegExp(`lane=${lane} status=`));
    // What the victim dispatched and never saw end is, on the survivor, EXECUTION_UNKNOWN
    // (a reviewer) or a lost turn (an agent): never a second start.
    let checked = 0;
    for (const lane of moved) {
      const crewFile = join(crew.dir, 'w2', 'queue', readdirSync(join(crew.dir, 'w2', 'queue')).find((d) => d.endsWith(`.${lane}`))!, 'crew.json');
      const story = JSON.parse(laneward(['crew', 'status', crewFile, '--state', join(crew.dir, 'w2'), '--lane', lane!, '--json'], { cwd: crew.dir }).stdout) as {
        attempts: { id: string; kind: string; phase: string | null; voice: string | null; outcome: string; code: string | null }[];
      };
      // A reviewer voice the victim started ended there (its outcome was mirrored) or is
      // unknown here; no prompt started twice, so the survivor never ran it again.
      const voices = starts
        .filter((p) => p.includes(join(crew.dir, 'w1')) && p.includes(`/runs/${lane}/`))
        .map((p) => /\/([a-z]+)-(native|outside)-prompt\.md$/.exec(p)?.slice(1, 3))
        .filter((pv): pv is string[] => pv !== undefined);
      checked += voices.length;
      for (const [phase, voice] of voices) {
        const ended = story.attempts.filter((a) => a.kind === 'reviewer' && a.phase === phase && a.voice === voice);
        expect(ended.some((a) => a.outcome === 'completed' || a.code === 'EXECUTION_UNKNOWN'), `${lane} ${phase} ${voice} ${JSON.stringify(ended)}`).toBe(true);
      }
    }
    expect(checked).toBeGreaterThanOrEqual(1);
  }, 180_000);

  test('a worker paused past its lock finds its lane taken, writes nothing more, and the lane ends on another', async () => {
    const crew = queuedCrew(2, { instant: false });
    const log = join(crew.dir, 'starts.log');
    const env = { LANEWARD_FIXTURE_DELAY_MS: '500', LANEWARD_FIXTURE_LOG: log, REVIEWER_LOG: log, REVIEWER_DELAY_MS: '150' };
    const paused = worker(crew, 'w1', ['--concurrency', '2'], env);
    const run = start(coordinator(crew), crew.dir);
    await until(() => existsSync(log) && readFileSync(log, 'utf8').includes(join(crew.dir, 'w1')), 60_000, 'the first worker to start a child');
    paused.child.kill('SIGSTOP');
    const other = worker(crew, 'w2', [], env);
    await until(() => /lane=lane-\d+ status=/.test(other.out()), 120_000, 'the other worker to end a lane');
    paused.child.kill('SIGCONT');
    expect(await run.exited, run.out() + run.err()).toBeLessThanOrEqual(1);
    await until(() => /code=LANE_TAKEN/.test(paused.out()), 60_000, 'the paused worker to find its lane taken');
    expect(await stopAll([paused, other])).toEqual([0, 0]);
    const prompts = readFileSync(log, 'utf8').split('\n').filter((l) => l.startsWith('start ')).map((l) => l.split(' ').slice(2).join(' ').replace(/\/w[12]\//, '/w/'));
    expect(prompts.length - new Set(prompts).size).toBe(0);
    expect(run.out().trim().split('\n').filter((l) => l.startsWith('CREW_LANE: '))).toHaveLength(2);
  }, 240_000);

  test('redis restarted mid-crew (append-only file): the crew completes', async () => {
    const crew = queuedCrew(6, { instant: false });
    const env = { LANEWARD_FIXTURE_DELAY_MS: '200' };
    const two = [worker(crew, 'w1', [], env), worker(crew, 'w2', [], env)];
    const run = start([...coordinator(crew), '--queue-timeout', '60s'], crew.dir);
    await until(() => /CREW_WORKER: job=/.test(two.map((w) => w.out()).join('')) || run.out().includes('CREW_LANE'), 60_000, 'a first lane to end');
    await redis.stop();
    await redis.restart();
    expect(await run.exited, run.out() + run.err()).toBe(0);
    expect(run.out().trim().split('\n').at(-1)).toMatch(/^CREW_SUMMARY: lanes=6 complete=6 /);
    expect(await stopAll(two)).toEqual([0, 0]);
  }, 240_000);

  test('redis lost mid-crew: the coordinator ends QUEUE_UNAVAILABLE with no stack trace; once redis is back the same command completes the crew', async () => {
    const crew = queuedCrew(4, { instant: false });
    const env = { LANEWARD_FIXTURE_DELAY_MS: '300' };
    // An outage shorter than the workers' lock: every lane goes on where it runs (one
    // longer than the lock is a takeover, whose in-flight attempts are EXECUTION_UNKNOWN;
    // the FLUSHALL test covers that).
    const two = [worker(crew, 'w1', ['--lock', '60s'], env), worker(crew, 'w2', ['--lock', '60s'], env)];
    const args = [...coordinator(crew), '--queue-timeout', '3s'];
    const run = start(args, crew.dir);
    await until(() => /CREW_WORKER: queue=/.test(two.map((w) => w.err()).join('')) && existsSync(join(crew.dir, 'w1', 'queue')), 60_000, 'the lanes to start');
    await redis.stop();
    expect(await run.exited, run.out() + run.err()).toBe(1);
    expect(codesOf(run.err())).toEqual(['QUEUE_UNAVAILABLE']);
    expect(run.err()).not.toMatch(/\n\s+at /);
    await redis.restart();
    const again = start(args, crew.dir);
    expect(await again.exited, again.out() + again.err()).toBe(0);
    expect(again.out().trim().split('\n').at(-1), two.map((w) => w.out() + w.err()).join('\n---\n')).toMatch(/^CREW_SUMMARY: lanes=4 complete=4 /);
    expect(await stopAll(two)).toEqual([0, 0]);
  }, 240_000);

  test('crew run --queue --serve: the console follows the lanes on their workers', async () => {
    const crew = queuedCrew(2, { instant: false });
    const w = worker(crew, 'w1', [], { LANEWARD_FIXTURE_DELAY_MS: '300' });
    const run = start([...coordinator(crew), '--serve', '0'], crew.dir);
    await until(() => /^CREW_VIEW: \S+$/m.test(run.err()), 30_000, 'the console');
    const url = /^CREW_VIEW: (\S+?)(?:\?token=\S+)?$/m.exec(run.err())![1]!;
    const { httpRequest } = await import('./helpers/sse.ts');
    const snapshot = JSON.parse((await httpRequest(`${url}snapshot.json`)).body) as { lanes: { id: string }[]; source: string };
    expect(snapshot.lanes.map((l) => l.id)).toEqual(['lane-1', 'lane-2']);
    expect(await run.exited).toBe(0);
    expect(await stopAll([w])).toEqual([0]);
  }, 120_000);

  test('--retry-failed runs a failed lane again on a worker, as new attempts; a complete lane keeps no mirror', async () => {
    const crew = queuedCrew(3, { broken: 1 });
    const w = worker(crew, 'w1');
    const args = coordinator(crew);
    const first = laneward(args, { cwd: crew.dir, timeoutMs: 120_000 });
    expect(first.code).toBe(1);
    const failed = first.stdout.split('\n').find((l) => / status=failed /.test(l))!;
    expect(failed).toContain(`; retry: laneward crew run ${crew.file} --queue ${redis.url} --key ${crew.key} --retry-failed --state ${join(crew.dir, 'coord')}`);
    const lane = /lane=(\S+)/.exec(failed)![1]!;
    const attempts = Number(/attempts=(\d+)/.exec(failed)![1]);
    const again = laneward([...args, '--retry-failed'], { cwd: crew.dir, timeoutMs: 120_000 });
    const retried = again.stdout.split('\n').find((l) => l.startsWith(`CREW_LANE: lane=${lane} `))!;
    // The broken fixture decides how it ends this time; that it ran again is what counts.
    expect(retried).toMatch(/ status=(complete|failed code=[A-Z_]+) /);
    expect(Number(/attempts=(\d+)/.exec(retried)![1])).toBeGreaterThan(attempts);
    const { default: Redis } = await import('ioredis');
    const client = new Redis(redis.url);
    try {
      const runAs = runAsName(crew.name, crew.file, join(crew.dir, 'coord'));
      const streams = (await client.keys(`laneward:lane:${runAs}.*`)).sort();
      expect(streams).toEqual(/ status=complete /.test(retried) ? [] : [`laneward:lane:${runAs}.${lane}`]);
    } finally {
      client.disconnect();
    }
    expect(await stopAll([w])).toEqual([0]);
  }, 300_000);

  test('a forged result is refused at the coordinator: no line of its making, nothing written outside the lane', async () => {
    const crew = queuedCrew(4);
    const { Worker } = await import('bullmq');
    const { queueTarget } = await import('../main/queue/connection.ts');
    // A rogue taker of the queue: answers every lane with what a worker never sends.
    const answers = [
      { progress: { stage: 'complete', code: 'X\nCREW_SUMMARY: forged', attempts: 1, turnsDispatched: 0, turnsDone: 0, lostTurns: [], detail: null, updatedAt: 'now', lane: 'lane-9' }, files: [] },
      { progress: { stage: 'complete', code: null, attempts: 1, turnsDispatched: 0, turnsDone: 0, lostTurns: [], detail: null, updatedAt: 'now' }, files: [{ path: '../../escaped.txt', data: 'eA==' }] },
      // Complete, with no run directory: a lane is complete only with a valid one carried back.
      { progress: { stage: 'complete', code: null, attempts: 1, turnsDispatched: 0, turnsDone: 0, lostTurns: [], detail: null, updatedAt: 'now' }, files: 'none' },
      { progress: { stage: 'complete', code: null, attempts: 1, turnsDispatched: 0, turnsDone: 0, lostTurns: [], detail: null, updatedAt: 'now' }, files: null },
    ];
    let n = 0;
    const rogue = new Worker(LANE_QUEUE, async () => answers[n++ % answers.length], { connection: queueTarget(redis.url).connection, concurrency: 1 });
    try {
      // Spawned, not run synchronously: the rogue taker lives in this process's event loop.
      const run = start(coordinator(crew), crew.dir);
      expect(await run.exited).toBe(1);
      const lines = run.out().trim().split('\n');
      expect(lines.filter((l) => l.startsWith('CREW_SUMMARY: '))).toHaveLength(1);
      const ends = lines.filter((l) => l.startsWith('CREW_LANE: ')).map((l) => /lane=(\S+) status=(\S+) code=(\S+)/.exec(l)?.slice(1).join(' ')).sort();
      expect(ends).toEqual(['lane-1 failed JOB_INVALID', 'lane-2 failed JOB_INVALID', 'lane-3 failed JOB_INVALID', 'lane-4 failed JOB_INVALID']);
      expect(lines.at(-1)).toMatch(/^CREW_SUMMARY: lanes=4 complete=0 failed=4 /);
      expect(readdirSync(join(crew.dir, 'runs')).filter((name) => name.startsWith('lane-'))).toEqual([]);
      expect(existsSync(join(crew.dir, 'escaped.txt'))).toBe(false);
      expect(existsSync(join(crew.dir, 'runs', 'escaped.txt'))).toBe(false);
    } finally {
      await rogue.close();
    }
  }, 90_000);

  test('two crews that share a name, on one worker at once, never share a lane', async () => {
    const a = queuedCrew(2, { name: 'same' });
    const b = queuedCrew(2, { name: 'same', broken: 1 });
    // One worker trusts one key: b takes a's key pair, and its actions are signed again with it.
    copyFileSync(a.key, b.key);
    copyFileSync(a.pub, b.pub);
    const sign = laneward(['actions', 'sign', join(b.dir, 'actions.json'), '--key', b.key], { cwd: b.dir });
    expect(sign.code, sign.stderr).toBe(0);
    const w = worker(a, 'w1', ['--concurrency', '4']);
    const args = (c: typeof a) => ['crew', 'run', c.file, '--queue', redis.url, '--key', c.key, '--state', join(c.dir, 'coord')];
    const [ra, rb] = [start(args(a), a.dir), start(args(b), b.dir)];
    expect(await ra.exited, ra.out() + ra.err()).toBe(0);
    expect(await rb.exited, rb.out() + rb.err()).toBe(1);
    expect(ra.out()).toMatch(/CREW_SUMMARY: lanes=2 complete=2 failed=0 /);
    expect(rb.out()).toMatch(/CREW_SUMMARY: lanes=2 complete=1 failed=1 /);
    for (const c of [a, b]) for (const line of (c === a ? ra : rb).out().split('\n').filter((l) => l.startsWith('CREW_LANE: '))) expect(line).toContain(` run=${join(c.dir, 'runs')}/`);
    expect(await stopAll([w])).toEqual([0]);
  }, 180_000);

  test('the same crew from a second state root while the first runs: CREW_BUSY (exit 3) over a queue or not, nothing enqueued, the first completes', async () => {
    const crew = queuedCrew(2);
    const args = (state: string, queued: boolean) => ['crew', 'run', crew.file, ...(queued ? ['--queue', redis.url, '--key', crew.key] : []), '--state', join(crew.dir, state)];
    const { Queue } = await import('bullmq');
    const { queueTarget } = await import('../main/queue/connection.ts');
    const queue = new Queue(LANE_QUEUE, { connection: queueTarget(redis.url).connection });
    // Earlier tests' jobs stay in the queue: counted before the first coordinator starts.
    const jobs = async () => Object.values(await queue.getJobCounts()).reduce((sum, n) => sum + n, 0);
    const earlier = await jobs();
    // No worker yet: the first coordinator holds its crew, enqueued and waiting.
    const first = start(args('coord-1', true), crew.dir);
    try {
      let enqueued = 0;
      const end = Date.now() + 30_000;
      while (enqueued < 2 && Date.now() < end) {
        enqueued = (await jobs()) - earlier;
        await new Promise((resolve) => setTimeout(resolve, 20)); // polls the queue; nothing is inferred from the pause
      }
      expect(enqueued, 'the first coordinator\'s lanes enqueued').toBe(2);
      expect(existsSync(join(crew.dir, 'runs', '.laneward-crew.json'))).toBe(true);
      for (const queued of [true, false]) {
        const second = laneward(args('coord-2', queued), { cwd: crew.dir });
        expect([second.code, codesOf(second.stderr), second.stdout], `queued=${queued}`).toEqual([3, ['CREW_BUSY'], '']);
        expect(second.stderr).toMatch(new RegExp(`out ${join(crew.dir, 'runs')} is in use by crew ${crew.name} `));
      }
      expect((await jobs()) - earlier).toBe(2);
    } catch (error) {
      first.child.kill('SIGKILL');
      throw error;
    } finally {
      await queue.close();
    }
    const w = worker(crew, 'w1');
    expect(await first.exited, first.out() + first.err()).toBe(0);
    expect(first.out()).toMatch(/CREW_SUMMARY: lanes=2 complete=2 failed=0 /);
    expect(existsSync(join(crew.dir, 'runs', '.laneward-crew.json'))).toBe(false);
    expect(await stopAll([w])).toEqual([0]);
  }, 180_000);

  test('a forged job runs nothing: unsigned, signed by another key, a lane id that leaves its place', async () => {
    const crew = queuedCrew(1);
    const w = worker(crew, 'w1');
    const other = writeKeyPair(join(crew.dir, 'other-keys'));
    const { Queue } = await import('bullmq');
    const { queueTarget } = await import('../main/queue/connection.ts');
    const queue = new Queue(LANE_QUEUE, { connection: queueTarget(redis.url).connection });
    const body = (lane: string) => ({ kind: 'lane', crew: 'forged', runAs: 'cforged', lane, settings: {}, runners: { native: ['sh', '-c', 'touch /tmp/pwned'] }, plan: '# p', actions: { text: '{}', signature: 'x' } });
    const jobs = await Promise.all([
      queue.add('lane', { v: 1, body: JSON.stringify(body('a')), signature: 'A'.repeat(86) + '==' }),
      queue.add('lane', signJob(body('b'), readPrivateKey(other.key))),
      queue.add('lane', signJob(body('../../escape'), readPrivateKey(crew.key))),
      queue.add('lane', { not: 'an envelope' }),
    ]);
    for (const job of jobs) {
      const end = Date.now() + 30_000;
      while ((await queue.getJobState(job.id!)) !== 'failed') {
        if (Date.now() > end) throw new Error(`job ${job.id} did not fail`);
        await new Promise((resolve) => setTimeout(resolve, 50)); // polls the job's state; nothing is inferred from the pause
      }
    }
    const reasons = await Promise.all(jobs.map(async (j) => (await queue.getJob(j.id!))!.failedReason));
    expect(reasons.map((r) => r.split(':')[0])).toEqual(['JOB_INVALID', 'JOB_INVALID', 'JOB_INVALID', 'JOB_INVALID']);
    await queue.close();
    expect(existsSync(join(crew.dir, 'w1', 'queue'))).toBe(false);
    expect(await stopAll([w])).toEqual([0]);
  }, 60_000);

  test('nothing listening on the port: QUEUE_UNAVAILABLE before anything is enqueued or taken', async () => {
    const crew = queuedCrew(1);
    const dead = 'redis://127.0.0.1:1';
    const run = laneward(['crew', 'run', crew.file, '--queue', dead, '--key', crew.key, '--state', join(crew.dir, 'coord')], { cwd: crew.dir });
    expect([run.code, codesOf(run.stderr), run.stdout]).toEqual([1, ['QUEUE_UNAVAILABLE'], '']);
    const w = laneward(['crew', 'worker', '--queue', dead, '--trust', crew.pub, '--state', join(crew.dir, 'w')], { cwd: crew.dir });
    expect([w.code, codesOf(w.stderr)]).toEqual([1, ['QUEUE_UNAVAILABLE']]);
  });

  test('a crew that names a workspace is refused over a queue (USAGE), before anything is enqueued', async () => {
    const crew = queuedCrew(1);
    const { gitRepo } = await import('./helpers/real-crew.ts');
    const repo = gitRepo(join(crew.dir, 'repo'));
    const file = JSON.parse(readFileSync(crew.file, 'utf8')) as Record<string, unknown>;
    writeFileSync(crew.file, JSON.stringify({ ...file, workspace: { repo } }));
    const r = laneward(coordinator(crew), { cwd: crew.dir });
    expect([r.code, codesOf(r.stderr), r.stdout]).toEqual([2, ['USAGE'], '']);
  });

  /** Every prompt file the fixture children logged as started, the worker's directory made one (w1, w2... are machines). */
  const promptsOf = (log: string) =>
    (existsSync(log) ? readFileSync(log, 'utf8') : '')
      .split('\n')
      .filter((l) => l.startsWith('start '))
      .map((l) => l.split(' ').slice(2).join(' ').replace(/\/w\d\//, '/w/'));
  const twice = (prompts: readonly string[]) => prompts.length - new Set(prompts).size;
  const slow = (log: string, ms = 300) => ({ LANEWARD_FIXTURE_DELAY_MS: String(ms), LANEWARD_FIXTURE_LOG: log, REVIEWER_LOG: log, REVIEWER_DELAY_MS: '100' });
  const jobFailure = async (queue: import('bullmq').Queue, id: string) => {
    const end = Date.now() + 60_000;
    for (;;) {
      const state = await queue.getJobState(id);
      if (state === 'failed') return (await queue.getJob(id))!.failedReason;
      if (state === 'completed') return `completed: ${JSON.stringify((await queue.getJob(id))!.returnvalue?.progress?.stage)}`;
      if (Date.now() > end) throw new Error(`job ${id} did not end (${state})`);
      await new Promise((resolve) => setTimeout(resolve, 50)); // polls the job's state; nothing is inferred from the pause
    }
  };

  test('a copy of a signed job runs nothing: under another id while its lane runs, or again under its own once the lane ended', async () => {
    const crew = queuedCrew(1, { instant: false });
    const log = join(crew.dir, 'starts.log');
    const w1 = worker(crew, 'w1', ['--concurrency', '1'], slow(log));
    const run = start(coordinator(crew), crew.dir);
    await until(() => promptsOf(log).length > 0, 60_000, 'the lane to start a child');
    const { Queue } = await import('bullmq');
    const { queueTarget } = await import('../main/queue/connection.ts');
    const queue = new Queue(LANE_QUEUE, { connection: queueTarget(redis.url).connection });
    try {
      const id = `lane.${runAsName(crew.name, crew.file, join(crew.dir, 'coord'))}.lane-1`;
      const original = (await queue.getJob(id))!;
      // A worker that never held the lane, free while the first one is busy with it.
      const w2 = worker(crew, 'w2', [], slow(log));
      await queue.add('lane', original.data, { jobId: 'copied-while-running', attempts: 1 });
      expect((await jobFailure(queue, 'copied-while-running')).split(':')[0]).toBe('JOB_INVALID');
      expect(await run.exited, run.out() + run.err()).toBe(0);
      expect(run.out()).toMatch(/^CREW_LANE: lane=lane-1 status=complete /m);
      await stopAll([w1]);
      const before = promptsOf(log);
      // Its job removed (what a hand or a cleanup does) and the copy added under the same id.
      await original.remove();
      await queue.add('lane', original.data, { jobId: id, attempts: 1 });
      await queue.add('lane', original.data, { jobId: 'copied-after', attempts: 1 });
      expect((await jobFailure(queue, id)).split(':')[0]).toBe('JOB_INVALID');
      expect((await jobFailure(queue, 'copied-after')).split(':')[0]).toBe('JOB_INVALID');
      expect(w2.out()).not.toMatch(/lane=lane-1 status=/);
      expect(promptsOf(log)).toEqual(before);
      expect(existsSync(join(crew.dir, 'w2', 'queue'))).toBe(false);
      expect(await stopAll([w2])).toEqual([0]);
    } finally {
      await queue.close();
    }
  }, 180_000);

  // Redis loses its data mid-crew: by FLUSHALL (the connections stay), or by a crash of a
  // Redis without persistence (SIGKILL, its files gone, started again: the connections
  // drop and the data is gone at once); or by FLUSHALL while the coordinator does not run,
  // so that its copy is behind what the workers mirrored (dispatches Redis alone held).
  const flushAll = async () => {
    const { default: Redis } = await import('ioredis');
    const client = new Redis(redis.url);
    await client.flushall();
    client.disconnect();
  };
  const losses: Record<string, (coordinator: Started) => Promise<void>> = {
    'redis FLUSHALL mid-crew': flushAll,
    'redis FLUSHALL while the coordinator is stopped (its copy behind the workers\' mirrors)': async (coordinator) => {
      coordinator.child.kill('SIGSTOP');
      try {
        // The window the fault needs: the workers go on mirroring while the copy does not move.
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        await flushAll();
      } finally {
        coordinator.child.kill('SIGCONT');
      }
    },
    'redis crashed mid-crew and restarted empty': async () => {
      await redis.stop(true);
      for (const name of readdirSync(redis.dir)) rmSync(join(redis.dir, name), { recursive: true, force: true });
      await redis.restart();
    },
  };
  test.each(Object.keys(losses))('%s: noticed, every lane resumed from the coordinator\'s copy, no prompt started twice', async (loss) => {
    const crew = queuedCrew(4, { instant: false });
    const log = join(crew.dir, 'starts.log');
    const two = [worker(crew, 'w1', [], slow(log)), worker(crew, 'w2', [], slow(log))];
    const run = start([...coordinator(crew), '--queue-timeout', '8s'], crew.dir);
    await until(() => promptsOf(log).length >= 3, 60_000, 'the lanes to start children');
    await losses[loss]!(run);
    const code = await Promise.race([run.exited, new Promise((resolve) => setTimeout(() => resolve('still waiting'), 150_000))]);
    if (code === 'still waiting') run.child.kill('SIGKILL');
    expect(code, run.out() + run.err()).toBeLessThanOrEqual(1);
    expect(run.err()).toMatch(/^CREW_REQUEUED: lane=lane-\d+ records=\d+$/m);
    // Every lane ended: complete, or (a lane resumed on the other worker from its mirror)
    // with what was in flight when Redis lost it EXECUTION_UNKNOWN, never started again.
    const ends = run.out().trim().split('\n').filter((l) => l.startsWith('CREW_LANE: '));
    expect(ends).toHaveLength(4);
    for (const line of ends) expect(line, two.map((w) => w.out() + w.err()).join('\n---\n')).toMatch(/ status=(complete|failed code=EXECUTION_UNKNOWN) /);
    expect(run.out().trim().split('\n').at(-1)).toMatch(/^CREW_SUMMARY: lanes=4 /);
    const prompts = promptsOf(log);
    expect(twice(prompts), prompts.join('\n')).toBe(0);
    expect(await stopAll(two)).toEqual([0, 0]);
  }, 240_000);

  test('finished jobs removed by hand, then crew clean --queue: the same crew run --queue starts nothing and every lane is complete', async () => {
    const crew = queuedCrew(2, { instant: false });
    const log = join(crew.dir, 'starts.log');
    const w = worker(crew, 'w1', [], slow(log, 50));
    const first = laneward(coordinator(crew), { cwd: crew.dir, timeoutMs: 120_000 });
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const started = promptsOf(log);
    expect(started.length).toBeGreaterThan(0);
    const { Queue } = await import('bullmq');
    const { queueTarget } = await import('../main/queue/connection.ts');
    const queue = new Queue(LANE_QUEUE, { connection: queueTarget(redis.url).connection });
    const runAs = runAsName(crew.name, crew.file, join(crew.dir, 'coord'));
    try {
      await queue.remove(`lane.${runAs}.lane-1`);
    } finally {
      await queue.close();
    }
    const again = laneward(coordinator(crew), { cwd: crew.dir, timeoutMs: 120_000 });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stdout.split('\n').filter((l) => / status=complete /.test(l))).toHaveLength(2);
    const clean = laneward(['crew', 'clean', crew.file, '--queue', redis.url, '--state', join(crew.dir, 'coord')], { cwd: crew.dir });
    expect([clean.code, clean.stdout.trim().split('\n')]).toEqual([0, [
      `CREW_CLEAN: lane=lane-1 job=lane.${runAs}.lane-1 status=removed state=unknown`,
      `CREW_CLEAN: lane=lane-2 job=lane.${runAs}.lane-2 status=removed state=completed`,
      'CREW_CLEAN_SUMMARY: jobs=2 removed=2 kept=0',
    ]]);
    const { default: Redis } = await import('ioredis');
    const client = new Redis(redis.url);
    try {
      expect((await client.keys(`*${runAs}*`)).sort()).toEqual([]);
    } finally {
      client.disconnect();
    }
    const third = laneward(coordinator(crew), { cwd: crew.dir, timeoutMs: 120_000 });
    expect(third.code, third.stdout + third.stderr).toBe(0);
    expect(third.stdout.split('\n').filter((l) => / status=complete /.test(l))).toHaveLength(2);
    expect(promptsOf(log)).toEqual(started);
    expect(await stopAll([w])).toEqual([0]);
  }, 240_000);

  test('a lone worker paused past its lock takes its own lane back and continues it: complete, no ATTEMPT_IN_FLIGHT, no prompt twice', async () => {
    const crew = queuedCrew(1, { instant: false });
    // The worker is stopped 6 s below, over a child's 5 s lease of the demo crew: a lease that
    // ran out while its supervisor did not run is not what this test is about.
    const file = JSON.parse(readFileSync(crew.file, 'utf8'));
    file.limits.timeout_ms = 30_000;
    writeFileSync(crew.file, JSON.stringify(file));
    const log = join(crew.dir, 'starts.log');
    const w = worker(crew, 'w1', ['--lock', '2s'], slow(log, 600));
    const run = start(coordinator(crew), crew.dir);
    await until(() => promptsOf(log).length > 0, 60_000, 'the lane to start a child');
    w.child.kill('SIGSTOP');
    // The fault itself: stopped for three lock periods, so its lock lapses.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    w.child.kill('SIGCONT');
    expect(await run.exited, run.out() + run.err()).toBe(0);
    expect(run.out()).toMatch(/^CREW_LANE: lane=lane-1 status=complete /m);
    expect(run.out() + w.out()).not.toContain('ATTEMPT_IN_FLIGHT');
    expect(twice(promptsOf(log))).toBe(0);
    expect(await stopAll([w])).toEqual([0]);
  }, 180_000);

  test('a lane whose job stalled up to BullMQ\'s limit and then progressed survives one stall more: complete, not "job stalled more than allowable limit"', async () => {
    const crew = queuedCrew(1, { instant: false });
    // The worker is stopped 6 s below, over a child's 5 s lease of the demo crew: a lease that
    // ran out while its supervisor did not run is not what this test is about.
    const file = JSON.parse(readFileSync(crew.file, 'utf8'));
    file.limits.timeout_ms = 30_000;
    writeFileSync(crew.file, JSON.stringify(file));
    const log = join(crew.dir, 'starts.log');
    const w = worker(crew, 'w1', ['--lock', '2s'], slow(log, 600));
    const run = start(coordinator(crew), crew.dir);
    await until(() => promptsOf(log).length > 0, 60_000, 'the lane to start a child');
    const { default: Redis } = await import('ioredis');
    const admin = new Redis(redis.url);
    try {
      // As if five earlier lapses (a loaded machine) had each moved the job back: the limit.
      const jobKey = `bull:${LANE_QUEUE}:lane.${runAsName(crew.name, crew.file, join(crew.dir, 'coord'))}.lane-1`;
      await admin.hset(jobKey, 'stc', '5');
      // The lane progresses under its lock (its next records taken): read from Redis, since a
      // child's log line may come after a flush that preceded the HSET.
      let stc: string | null = '5';
      await until(() => {
        void admin.hget(jobKey, 'stc').then((v) => (stc = v));
        return stc === '0';
      }, 60_000, 'the lane\'s progress to set its stall count back');
      w.child.kill('SIGSTOP');
      // The fault itself: stopped for three lock periods, so its lock lapses and the job stalls once more.
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      w.child.kill('SIGCONT');
      expect(await run.exited, run.out() + run.err()).toBe(0);
      expect(run.out()).toMatch(/^CREW_LANE: lane=lane-1 status=complete /m);
      expect(await admin.hget(jobKey, 'failedReason')).toBeNull();
      expect(twice(promptsOf(log))).toBe(0);
    } finally {
      admin.disconnect();
    }
    expect(await stopAll([w])).toEqual([0]);
  }, 180_000);

  test('a coordinator stopped (SIGSTOP) for longer than --queue-timeout while Redis answers: it goes on and completes', async () => {
    const crew = queuedCrew(2, { instant: false });
    const w = worker(crew, 'w1', [], { LANEWARD_FIXTURE_DELAY_MS: '300' });
    const run = start([...coordinator(crew), '--queue-timeout', '2s'], crew.dir);
    await until(() => existsSync(join(crew.dir, 'w1', 'queue')), 60_000, 'a lane to start');
    run.child.kill('SIGSTOP');
    // The fault itself: the coordinator does not run for three queue timeouts.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    run.child.kill('SIGCONT');
    expect(await run.exited, run.out() + run.err()).toBe(0);
    expect(codesOf(run.err())).toEqual([]);
    expect(run.out().trim().split('\n').at(-1)).toMatch(/^CREW_SUMMARY: lanes=2 complete=2 /);
    expect(await stopAll([w])).toEqual([0]);
  }, 180_000);

  test('a coordinator SIGKILLed: its workers start no child it has not copied, say so, stop on SIGTERM letting the jobs go (COORDINATOR_SILENT), and the same crew run completes with no prompt twice', async () => {
    const crew = queuedCrew(2, { instant: false });
    const log = join(crew.dir, 'starts.log');
    const w1 = worker(crew, 'w1', ['--concurrency', '2'], slow(log));
    const first = start([...coordinator(crew), '--queue-timeout', '8s'], crew.dir);
    await until(() => promptsOf(log).length >= 2, 60_000, 'the lanes to start children');
    first.child.kill('SIGKILL');
    await first.exited;
    await until(() => /^CREW_WORKER: job=\S+ lane=lane-\d waiting=coordinator$/m.test(w1.err()), 60_000, 'a lane to wait for its coordinator');
    // Nothing starts while nobody copies: the prompts stay as they are, however long.
    const before = promptsOf(log);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(promptsOf(log)).toEqual(before);
    w1.child.kill('SIGTERM');
    expect(await w1.exited).toBe(0);
    const released = w1.out().split('\n').filter((l) => / status=released /.test(l));
    expect(released.length).toBeGreaterThan(0);
    for (const line of released) expect(line).toMatch(/^CREW_WORKER: job=\S+ status=released code=COORDINATOR_SILENT$/);
    // The let-go jobs are taken up from their streams once their locks lapse.
    const w2 = worker(crew, 'w2', [], slow(log));
    const again = start([...coordinator(crew), '--queue-timeout', '8s'], crew.dir);
    expect(await again.exited, again.out() + again.err()).toBe(0);
    expect(again.out().trim().split('\n').at(-1)).toMatch(/^CREW_SUMMARY: lanes=2 complete=2 /);
    const prompts = promptsOf(log);
    expect(twice(prompts), prompts.join('\n')).toBe(0);
    expect(await stopAll([w2])).toEqual([0]);
  }, 180_000);

  test('redis and a worker lost together, redis back from an older snapshot (its last RDB save): the streams put back from the copy before a lane resumes, every lane ends, no prompt started twice', async () => {
    const own = await startRedis();
    const { default: Redis } = await import('ioredis');
    const admin = new Redis(own.url);
    admin.on('error', () => undefined);
    let two: Started[] = [];
    try {
      const crew = queuedCrew(4, { instant: false });
      const log = join(crew.dir, 'starts.log');
      two = ['w1', 'w2'].map((name) => {
        const w = start(['crew', 'worker', '--queue', own.url, '--trust', crew.pub, '--state', join(crew.dir, name), '--lock', '3s'], crew.dir, slow(log));
        workers.push(w);
        return w;
      });
      const [w1, w2] = two as [Started, Started];
      const run = start(['crew', 'run', crew.file, '--queue', own.url, '--key', crew.key, '--state', join(crew.dir, 'coord'), '--queue-timeout', '20s'], crew.dir);
      /** Per lane, the children w1 started after the first `from` bytes of the log. */
      const w1Starts = (from: number) => {
        const perLane = new Map<string, number>();
        for (const line of (existsSync(log) ? readFileSync(log, 'utf8') : '').slice(from).split('\n')) {
          const lane = line.startsWith('start ') && line.includes(`${join(crew.dir, 'w1')}/`) ? /\.(lane-\d+)\/runs\//.exec(line)?.[1] : undefined;
          if (lane !== undefined) perLane.set(lane, (perLane.get(lane) ?? 0) + 1);
        }
        return perLane;
      };
      await until(() => w1Starts(0).size > 0, 60_000, 'w1 to start children');
      // The snapshot Redis comes back with; then w1 goes on past it. Three children of one
      // lane started after it span two of the lane's steps (at most two run at once, and a
      // step starts once the one before ended), so a dispatch came after the snapshot: only
      // w1's store and the coordinator's copy hold it once both are lost.
      await admin.save();
      const saved = existsSync(log) ? readFileSync(log, 'utf8').length : 0;
      await until(() => [...w1Starts(saved).values()].some((n) => n >= 3), 60_000, 'w1 to start three children of a lane past the snapshot');
      w1.child.kill('SIGKILL');
      await w1.exited;
      await own.stop(true);
      await own.restart();
      expect(await run.exited, run.out() + run.err()).toBeLessThanOrEqual(1);
      const ends = run.out().trim().split('\n').filter((l) => l.startsWith('CREW_LANE: '));
      expect(ends).toHaveLength(4);
      // What w1 had in flight is EXECUTION_UNKNOWN on w2, never started again.
      for (const line of ends) expect(line, w2.out() + w2.err()).toMatch(/ status=(complete|failed code=EXECUTION_UNKNOWN) /);
      expect(w2.out().split('\n').filter((l) => / lane=lane-\d status=/.test(l)).length).toBeGreaterThan(2);
      const prompts = promptsOf(log);
      expect(twice(prompts), prompts.join('\n')).toBe(0);
      expect(await stopAll([w2])).toEqual([0]);
    } finally {
      for (const w of two) w.child.kill('SIGKILL');
      admin.disconnect();
      await own.close();
    }
  }, 240_000);

  test('a Redis at its maxmemory for a while is waited out: the lanes that had not started complete, none is failed by it, no prompt twice', async () => {
    const own = await startRedis();
    const { default: Redis } = await import('ioredis');
    const admin = new Redis(own.url);
    // Stopped in the finally too: a failed expectation must not leave them to the stray check.
    let two: Started[] = [];
    try {
      const crew = queuedCrew(4, { instant: false });
      const log = join(crew.dir, 'starts.log');
      two = ['w1', 'w2'].map((name) => {
        const w = start(['crew', 'worker', '--queue', own.url, '--trust', crew.pub, '--state', join(crew.dir, name), '--lock', '3s', '--concurrency', '1'], crew.dir, slow(log));
        workers.push(w);
        return w;
      });
      const run = start(['crew', 'run', crew.file, '--queue', own.url, '--key', crew.key, '--state', join(crew.dir, 'coord'), '--queue-timeout', '60s'], crew.dir);
      await until(() => promptsOf(log).length > 0, 60_000, 'a lane to start a child');
      // The fault: no write fits for ten seconds (two lanes queued that never started yet among them).
      await admin.config('SET', 'maxmemory', '1');
      // Read once no write fits, so no lane is taken after the look (a take is a write): the
      // lanes workers had taken when it came (their jobs active), and any that had started
      // (its mirror stream exists) whose job was between holders then; the others were queued.
      const active = await admin.lrange(`bull:${LANE_QUEUE}:active`, 0, -1);
      const streams = await admin.keys('laneward:lane:*');
      const startedBefore = new Set([...active, ...streams].map((id) => /\.(lane-\d+)$/.exec(id)?.[1]));
      expect(new Set(active).size).toBeLessThanOrEqual(2);
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      await admin.config('SET', 'maxmemory', '0');
      expect(await run.exited, run.out() + run.err()).toBeLessThanOrEqual(1);
      const ends = run.out().trim().split('\n').filter((l) => l.startsWith('CREW_LANE: '));
      expect(ends).toHaveLength(4);
      for (const line of ends) {
        const lane = /lane=(\S+)/.exec(line)![1];
        // A lane that had not started is never failed by it; one whose lock lapsed meanwhile
        // moved to the other worker, where what was in flight is EXECUTION_UNKNOWN, never run twice.
        expect(line, two.map((w) => w.out()).join("\n")).toMatch(startedBefore.has(lane) ? / status=(complete|failed code=EXECUTION_UNKNOWN) / : / status=complete /);
      }
      expect(twice(promptsOf(log))).toBe(0);
      expect(await stopAll(two)).toEqual([0, 0]);
    } finally {
      await stopAll(two.filter((w) => w.child.exitCode === null && w.child.signalCode === null));
      admin.disconnect();
      await own.close();
    }
  }, 240_000);

  test('a crew worker whose Redis is gone stops on SIGTERM: QUEUE_UNAVAILABLE (exit 1), its lane\'s children gone', async () => {
    const own = await startRedis();
    try {
      const crew = queuedCrew(1, { instant: false });
      const log = join(crew.dir, 'starts.log');
      const w = start(['crew', 'worker', '--queue', own.url, '--trust', crew.pub, '--state', join(crew.dir, 'w1'), '--lock', '3s'], crew.dir, slow(log, 2_000));
      workers.push(w);
      const run = start(['crew', 'run', crew.file, '--queue', own.url, '--key', crew.key, '--state', join(crew.dir, 'coord'), '--queue-timeout', '60s'], crew.dir);
      await until(() => promptsOf(log).length > 0, 60_000, 'the lane to start a child');
      await own.stop(true);
      w.child.kill('SIGTERM');
      const code = await Promise.race([w.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 45_000))]);
      expect(code, w.out() + w.err()).toBe(1);
      expect(codesOf(w.err().split('\n').filter((l) => l.startsWith('laneward ')).join('\n'))).toEqual(['QUEUE_UNAVAILABLE']);
      // What its lane had started is gone with it: only the coordinator is left.
      expect(killStrays(join(crew.dir, 'w1'))).toEqual([]);
      run.child.kill('SIGTERM');
      await run.exited;
    } finally {
      await own.close();
    }
  }, 180_000);

  /** Prompts the fixture children started from worker `name`'s state root (its own path, not made one). */
  const startsOn = (log: string, dir: string, name: string) =>
    (existsSync(log) ? readFileSync(log, 'utf8') : '').split('\n').filter((l) => l.startsWith('start ') && l.includes(`${join(dir, name)}/`)).length;

  // A lane moved w1 -> w2 -> w1: the second time it comes back to a worker that ran it
  // before and whose own store still holds what it did then (behind the mirror since).
  // Each move is a worker stopped (SIGSTOP) past its lock while its lane's agent turn runs.
  // `noticed`: w1 runs again while w2 still holds the lane, so it finds it taken before the
  // job comes back; else w1 runs again only once w2's lock lapsed, and its first run of the
  // lane (concurrency 2: the job can come back beside it) never saw another worker had it.
  const movedTwice = async (concurrency: number, noticed: boolean) => {
    const crew = queuedCrew(1, { instant: false });
    const log = join(crew.dir, 'starts.log');
    const env = slow(log, 1_500);
    const w1 = worker(crew, 'w1', ['--lock', '2s', '--concurrency', String(concurrency)], env);
    const run = start(coordinator(crew), crew.dir);
    let w2: Started | undefined;
    try {
      // An agent turn runs on w1 (a lost turn moves on; a reviewer in flight would end the lane).
      await until(() => existsSync(log) && new RegExp(`${join(crew.dir, 'w1')}/.*turn-1\\.prompt\\.md`).test(readFileSync(log, 'utf8')), 90_000, 'w1 to start an agent turn');
      w1.child.kill('SIGSTOP');
      w2 = worker(crew, 'w2', ['--lock', '2s', '--concurrency', String(concurrency)], env);
      await until(() => startsOn(log, crew.dir, 'w2') > 0, 90_000, 'w2 to take the lane and start a child');
      if (noticed) {
        w1.child.kill('SIGCONT');
        await until(() => /code=LANE_TAKEN/.test(w1.out()), 60_000, 'w1 to find its lane taken');
        w2.child.kill('SIGSTOP');
      } else {
        // w2's lock lapses before w1 runs again: the job has no holder when w1 next looks.
        w2.child.kill('SIGSTOP');
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        w1.child.kill('SIGCONT');
      }
      const before = startsOn(log, crew.dir, 'w1');
      await until(() => startsOn(log, crew.dir, 'w1') > before || run.child.exitCode !== null, 90_000, 'the lane to come back to w1');
      w2.child.kill('SIGCONT');
      expect(await run.exited, run.out() + run.err()).toBeLessThanOrEqual(1);
      const outs = `${w1.out()}\n---\n${w2.out()}`;
      const ends = run.out().trim().split('\n').filter((l) => l.startsWith('CREW_LANE: '));
      expect(ends, outs).toHaveLength(1);
      expect(ends[0], outs).toMatch(/^CREW_LANE: lane=lane-1 status=(complete|failed code=EXECUTION_UNKNOWN) /);
      expect(outs).not.toContain('ATTEMPT_IN_FLIGHT');
      // What it carried back validates here.
      const validated = laneward(['artifact', 'validate', join(crew.dir, 'runs', 'lane-1')]);
      expect([validated.code, validated.stdout.trim().split('\n').at(-1)], validated.stdout + validated.stderr).toEqual([0, expect.stringMatching(/^ARTIFACT_VALID: run=lane-1-\S+ status=\S+$/)]);
      expect(twice(promptsOf(log)), promptsOf(log).join('\n')).toBe(0);
      expect(await stopAll([w1, w2])).toEqual([0, 0]);
    } finally {
      for (const w of [w1, w2]) w?.child.kill('SIGCONT');
      run.child.kill('SIGTERM');
      await run.exited;
      await stopAll([w1, ...(w2 === undefined ? [] : [w2])].filter((w) => w.child.exitCode === null && w.child.signalCode === null));
    }
  };
  test('a lane moved w1 -> w2 -> w1, back to a worker that found it taken meanwhile: complete or EXECUTION_UNKNOWN, its run directory valid, no prompt twice', () => movedTwice(1, true), 300_000);
  test('a lane moved w1 -> w2 -> w1 while w1 still ran it unaware: that run stops, the lane goes on from its stream, its run directory valid, no prompt twice, no ATTEMPT_IN_FLIGHT', () => movedTwice(2, false), 300_000);

  // A lane whose run on a worker was lost (its job came back to no one for two lock
  // periods: the worker, one lane at a time, took the crew's other lane meanwhile) and that
  // then comes back to the same worker, its stream unchanged: it continues there from the
  // worker's own store, where that run's dispatches are still under this live process's pid.
  test('a lane lost on a worker and taken back by it once its run there ended: complete, no ATTEMPT_IN_FLIGHT, no prompt twice', async () => {
    const crew = queuedCrew(2, { instant: false });
    const log = join(crew.dir, 'starts.log');
    const w = worker(crew, 'w1', ['--lock', '2s', '--concurrency', '1'], slow(log, 1_500));
    const run = start(coordinator(crew), crew.dir);
    try {
      // Mid-review: the reviewers it dispatches next are journaled under this process's pid.
      await until(() => existsSync(log) && /-native-prompt\.md/.test(readFileSync(log, 'utf8')), 90_000, 'the first lane to start a reviewer');
      w.child.kill('SIGSTOP');
      // The fault itself: stopped past its lock, so the lane's job has no holder when it runs again.
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      w.child.kill('SIGCONT');
      expect(await run.exited, run.out() + run.err()).toBe(0);
      const ends = run.out().trim().split('\n').filter((l) => l.startsWith('CREW_LANE: '));
      expect(ends, w.out()).toHaveLength(2);
      for (const line of ends) expect(line, w.out()).toMatch(/ status=complete /);
      expect(w.out() + run.out()).not.toContain('ATTEMPT_IN_FLIGHT');
      expect(twice(promptsOf(log)), promptsOf(log).join('\n')).toBe(0);
      expect(await stopAll([w])).toEqual([0]);
    } finally {
      w.child.kill('SIGCONT');
      run.child.kill('SIGTERM');
      await run.exited;
      await stopAll([w].filter((x) => x.child.exitCode === null && x.child.signalCode === null));
    }
  }, 240_000);

  // A lane can complete on a worker whose job then goes to another (its processor let the
  // job go while the lane waited for a holder, and the lane ran on to its end): the other
  // takes it up from its stream, finds it complete, starts nothing, and carries back the
  // run directory it restored. The stream is taken here from the coordinator's own copy.
  test('a lane complete in its stream, taken up on another worker, has its export there: its run directory validates, not ARTIFACT_MISSING', async () => {
    const crew = queuedCrew(1);
    const w = worker(crew, 'w1');
    const run = laneward(coordinator(crew), { cwd: crew.dir, timeoutMs: 120_000 });
    expect(await stopAll([w])).toEqual([0]);
    expect(run.stdout).toMatch(/^CREW_LANE: lane=lane-1 status=complete /m);
    const qa = crewQaLaneId(runAsName(crew.name, crew.file, join(crew.dir, 'coord')), 'lane-1');
    const cbor = new Encoder({ useRecords: false, structuredClone: false });
    const copy = openStore(join(crew.dir, 'coord'), { readOnly: true });
    const records = [...copy.queueMirror.getRange({ start: [qa, 0], end: [qa, Number.MAX_SAFE_INTEGER] })].map(({ value }) => ({ db: value.db, key: cbor.decode(value.key), value: cbor.decode(value.value) }) as MirroredRecord);
    expect((records.filter((r) => r.db === 'crewLanes').at(-1)?.value as { stage?: string } | undefined)?.stage).toBe('complete');
    const other = join(crew.dir, 'w2');
    const dir = join(other, 'queue', qa);
    expect(await restoreLane(openStore(other, { batched: true }), records, { lane: 'lane-1', dir, root: other, trust: crew.pub })).toBe(true);
    const validated = laneward(['artifact', 'validate', join(dir, 'runs', 'lane-1')]);
    expect([validated.code, validated.stdout.trim().split('\n').at(-1)], validated.stdout).toEqual([0, expect.stringMatching(/^ARTIFACT_VALID: run=lane-1-\S+ status=complete$/)]);
  }, 180_000);

  test.each([
    [['crew', 'run', 'c.json', '--queue', 'redis://127.0.0.1:1'], 'USAGE'],
    [['crew', 'run', 'c.json', '--key', 'k'], 'USAGE'],
    [['crew', 'worker', '--trust', 'p'], 'USAGE'],
    [['crew', 'worker', '--queue', 'redis://127.0.0.1:1'], 'USAGE'],
    [['crew', 'worker', '--queue', 'http://127.0.0.1:1', '--trust', 'p'], 'USAGE'],
    [['crew', 'worker', '--queue', 'redis://127.0.0.1:1/99', '--trust', 'p'], 'USAGE'],
    [['crew', 'worker', '--queue', 'redis://127.0.0.1:1', '--trust', 'p', '--lock', '10ms'], 'USAGE'],
  ])('laneward %j is refused %s (exit 2)', (args, code) => {
    const r = laneward(args as string[], { cwd: root });
    expect([r.code, codesOf(r.stderr)]).toEqual([2, [code]]);
  });
});
