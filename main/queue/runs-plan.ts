import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import { discoverRuns, type Discovered } from '../batch/discover.ts';
import type { RunsJob } from './runs-job.ts';

/** One job of a batch: its BullMQ id, the body to sign, and the runs as the local batch names them. */
export interface PlannedJob {
  readonly id: string;
  readonly body: RunsJob;
  /** `body.runs[k]` as this machine's batch prints it (the discovered path). */
  readonly paths: readonly string[];
}

/** A batch split into jobs, with what discovery reports itself (never queued). */
export interface RunsPlan {
  readonly batch: string;
  readonly jobs: readonly PlannedJob[];
  /** Runs to validate, over every job. */
  readonly total: number;
  readonly empty: Discovered['empty'];
  readonly unreachable: Discovered['unreachable'];
}

/**
 * Discovers the runs exactly as the local batch does and splits them into jobs of at
 * most `runsPerJob`, each run named relative to the batch's root: the deepest directory
 * holding every input (a file given as input is a run of the directory it sits in). One
 * root per batch, so a worker that mounts the archive elsewhere names one directory
 * (`--root`). The batch id is a hash of what the jobs name, so the same listing gives
 * the same job ids: a coordinator run again finds its jobs already queued instead of
 * queueing them twice.
 */
export function planRunsJobs(inputs: readonly string[], runsPerJob: number): RunsPlan {
  const found = discoverRuns(inputs);
  const root = commonDirectory(inputs.map((input) => resolve(isDirectory(input) ? input : dirname(input))));
  const jobs: PlannedJob[] = [];
  const slices: { paths: string[]; runs: string[] }[] = [];
  for (let start = 0; start < found.runs.length; start += runsPerJob) {
    const paths = found.runs.slice(start, start + runsPerJob);
    slices.push({ paths, runs: paths.map((path) => relative(root, resolve(path))) });
  }
  const hash = createHash('sha256').update(`${root}\n`);
  for (const slice of slices) hash.update(`${JSON.stringify(slice.runs)}\n`);
  const batch = hash.digest('hex').slice(0, 16);
  for (const [index, { paths, runs }] of slices.entries()) jobs.push({ id: `${batch}-${index}`, body: { kind: 'runs', batch, root, runs }, paths });
  return { batch, jobs, total: found.runs.length, empty: found.empty, unreachable: found.unreachable };
}

/** The deepest directory that holds every one of `dirs` (absolute, normalised). */
function commonDirectory(dirs: readonly string[]): string {
  let common = dirs[0]!;
  for (const dir of dirs) {
    while (dir !== common && !dir.startsWith(common === sep ? sep : common + sep)) common = dirname(common);
  }
  return common;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
