import type { PhaseTiming, RunRecord } from '../../../formats/review/run-record.ts';

/** Each closed phase's wall time, to keep in the store's cross-run history. */
export function phaseTimings(review: RunRecord): { key: [string, string]; value: PhaseTiming }[] {
  return review.order.flatMap((id) => {
    const phase = review.phases[id];
    if (phase?.opened_at == null || phase.closed_at == null) return [];
    const seconds = (Date.parse(phase.closed_at) - Date.parse(phase.opened_at)) / 1000;
    return [{ key: [id, review.run] as [string, string], value: { at: phase.closed_at, seconds } }];
  });
}

/** The `CYCLE:` line printed at the gate: the run's wall time so far and each phase's. */
export function cycleLine(review: RunRecord): string {
  const parts = phaseTimings(review).map(({ key, value }) => `${key[0]}:${Math.round(value.seconds)}s`);
  const ends = review.order.map((id) => review.phases[id]?.closed_at).filter((t): t is string => typeof t === 'string').sort();
  const wall = ends.length === 0 ? 0 : (Date.parse(ends[ends.length - 1]!) - Date.parse(review.created_at)) / 1000;
  return `CYCLE: run=${review.run} wall_s=${Math.round(wall)} phases=${parts.join(',')}`;
}
