import { LanewardError } from '../../../formats/codes/error.ts';
import type { RunRecord } from '../../../formats/review/run-record.ts';
import type { TransitionContext } from './transition-context.ts';

const EXPORTABLE = new Set(['gate_pending', 'complete', 'incomplete', 'reviewed']);

/** Why the run cannot be exported as it stands (not at a gate or an end, or changes pending); null when it can. */
export function exportRefusal(review: RunRecord): LanewardError | null {
  if (!EXPORTABLE.has(review.state)) return new LanewardError('EXPORT_NOT_READY', `the run is ${review.state === 'phase_closed' ? 'between phases' : review.state}`);
  if (review.state === 'complete' && review.amendments.length > 0) {
    return new LanewardError('PLAN_AMEND_PENDING', `${review.amendments.length} accepted plan change(s) are not incorporated: ${review.amendments.map((a) => a.decision).join(', ')}`);
  }
  return null;
}

/** Journals an export as started or done; refused when the run cannot be exported. */
export function markExport(review: RunRecord, input: { readonly state: 'started' | 'done'; readonly by?: string }, step: Pick<TransitionContext, 'now' | 'events'>): void {
  const refusal = exportRefusal(review);
  if (refusal !== null) throw refusal;
  review.export = { state: input.state, at: step.now };
  step.events.push({ type: `export_${input.state}`, at: step.now, ...(input.by === undefined ? {} : { by: input.by }) });
}

/** An export that was started for a run that has since moved on is dropped (a later one starts afresh). */
export function dropExport(review: RunRecord, input: { readonly by: string }, step: Pick<TransitionContext, 'now' | 'events'>): boolean {
  if (review.export?.state !== 'started' || exportRefusal(review) === null) return false;
  review.export = null;
  step.events.push({ type: 'export_dropped', at: step.now, state: review.state, by: input.by });
  return true;
}

/** Records a started export done once its files are written and valid (resume finishing a killed one). */
export function finishExport(review: RunRecord, input: { readonly by: string }, step: Pick<TransitionContext, 'now' | 'events'>): boolean {
  if (review.export?.state !== 'started') return false;
  review.export = { state: 'done', at: step.now };
  step.events.push({ type: 'export_done', at: step.now, by: input.by });
  return true;
}
