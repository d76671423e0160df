import { EXIT } from '../../formats/codes/codes.ts';
import { toError } from '../../formats/codes/error.ts';
import type { RunReport } from '../../workers/validate/report.ts';
import { validateRun } from '../../workers/validate/validate-run.ts';
import { interruptSignal } from '../interrupt.ts';
import { createPool, defaultThreads } from '../pool.ts';
import type { BatchOutput } from './batch-output.ts';
import { batchTally, failedRun as failed, reportUndiscovered, STOPPED, type BatchSummary } from './batch-report.ts';
import { discoverRuns } from './discover.ts';
import type { ProgressBar } from './progress.ts';

export type { BatchSummary } from './batch-report.ts';

export interface BatchOptions {
  readonly json: boolean;
  readonly jobs: number | undefined;
}

/** The most runs one pool task validates. */
const MAX_TASK_RUNS = 8;

/**
 * Validates many runs across the pool and reports each as it finishes, then one summary.
 * At most a few runs per thread are in flight, so a batch of any size holds only the
 * reports not yet printed. A batch that cannot finish reporting (its reader closed
 * stdout, or a signal) stops starting runs and exits with 128 + the signal number
 * (141 for a closed reader): exit 0 means every run was validated, reported and valid.
 */
export async function runBatch(
  inputs: readonly string[],
  options: BatchOptions,
  io: BatchOutput,
): Promise<{ code: number; summary: BatchSummary }> {
  const found = discoverRuns(inputs);
  const { runs } = found;
  const tally = batchTally(io, options.json, runs.length);
  const stop = interruptSignal();
  try {
    reportUndiscovered(tally, found);
    if (runs.length > 0 && !stop.signal.aborted) await validateAll(runs, options, tally.bar, (path, result) => tally.report(path, result, true), stop.signal);
    if (stop.signal.aborted) return { code: STOPPED[String(stop.signal.reason)] ?? EXIT.fail, summary: tally.summary };
  } finally {
    stop.release();
  }
  tally.end();
  return { code: tally.exit(), summary: tally.summary };
}

/**
 * Validates `runs` on `--jobs` threads: the coordinator is one of them (it would
 * otherwise sit idle waiting for results) and the pool holds the others, so `--jobs 1`
 * starts no pool at all. The coordinator validates one run per event-loop turn, so
 * results from the workers are printed between its own; it starts at once, while the
 * pool is still loading and booting its threads.
 */
async function validateAll(
  runs: readonly string[],
  options: BatchOptions,
  bar: ProgressBar,
  /** Prints and counts one validated run (and ticks the bar). */
  report: (path: string, result: RunReport) => void,
  signal: AbortSignal,
): Promise<void> {
  const threads = Math.min(options.jobs ?? defaultThreads(), runs.length);
  let next = 0;
  const local = async () => {
    while (next < runs.length && !signal.aborted) {
      await new Promise((resolve) => setImmediate(resolve));
      if (next >= runs.length || signal.aborted) break;
      const path = runs[next++]!;
      let result: RunReport;
      try {
        result = validateRun(path);
      } catch (error) {
        result = failed(path, 'INTERNAL', toError(error).message);
      }
      report(path, result);
    }
  };
  if (threads <= 1) {
    try {
      await local();
    } finally {
      bar.finish();
    }
    return;
  }
  const coordinator = local();
  let poolError: Error | undefined;
  // Hint: two tasks per worker, so the next batch is already queued in the worker when one
  // ends (validation is synchronous); the worker never idles through a round trip.
  const pool = await createPool('validate', threads - 1, (error) => (poolError ??= error), { concurrentTasksPerWorker: 2 });
  try {
    const lane = async () => {
      while (next < runs.length && !signal.aborted) {
        // Hint: several runs per task, fewer near the end so the threads finish together:
        // a round trip per run kept the coordinator posting and the worker waiting.
        const size = Math.max(1, Math.min(MAX_TASK_RUNS, Math.floor((runs.length - next) / (threads * 4))));
        const paths = runs.slice(next, next + size);
        next += paths.length;
        let results: (RunReport | { thrown: string })[];
        try {
          results = (await pool.run(paths)) as (RunReport | { thrown: string })[];
        } catch (error) {
          const message = toError(poolError ?? error).message;
          results = paths.map(() => ({ thrown: message }));
        }
        if (signal.aborted) return;
        paths.forEach((path, k) => {
          const result = results[k]!;
          report(path, 'thrown' in result ? failed(path, 'INTERNAL', poolError?.message ?? result.thrown) : result);
        });
      }
    };
    // Three lanes per worker: two in the worker, one crossing back with its results.
    await Promise.all([coordinator, ...Array.from({ length: (threads - 1) * 3 }, lane)]);
  } finally {
    bar.finish();
    await pool.destroy();
  }
}
