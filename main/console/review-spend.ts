import type { LaneProgress } from '../../formats/crew/record.ts';
import type { SpendRecord } from '../../formats/review/run-record.ts';
import { readBinding } from '../plan/index.ts';
import type { Store } from '../store/store.ts';

/**
 * A lane's review ledger so far, from its run's record: the run id is read once per run
 * directory (a binding never changes), the record on each call (an LMDB read).
 */
export function reviewLedger(store: Store): (progress: Pick<LaneProgress, 'runDir'>) => SpendRecord | null {
  const runs = new Map<string, string | null>();
  return (progress) => {
    let run = runs.get(progress.runDir);
    if (run === undefined) {
      try {
        run = readBinding(progress.runDir)?.run ?? null;
      } catch {
        run = null;
      }
      // A lane whose run does not exist yet is asked again at its next change.
      if (run !== null) runs.set(progress.runDir, run);
    }
    return run === null ? null : (store.runs.get(run)?.spend ?? null);
  };
}

/** A lane's review spend so far (what its reviewers' streams said they cost). */
export function reviewSpend(store: Store): (progress: Pick<LaneProgress, 'runDir'>) => number | null {
  const ledger = reviewLedger(store);
  return (progress) => ledger(progress)?.spent ?? null;
}
