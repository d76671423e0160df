import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CREW_WORDS } from '../main/cli/crew-lines.ts';
import { crewRun, type CrewOutput } from '../main/crew/crew-run.ts';
import { createPoolDispatcher } from '../main/dispatch/dispatcher.ts';
import { defaultFixtures, writeDemoCrew } from '../main/demo/demo-crew.ts';
import { nowMs } from '../workers/supervise/monotonic-timer.ts';
import { supervise } from '../workers/supervise/supervise.ts';
import { SUPERVISION_DEFAULTS, type SupervisionSpec } from '../workers/supervise/spec.ts';
import { line, ratio } from './measure.ts';

const quiet: CrewOutput = { event: () => undefined, words: CREW_WORDS, errRaw: () => undefined, stderrIsTTY: false };

function instantSpec(dir: string): SupervisionSpec {
  const prompt = join(dir, 'bare.prompt.md');
  writeFileSync(prompt, `INPUT: eng ${'0'.repeat(64)}\n`);
  return {
    argv: [join(defaultFixtures(), 'instant', 'reviewer.sh'), prompt, join(dir, 'bare.result.md')],
    stdio: 'pipe',
    mode: 'admitted_progress_inactivity',
    progress: 'fd',
    timeoutMs: 10_000,
    cleanupReserveMs: 100,
    postProviderMs: 2_000,
    ...SUPERVISION_DEFAULTS,
    startedAt: nowMs(),
    action: 'review',
    descriptorSha256: null,
  };
}

/** Serial crews measured, each against its own bare-spawn baseline. */
const SERIAL_RUNS = 3;

async function meanMs(times: number, once: () => Promise<unknown>): Promise<number> {
  await once();
  const start = performance.now();
  for (let i = 0; i < times; i++) await once();
  return (performance.now() - start) / times;
}

async function crewOf(dir: string, lanes: number, concurrency: number, lanesAtOnce?: number) {
  const file = writeDemoCrew({ dir, crew: `bench-${lanes}-${concurrency}`, lanes, broken: 0, concurrency, instant: true });
  if (lanesAtOnce !== undefined) {
    const { readFileSync } = await import('node:fs');
    const crew = JSON.parse(readFileSync(file, 'utf8'));
    crew.limits.lanes = lanesAtOnce;
    writeFileSync(file, JSON.stringify(crew));
  }
  const controller = new AbortController();
  const started = performance.now();
  const result = await crewRun(
    { file, cwd: dir, env: process.env, state: join(dir, 'state'), threads: 2, deadlineMs: undefined, serve: undefined, report: undefined, cancel: controller.signal },
    quiet,
  );
  const seconds = (performance.now() - started) / 1000;
  const attempts = Number(/attempts=(\d+)/.exec(result.summary)![1]);
  return { seconds, attempts, complete: result.tally.complete, lanes: result.tally.lanes };
}

/**
 * Crews: lanes per minute for a crew of fixture lanes, and what the coordinator adds to
 * each attempt over a bare supervised spawn of the same child, measured in this run.
 */
export async function benchCrew(options: { lanes: number; samples: number }): Promise<void> {
  const dir = mkdtempSync(join(process.env['LANEWARD_BENCH_TMP'] ?? tmpdir(), 'laneward-bench-crew-'));
  try {
    const spec = () => ({ ...instantSpec(dir), startedAt: nowMs() });
    const bare = await meanMs(options.samples, () => supervise(spec()));
    const dispatcher = await createPoolDispatcher({ threads: 1, limit: 1 });
    const pooled = await meanMs(options.samples, () => dispatcher.supervise(spec()));
    await dispatcher.close();
    line('bare supervised spawn', `${bare.toFixed(2)} ms per child (fixtures/instant/reviewer.sh, in-process supervise)`);
    line('through the pool', `${pooled.toFixed(2)} ms per child: +${(pooled - bare).toFixed(2)} ms dispatch overhead (${ratio(pooled, bare)})`);

    // One lane at a time, one child at a time: every attempt's time is the child plus what
    // the coordinator does around it (journal, prompts, submit, QA, export). A shared
    // machine swings both figures: each of SERIAL_RUNS crews is paired with a bare-spawn
    // baseline measured right before it, and the pair with the median overhead is shown.
    const pairs: { bare: number; attempts: number; seconds: number; perAttempt: number; overhead: number }[] = [];
    for (let i = 0; i < SERIAL_RUNS; i++) {
      const baseline = await meanMs(options.samples, () => supervise(spec()));
      const serial = await crewOf(join(dir, `serial-${i}`), 3, 1, 1);
      const perAttempt = (serial.seconds * 1000) / serial.attempts;
      pairs.push({ bare: baseline, attempts: serial.attempts, seconds: serial.seconds, perAttempt, overhead: perAttempt - baseline });
    }
    pairs.sort((x, y) => x.overhead - y.overhead);
    const median = pairs[Math.floor(pairs.length / 2)]!;
    line(
      'crew, serial',
      `${median.attempts} attempts in ${median.seconds.toFixed(2)} s = ${median.perAttempt.toFixed(2)} ms per attempt against a bare spawn of ${median.bare.toFixed(2)} ms (${ratio(median.perAttempt, median.bare)}): coordinator overhead ${median.overhead.toFixed(2)} ms per attempt, ${(median.overhead / median.bare).toFixed(2)}x the bare spawn (target < 2 ms); median of ${SERIAL_RUNS}, all: ${pairs.map((p) => `${p.overhead.toFixed(1)} ms/${(p.overhead / p.bare).toFixed(2)}x`).join(', ')}`,
    );

    const wide = await crewOf(join(dir, 'wide'), options.lanes, 8);
    line(
      `crew of ${wide.lanes} lanes`,
      `${wide.complete}/${wide.lanes} complete, ${wide.attempts} attempts in ${wide.seconds.toFixed(1)} s: ${((wide.complete / wide.seconds) * 60).toFixed(0)} lanes per minute, ${(wide.attempts / wide.seconds).toFixed(1)} attempts/s (concurrency 8, 2 threads)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
