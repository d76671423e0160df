import { join } from 'node:path';
import type { RunRecord } from '../../formats/review/run-record.ts';
import type { PlanReport } from './report.ts';

/**
 * Fills the report with what the run is waiting for: the open phase and its open
 * attempts, the spend, the gate. Commands call it after their transition committed.
 */
export function describeRun(review: RunRecord, runDir: string, report: PlanReport, show: { open: boolean }): void {
  report.spend = review.spend;
  if (show.open && review.state === 'awaiting_result' && review.current !== null) {
    const phase = review.phases[review.current]!;
    report.phase = { id: phase.id, snapshot: phase.snapshot ?? review.snapshot, order: review.order };
    for (const voice of ['native', 'outside'] as const) {
      const attempt = phase[voice].attempt === null ? undefined : review.attempts[phase[voice].attempt!];
      if (attempt === undefined || attempt.state !== 'open') continue;
      report.attempts.push({
        id: attempt.id,
        phase: attempt.phase,
        voice,
        prompt: join(runDir, attempt.prompt),
        result: join(runDir, attempt.result),
        family: voice === 'native' ? 'native (the parent\'s own model)' : outsideFamily(review, phase.native.attempt),
      });
    }
  }
  if (review.gate !== null && (review.state === 'gate_pending' || review.state === 'complete' || review.state === 'incomplete')) {
    const pending = review.gate.items.filter((item) => review.gate!.answers[item.id] === undefined).length;
    report.gate = { rev: review.gate.rev, items: review.gate.items.length, pending, file: join(runDir, 'gate.json'), recRev: review.gate.rec_rev, recHash: review.gate.rec_hash };
  }
}

function outsideFamily(review: RunRecord, nativeAttempt: string | null): string {
  const family = nativeAttempt === null ? undefined : review.attempts[nativeAttempt]?.bound?.family;
  return family === undefined || family === null ? 'differs from the native reviewer' : `differs from ${family}`;
}
