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
/** Lanes of the larger serial crew, against one: enough calls that one crew's fixed cost drops out. */
const SERIAL_LANES = 6;

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
  const report = join(dir, 'report.json');
  const started = performance.now();
  const result = await crewRun(
    { file, cwd: dir, env: process.env, state: join(dir, 'state'), threads: 2, deadlineMs: undefined, serve: undefined, report, cancel: controller.signal },
    quiet,
  );
  const seconds = (performance.now() - started) / 1000;
  const attempts = Number(/attempts=(\d+)/.exec(result.summary)![1]);
  // The supervised calls this run started (a lane's `attempts` add up its calls across runs).
  const { readFileSync } = await import('node:fs');
  const calls = (JSON.parse(readFileSync(report, 'utf8')) as { stats: { calls: number } }).stats.calls;
  return { seconds, attempts, calls, complete: result.tally.complete, lanes: result.tally.lanes };
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

    // One lane at a time, one child at a time: every call's time is the child plus what the
    // coordinator does around it (journal, prompts, submit, QA, export). What a crew costs
    // once (its pool, store, QA service) is taken out by measuring a crew of one lane and a
    // crew of SERIAL_LANES beside it: the difference over the difference in supervised calls
    // is one more call's cost, against a bare spawn of the same child measured right before.
    // A shared machine swings the figures: the median of SERIAL_RUNS such triples is shown.
    const pairs: { bare: number; calls: number; seconds: number; perCall: number; overhead: number }[] = [];
    for (let i = 0; i < SERIAL_RUNS; i++) {
      const baseline = await meanMs(options.samples, () => supervise(spec()));
      const one = await crewOf(join(dir, `serial-one-${i}`), 1, 1, 1);
      const many = await crewOf(join(dir, `serial-many-${i}`), SERIAL_LANES, 1, 1);
      const calls = many.calls - one.calls;
      const perCall = ((many.seconds - one.seconds) * 1000) / calls;
      pairs.push({ bare: baseline, calls, seconds: many.seconds - one.seconds, perCall, overhead: perCall - baseline });
    }
    pairs.sort((x, y) => x.overhead - y.overhead);
    const median = pairs[Math.floor(pairs.length / 2)]!;
    line(
      'crew, serial',
      `${median.calls} more supervised calls (${SERIAL_LANES} lanes against 1) in ${median.seconds.toFixed(2)} s more = ${median.perCall.toFixed(2)} ms per call against a bare spawn of ${median.bare.toFixed(2)} ms (${ratio(median.perCall, median.bare)}): coordinator overhead ${median.overhead.toFixed(2)} ms per call (target < 2 ms); median of ${SERIAL_RUNS}, all: ${pairs.map((p) => `${p.overhead.toFixed(1)} ms`).join(', ')}`,
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
