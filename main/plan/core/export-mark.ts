import { LanewardError } from '../../../formats/codes/error.ts';
import type { RunRecord } from '../../../formats/review/run-record.ts';
import type { Step } from './step.ts';

const EXPORTABLE = new Set(['gate_pending', 'complete', 'incomplete', 'reviewed']);

/** Why the run cannot be exported as it stands (not at a gate or an end, or changes pending); null when it can. */
export function exportRefusal(run: RunRecord): LanewardError | null {
  if (!EXPORTABLE.has(run.state)) return new LanewardError('EXPORT_NOT_READY', `the run is ${run.state === 'phase_closed' ? 'between phases' : run.state}`);
  if (run.state === 'complete' && run.amendments.length > 0) {
    return new LanewardError('PLAN_AMEND_PENDING', `${run.amendments.length} accepted plan change(s) are not incorporated: ${run.amendments.map((a) => a.decision).join(', ')}`);
  }
  return null;
}

/** Journals an export as started or done; refused when the run cannot be exported. */
export function markExport(run: RunRecord, input: { readonly state: 'started' | 'done'; readonly by?: string }, step: Pick<Step, 'now' | 'events'>): void {
  const refusal = exportRefusal(run);
  if (refusal !== null) throw refusal;
  run.export = { state: input.state, at: step.now };
  step.events.push({ type: `export_${input.state}`, at: step.now, ...(input.by === undefined ? {} : { by: input.by }) });
}

/** An export that was started for a run that has since moved on is dropped (a later one starts afresh). */
export function dropExport(run: RunRecord, input: { readonly by: string }, step: Pick<Step, 'now' | 'events'>): boolean {
  if (run.export?.state !== 'started' || exportRefusal(run) === null) return false;
  run.export = null;
  step.events.push({ type: 'export_dropped', at: step.now, state: run.state, by: input.by });
  return true;
}

/** Records a started export done once its files are written and valid (resume finishing a killed one). */
export function finishExport(run: RunRecord, input: { readonly by: string }, step: Pick<Step, 'now' | 'events'>): boolean {
  if (run.export?.state !== 'started') return false;
  run.export = { state: 'done', at: step.now };
  step.events.push({ type: 'export_done', at: step.now, by: input.by });
  return true;
}
