import { describeRun } from './describe.ts';
import { locateRun } from './locate.ts';
import type { PlanEnv } from './settings.ts';
import { emptyReport, terminalStatus, type PlanReport } from './report.ts';

/** `plan status`: the run as the store holds it; reads only. */
export function planStatus(options: { out: string | undefined }, penv: PlanEnv): PlanReport {
  // Reads only: a read-only state root serves it.
  const { record: run, runDir, store } = locateRun(options.out, penv, 'read');
  const report = emptyReport(runDir, run.run);
  report.notes.push({ fact: 'run_status', run: run.run, status: terminalStatus(run.state), stateRoot: store.root, gateRev: run.gate_rev, sessionKind: run.session_kind });
  for (const id of run.order) {
    const phase = run.phases[id]!;
    report.notes.push({ fact: 'phase_status', phase: id, state: phase.state, native: phase.native.status, outside: phase.outside.status });
  }
  // A voice `plan run` closed as a typed failure says which code ended it.
  for (const attempt of Object.values(run.attempts)) {
    if (attempt.code === undefined || (attempt.state !== 'failed' && attempt.state !== 'unavailable')) continue;
    report.notes.push({ fact: 'voice_failed', attempt: attempt.id, phase: attempt.phase, voice: attempt.voice, status: attempt.state, code: attempt.code });
  }
  describeRun(run, runDir, report, { open: true });
  report.status = terminalStatus(run.state);
  return report;
}
