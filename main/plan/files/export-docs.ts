import { oneLine } from '../../../formats/text/one-line.ts';
import type { RunFinding } from '../../../formats/gate/draft.ts';
import type { RunRecord } from '../../../formats/review/run-record.ts';
import { spendLine } from '../core/spend.ts';
import type { DecisionRow } from '../../../formats/schemas/decisions.ts';

/** The line an unattended run's record must carry: no host hook guards publication order. */
export const GUARD_LINE = 'publication guard: not enforced by this host; publication order is unverified (GUARD_NOT_INSTALLED)';

/** plan.md: the URGENT block first, then the implementation plan as reviewed. */
export function renderPlanMd(review: RunRecord, findings: readonly RunFinding[]): string {
  const urgent = findings.filter((f) => f.urgent === true);
  const lines = ['## URGENT, outside this plan', ''];
  if (urgent.length === 0) lines.push('None.');
  for (const f of urgent) {
    lines.push(`- [${f.severity}] ${oneLine(f.title)} (${f.id}; suggested owner: ${oneLine(f.suggested_owner ?? 'unassigned')})`);
  }
  // The implementation plan is the owner's own text, many lines; every line of ours is escaped.
  return [...lines.map(oneLine), '', review.implementation.trimEnd(), ''].join('\n');
}

/** review-record.md: what ran, what each phase found, the gate and who answered it. */
export function renderReviewRecord(review: RunRecord): string {
  const lines = [`# Review record: ${review.run}`, '', `Plan: ${oneLine(review.plan_source)} (sha256 ${review.plan_sha256})`, `Session kind: ${review.session_kind}`];
  if (review.session_kind === 'unattended') lines.push('', GUARD_LINE);
  lines.push('', '## Phases', '');
  for (const id of review.order) {
    const phase = review.phases[id]!;
    const c = phase.consensus;
    const voices = (['native', 'outside'] as const).map((voice) => {
      const attempt = phase[voice].attempt === null ? undefined : review.attempts[phase[voice].attempt!];
      const model = attempt?.bound === undefined ? '' : ` ${oneLine(attempt.bound.model)}${attempt.bound.receipt === 'attested' ? ` (attested: ${oneLine(attempt.bound.attest ?? '')})` : ''}`;
      return `${voice} ${phase[voice].status}${model}`;
    });
    lines.push(`- ${id}: ${phase.state}; ${voices.join('; ')}${c === null ? '' : `; confirmed=${c.confirmed} unverified=${c.unverified} disagree=${c.disagree} new=${c.new} native_only=${c.native_only} coverage=${c.coverage}`}`);
  }
  lines.push('', '## Gate', '');
  const gates = [...review.past_gates, ...(review.gate === null ? [] : [review.gate])];
  if (gates.length === 0) lines.push('No gate was written.');
  for (const gate of gates) {
    const by = [...new Set(Object.values(gate.answers).map((a) => a.by ?? 'unrecorded'))];
    lines.push(`gate_rev=${gate.rev} items=${gate.items.length} answered=${Object.keys(gate.answers).length} answered_by=${by.length === 0 ? 'nobody' : by.map(oneLine).join(',')}`);
    for (const item of gate.items) {
      const answer = gate.answers[item.id];
      lines.push(`- ${item.id} [${item.kind}] ${oneLine(item.title)}: ${answer === undefined ? 'pending' : `${answer.chosen} (${answer.status}, ${answer.source})`}`);
    }
  }
  if (review.deviations.length > 0) lines.push('', '## Deviations', '', ...review.deviations.map((d) => `- ${oneLine(d)}`));
  lines.push('', '## Spend', '', spendLine(review.spend), '');
  return lines.map(oneLine).join('\n');
}

/**
 * ceo-review.md of a CEO-only run: the challenges (listed; the plan's direction stays),
 * the conservative choices taken, every finding, and the audit trail of the run.
 */
export function renderCeoReview(review: RunRecord, findings: readonly RunFinding[], kept: readonly DecisionRow[]): string {
  const lines = [`# CEO review: ${review.run}`, '', 'CEO-only run: one phase, no gate; nothing was approved and the plan was not changed.', ''];
  lines.push('## User challenges', '');
  const challenges = findings.filter((f) => f.user_challenge === true);
  if (challenges.length === 0) lines.push('None.');
  for (const f of challenges) lines.push(`- ${oneLine(f.title)} (changes ${f.changes ?? 'direction'}; ${f.id}): the plan's direction stays`);
  lines.push('', '## Conservative choices', '');
  if (kept.length === 0) lines.push('None.');
  for (const row of kept) lines.push(`- ${row.id}: ${oneLine(row.title)} -> ${row.chosen ?? 'undecided'} (${row.status})`);
  lines.push('', '## Findings', '');
  if (findings.length === 0) lines.push('None.');
  for (const f of findings) lines.push(`- [${f.severity}] ${oneLine(f.title)} (${f.id}, ${f.voice})`);
  lines.push('', '## Audit trail', '');
  return [...lines.map(oneLine), renderReviewRecord(review)].join('\n');
}
