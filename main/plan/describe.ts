import { join } from 'node:path';
import type { RunRecord } from '../../formats/review/run-record.ts';
import type { PlanReport } from './report.ts';

/**
 * Fills the report with what the run is waiting for: the open phase and its open
 * attempts, the spend, the gate. Commands call it after their transition committed.
 */
export function describeRun(run: RunRecord, runDir: string, report: PlanReport, show: { open: boolean }): void {
  report.spend = run.spend;
  if (show.open && run.state === 'awaiting_result' && run.current !== null) {
    const phase = run.phases[run.current]!;
    report.phase = { id: phase.id, snapshot: phase.snapshot ?? run.snapshot, order: run.order };
    for (const voice of ['native', 'outside'] as const) {
      const attempt = phase[voice].attempt === null ? undefined : run.attempts[phase[voice].attempt!];
      if (attempt === undefined || attempt.state !== 'open') continue;
      report.attempts.push({
        id: attempt.id,
        phase: attempt.phase,
        voice,
        prompt: join(runDir, attempt.prompt),
        result: join(runDir, attempt.result),
        family: voice === 'native' ? 'native (the parent\'s own model)' : outsideFamily(run, phase.native.attempt),
      });
    }
  }
  if (run.gate !== null && (run.state === 'gate_pending' || run.state === 'complete' || run.state === 'incomplete')) {
    const pending = run.gate.items.filter((item) => run.gate!.answers[item.id] === undefined).length;
    report.gate = { rev: run.gate.rev, items: run.gate.items.length, pending, file: join(runDir, 'gate.json'), recRev: run.gate.rec_rev, recHash: run.gate.rec_hash };
  }
}

function outsideFamily(run: RunRecord, nativeAttempt: string | null): string {
  const family = nativeAttempt === null ? undefined : run.attempts[nativeAttempt]?.bound?.family;
  return family === undefined || family === null ? 'differs from the native reviewer' : `differs from ${family}`;
}
