import { describeRun } from './describe.ts';
import { locateRun } from './locate.ts';
import type { PlanEnv } from './settings.ts';
import { emptyReport, terminalStatus, type PlanReport } from './report.ts';

/** `plan status`: the run as the store holds it; reads only. */
export function planStatus(options: { out: string | undefined }, planEnv: PlanEnv): PlanReport {
  // Reads only: a read-only state root serves it.
  const { record: review, runDir, store } = locateRun(options.out, planEnv, 'read');
  const report = emptyReport(runDir, review.run);
  report.notes.push({ fact: 'run_status', run: review.run, status: terminalStatus(review.state), stateRoot: store.root, gateRev: review.gate_rev, sessionKind: review.session_kind });
  for (const id of review.order) {
    const phase = review.phases[id]!;
    report.notes.push({ fact: 'phase_status', phase: id, state: phase.state, native: phase.native.status, outside: phase.outside.status });
  }
  // A voice `plan run` closed as a typed failure says which code ended it.
  for (const attempt of Object.values(review.attempts)) {
    if (attempt.code === undefined || (attempt.state !== 'failed' && attempt.state !== 'unavailable')) continue;
    report.notes.push({ fact: 'voice_failed', attempt: attempt.id, phase: attempt.phase, voice: attempt.voice, status: attempt.state, code: attempt.code });
  }
  describeRun(review, runDir, report, { open: true });
  report.status = terminalStatus(review.state);
  return report;
}
