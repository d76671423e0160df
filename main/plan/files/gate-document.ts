import type { Gate } from '../../../formats/schemas/gate.ts';
import type { CarryCheck, RunRecord } from '../../../formats/review/run-record.ts';

/** gate.json v1 of the run's current gate. */
export function gateDocument(run: RunRecord): Gate {
  if (run.gate === null) throw new Error('the run has no gate');
  const doc: Gate = { schema_version: 1, run: run.run, gate_rev: run.gate.rev, title: `Review of ${run.plan_source.split('/').pop() ?? 'the plan'}`, items: run.gate.items };
  if (run.gate.check !== undefined && run.gate.check.state !== 'open') doc['carry_check'] = checkVerdict(run.gate.check);
  return doc;
}

/** The carry check's verdict as gate.json and the decision rows record it. */
export function checkVerdict(check: CarryCheck): Record<string, unknown> {
  return { attempt: check.attempt, verdict: check.state, model: check.model ?? null, findings: check.findings ?? null, severe: check.severe ?? null, why: check.why ?? null, at: check.at ?? null };
}
