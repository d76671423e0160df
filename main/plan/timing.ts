import type { PhaseId, RunRecord } from '../../formats/review/run-record.ts';
import type { PhaseTiming, Store } from '../store/store.ts';

const HISTORY_RUNS = 10;

/** Each closed phase's wall time, to keep in the store's cross-run history. */
export function phaseTimings(run: RunRecord): { key: [string, string]; value: PhaseTiming }[] {
  return run.order.flatMap((id) => {
    const phase = run.phases[id];
    if (phase?.opened_at == null || phase.closed_at == null) return [];
    const seconds = (Date.parse(phase.closed_at) - Date.parse(phase.opened_at)) / 1000;
    return [{ key: [id, run.run] as [string, string], value: { at: phase.closed_at, seconds } }];
  });
}

/** Medians of the last ten recorded runs per phase, or null for a phase with no history. */
export function estimates(store: Store, order: readonly PhaseId[], exclude: string): Map<PhaseId, number | null> {
  const out = new Map<PhaseId, number | null>();
  for (const phase of order) {
    const rows: PhaseTiming[] = [];
    for (const { key, value } of store.history.getRange({ start: [phase, ''], end: [phase, '\uffff'] })) {
      if (key[1] !== exclude) rows.push(value);
    }
    const last = rows.sort((a, b) => a.at.localeCompare(b.at)).slice(-HISTORY_RUNS).map((r) => r.seconds).sort((a, b) => a - b);
    out.set(phase, last.length === 0 ? null : median(last));
  }
  return out;
}

/** The `ESTIMATE:` line a run prints when it starts. */
export function estimateLine(store: Store, order: readonly PhaseId[], run: string, durable: boolean): string {
  if (!durable) return 'ESTIMATE: skipped (state root is ephemeral; set LANEWARD_STATE_ROOT)';
  const found = estimates(store, order, run);
  if ([...found.values()].every((v) => v === null)) return 'ESTIMATE: no history';
  const parts = order.map((p) => `${p}=${found.get(p) === null ? '?' : `${Math.round(found.get(p)!)}s`}`);
  const total = [...found.values()].reduce<number>((sum, v) => sum + (v ?? 0), 0);
  return `ESTIMATE: ${parts.join(' ')} total=${Math.round(total)}s (medians of the last ${HISTORY_RUNS} runs per phase)`;
}

/** The `CYCLE:` line printed at the gate: the run's wall time so far and each phase's. */
export function cycleLine(run: RunRecord): string {
  const parts = phaseTimings(run).map(({ key, value }) => `${key[0]}:${Math.round(value.seconds)}s`);
  const ends = run.order.map((id) => run.phases[id]?.closed_at).filter((t): t is string => typeof t === 'string').sort();
  const wall = ends.length === 0 ? 0 : (Date.parse(ends[ends.length - 1]!) - Date.parse(run.created_at)) / 1000;
  return `CYCLE: run=${run.run} wall_s=${Math.round(wall)} phases=${parts.join(',')}`;
}

function median(sorted: readonly number[]): number {
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
