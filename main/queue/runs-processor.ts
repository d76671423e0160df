import type { KeyObject } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import { dirname } from 'node:path';
import { LanewardError } from '../../formats/codes/error.ts';
import type { Job } from 'bullmq';
import type { Piscina } from 'piscina';
import type { RunReport } from '../../workers/validate/report.ts';
import type { BatchAnswer } from '../../workers/validate/task.ts';
import { failedRun } from '../batch/batch-report.ts';
import { codedReason, containedRun, parseRunsJob, type RunsAnswer } from './runs-job.ts';
import { openJob } from './signed-job.ts';

/** The most runs one pool task validates (as in the local batch). */
const MAX_TASK_RUNS = 8;

export interface ProcessorOptions {
  /** The public key a job must be signed by. */
  readonly trust: KeyObject;
  /** Where this machine mounts the batch's root (absolute); undefined: the root each job names. */
  readonly root: string | undefined;
}

/**
 * What a worker does with one `runs` job: open it, check its body and every path it
 * names, all before any run is read; a job that fails any of that is refused whole (with
 * `refuse`, the worker's final failure). Then its runs are validated on `pool`, several
 * per task, and the job completes with one report per run, in its order.
 */
export function runsProcessor(options: ProcessorOptions, pool: Piscina, refuse: (error: unknown) => Error, poolError: () => Error | undefined) {
  return async (job: Job): Promise<RunsAnswer> => {
    let root: string;
    let runs: readonly string[];
    let paths: string[];
    try {
      const body = parseRunsJob(openJob(job.data, options.trust));
      root = options.root ?? body.root;
      runs = body.runs;
      paths = runs.map((rel) => containedRun(root, rel));
      // A run the coordinator found that this machine cannot see is this worker's mount,
      // not the run: validated, it would count as invalid and change the batch's summary.
      for (const [k, path] of paths.entries()) readableRun(path, runs[k]!, root);
    } catch (error) {
      throw refuse(error);
    }
    const reports = await validatePaths(pool, paths, poolError);
    return { root, reports: runs.map((path, k) => ({ path, report: reports[k]! })) };
  };
}

/**
 * ARCHIVE_UNREADABLE unless the directory holding `path` (a run directory or its
 * manifest) is there to read on this machine. The path itself may be missing or broken:
 * that is the run's own fault, which its report names as a single process's would.
 */
function readableRun(path: string, rel: string, root: string): void {
  try {
    accessSync(dirname(path), constants.R_OK | constants.X_OK);
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new LanewardError('ARCHIVE_UNREADABLE', `run ${JSON.stringify(rel)} cannot be read under ${root} on this worker (its directory: ${why})`, { path });
  }
}

/** Validates `paths` on the pool; a run that throws is an INTERNAL report of its own. */
async function validatePaths(pool: Piscina, paths: readonly string[], poolError: () => Error | undefined): Promise<RunReport[]> {
  const tasks: Promise<BatchAnswer[]>[] = [];
  for (let start = 0; start < paths.length; start += MAX_TASK_RUNS) tasks.push(pool.run(paths.slice(start, start + MAX_TASK_RUNS)) as Promise<BatchAnswer[]>);
  let answers: BatchAnswer[];
  try {
    answers = (await Promise.all(tasks)).flat();
  } catch (error) {
    // A pool that cannot validate fails the job (INTERNAL) rather than calling every run invalid.
    throw new Error(codedReason(poolError() ?? error));
  }
  return answers.map((answer, k) => ('thrown' in answer ? failedRun(paths[k]!, 'INTERNAL', answer.thrown) : answer));
}
