import type { PhaseTiming, RunRecord } from '../../../formats/review/run-record.ts';
import type { ReportFact } from './report-facts.ts';

/** Each closed phase's wall time, to keep in the store's cross-run history. */
export function phaseTimings(review: RunRecord): { key: [string, string]; value: PhaseTiming }[] {
  return review.order.flatMap((id) => {
    const phase = review.phases[id];
    if (phase?.opened_at == null || phase.closed_at == null) return [];
    const seconds = (Date.parse(phase.closed_at) - Date.parse(phase.opened_at)) / 1000;
    return [{ key: [id, review.run] as [string, string], value: { at: phase.closed_at, seconds } }];
  });
}

/** The cycle a run reports at its gate: its wall time so far and each closed phase's. */
export function cycleFact(review: RunRecord): ReportFact {
  const phases = phaseTimings(review).map(({ key, value }) => ({ phase: key[0], seconds: value.seconds }));
  const ends = review.order.map((id) => review.phases[id]?.closed_at).filter((t): t is string => typeof t === 'string').sort();
  const wall = ends.length === 0 ? 0 : (Date.parse(ends[ends.length - 1]!) - Date.parse(review.created_at)) / 1000;
  return { fact: 'cycle', run: review.run, wallS: wall, phases };
}
