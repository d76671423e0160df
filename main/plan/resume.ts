import { LanewardError } from '../../formats/error.ts';
import { removeStaleTemps } from '../fs/atomic-write.ts';
import { transact } from '../store/store.ts';
import { describeRun } from './describe.ts';
import { exportRefusal, writeExport } from './export.ts';
import { locateRun, runDirOf, type PlanEnv } from './locate.ts';
import { restoreCheckpoint } from './checkpoint.ts';
import { openStateRoot } from './state-root.ts';
import { resolve } from 'node:path';
import { oneLine } from '../../formats/issue.ts';
import { emptyReport, terminalStatus, type PlanReport } from './report.ts';
import { publishBinding, readBinding, stateRootFor } from './run-binding.ts';
import { syncRunFiles } from './run-files.ts';

/**
 * `plan resume`: after a crash or a move. Reports every attempt dispatched without a
 * terminal record (EXECUTION_UNKNOWN; never redispatched here), rewrites whatever files
 * the committed record implies (prompts, seals, consensus, gate), removes the temp files
 * of writers killed mid-write, and finishes an export
 * that was started and not recorded done. Reads and repairs; never moves the run on.
 */
export async function planResume(options: { out: string | undefined; from?: string }, penv: PlanEnv): Promise<PlanReport> {
  const restored: string[] = [];
  if (options.from !== undefined) {
    const out = runDirOf(options.out, penv);
    const store = openStateRoot(stateRootFor(penv.state, penv.env, undefined, penv.cwd));
    const { run, generation } = await restoreCheckpoint(resolve(penv.cwd, options.from), out, store);
    restored.push(`RESTORED: run=${run} generation=${generation} from=${oneLine(resolve(penv.cwd, options.from))}`);
  }
  const located = locateRun(options.out, penv);
  const { store, runDir } = located;
  // A binding made under another root name (a moved state root passed by --state) is re-pointed.
  const binding = readBinding(runDir);
  if (binding !== undefined && binding.root !== store.root) publishBinding(runDir, { run: binding.run, root: store.root });
  const report = emptyReport(runDir, located.record.run);
  report.notes.push(...restored);
  const run = await transact(store, located.record.run, (current) => {
    if (current === undefined) throw new LanewardError('RUN_NOT_INITIALIZED', `run ${located.record.run} vanished from ${store.root}`);
    return { change: null, result: current };
  });
  // A command killed mid-write left its temp file; nothing reads it, so it goes.
  removeStaleTemps(runDir);
  syncRunFiles(store, run, runDir, 'full');
  for (const attempt of Object.values(run.attempts)) {
    if (attempt.state === 'open') report.unknown.push({ attempt: attempt.id, phase: attempt.phase, voice: attempt.voice });
  }
  if (run.export?.state === 'started' && exportRefusal(run) !== null) {
    // The export that was started (and failed or was killed) is moot: the run moved on (a
    // rerun, a revise) and is no longer exportable as it stands. Writing it now would leave
    // a run.json that cannot validate; the mark goes, and a later export starts afresh.
    await transact(store, run.run, (current) => {
      if (current === undefined || current.export?.state !== 'started' || exportRefusal(current) === null) return { change: null, result: null };
      current.export = null;
      return { change: { record: current, events: [{ type: 'export_dropped', at: new Date().toISOString(), state: current.state, by: 'resume' }] }, result: null };
    });
  } else if (run.export?.state === 'started') {
    writeExport(store, run, runDir, report);
    await transact(store, run.run, (current) => {
      if (current === undefined || current.export?.state !== 'started') return { change: null, result: null };
      current.export = { state: 'done', at: new Date().toISOString() };
      return { change: { record: current, events: [{ type: 'export_done', at: current.export.at, by: 'resume' }] }, result: null };
    });
  }
  describeRun(run, runDir, report, { open: true });
  report.status = terminalStatus(run.state);
  return report;
}
