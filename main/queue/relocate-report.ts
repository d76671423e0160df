import { join } from 'node:path';
import type { RunReport } from '../../workers/validate/report.ts';
import { locateRun } from '../../workers/validate/validate-run.ts';

/**
 * A worker's report as this machine's batch would have written it. The worker validated
 * the run under its own root, and the validator names the manifest and the run directory
 * as it opened them (in `run_dir`, in an issue about an unreadable run.json, in an
 * INTERNAL issue's path), so those two names are put back as the local batch names them.
 * Every other issue path is relative to the run and needs nothing.
 */
export function relocateReport(report: RunReport, workerRoot: string, rel: string, localPath: string): RunReport {
  const workerManifest = join(workerRoot, rel);
  const located = locateRun(localPath);
  // A run the worker could not validate at all is reported at its path, as locally.
  const whole = report.run_dir === workerManifest;
  const pairs: [string, string][] = whole ? [[workerManifest, localPath]] : [[workerManifest, located.manifest], [report.run_dir, located.runDir]];
  // The manifest first: the run directory is a prefix of it.
  const put = (text: string) => pairs.reduce((out, [from, to]) => (from === '' || from === to ? out : out.split(from).join(to)), text);
  return {
    ...report,
    run_dir: whole ? localPath : located.runDir,
    errors: report.errors.map((found) => ({ code: found.code, path: put(found.path), message: put(found.message) })),
  };
}
