import { resolve } from 'node:path';
import { LanewardError } from '../../formats/codes/error.ts';
import { transact } from '../store/store.ts';
import { removeStaleTemps } from '../fs/atomic-write.ts';
import { restoreCheckpoint } from './checkpoint.ts';
import { commit } from './commit.ts';
import { exportRefusal } from './core/export-mark.ts';
import { describeRun } from './describe.ts';
import { exportRun } from './export.ts';
import { syncRunFiles } from './files/run-files.ts';
import { locateRun, runDirOf } from './locate.ts';
import { emptyReport, terminalStatus, type PlanReport } from './report.ts';
import type { ReportFact } from './core/report-facts.ts';
import { readBinding, repointBinding, stateRootFor } from './run-binding.ts';
import type { PlanEnv } from './settings.ts';
import { openStateRoot } from './state-root.ts';

/**
 * `plan resume`: after a crash or a move. Reports every attempt dispatched without a
 * terminal record (EXECUTION_UNKNOWN; never redispatched here), rewrites whatever files
 * the committed record implies (prompts, seals, consensus, gate), removes the temp files
 * of writers killed mid-write, and finishes an export that was started and not recorded
 * done. Reads and repairs; never moves the run on.
 */
export async function planResume(options: { out: string | undefined; from?: string }, planEnv: PlanEnv): Promise<PlanReport> {
  const restored: ReportFact[] = [];
  if (options.from !== undefined) {
    const out = runDirOf(options.out, planEnv);
    const store = openStateRoot(stateRootFor(planEnv.settings.stateRoot, undefined, planEnv.cwd));
    const { run, generation } = await restoreCheckpoint(resolve(planEnv.cwd, options.from), out, store);
    restored.push({ fact: 'restored', run, generation, from: resolve(planEnv.cwd, options.from) });
  }
  const located = locateRun(options.out, planEnv);
  const { store, runDir } = located;
  // A binding made under another root name (a moved state root passed by --state) is re-pointed.
  const binding = readBinding(runDir);
  if (binding !== undefined && binding.root !== store.root) repointBinding(runDir, { run: binding.run, root: store.root });
  const report = emptyReport(runDir, located.record.run);
  report.notes.push(...restored);
  // Read under the writer lock: a writer killed after its commit is visible from here on.
  const review = await transact(store, 'runs', located.record.run, (current) => {
    if (current === undefined) throw new LanewardError('RUN_NOT_INITIALIZED', `run ${located.record.run} vanished from ${store.root}`);
    return { change: null, result: current };
  });
  // A command killed mid-write left its temp file; nothing reads it, so it goes.
  removeStaleTemps(runDir);
  await syncRunFiles(store, review, runDir, 'full');
  for (const attempt of Object.values(review.attempts)) {
    if (attempt.state === 'open') report.unknown.push({ attempt: attempt.id, phase: attempt.phase, voice: attempt.voice });
  }
  if (review.export?.state === 'started' && exportRefusal(review) !== null) {
    // The export that was started (and failed or was killed) is moot: the run moved on (a
    // rerun, a revise) and is no longer exportable as it stands. Writing it now would leave
    // a run.json that cannot validate; the mark goes, and a later export starts afresh.
    await commit(store, review.run, { type: 'drop-export', input: { by: 'resume' } }, report);
  } else if (review.export?.state === 'started') {
    await exportRun(located, review, report, 'resume');
  }
  describeRun(review, runDir, report, { open: true });
  report.status = terminalStatus(review.state);
  return report;
}
