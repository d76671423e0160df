import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { redisMissing, startRedis } from '../fixtures/redis-server.ts';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { childrenCpuMs } from './end-to-end.ts';
import { line, ratio } from './measure.ts';

// The CLI bundle beside the bench's own.
const CLI = fileURLToPath(new URL('./laneward.cjs', import.meta.url));

function run(args: readonly string[], cwd: string): Promise<{ code: number | null; stdout: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ['ignore', 'pipe', 'ignore'] });
  let stdout = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout })));
}

/** Redis commands served so far (the sum of INFO commandstats calls). */
async function commands(url: string): Promise<number> {
  const { default: Redis } = await import('ioredis');
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    const info = await client.info('commandstats');
    return [...info.matchAll(/calls=(\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
  } finally {
    client.disconnect();
  }
}

/**
 * One crew over a queue: lanes per minute with 1, 2 and 3 worker processes against the same
 * crew run locally in the same run (all on this machine, so the figure is the queue's
 * overhead, not a speed-up), and Redis commands per attempt.
 */
export async function benchCrewQueue(options: { lanes: number }): Promise<void> {
  const missing = redisMissing();
  if (missing !== undefined) {
    line('crew over a queue', `skipped: ${missing}`);
    return;
  }
  const dir = mkdtempSync(join(process.env['LANEWARD_BENCH_TMP'] ?? tmpdir(), 'laneward-bench-queue-'));
  const redis = await startRedis();
  try {
    const crewOf = (name: string) => {
      const crewDir = join(dir, name);
      const file = writeDemoCrew({ dir: crewDir, crew: name, lanes: options.lanes, broken: 0, concurrency: 4, instant: true });
      return { dir: crewDir, file };
    };
    const rate = (stdout: string, seconds: number) => {
      const summary = /CREW_SUMMARY: lanes=(\d+) complete=(\d+) .*attempts=(\d+)/.exec(stdout);
      return { complete: Number(summary?.[2] ?? 0), attempts: Number(summary?.[3] ?? 0), perMinute: (Number(summary?.[2] ?? 0) / seconds) * 60 };
    };
    const local = crewOf('local');
    // CPU of every process of a run (the crew, its workers and their children), from this
    // process's reaped children: each run's processes have all exited when it is read.
    let cpuBefore = childrenCpuMs();
    let began = performance.now();
    const alone = rate((await run(['crew', 'run', local.file, '--state', join(local.dir, 'state')], local.dir)).stdout, (performance.now() - began) / 1000);
    const localCpu = (childrenCpuMs() - cpuBefore) / Math.max(1, alone.complete);
    line(`local crew of ${options.lanes}`, `${alone.complete}/${options.lanes} complete, ${alone.perMinute.toFixed(0)} lanes/min (concurrency 4, one process); CPU ${localCpu.toFixed(0)} ms a lane, all processes`);
    for (const n of [1, 2, 3]) {
      const crew = crewOf(`queued${n}`);
      const workers: ChildProcess[] = Array.from({ length: n }, (_, i) =>
        spawn(process.execPath, [CLI, 'crew', 'worker', '--queue', redis.url, '--trust', join(crew.dir, 'keys', 'actions.pub'), '--state', join(crew.dir, `w${i}`), '--concurrency', '4', '--threads', '1'], { cwd: crew.dir, stdio: 'ignore' }),
      );
      let figures: ReturnType<typeof rate> | undefined;
      cpuBefore = childrenCpuMs();
      try {
        const before = await commands(redis.url);
        began = performance.now();
        const done = await run(['crew', 'run', crew.file, '--queue', redis.url, '--key', join(crew.dir, 'keys', 'actions.key'), '--state', join(crew.dir, 'coord')], crew.dir);
        const seconds = (performance.now() - began) / 1000;
        figures = rate(done.stdout, seconds);
        const calls = (await commands(redis.url)) - before;
        line(
          `queued, ${n} worker${n === 1 ? '' : 's'}`,
          `${figures.complete}/${options.lanes} complete, ${figures.perMinute.toFixed(0)} lanes/min against ${alone.perMinute.toFixed(0)} local (${ratio(figures.perMinute, alone.perMinute)}); ${calls} Redis commands, ${(calls / Math.max(1, figures.attempts)).toFixed(1)} per attempt, ${(calls / Math.max(1, figures.complete)).toFixed(0)} per lane`,
        );
      } finally {
        for (const worker of workers) worker.kill('SIGTERM');
        await Promise.all(workers.map((worker) => new Promise((resolve) => (worker.exitCode !== null ? resolve(null) : worker.once('exit', resolve)))));
      }
      const queuedCpu = (childrenCpuMs() - cpuBefore) / Math.max(1, figures.complete);
      line(`  CPU a lane, ${n} worker${n === 1 ? '' : 's'}`, `${queuedCpu.toFixed(0)} ms, all processes (coordinator and workers), against ${localCpu.toFixed(0)} ms local (${ratio(queuedCpu, localCpu)}; target <= 1.10x)`);
    }
  } finally {
    await redis.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
