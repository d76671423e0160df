import { issue } from '../../formats/codes/issue.ts';
import type { IssueList } from '../../formats/schemas/issue-list.ts';
import type { RunManifest } from '../../formats/schemas/run.ts';
import type { JsonlResult } from './jsonl-artifact.ts';

/** Step 4: counts that are numbers must equal the rows of files that could be read. */
export function checkCounts(run: RunManifest, name: string, jsonl: Map<string, JsonlResult>, pending: number, errors: IssueList): void {
  const counts = run.counts;
  if (counts === undefined) return;
  const expect = (field: 'decisions' | 'decisions_pending' | 'findings' | 'tasks', key: string, rows: (r: JsonlResult) => number) => {
    const claimed = counts[field];
    if (typeof claimed !== 'number') return;
    const listed = Object.hasOwn(run.artifacts, key);
    const result = jsonl.get(key);
    // A listed file that could not be read is reported once, where it is listed.
    if (listed && result === undefined) return;
    const actual = result === undefined ? 0 : rows(result);
    if (actual !== claimed) {
      errors.push(issue('ARTIFACT_COUNT_MISMATCH', `${name}.counts.${field}`, `counts.${field} is ${claimed}, ${key} has ${actual}`));
    }
  };
  expect('decisions', 'decisions.jsonl', (r) => r.lines);
  expect('decisions_pending', 'decisions.jsonl', () => pending);
  expect('findings', 'findings.jsonl', (r) => r.lines);
  expect('tasks', 'tasks.jsonl', (r) => r.lines);
}
