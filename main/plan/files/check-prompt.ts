import { renderResultFormat } from '../../../formats/review/result-format.ts';
import type { RunRecord } from '../../../formats/review/run-record.ts';
import { CHECK_PHASE } from '../core/carry-check.ts';

/** The prompt of a carry check: the delta against the plan at the last gate, the accepted changes, the whole plan. */
export function renderCheckPrompt(review: RunRecord, resultPath: string): string {
  const gate = review.gate!;
  const prev = review.past_gates[review.past_gates.length - 1];
  const before = (prev?.implementation ?? '').split('\n');
  const after = review.implementation.split('\n');
  const removed = before.filter((line) => !after.includes(line)).map((line) => `- ${line}`);
  const added = after.filter((line) => !before.includes(line)).map((line) => `+ ${line}`);
  const accepted = (prev?.items ?? []).filter((i) => prev!.answers[i.id] !== undefined && i.keep !== undefined && prev!.answers[i.id]!.chosen !== i.keep && i.id !== 'p1');
  return [
    `# Carry check: run ${review.run}, gate_rev ${gate.rev}`,
    '',
    'The plan changed after its review rounds were capped. Read the change below and report anything it breaks. Any High or Critical finding sends the gate back to the owner.',
    '',
    `## The change against plan-at-gate.r${prev?.rev ?? gate.rev - 1}.md`,
    '',
    '```diff', ...removed, ...added, '```',
    '',
    '## Changes the owner accepted',
    '',
    ...(accepted.length === 0 ? ['None.'] : accepted.map((i) => `- ${i.title}`)),
    '',
    '## The whole plan',
    '',
    review.implementation.trimEnd(),
    '',
    renderResultFormat(CHECK_PHASE, review.snapshot, resultPath).trimEnd(),
    '',
  ].join('\n');
}
