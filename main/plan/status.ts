import { oneLine } from '../../formats/text/one-line.ts';
import { describeRun } from './describe.ts';
import { locateRun } from './locate.ts';
import type { PlanEnv } from './settings.ts';
import { emptyReport, terminalStatus, type PlanReport } from './report.ts';

/** `plan status`: the run as the store holds it; reads only. */
export function planStatus(options: { out: string | undefined }, penv: PlanEnv): PlanReport {
  // Reads only: a read-only state root serves it.
  const { record: run, runDir, store } = locateRun(options.out, penv, 'read');
  const report = emptyReport(runDir, run.run);
  report.notes.push(`RUN: ${run.run} status=${terminalStatus(run.state)} state_root=${oneLine(store.root)} gate_rev=${run.gate_rev} session_kind=${run.session_kind}`);
  for (const id of run.order) {
    const phase = run.phases[id]!;
    report.notes.push(`PHASE_STATUS: ${id} state=${phase.state} native=${phase.native.status} outside=${phase.outside.status}`);
  }
  // A voice `plan run` closed as a typed failure says which code ended it.
  for (const attempt of Object.values(run.attempts)) {
    if (attempt.code === undefined || (attempt.state !== 'failed' && attempt.state !== 'unavailable')) continue;
    report.notes.push(`VOICE_FAILED: ${attempt.id} phase=${attempt.phase} voice=${attempt.voice} status=${attempt.state} code=${oneLine(attempt.code)}`);
  }
  describeRun(run, runDir, report, { open: true });
  report.status = terminalStatus(run.state);
  return report;
}
