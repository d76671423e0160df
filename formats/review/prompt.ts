import type { Consensus } from '../consensus/types.ts';
import { jsonLine } from '../text/one-line.ts';
import { renderResultFormat } from './result-format.ts';

/** What each phase asks of its reviewers, in laneward's words. */
const INSTRUCTIONS: Record<string, string> = {
  ceo: 'Review the plan as the owner of the product would: is this the right problem, the right scope and the right order? Name what the plan should drop, add or defer, and any bet it makes without saying so.',
  design: 'Review the plan for the people who will use what it builds: flows, states, empty and error cases, accessibility and consistency with the rest of the interface.',
  dx: 'Review the plan for the developers who will use what it builds: commands, flags, errors, defaults, documentation and the first ten minutes of use.',
  eng: 'Review the plan as the engineer who will build and run it: architecture, data flow, failure modes, concurrency, tests, performance and what it will cost to operate.',
};

export interface PromptInput {
  readonly run: string;
  readonly phase: string;
  readonly voice: 'native' | 'outside';
  readonly snapshot: string;
  readonly implementation: string;
  /** Every closed earlier phase's consensus, carried as data. */
  readonly consensus: readonly Consensus[];
  readonly resultPath: string;
}

export function renderPrompt(input: PromptInput): string {
  const role = input.voice === 'native'
    ? 'You are the native reviewer of this phase.'
    : 'You are the outside reviewer of this phase: a model of another family than the native reviewer, reviewing the same snapshot independently.';
  const parts = [
    `# Review: ${input.phase} phase (run ${input.run}, ${input.voice} voice)`,
    '',
    role,
    '',
    INSTRUCTIONS[input.phase] ?? 'Review the plan.',
    '',
    'Report findings, not praise. Each finding names what is wrong, where, how severe it is and the fix.',
    '',
    `## Plan snapshot (sha256 ${input.snapshot})`,
    '',
    input.implementation.trimEnd(),
    '',
    '## Earlier phases (consensus, as data)',
    '',
  ];
  if (input.consensus.length === 0) parts.push('None: this is the first phase.');
  else {
    parts.push('```json');
    for (const c of input.consensus) parts.push(jsonLine(c));
    parts.push('```');
  }
  parts.push('', renderResultFormat(input.phase, input.snapshot, input.resultPath).trimEnd(), '');
  return parts.join('\n');
}
