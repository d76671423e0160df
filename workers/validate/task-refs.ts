import { issue } from '../../formats/codes/issue.ts';
import type { IssueList } from '../../formats/schemas/issue-list.ts';
import type { RunManifest } from '../../formats/schemas/run.ts';
import type { JsonlResult } from './jsonl-artifact.ts';
import { checkTaskGraph, type TaskNode } from './task-graph.ts';

/**
 * The references tasks make to findings and decisions: collected row by row as the JSONL
 * files stream past (tasks first), then resolved once every file was read.
 */
export interface TaskRefs {
  readonly nodes: TaskNode[];
  /** Finding and decision ids tasks name, with where; set to true once the row is seen. */
  readonly findings: Map<string, boolean>;
  readonly decisions: Map<string, boolean>;
  readonly uses: { readonly kind: 'findings' | 'blocked_by'; readonly ref: string; readonly at: string }[];
}

/** An empty collection, to fill while tasks.jsonl streams past. */
export function emptyTaskRefs(): TaskRefs {
  return { nodes: [], findings: new Map(), decisions: new Map(), uses: [] };
}

/**
 * What each JSONL file contributes to the later checks. Rows that failed their schema
 * still count: a finding with a bad severity exists, so a task naming it does not dangle.
 */
export function rowHook(key: string, display: string, refs: TaskRefs, countPending: () => void) {
  if (key === 'tasks.jsonl') {
    return (row: Record<string, unknown>, line: number) => {
      const id = row['id'];
      if (typeof id !== 'string') return;
      const pr = row['pr'];
      refs.nodes.push({ id, line, pr: typeof pr === 'string' ? pr : undefined, dependsOn: strings(row['depends_on']) });
      strings(row['findings']).forEach((ref, k) => {
        refs.findings.set(ref, false);
        refs.uses.push({ kind: 'findings', ref, at: `${display}:${line}.findings[${k}]` });
      });
      strings(row['blocked_by']).forEach((ref, k) => {
        refs.decisions.set(ref, false);
        refs.uses.push({ kind: 'blocked_by', ref, at: `${display}:${line}.blocked_by[${k}]` });
      });
    };
  }
  const wanted = key === 'findings.jsonl' ? refs.findings : refs.decisions;
  const decisions = key === 'decisions.jsonl';
  return (row: Record<string, unknown>) => {
    const id = row['id'];
    if (typeof id === 'string' && wanted.has(id)) wanted.set(id, true);
    if (decisions && row['status'] === 'pending') countPending();
  };
}

/** rowHook's findings branch for a row accepted on its bytes: only its id is known. */
export function idHook(wanted: Map<string, boolean>) {
  return (id: string) => {
    if (wanted.has(id)) wanted.set(id, true);
  };
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/** Step 5: task references resolve and dependencies do not cycle. */
export function checkReferences(run: RunManifest, refs: TaskRefs, jsonl: Map<string, JsonlResult>, errors: IssueList): void {
  const tasks = jsonl.get('tasks.jsonl');
  if (tasks === undefined) return;
  const readable = (key: string) => jsonl.has(key) || !Object.hasOwn(run.artifacts, key);
  for (const use of refs.uses) {
    const [map, key, what] =
      use.kind === 'findings' ? [refs.findings, 'findings.jsonl', 'finding'] : [refs.decisions, 'decisions.jsonl', 'decision'];
    if (!readable(key) || map.get(use.ref) === true) continue;
    errors.push(issue('ARTIFACT_DANGLING_REF', use.at, `no ${what} ${use.ref} in ${key}`));
  }
  checkTaskGraph(refs.nodes, run.artifacts['tasks.jsonl']!.path, errors);
}
