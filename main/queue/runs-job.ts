import { isAbsolute, join, resolve, sep } from 'node:path';
import * as v from 'valibot';
import { RESULT_CODES, type ResultCode } from '../../formats/codes/codes.ts';
import { isLanewardError, LanewardError, toError } from '../../formats/codes/error.ts';
import type { RunReport } from '../../workers/validate/report.ts';

/** The BullMQ queue the coordinator fills and `artifact worker` drains. */
export const RUNS_QUEUE = 'laneward-runs';
/** The BullMQ job name of a slice of a batch. */
export const RUNS_JOB = 'runs';
/** The most runs one job may name: a body stays far below what a worker opens. */
export const MAX_JOB_RUNS = 10_000;

/**
 * A slice of a batch, as signed by the coordinator: `runs` are paths relative to `root`,
 * the coordinator's absolute path of the deepest directory holding every input. A worker
 * resolves them under its own `--root` when that directory is mounted elsewhere there.
 */
export interface RunsJob {
  readonly kind: 'runs';
  readonly batch: string;
  readonly root: string;
  readonly runs: readonly string[];
}

const runsJobSchema = v.strictObject({
  kind: v.literal('runs'),
  batch: v.pipe(v.string(), v.regex(/^[0-9a-f]{1,64}$/)),
  root: v.pipe(v.string(), v.minLength(1), v.check(isAbsolute, 'not an absolute path')),
  runs: v.pipe(v.array(v.string()), v.minLength(1), v.maxLength(MAX_JOB_RUNS)),
});

/** The body of an opened job as a RunsJob; JOB_INVALID naming what is wrong with it. */
export function parseRunsJob(body: unknown): RunsJob {
  const parsed = v.safeParse(runsJobSchema, body);
  if (parsed.success) return parsed.output;
  const first = parsed.issues[0];
  const where = first.path?.map((item) => String(item.key)).join('.') ?? 'body';
  throw new LanewardError('JOB_INVALID', `the job body is not a runs job (${where}: ${first.message})`);
}

/**
 * `rel` resolved under `root`, refused (JOB_INVALID) unless it stays strictly inside it:
 * checked on the text before anything is opened, since a refused job must read nothing.
 * Symlinks inside the archive are followed as the local batch follows them.
 */
export function containedRun(root: string, rel: string): string {
  const refuse = (why: string) => new LanewardError('JOB_INVALID', `run path ${JSON.stringify(rel)} ${why}`);
  if (rel === '' || rel.includes('\0')) throw refuse('is empty or holds a NUL byte');
  if (isAbsolute(rel)) throw refuse('is absolute');
  if (rel.split(/[\\/]/).includes('..')) throw refuse('has a .. segment');
  const base = resolve(root);
  if (!resolve(base, rel).startsWith(base === sep ? sep : base + sep)) throw refuse(`is not inside ${root}`);
  return join(root, rel);
}

/** One run's verdict as a worker returns it: its path relative to the root, and its report. */
export interface RunAnswer {
  readonly path: string;
  readonly report: RunReport;
}

/** What a `runs` job completes with: the root the worker resolved under, and a report per run, in the job's order. */
export interface RunsAnswer {
  readonly root: string;
  readonly reports: readonly RunAnswer[];
}

const codeSchema = v.custom<ResultCode>((value) => typeof value === 'string' && Object.hasOwn(RESULT_CODES, value), 'not a result code');
const count = v.pipe(v.number(), v.integer(), v.minValue(0));
const reportSchema = v.object({
  valid: v.boolean(),
  run: v.nullable(v.string()),
  status: v.nullable(v.string()),
  run_dir: v.string(),
  errors: v.array(v.object({ code: codeSchema, path: v.string(), message: v.string() })),
  errors_omitted: count,
  codes: v.record(codeSchema, count),
  attested: count,
});
const answerSchema = v.object({
  root: v.string(),
  reports: v.array(v.object({ path: v.string(), report: reportSchema })),
});

/**
 * A job's return value checked against the job it answers: one report per run, in
 * order. Anyone who can write to Redis can complete a job, so the coordinator counts
 * nothing it cannot read as a report of exactly the runs it asked about.
 */
export function checkRunsAnswer(value: unknown, job: RunsJob): RunsAnswer {
  const parsed = v.safeParse(answerSchema, value);
  const answer = parsed.success ? (parsed.output as RunsAnswer) : undefined;
  if (answer === undefined || answer.reports.length !== job.runs.length || answer.reports.some((entry, k) => entry.path !== job.runs[k])) {
    throw new LanewardError('JOB_INVALID', `the answer to a job of batch ${job.batch} is not one report per run it named`);
  }
  return answer;
}

/**
 * A failed job's reason, `<CODE>: <message>`: BullMQ keeps only a message, so the code
 * travels at its start (INTERNAL for anything that is not a LanewardError).
 */
export function codedReason(error: unknown): string {
  return `${isLanewardError(error) ? error.code : 'INTERNAL'}: ${toError(error).message}`;
}

/** The code and message of a failed job's reason; INTERNAL and the whole reason when it starts with no known code. */
export function readReason(reason: string): { code: ResultCode; message: string } {
  const coded = /^([A-Z][A-Z0-9_]*): ([^]*)$/.exec(reason);
  if (coded === null || !Object.hasOwn(RESULT_CODES, coded[1]!)) return { code: 'INTERNAL', message: reason === '' ? 'no reason given' : reason };
  return { code: coded[1] as ResultCode, message: coded[2]! };
}
