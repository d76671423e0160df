import type { PhaseId } from '../../formats/review/run-record.ts';
import type { PhaseTiming, Store } from '../store/store.ts';
import type { ReportFact } from './core/report-facts.ts';

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

/** What a run's start estimates of each phase: the median of its last runs' wall times, null when none. */
export function estimateFact(store: Store, order: readonly PhaseId[], run: string, durable: boolean): ReportFact {
  if (!durable) return { fact: 'estimate', durable, phases: [], history: HISTORY_RUNS };
  const found = estimates(store, order, run);
  return { fact: 'estimate', durable, phases: order.map((phase) => ({ phase, seconds: found.get(phase) ?? null })), history: HISTORY_RUNS };
}

function median(sorted: readonly number[]): number {
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
