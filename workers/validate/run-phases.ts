import { issue } from '../../formats/codes/issue.ts';
import type { IssueList } from '../../formats/schemas/issue-list.ts';
import { TERMINAL_RUN_STATUSES, type RunManifest } from '../../formats/schemas/run.ts';

const VOICES = ['native', 'outside'] as const;

/** Step 2: the run's status and every required phase's voices. Returns the attested count. */
export function checkPhases(run: RunManifest, name: string, errors: IssueList): number {
  if (!TERMINAL_RUN_STATUSES.has(run.status)) {
    errors.push(issue('ARTIFACT_RUN_INTERRUPTED', `${name}.status`, `status is ${run.status}`));
  }
  for (const phase of run.required_phases) {
    const record = Object.hasOwn(run.phases, phase) ? run.phases[phase] : undefined;
    if (record === undefined) {
      errors.push(issue('ARTIFACT_REVIEWER_MISSING', `${name}.phases.${phase}`, `required phase ${phase} has no record`));
      continue;
    }
    for (const voice of VOICES) {
      const outcome = record[voice];
      const at = `${name}.phases.${phase}.${voice}`;
      if (outcome === undefined) {
        errors.push(issue('ARTIFACT_REVIEWER_MISSING', at, `phase ${phase} has no ${voice} voice outcome`));
      } else if (outcome.status === 'pending' || outcome.status === 'running') {
        errors.push(issue('ARTIFACT_RUN_INTERRUPTED', `${at}.status`, `voice is ${outcome.status}`));
      } else if (outcome.status === 'completed') {
        const key = outcome.output ?? `${phase}-${voice}.md`;
        if (!Object.hasOwn(run.artifacts, key)) {
          errors.push(issue('ARTIFACT_REVIEWER_MISSING', at, `completed voice output ${key} is not in artifacts`));
        }
      }
    }
  }
  let attested = 0;
  for (const record of Object.values(run.phases)) {
    for (const voice of VOICES) if ((record[voice] as { receipt?: unknown } | undefined)?.receipt === 'attested') attested++;
  }
  return attested;
}
