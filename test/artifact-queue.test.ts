import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue, QueueEvents } from 'bullmq';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CATALOGUE } from '../fixtures/catalogue.ts';
import { generateRun } from '../fixtures/generate-run.ts';
import { readPrivateKey } from '../main/actions/keys.ts';
import { RUNS_QUEUE } from '../main/queue/runs-job.ts';
import { signJob } from '../main/queue/signed-job.ts';
import { BUNDLE, type CliResult, codesOf, ensureBuilt, ERROR_LINE, laneward, ROOT } from './helpers/cli.ts';
import { exitOf, killQuietly, killStrays, until } from './helpers/procs.ts';
import { freePort, type RedisServer, redisMissing, startRedis } from './helpers/redis.ts';
import { tempRoot } from './helpers/tmp.ts';

// One archive validated across machines: `artifact validate --queue` splits the batch into
// signed jobs on a real Redis, `artifact worker` processes (the built CLI, each its own
// process) validate them, and the coordinator prints what the local batch prints.

const SKIP = redisMissing();
if (SKIP !== undefined) process.stderr.write(`artifact-queue.test.ts: skipped: ${SKIP}\n`);

// One temp root for the file, removed when it ends, whichever of its describes ran.
const tmp = tempRoot('artifact-queue');
const RUNS = 300;
const PLANTED = CATALOGUE.filter((variant) => variant.name !== 'run-json-absent');

/** 300 small runs in 12 lanes, every 7th broken by the next catalogue variant. */
function writeArchive(dir: string): void {
  for (let i = 0; i < RUNS; i++) {
    const runDir = join(dir, `lane-${String(i % 12).padStart(2, '0')}`, `run-${String(i).padStart(3, '0')}`);
    generateRun(runDir, { runId: 'run1', seed: i + 1 });
    if (i % 7 === 0) PLANTED[(i / 7) % PLANTED.length]!.apply(runDir);
  }
}

/** A running child of the built CLI, its output collected as it comes. */
interface Child {
  readonly process: ChildProcess;
  stdout: string;
  stderr: string;
  readonly exited: Promise<number | null>;
}

function start(args: readonly string[], cwd = ROOT): Child {
  const child = spawn(process.execPath, [BUNDLE, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  const out: Child = {
    process: child,
    stdout: '',
    stderr: '',
    exited: exitOf(child).then(({ code }) => code),
  };
  child.stdout!.on('data', (chunk) => (out.stdout += chunk));
  child.stderr!.on('data', (chunk) => (out.stderr += chunk));
  return out;
}

async function run(args: readonly string[], cwd = ROOT): Promise<CliResult> {
  const child = start(args, cwd);
  const code = await child.exited;
  return { code, stdout: child.stdout, stderr: child.stderr };
}

const lines = (text: string) => text.split('\n').filter((line) => line !== '');
const invalidLines = (text: string) => lines(text).filter((line) => line.startsWith('ARTIFACT_INVALID: ')).sort();
/** What a worker's stdout (lines, or --json objects) says became of each job it took: `done` or the code it failed with. */
function jobsOf(worker: Child): [string, string][] {
  return lines(worker.stdout).map((line): [string, string] => {
    if (line.startsWith('{')) {
      const object = JSON.parse(line) as { job: string; runs?: number; failed?: string };
      return [object.job, object.failed ?? 'done'];
    }
    const found = /^ARTIFACT_WORKER: job=(\S+) (?:runs=\d+ invalid=\d+|failed=([A-Z_]+))$/.exec(line);
    if (found === null) throw new Error(`not a job line: ${line}`);
    return [found[1]!, found[2] ?? 'done'];
  });
}
/** The job ids a worker says it finished. */
const jobsDone = (worker: Child) => jobsOf(worker).filter(([, end]) => end === 'done').map(([id]) => id);

/** An access time long past: a file read after it is marked so shows a later one (relatime). */
const PAST = new Date('2020-01-01T00:00:00Z');
const markUnread = (files: readonly string[]) => files.forEach((file) => utimesSync(file, PAST, statSync(file).mtime));
const readSinceMarked = (files: readonly string[]) => files.filter((file) => statSync(file).atimeMs > PAST.getTime());

// Nothing listens on it: a Redis that cannot be reached.
const closedPort = freePort;

describe.skipIf(SKIP !== undefined)('laneward artifact validate --queue', () => {
  const root = join(tmp, 'batches');
  const archive = join(root, 'archive');
  const empty = join(root, 'empty');
  const single = join(root, 'single');
  const outside = join(root, 'outside');
  const keys = join(root, 'keys');
  const other = join(root, 'other-keys');
  const key = join(keys, 'actions.key');
  const trust = join(keys, 'actions.pub');
  /** Every input the batches take: a searched archive, a directory holding no run, one run.json. */
  const inputs = [archive, empty, join(single, 'run.json')];
  let redis: RedisServer;
  let queue: Queue;
  let events: QueueEvents;
  const workers: Child[] = [];
  /** Whether this file system records reads in access times (not mounted noatime). */
  let atimes = false;

  beforeAll(async () => {
    ensureBuilt();
    redis = await startRedis();
    writeArchive(archive);
    mkdirSync(empty);
    generateRun(single, { runId: 'run1', seed: 1_000 });
    generateRun(outside, { runId: 'run1', seed: 2_000 });
    expect(laneward(['actions', 'keygen', '--out', keys]).code).toBe(0);
    expect(laneward(['actions', 'keygen', '--out', other]).code).toBe(0);
    // The third worker finds the batch's root through another path, as a machine that
    // mounts the archive elsewhere would.
    symlinkSync(root, join(root, 'mount'));
    const probe = join(root, 'atime-probe');
    writeFileSync(probe, 'probe');
    markUnread([probe]);
    readFileSync(probe);
    atimes = readSinceMarked([probe]).length === 1;
    const base = ['artifact', 'worker', '--queue', redis.url, '--trust', trust, '--jobs', '1'];
    workers.push(start(base), start([...base, '--json']), start([...base, '--root', join(root, 'mount')]));
    await until(() => workers.every((worker) => worker.stderr.includes('ARTIFACT_WORKER: queue=')), 30_000, 'three workers ready');
    const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
    queue = new Queue(RUNS_QUEUE, { connection });
    events = new QueueEvents(RUNS_QUEUE, { connection });
    await events.waitUntilReady();
  });

  afterAll(async () => {
    await events?.close();
    await queue?.close();
    for (const worker of workers) killQuietly(worker.process.pid!);
    expect(killStrays(root)).toEqual([]);
    await redis?.close();
  });

  test('should print the summary and invalid lines the local batch prints, the runs split across three workers', async () => {
    const local = await run(['artifact', 'validate', ...inputs, '--jobs', '2']);
    const queued = await run(['artifact', 'validate', ...inputs, '--queue', redis.url, '--key', key, '--runs-per-job', '5']);
    expect(local.code).toBe(1);
    expect(queued.code).toBe(local.code);
    expect(queued.stderr).toBe('');
    const summary = lines(local.stdout).at(-1)!;
    expect(summary).toMatch(/^ARTIFACT_SUMMARY: runs=302 valid=\d+ invalid=44 /);
    expect(lines(queued.stdout).at(-1)).toBe(summary);
    expect(invalidLines(queued.stdout)).toEqual(invalidLines(local.stdout));
    expect(invalidLines(local.stdout)).toHaveLength(44);
    // 301 runs to validate (the empty input is reported by the coordinator itself), 5 per job.
    const done = workers.map(jobsDone);
    expect(done.flat()).toHaveLength(61);
    expect(new Set(done.flat()).size).toBe(61);
    for (const ids of done) expect(ids.length).toBeGreaterThan(0);
  });

  test('should print the JSON objects the local batch prints, paths as given on this machine', async () => {
    // Relative inputs: the workers open the runs by absolute paths, the coordinator names them as given.
    const relative = ['archive', 'empty', 'single/run.json'];
    const local = await run(['artifact', 'validate', ...relative, '--json', '--jobs', '2'], root);
    const queued = await run(['artifact', 'validate', ...relative, '--json', '--queue', redis.url, '--key', key, '--runs-per-job', '7'], root);
    expect(queued.code).toBe(local.code);
    expect(lines(queued.stdout).at(-1)).toBe(lines(local.stdout).at(-1));
    expect(lines(queued.stdout).sort()).toEqual(lines(local.stdout).sort());
    expect(lines(queued.stdout)).toHaveLength(303);
  });

  const body = (runs: string[]) => ({ kind: 'runs', batch: 'f0', root: archive, runs });
  const valid = 'lane-01/run-001/run.json';
  const FORGED: [string, (key: ReturnType<typeof readPrivateKey>, stranger: ReturnType<typeof readPrivateKey>) => unknown][] = [
    ['unsigned', () => body([valid])],
    ['signed by another key', (_, stranger) => signJob(body([valid]), stranger)],
    ['naming ../../etc beside a valid run', (own) => signJob(body([valid, '../../etc']), own)],
    ['naming a run outside the archive by ..', (own) => signJob(body([valid, '../outside/run.json']), own)],
    ['naming an absolute path', (own) => signJob(body([join(outside, 'run.json')]), own)],
    ['of another kind', (own) => signJob({ ...body([valid]), kind: 'crew' }, own)],
  ];

  test.each(FORGED)('should fail a job %s with JOB_INVALID and return no report', async (name, data) => {
    // The runs a forged job names, inside the archive and out: none may be opened.
    const named = [join(archive, valid), join(outside, 'run.json')];
    markUnread(named);
    const job = await queue.add('runs', data(readPrivateKey(key), readPrivateKey(join(other, 'actions.key'))), { jobId: `forged-${FORGED.findIndex(([n]) => n === name)}` });
    const failure = await job.waitUntilFinished(events).then(
      () => 'completed',
      (error: Error) => error.message,
    );
    expect(failure).toMatch(/^JOB_INVALID: /);
    const stored = await queue.getJob(job.id!);
    expect(await stored!.getState()).toBe('failed');
    expect(stored!.returnvalue ?? null).toBeNull();
    // Refused once, never retried, and said so by the worker that took it.
    expect(stored!.attemptsMade).toBe(1);
    if (atimes) expect(readSinceMarked(named)).toEqual([]);
    const refused = (worker: Child) => jobsOf(worker).filter(([id]) => id === job.id);
    await until(() => workers.some((worker) => refused(worker).length > 0), 10_000, 'the refusal');
    const refuser = workers.find((worker) => refused(worker).length > 0)!;
    expect(refused(refuser)).toEqual([[job.id, 'JOB_INVALID']]);
    if (!refuser.stdout.startsWith('{')) {
      // As lines, the refusal's error line follows on stderr.
      const said = () => lines(refuser.stderr).filter((line) => line.includes(`(job ${job.id}: `));
      await until(() => said().length > 0, 10_000, 'the error line');
      expect(codesOf(said().join('\n'))).toEqual(['JOB_INVALID']);
    }
  });

  test('should stop the batch with JOB_INVALID, exit 3 and no summary, when the workers do not trust its key', async () => {
    const result = await run(['artifact', 'validate', archive, '--queue', redis.url, '--key', join(other, 'actions.key'), '--runs-per-job', '50']);
    expect(result.code).toBe(3);
    expect(result.stdout).not.toContain('ARTIFACT_SUMMARY');
    expect(codesOf(result.stderr)).toEqual(['JOB_INVALID']);
    // Its jobs not yet taken were taken off the queue: no worker validates them for nobody.
    expect((await queue.getJobs(['wait'])).map((job) => job.id)).toEqual([]);
  });

  test('should fail the batch ARCHIVE_UNREADABLE, exit 1 and no summary, when a worker\'s --root does not hold the archive', async () => {
    // On a Redis of its own: the shared workers, whose roots are right, take none of its jobs.
    const own = await startRedis();
    const wrong = join(root, 'wrong-mount');
    mkdirSync(wrong, { recursive: true });
    const worker = start(['artifact', 'worker', '--queue', own.url, '--trust', trust, '--jobs', '1', '--root', wrong]);
    try {
      await until(() => worker.stderr.includes('ARTIFACT_WORKER: queue='), 30_000, 'the worker ready');
      const result = await run(['artifact', 'validate', archive, '--queue', own.url, '--key', key, '--runs-per-job', '50']);
      expect([result.code, codesOf(result.stderr)]).toEqual([1, ['ARCHIVE_UNREADABLE']]);
      expect(result.stdout).not.toContain('ARTIFACT_SUMMARY');
      expect(worker.stdout).toMatch(/^ARTIFACT_WORKER: job=\S+ failed=ARCHIVE_UNREADABLE$/m);
    } finally {
      killQuietly(worker.process.pid!);
      await own.close();
    }
  });

  test('should collect the jobs a killed coordinator left queued rather than queue them twice', async () => {
    // The empty directory beside the archive makes the batch's root the one the third
    // worker mounts elsewhere (with the archive alone, its --root would not hold the runs).
    const local = await run(['artifact', 'validate', archive, empty, '--jobs', '2']);
    await queue.pause();
    const args = ['artifact', 'validate', archive, empty, '--queue', redis.url, '--key', key, '--runs-per-job', '30'];
    const first = start(args);
    // 300 runs, 30 per job: ten jobs queued, none taken while the queue is paused (the empty
    // directory is reported by the coordinator itself, as one more invalid run).
    const queuedIds = async () => (await queue.getJobs(['wait'])).map((job) => job.id!);
    let ids: string[] = [];
    while (ids.length < 10 && first.process.exitCode === null) ids = await queuedIds();
    first.process.kill('SIGKILL');
    await first.exited;
    expect(ids).toHaveLength(10);
    const again = start(args);
    await queue.resume();
    expect(await again.exited).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines(again.stdout).at(-1), again.stderr).toMatch(/^ARTIFACT_SUMMARY: runs=301 /);
    expect(lines(again.stdout).at(-1)).toBe(lines(local.stdout).at(-1));
    // Each of the ten validated once, by whichever worker took it, and nothing else queued.
    expect(workers.flatMap(jobsDone).filter((id) => ids.includes(id)).sort()).toEqual([...ids].sort());
    expect(await queue.getJobCountByTypes('wait', 'active', 'completed')).toBe(0);
  });

  test('should be QUEUE_UNAVAILABLE, exit 1, with nothing on stdout, when nothing listens on the port', async () => {
    const port = await closedPort();
    const result = await run(['artifact', 'validate', archive, '--queue', `redis://127.0.0.1:${port}`, '--key', key]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(codesOf(result.stderr)).toEqual(['QUEUE_UNAVAILABLE']);
  });

  test('should stop the workers on SIGTERM, each exiting 0 with no process left', async () => {
    for (const worker of workers) worker.process.kill('SIGTERM');
    expect(await Promise.all(workers.map((worker) => worker.exited))).toEqual([0, 0, 0]);
    for (const worker of workers) expect(lines(worker.stderr).at(-1)).toBe('ARTIFACT_WORKER: stopped (SIGTERM)');
    expect(killStrays(root)).toEqual([]);
  });
});

describe('laneward artifact validate --queue and artifact worker options', () => {
  beforeAll(() => ensureBuilt());
  const root = join(tmp, 'usage');

  test.each([
    ['--queue without --key', ['artifact', 'validate', root, '--queue', 'redis://127.0.0.1:1']],
    ['--key without --queue', ['artifact', 'validate', root, '--key', join(root, 'k')]],
    ['--queue with --jobs', ['artifact', 'validate', root, '--queue', 'redis://127.0.0.1:1', '--key', join(root, 'k'), '--jobs', '2']],
    ['a --queue that is not a redis URL', ['artifact', 'validate', root, '--queue', 'http://127.0.0.1:1', '--key', join(root, 'k')]],
    ['--runs-per-job 0', ['artifact', 'validate', root, '--queue', 'redis://127.0.0.1:1', '--key', join(root, 'k'), '--runs-per-job', '0']],
    ['a worker without --trust', ['artifact', 'worker', '--queue', 'redis://127.0.0.1:1']],
    ['a worker without --queue', ['artifact', 'worker', '--trust', join(root, 'k')]],
  ])('should be USAGE (exit 2) before connecting: %s', (_, args) => {
    const result = laneward(args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(codesOf(result.stderr)).toEqual(['USAGE']);
  });
});

describe.skipIf(SKIP !== undefined)('a Redis lost mid-batch', () => {
  const root = join(tmp, 'lost');
  let redis: RedisServer;

  beforeAll(async () => {
    ensureBuilt();
    redis = await startRedis();
  });
  afterAll(async () => {
    expect(killStrays(root)).toEqual([]);
    await redis?.close();
  });

  test('should end the coordinator and the worker with QUEUE_UNAVAILABLE, exit 1, and no stack trace', async () => {
    for (let i = 0; i < 20; i++) generateRun(join(root, 'archive', `run-${i}`), { runId: 'run1', seed: i + 1 });
    const keys = join(root, 'keys');
    expect(laneward(['actions', 'keygen', '--out', keys]).code).toBe(0);
    const worker = start(['artifact', 'worker', '--queue', redis.url, '--trust', join(keys, 'actions.pub'), '--jobs', '1']);
    await until(() => worker.stderr.includes('ARTIFACT_WORKER: queue='), 30_000, 'the worker ready');
    const queue = new Queue(RUNS_QUEUE, { connection: { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null } });
    await queue.pause();
    const coordinator = start(['artifact', 'validate', join(root, 'archive'), '--queue', redis.url, '--key', join(keys, 'actions.key'), '--runs-per-job', '5']);
    let queued = 0;
    while (queued < 4 && coordinator.process.exitCode === null) queued = (await queue.getJobCountByTypes('wait')) ?? 0;
    expect(queued).toBe(4);
    await queue.close();
    await redis.stop(true);
    expect(await coordinator.exited).toBe(1);
    expect(await worker.exited).toBe(1);
    expect(coordinator.stdout).toBe('');
    expect(codesOf(coordinator.stderr)).toEqual(['QUEUE_UNAVAILABLE']);
    const errors = lines(worker.stderr).filter((line) => !line.startsWith('ARTIFACT_WORKER: '));
    expect(codesOf(errors.join('\n'))).toEqual(['QUEUE_UNAVAILABLE']);
    for (const line of [...lines(coordinator.stderr), ...errors]) expect(line).toMatch(ERROR_LINE);
  });
});
