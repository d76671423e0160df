import { QA_TOOL_POLICY, type Exchange, type QaMode, type Turn } from '../../formats/qa/record.ts';

/** What one observer prompt carries besides its mode. */
export interface PromptInput {
  readonly lane: string;
  readonly mode: QaMode;
  /** New user and assistant turns, never sent before. */
  readonly delta: readonly Turn[];
  /** The cross-check's slice of the transcript (from the bootstrap length); [] otherwise. */
  readonly transcript: readonly Exchange[];
}

const PURPOSE: Record<QaMode, string> = {
  bootstrap: 'Bootstrap: scan the repository read-only and record a baseline summary as your note. Pass when you are ready to observe.',
  cadence: 'Cadence check: review the new turns below. Fail with guidance the coordinator must act on; pass otherwise.',
  'cross-check':
    'Cross-check before completion: the coordinator reports success. Verify it (you may rerun commands); only a pass lets completion through. Fail with guidance otherwise.',
};

/** The prompt file an observer reads at `{prompt}`: plain text, every turn fenced by its role. */
export function renderObserverPrompt(input: PromptInput): string {
  const lines = [
    `# laneward QA observer: lane ${input.lane}, mode ${input.mode}`,
    '',
    PURPOSE[input.mode],
    '',
    `Tool policy (${input.mode}): ${QA_TOOL_POLICY[input.mode].join(', ')}. A tool outside it ends this call and discards your verdict.`,
    '',
    'Write your verdict as JSON to the result path: {"verdict":"pass"|"fail","note":"...","guidance":"..."} (guidance required on fail).',
  ];
  if (input.transcript.length > 0) {
    lines.push('', `## Observer transcript since bootstrap (${input.transcript.length} exchanges)`);
    for (const exchange of input.transcript) {
      lines.push(
        `- call ${exchange.call} (${exchange.mode}) turns ${exchange.from}-${exchange.to}: ${exchange.verdict}${exchange.code === null ? '' : ` ${exchange.code}`}: ${exchange.note}${exchange.guidance === null ? '' : ` / guidance: ${exchange.guidance}`}`,
      );
    }
  }
  if (input.delta.length > 0) {
    lines.push('', `## New turns (${input.delta.length})`);
    for (const turn of input.delta) lines.push('', `### turn ${turn.index} (${turn.role}${turn.diff ? ', carries a diff' : ''})`, turn.text ?? '');
  }
  return `${lines.join('\n')}\n`;
}
