import type { PhaseId } from '../../formats/review/run-record.ts';
import type { PhaseTiming, Store } from '../store/store.ts';

const HISTORY_RUNS = 10;

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

function median(sorted: readonly number[]): number {
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
