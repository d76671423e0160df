import { workerData } from 'node:worker_threads';
import { BUILD_ID } from '../../formats/build-id.ts';
import { toError } from '../../formats/codes/error.ts';
import type { RunReport } from './report.ts';
import { validateRun } from './validate-run.ts';

// A worker bundle from another build could judge runs by other rules: refuse to load,
// and let the pool surface this error instead of answering.
const expected = (workerData as { buildId?: unknown } | undefined)?.buildId;
if (expected !== BUILD_ID) {
  throw new Error(`validate worker is build ${BUILD_ID}, coordinator expects ${String(expected)}`);
}

/** What a batch task answers per run: its report, or the message of what the validator threw. */
export type BatchAnswer = RunReport | { readonly thrown: string };

/**
 * Piscina task: validate one run directory (a path to its run.json or to the directory),
 * or several in one task, each answered on its own (one that throws fails only itself).
 */
export default function validate(target: string | readonly string[]): RunReport | BatchAnswer[] {
  if (typeof target === 'string') return validateRun(target);
  return target.map((path): BatchAnswer => {
    try {
      return validateRun(path);
    } catch (error) {
      return { thrown: toError(error).message };
    }
  });
}
