import type { Gate } from '../../formats/schemas/gate.ts';
import type { RunRecord } from '../../formats/review-run.ts';

/** gate.json v1 of the run's current gate. */
export function gateDocument(run: RunRecord): Gate {
  if (run.gate === null) throw new Error('the run has no gate');
  return { schema_version: 1, run: run.run, gate_rev: run.gate.rev, title: `Review of ${run.plan_source.split('/').pop() ?? 'the plan'}`, items: run.gate.items };
}
