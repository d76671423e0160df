import { workerData } from 'node:worker_threads';
import { BUILD_ID } from '../../formats/build-id.ts';
import type { RunReport } from './report.ts';
import { validateRun } from './validate-run.ts';

// A worker bundle from another build could judge runs by other rules: refuse to load,
// and let the pool surface this error instead of answering.
const expected = (workerData as { buildId?: unknown } | undefined)?.buildId;
if (expected !== BUILD_ID) {
  throw new Error(`validate worker is build ${BUILD_ID}, coordinator expects ${String(expected)}`);
}

/** Piscina task: validate one run directory (a path to its run.json or to the directory). */
export default function validate(target: string): RunReport {
  return validateRun(target);
}
