import type { Gate } from '../../../formats/schemas/gate.ts';
import type { CarryCheck, RunRecord } from '../../../formats/review/run-record.ts';

/** gate.json v1 of the run's current gate. */
export function gateDocument(review: RunRecord): Gate {
  if (review.gate === null) throw new Error('the run has no gate');
  const doc: Gate = { schema_version: 1, run: review.run, gate_rev: review.gate.rev, title: `Review of ${review.plan_source.split('/').pop() ?? 'the plan'}`, items: review.gate.items };
  if (review.gate.check !== undefined && review.gate.check.state !== 'open') doc['carry_check'] = checkVerdict(review.gate.check);
  return doc;
}

/** The carry check's verdict as gate.json and the decision rows record it. */
export function checkVerdict(check: CarryCheck): Record<string, unknown> {
  return { attempt: check.attempt, verdict: check.state, model: check.model ?? null, findings: check.findings ?? null, severe: check.severe ?? null, why: check.why ?? null, at: check.at ?? null };
}
