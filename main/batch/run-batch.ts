import { EXIT, type ResultCode } from '../../formats/codes/codes.ts';
import { toError } from '../../formats/codes/error.ts';
import { issue } from '../../formats/codes/issue.ts';
import { oneLine } from '../../formats/text/one-line.ts';
import { jsonText } from '../../formats/text/json-text.ts';
import { reportObject, type RunReport } from '../../workers/validate/report.ts';
import { validateRun } from '../../workers/validate/validate-run.ts';
import { interruptSignal } from '../interrupt.ts';
import { createPool, defaultThreads } from '../pool.ts';
import type { BatchOutput } from './batch-output.ts';
import { discoverRuns } from './discover.ts';
import { ProgressBar } from './progress.ts';

export interface BatchOptions {
  readonly json: boolean;
  readonly jobs: number | undefined;
}

/** Totals of a batch: runs, verdicts, and errors by result code. */
export interface BatchSummary {
  runs: number;
  valid: number;
  invalid: number;
  codes: Record<string, number>;
}

/** The most runs one pool task validates. */
const MAX_TASK_RUNS = 8;

/** Exit statuses of a batch stopped early, as a shell reports a process killed by the signal. */
const STOPPED: Record<string, number> = { SIGHUP: 129, SIGINT: 130, SIGQUIT: 131, SIGPIPE: 141, SIGUSR2: 140, SIGALRM: 142, SIGTERM: 143 };

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
  const { runs, empty, unreachable } = discoverRuns(inputs);
  const summary: BatchSummary = { runs: 0, valid: 0, invalid: 0, codes: {} };
  const bar = new ProgressBar(io, runs.length);
  const report = (path: string, result: RunReport) => {
    summary.runs += 1;
    if (result.valid) summary.valid += 1;
    else summary.invalid += 1;
    for (const [code, n] of Object.entries(result.codes)) summary.codes[code] = (summary.codes[code] ?? 0) + n;
    bar.print(() => printRun(path, result, options.json, io));
  };

  const stop = interruptSignal();
  try {
    for (const dir of empty) report(dir, failed(dir, 'ARTIFACT_MISSING', `no run.json in ${dir} or below it`));
    for (const { path, message } of unreachable) report(path, failed(path, 'ARTIFACT_MISSING', message));
    if (runs.length > 0 && !stop.signal.aborted) await validateAll(runs, options, bar, report, stop.signal);
    if (stop.signal.aborted) return { code: STOPPED[String(stop.signal.reason)] ?? EXIT.fail, summary };
  } finally {
    stop.release();
  }
  printSummary(summary, options.json, io);
  return { code: summary.invalid === 0 && summary.runs > 0 ? EXIT.ok : EXIT.fail, summary };
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
  report: (path: string, result: RunReport) => void,
  signal: AbortSignal,
): Promise<void> {
  const threads = Math.min(options.jobs ?? defaultThreads(), runs.length);
  let next = 0;
  const finish = (path: string, result: RunReport) => {
    report(path, result);
    bar.tick(!result.valid);
  };
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
      finish(path, result);
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
          finish(path, 'thrown' in result ? failed(path, 'INTERNAL', poolError?.message ?? result.thrown) : result);
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

function failed(path: string, code: ResultCode, message: string): RunReport {
  return { valid: false, run: null, status: null, run_dir: path, errors: [issue(code, path, message)], errors_omitted: 0, codes: { [code]: 1 }, attested: 0 };
}

function printRun(path: string, result: RunReport, json: boolean, io: BatchOutput): void {
  if (json) {
    io.out(jsonText({ ...reportObject(result), path }));
    return;
  }
  if (result.valid) return;
  const codes = Object.keys(result.codes).sort();
  const count = result.errors.length + result.errors_omitted;
  io.out(`ARTIFACT_INVALID: run=${oneLine(result.run ?? '-')} path=${oneLine(path)} errors=${count} codes=${codes.join(',')}`);
}

function printSummary(summary: BatchSummary, json: boolean, io: BatchOutput): void {
  const codes = Object.keys(summary.codes).sort();
  const sorted = Object.fromEntries(codes.map((code) => [code, summary.codes[code]!]));
  if (json) {
    io.out(JSON.stringify({ summary: { ...summary, codes: sorted } }));
    return;
  }
  const tail = codes.map((code) => ` ${code}=${summary.codes[code]}`).join('');
  io.out(`ARTIFACT_SUMMARY: runs=${summary.runs} valid=${summary.valid} invalid=${summary.invalid}${tail}`);
}
