import type { ReviewFinding } from '../../../formats/review/finding.ts';
import type { JournalEvent } from '../../../formats/review/run-record.ts';
import type { PlanReport } from './report.ts';

/**
 * What one transition is given besides the run record: the time, where its journal events
 * go, what it tells the parent (the report, as data), and the findings of bound attempts
 * (looked up inside the same store transaction, or from a test's table).
 */
export interface TransitionContext {
  readonly now: string;
  readonly events: JournalEvent[];
  readonly report: PlanReport;
  readonly findingsOf: (attempt: string) => readonly ReviewFinding[];
}
