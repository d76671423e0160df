import { decidedOn, DRAFT_DIRECTION_PHRASE, isDecided } from './brief.ts';
import { decisionId } from '../gate/decisions.ts';
import { oneLine } from '../text/one-line.ts';
import type { DecisionRow } from '../schemas/decisions.ts';
import type { Gate } from '../schemas/gate.ts';

/** A draft direction line that was rewritten to its decision. */
export interface Rewritten {
  readonly line: number;
  readonly id: string;
}

/** A draft direction line left as it was, and why. */
export interface Unresolved {
  readonly line: number;
  /** The decision the line names, or null when it names none or several. */
  readonly id: string | null;
  readonly why: string;
}

export interface CloseResult {
  /** The plan text after the rewrite; equal to the input when nothing was rewritten. */
  readonly text: string;
  readonly rewritten: readonly Rewritten[];
  readonly unresolved: readonly Unresolved[];
}

const PHRASE = new RegExp(DRAFT_DIRECTION_PHRASE.replaceAll(' ', '\\s+'), 'gi');
const MARKER = /\(([A-Za-z0-9][A-Za-z0-9._-]*)\)/g;

/**
 * Rewrites every draft direction line of a plan to the option its decision took and the
 * date. A line names its decision by a parenthesised marker: the gate label at the
 * current revision, `(uc1)`, or a full decision id, `(<run>-r2-uc1)`. A line naming no
 * decision, several, or one still pending stays as it is and is reported. Line endings
 * (LF or CRLF) and every other byte of the plan are kept.
 */
export function closeDraftDirections(plan: string, gate: Gate, decisions: readonly DecisionRow[]): CloseResult {
  const byLabel = new Map<string, DecisionRow>();
  const byId = new Map<string, DecisionRow>();
  for (const row of decisions) byId.set(row.id.toLowerCase(), row);
  for (const item of gate.items) {
    const row = byId.get(decisionId(gate.run, gate.gate_rev, item.id));
    if (row !== undefined) byLabel.set(item.id.toLowerCase(), row);
  }
  const rewritten: Rewritten[] = [];
  const unresolved: Unresolved[] = [];
  const lines = plan.split('\n');
  lines.forEach((line, index) => {
    PHRASE.lastIndex = 0;
    if (!PHRASE.test(line)) return;
    const number = index + 1;
    const named = new Map<string, DecisionRow>();
    for (const m of line.matchAll(MARKER)) {
      const token = m[1]!.toLowerCase();
      const row = byLabel.get(token) ?? byId.get(token);
      if (row !== undefined) named.set(row.id, row);
    }
    if (named.size !== 1) {
      unresolved.push({ line: number, id: null, why: named.size === 0 ? 'the line names no decision: mark it (<label>) such as (uc1)' : `the line names ${named.size} decisions: ${[...named.keys()].join(', ')}` });
      return;
    }
    const row = [...named.values()][0]!;
    if (!isDecided(row)) {
      unresolved.push({ line: number, id: row.id, why: `${row.id} is still pending` });
      return;
    }
    const decided = decidedText(row, gate);
    // A function replacement: option text is input, and `$&` in it must stay literal.
    lines[index] = line.replace(PHRASE, () => decided);
    rewritten.push({ line: number, id: row.id });
  });
  return { text: rewritten.length === 0 ? plan : lines.join('\n'), rewritten, unresolved };
}

/** `decided uc1b (change the plan ...) on 2026-12-01`, on one line. */
function decidedText(row: DecisionRow & { chosen: string }, gate: Gate): string {
  const label = row.label ?? row.id;
  const item = row.gate_rev === gate.gate_rev ? gate.items.find((i) => i.id === row.label) : undefined;
  const text = item?.options.find((o) => o.key === row.chosen)?.text;
  const option = text === undefined ? '' : ` (${oneLine(text.replace(/\s+/g, ' ').trim())})`;
  return `decided ${oneLine(label)}${oneLine(row.chosen)}${option} on ${decidedOn(row)}`;
}
