import type { RunFinding } from '../../../formats/gate/draft.ts';
import type { PhaseId, PhaseRecord, RunRecord, VoiceId } from '../../../formats/review/run-record.ts';
import { byMint } from './records.ts';
import type { TransitionContext } from './transition-context.ts';

export type NumberedFinding = RunFinding & { readonly attempt: string };

/**
 * The one numbering of findings: every bound attempt in mint order, each finding
 * `<run>-<phase>-<voice>-<n>` counted across every attempt of that phase and voice, so a
 * rerun never reuses an id. Consensus, gate, files and export all take ids from here.
 * `only` narrows to one attempt of one phase and voice (other keys are not read at all).
 */
export function numberedFindings(
  review: RunRecord,
  step: Pick<TransitionContext, 'findingsOf'>,
  only?: { readonly phase: PhaseId; readonly voice: VoiceId; readonly attempt: string },
): NumberedFinding[] {
  const out: NumberedFinding[] = [];
  const counters = new Map<string, number>();
  for (const attempt of Object.values(review.attempts).sort(byMint)) {
    if (attempt.state !== 'bound') continue;
    if (only !== undefined && (attempt.phase !== only.phase || attempt.voice !== only.voice)) continue;
    const key = `${attempt.phase}-${attempt.voice}`;
    const rows = step.findingsOf(attempt.id);
    const n = counters.get(key) ?? 0;
    counters.set(key, n + rows.length);
    if (only !== undefined && attempt.id !== only.attempt) continue;
    rows.forEach((row, i) => out.push({ ...row, id: `${review.run}-${key}-${n + i + 1}`, phase: attempt.phase, voice: attempt.voice, attempt: attempt.id }));
    if (only !== undefined) break;
  }
  return out;
}

/** The findings of the attempt a phase's voice stands on now, without the attempt field. */
export function phaseFindings(review: RunRecord, phase: PhaseRecord, voice: VoiceId, step: Pick<TransitionContext, 'findingsOf'>): RunFinding[] {
  const current = phase[voice].attempt;
  if (current === null) return [];
  return numberedFindings(review, step, { phase: phase.id, voice, attempt: current }).map(({ attempt: _attempt, ...finding }) => finding);
}
