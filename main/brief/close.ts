import { realpathSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { closeDraftDirections, type CloseResult } from '../../formats/brief/close.ts';
import { errnoCode } from '../../formats/codes/error.ts';
import { issue, type Issue } from '../../formats/codes/issue.ts';
import type { DecisionRow } from '../../formats/schemas/decisions.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';
import { loadGate, loadRows } from './inputs.ts';

export interface CloseOptions {
  readonly out: string;
  readonly plan: string;
}

export type CloseOutcome =
  | ({ readonly ok: true; readonly plan: string; readonly changed: boolean } & Omit<CloseResult, 'text'>)
  | { readonly ok: false; readonly issues: readonly Issue[] };

const MAX_PLAN_BYTES = 4 * 1024 * 1024;

/**
 * `brief close`: rewrites the plan's draft direction lines whose decision is decided,
 * from DIR/gate.json and DIR/decisions.jsonl. The plan is replaced atomically and only
 * when a line changed, so a run with every decision pending leaves it untouched.
 */
export function briefClose(options: CloseOptions): CloseOutcome {
  const runDir = resolve(options.out);
  const gate = loadGate(runDir);
  if (!gate.ok) return gate;
  const issues: Issue[] = [];
  const decisions = loadRows<DecisionRow>(join(runDir, 'decisions.jsonl'), 'decisions', gate.value.run, issues);
  if (issues.length > 0) return { ok: false, issues };
  // A symlinked plan is rewritten where it lives, not replaced by a file beside the link.
  let plan: string;
  try {
    plan = realpathSync(options.plan);
  } catch (error) {
    return { ok: false, issues: [issue('PLAN_UNREADABLE', basename(options.plan), `${options.plan} cannot be opened (${errnoCode(error) ?? 'error'})`)] };
  }
  const read = tryReadBounded(plan, MAX_PLAN_BYTES);
  if (!read.ok) return { ok: false, issues: [issue('PLAN_UNREADABLE', basename(options.plan), read.detail)] };
  const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let source: string;
  try {
    source = text.decode(read.bytes);
  } catch {
    return { ok: false, issues: [issue('PLAN_UNREADABLE', basename(options.plan), `${options.plan} is not UTF-8 text`)] };
  }
  const result = closeDraftDirections(source, gate.value, decisions);
  const changed = result.rewritten.length > 0;
  if (changed) writeFileAtomic(plan, result.text);
  return { ok: true, plan, changed, rewritten: result.rewritten, unresolved: result.unresolved };
}
