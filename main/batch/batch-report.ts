import { EXIT, type ResultCode } from '../../formats/codes/codes.ts';
import { issue } from '../../formats/codes/issue.ts';
import { oneLine } from '../../formats/text/one-line.ts';
import { jsonText } from '../../formats/text/json-text.ts';
import { reportObject, type RunReport } from '../../workers/validate/report.ts';
import type { BatchOutput } from './batch-output.ts';
import type { Discovered } from './discover.ts';
import { ProgressBar } from './progress.ts';

/** Totals of a batch: runs, verdicts, and errors by result code. */
export interface BatchSummary {
  runs: number;
  valid: number;
  invalid: number;
  codes: Record<string, number>;
}

/** Exit statuses of a batch stopped early, as a shell reports a process killed by the signal. */
export const STOPPED: Readonly<Record<string, number>> = { SIGHUP: 129, SIGINT: 130, SIGQUIT: 131, SIGPIPE: 141, SIGUSR2: 140, SIGALRM: 142, SIGTERM: 143 };

/**
 * What a batch prints, wherever its runs were validated: one line (or object) per run as
 * it is reported, the progress bar between them, and the summary the totals add up to.
 * The local pool and the queue coordinator both report through this, so the same
 * archive prints the same lines and the same summary either way.
 */
export interface BatchTally {
  readonly summary: BatchSummary;
  readonly bar: ProgressBar;
  /** Counts and prints one run; `validated` also ticks the bar (discovery's reports do not). */
  report(path: string, result: RunReport, validated: boolean): void;
  /** Clears the bar and prints the summary line (or object). */
  end(): void;
  /** 0 only when runs were reported and every one was valid. */
  exit(): number;
}

/** A tally over `total` runs to validate (the bar's length), printing to `io`. */
export function batchTally(io: BatchOutput, json: boolean, total: number): BatchTally {
  const summary: BatchSummary = { runs: 0, valid: 0, invalid: 0, codes: {} };
  const bar = new ProgressBar(io, total);
  return {
    summary,
    bar,
    report: (path, result, validated) => {
      summary.runs += 1;
      if (result.valid) summary.valid += 1;
      else summary.invalid += 1;
      for (const [code, n] of Object.entries(result.codes)) summary.codes[code] = (summary.codes[code] ?? 0) + n;
      bar.print(() => printRun(path, result, json, io));
      if (validated) bar.tick(!result.valid);
    },
    end: () => {
      bar.finish();
      printSummary(summary, json, io);
    },
    exit: () => (summary.invalid === 0 && summary.runs > 0 ? EXIT.ok : EXIT.fail),
  };
}

/**
 * What discovery found that is no run to validate, reported as invalid runs `run=-`
 * (ARTIFACT_MISSING): an input holding no run.json, a directory that could not be
 * searched. Nothing is skipped silently.
 */
export function reportUndiscovered(tally: BatchTally, found: Pick<Discovered, 'empty' | 'unreachable'>): void {
  for (const dir of found.empty) tally.report(dir, failedRun(dir, 'ARTIFACT_MISSING', `no run.json in ${dir} or below it`), false);
  for (const { path, message } of found.unreachable) tally.report(path, failedRun(path, 'ARTIFACT_MISSING', message), false);
}

/** The report of a run that could not be validated: one issue with `code`, at `path`. */
export function failedRun(path: string, code: ResultCode, message: string): RunReport {
  return { valid: false, run: null, status: null, run_dir: path, errors: [issue(code, path, message)], errors_omitted: 0, codes: { [code]: 1 }, attested: 0 };
}

export function printRun(path: string, result: RunReport, json: boolean, io: BatchOutput): void {
  if (json) {
    io.out(jsonText({ ...reportObject(result), path }));
    return;
  }
  if (result.valid) return;
  const codes = Object.keys(result.codes).sort();
  const count = result.errors.length + result.errors_omitted;
  io.out(`ARTIFACT_INVALID: run=${oneLine(result.run ?? '-')} path=${oneLine(path)} errors=${count} codes=${codes.join(',')}`);
}

export function printSummary(summary: BatchSummary, json: boolean, io: BatchOutput): void {
  const codes = Object.keys(summary.codes).sort();
  const sorted = Object.fromEntries(codes.map((code) => [code, summary.codes[code]!]));
  if (json) {
    io.out(JSON.stringify({ summary: { ...summary, codes: sorted } }));
    return;
  }
  const tail = codes.map((code) => ` ${code}=${summary.codes[code]}`).join('');
  io.out(`ARTIFACT_SUMMARY: runs=${summary.runs} valid=${summary.valid} invalid=${summary.invalid}${tail}`);
}
